/* A small open-addressing hash map from 64-bit keys to 64-bit values, used to index trace
 * files (stack ids, thread ids) and by the analyses. Key 0 is allowed. */
#ifndef SRVSCOPE_TRACE_U64MAP_H
#define SRVSCOPE_TRACE_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys, *vals;
	uint8_t *used;
	size_t cap, nr;
};

/* A zeroed struct u64map is an empty map. */
void u64map__free(struct u64map *m);
bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val);
/* The value slot for key, created as 0 when absent (*created tells). The pointer is valid
 * until the next insertion. */
uint64_t *u64map__slot(struct u64map *m, uint64_t key, bool *created);
void u64map__put(struct u64map *m, uint64_t key, uint64_t val);

/* Iteration: for (i = 0; u64map__next(m, &i, &k, &v); ) */
bool u64map__next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val);

#endif
