/* A log-linear latency histogram in the manner of HdrHistogram: exact below 256 ns, then
 * 128 sub-buckets per power of two (under 0.8 % relative error), fixed size, no allocation
 * while recording, so a client thread records every reply cheaply and threads merge. */
#ifndef SRVSCOPE_LOAD_HIST_H
#define SRVSCOPE_LOAD_HIST_H

#include <stdint.h>

#define LOAD_HIST_SUB_BITS 7
#define LOAD_HIST_SUB	   (1u << LOAD_HIST_SUB_BITS)
#define LOAD_HIST_LINEAR   (2 * LOAD_HIST_SUB) /* values below are their own bucket */
#define LOAD_HIST_MAX_BIT  40		       /* values from 2^40 ns (18 min) are clamped */
#define LOAD_HIST_BUCKETS                                                                          \
	(LOAD_HIST_LINEAR + (LOAD_HIST_MAX_BIT - LOAD_HIST_SUB_BITS - 1) * LOAD_HIST_SUB)

struct load_hist {
	uint64_t count, max, sum;
	uint64_t buckets[LOAD_HIST_BUCKETS];
};

void load_hist__record(struct load_hist *h, uint64_t v);
/* Adds every value of from into into. */
void load_hist__merge(struct load_hist *into, const struct load_hist *from);
/* The value at quantile q (0..1): the highest value of the bucket holding it, never above
 * the largest value recorded; 0 when empty. */
uint64_t load_hist__quantile(const struct load_hist *h, double q);
/* The bucket of v and the highest value a bucket holds (for the tests). */
unsigned int load_hist__index(uint64_t v);
uint64_t load_hist__bucket_high(unsigned int idx);

#endif
