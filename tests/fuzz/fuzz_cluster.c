/* Fuzz target: stack trees built from arbitrary frame names (the targets' symbols, which
 * anyone may choose) and arbitrary weights. Whatever the input, distances lie in [0, 1],
 * are symmetric and 0 from a tree to itself, the all-pairs path agrees with the pair by
 * pair one, clustering labels every thread with a cluster below nr_clusters, and matching
 * maps to existing clusters. Input: lines "T W frame;frame;..." where the first byte T
 * picks one of 6 threads and the second W a weight. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"
#include "model/stacktree.h"

#define THREADS 6
#define FRAMES	64

static void add_line(struct stacktree **t, char *line)
{
	const char *frames[FRAMES];
	unsigned nr = 0;
	char *f = line + 2, *semi;

	if (strlen(line) < 2)
		return;
	/* ';' separates frames; empty frames are kept (they become [unknown]). */
	while (nr < FRAMES) {
		frames[nr++] = f;
		semi = strchr(f, ';');
		if (!semi)
			break;
		*semi = 0;
		f = semi + 1;
	}
	/* Weight 0 lines make trees weighed by counts when a tree has no time at all. */
	assert(!stacktree__add(t[(unsigned char)line[0] % THREADS], frames,
			       (unsigned char)line[1] % 4 ? nr : 0,
			       (uint64_t)((unsigned char)line[1] % 8) * 1000003));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stacktree *t[THREADS], *merged;
	struct cluster_thread th[THREADS];
	struct cluster_result r;
	float d[THREADS * (THREADS - 1) / 2];
	const char *path[16];
	char *buf = malloc(size + 1), *line, *nl;
	int map[THREADS];
	unsigned k = 0;

	memcpy(buf, data, size);
	buf[size] = 0;
	for (unsigned i = 0; i < THREADS; i++)
		assert((t[i] = stacktree__new()));
	for (line = buf; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		add_line(t, line);
	}
	assert(!stacktree__all_pairs((const struct stacktree *const *)t, THREADS, d));
	for (unsigned i = 0; i < THREADS; i++) {
		assert(stacktree__distance(t[i], t[i]) == 0);
		for (unsigned j = i + 1; j < THREADS; j++, k++) {
			double x = stacktree__distance(t[i], t[j]);

			assert(x >= 0 && x <= 1 && x == stacktree__distance(t[j], t[i]));
			/* Single precision summed over up to a few thousand nodes. */
			assert(fabs(x - d[k]) < 1e-3);
		}
		th[i] = (struct cluster_thread){.tid = 100 + i, .tree = t[i]};
	}
	assert(!cluster__threads(th, THREADS, &r));
	assert(r.nr_clusters >= 1 && r.nr_clusters <= THREADS && r.distinct <= THREADS);
	for (unsigned i = 0; i < THREADS; i++)
		assert(r.assign[i] < r.nr_clusters);
	cluster_result__free(&r);
	assert(!cluster__match((const struct stacktree *const *)t, 3,
			       (const struct stacktree *const *)t + 3, THREADS - 3, map));
	for (unsigned j = 0; j < THREADS - 3; j++)
		assert(map[j] >= -1 && map[j] < 3);
	assert((merged = stacktree__new()));
	for (unsigned i = 0; i < THREADS; i++)
		assert(!stacktree__merge(merged, t[i]));
	assert(stacktree__heaviest(merged, path, 16) <= 16);
	stacktree__free(merged);
	for (unsigned i = 0; i < THREADS; i++)
		stacktree__free(t[i]);
	free(buf);
	return 0;
}
