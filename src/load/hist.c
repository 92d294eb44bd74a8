/* The load clients' latency histogram: see hist.h for its shape. */
#include "load/hist.h"

unsigned int load_hist__index(uint64_t v)
{
	unsigned int e, shift;

	if (v < LOAD_HIST_LINEAR)
		return v;
	if (v >> LOAD_HIST_MAX_BIT)
		v = (1ull << LOAD_HIST_MAX_BIT) - 1;
	e = 63 - __builtin_clzll(v); /* >= SUB_BITS + 1 */
	shift = e - LOAD_HIST_SUB_BITS;
	return LOAD_HIST_LINEAR + (e - LOAD_HIST_SUB_BITS - 1) * LOAD_HIST_SUB +
	       (unsigned int)((v >> shift) - LOAD_HIST_SUB);
}

uint64_t load_hist__bucket_high(unsigned int idx)
{
	unsigned int e, shift;
	uint64_t sub;

	if (idx < LOAD_HIST_LINEAR)
		return idx;
	e = (idx - LOAD_HIST_LINEAR) / LOAD_HIST_SUB + LOAD_HIST_SUB_BITS + 1;
	sub = (idx - LOAD_HIST_LINEAR) % LOAD_HIST_SUB + LOAD_HIST_SUB;
	shift = e - LOAD_HIST_SUB_BITS;
	return ((sub + 1) << shift) - 1;
}

void load_hist__record(struct load_hist *h, uint64_t v)
{
	h->buckets[load_hist__index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

void load_hist__merge(struct load_hist *into, const struct load_hist *from)
{
	unsigned int i;

	for (i = 0; i < LOAD_HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	into->sum += from->sum;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t load_hist__quantile(const struct load_hist *h, double q)
{
	uint64_t rank, seen = 0, hi;
	unsigned int i;

	if (!h->count)
		return 0;
	/* the rank-th smallest value, 1-based, as the nearest-rank method defines it */
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (i = 0; i < LOAD_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	hi = load_hist__bucket_high(i);
	return hi < h->max ? hi : h->max;
}
