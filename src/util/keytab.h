/* Byte-string keys numbered 1, 2, 3... in the order they are first seen: the dedup
 * tables of the pprof writer and serve's series. Keys are copied. */
#ifndef SRVSCOPE_UTIL_KEYTAB_H
#define SRVSCOPE_UTIL_KEYTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keytab {
	struct keyslot {
		uint64_t hash;
		char *key;
		size_t len;
		uint64_t id;
	} * slots;
	size_t cap, nr; /* nr: the ids given, the last one is nr */
};

/* A zeroed struct keytab is empty. The key's id, given (*created) when new. */
uint64_t keytab__find(struct keytab *t, const void *key, size_t len, bool *created);
/* The key's id, 0 when absent. */
uint64_t keytab__get(const struct keytab *t, const void *key, size_t len);
/* Frees the keys; the table is empty again. */
void keytab__free(struct keytab *t);

#endif
