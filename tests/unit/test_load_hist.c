/* The load clients' latency histogram: buckets ordered and tight, quantiles by the
 * nearest-rank method within the bucket error, merging. */
#include <stdlib.h>

#include "load/hist.h"
#include "unit.h"

int main(void)
{
	struct load_hist *h = calloc(1, sizeof(*h)), *g = calloc(1, sizeof(*g));
	unsigned int i, prev = 0, bad_order = 0, bad_bound = 0;
	uint64_t v;

	/* every value is in a bucket whose high bound is at or above it and within 1 % */
	for (v = 0; v < (1ull << 40); v = v < 1000 ? v + 1 : v + v / 997) {
		unsigned int b = load_hist__index(v);
		uint64_t hi = load_hist__bucket_high(b);

		if (b < prev || b >= LOAD_HIST_BUCKETS)
			bad_order++;
		if (hi < v || (double)(hi - v) > v / 100.0 + 1)
			bad_bound++;
		prev = b;
	}
	is_int(bad_order, 0, "buckets grow with the values and stay in the table");
	is_int(bad_bound, 0, "a bucket's high bound is within 1 %% above its values");
	is_int(load_hist__index(1ull << 50), LOAD_HIST_BUCKETS - 1, "huge values: the last bucket");
	is_int(load_hist__index(255), 255, "exact below 256");
	is_int(load_hist__bucket_high(load_hist__index(256)), 257, "then pairs");

	is_int(load_hist__quantile(h, 0.5), 0, "empty: 0");
	for (i = 1; i <= 10000; i++)
		load_hist__record(h, i * 1000ull); /* 1 us .. 10 ms */
	v = load_hist__quantile(h, 0.5);
	ok(v >= 5000000 && v <= 5000000 * 1.01, "p50 of 1..10000 us: %llu ns",
	   (unsigned long long)v);
	v = load_hist__quantile(h, 0.99);
	ok(v >= 9900000 && v <= 9900000 * 1.01, "p99: %llu ns", (unsigned long long)v);
	is_int(load_hist__quantile(h, 1.0), 10000000, "p100 is the max, exactly");
	v = load_hist__quantile(h, 0.0);
	ok(v >= 1000 && v <= 1010, "p0: the smallest value's bucket (%llu)", (unsigned long long)v);
	is_int(h->count, 10000, "count");
	is_int(h->sum, 1000ull * 10000 * 10001 / 2, "sum");

	load_hist__record(g, 50000000); /* one 50 ms outlier */
	load_hist__merge(g, h);
	is_int(g->count, 10001, "merged count");
	is_int(g->max, 50000000, "merged max");
	is_int(load_hist__quantile(g, 1.0), 50000000, "merged p100 is the outlier");
	v = load_hist__quantile(g, 0.5);
	ok(v >= 5000000 && v <= 5000000 * 1.01, "merged p50 unmoved");
	free(h);
	free(g);
	return done_testing();
}
