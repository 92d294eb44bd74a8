/* Clusters the threads of a real recording: reads per-thread folded stacks (lines
 * "TID off|on FRAME;FRAME;... COUNT", as bench/cluster-servers.sh makes them from
 * 'srvscope flame --tid'), builds each thread's tree (off-CPU time in us, on-CPU samples
 * at HZ), clusters them with src/model/cluster.c and prints the clusters with their
 * heaviest path. Usage: cluster-folded FOLDED TIDS [HZ]  (TIDS: lines "TID COMM") */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"

#define MAX_THREADS 4096
#define MAX_FRAMES  512

static struct cluster_thread th[MAX_THREADS];
static char comm[MAX_THREADS][64];
static char line[1 << 20];

static int add_line(unsigned n, char *s, double hz)
{
	const char *frames[MAX_FRAMES];
	char kind[4], *sp, *f, *save;
	unsigned tid, nr = 0;
	int off;
	uint64_t count, ns;

	if (sscanf(s, "%u %3s %n", &tid, kind, &off) != 2)
		return 0;
	sp = strrchr(s + off, ' ');
	if (!sp)
		return 0;
	count = strtoull(sp + 1, NULL, 10);
	*sp = 0;
	/* Off-CPU counts are microseconds; on-CPU ones samples taken hz times a second. */
	ns = strcmp(kind, "on") ? count * 1000 : (uint64_t)(count * 1e9 / hz);
	for (f = strtok_r(s + off, ";", &save); f && nr < MAX_FRAMES;
	     f = strtok_r(NULL, ";", &save))
		frames[nr++] = f;
	for (unsigned i = 0; i < n; i++)
		if (th[i].tid == tid)
			return stacktree__add(th[i].tree, frames, nr, ns);
	return 0;
}

int main(int argc, char **argv)
{
	double hz = argc > 3 ? atof(argv[3]) : 99;
	struct cluster_result r;
	FILE *folded, *tids;
	unsigned n = 0, tid;
	char name[64];

	if (argc < 3 || hz <= 0) {
		fprintf(stderr, "usage: cluster-folded FOLDED TIDS [HZ]\n");
		return 2;
	}
	folded = fopen(argv[1], "r");
	tids = fopen(argv[2], "r");
	if (!folded || !tids) {
		fprintf(stderr, "cluster-folded: cannot open %s: %s\n", folded ? argv[2] : argv[1],
			strerror(errno));
		return 1;
	}
	while (n < MAX_THREADS && fscanf(tids, "%u %63s", &tid, name) == 2) {
		th[n].tid = tid;
		snprintf(comm[n], sizeof(comm[n]), "%s", name);
		th[n].comm = comm[n];
		th[n].tree = stacktree__new();
		if (!th[n].tree)
			return 1;
		n++;
	}
	while (fgets(line, sizeof(line), folded))
		if (add_line(n, line, hz))
			return 1;
	if (cluster__threads(th, n, &r))
		return 1;
	printf("%u threads, %u distinct trees, %u clusters, cut at %.3f\n", n, r.distinct,
	       r.nr_clusters, r.threshold);
	for (unsigned c = 0; c < r.nr_clusters; c++) {
		struct stacktree *merged = stacktree__new();
		const char *path[64];
		unsigned nr_path, size = 0;

		if (!merged)
			return 1;
		printf("cluster %u:", c);
		for (unsigned i = 0; i < n; i++)
			if (r.assign[i] == c) {
				printf(" %s/%u", th[i].comm, th[i].tid);
				stacktree__merge(merged, th[i].tree);
				size++;
			}
		nr_path = stacktree__heaviest(merged, path, 64);
		printf("\n  %u thread(s), heaviest path:", size);
		/* The innermost frames say where the time goes; at most eight of them. */
		for (unsigned k = nr_path > 8 ? nr_path - 8 : 0; k < nr_path; k++)
			printf("%s%s", k > 0 ? (k == nr_path - 8 ? " ...;" : ";") : " ", path[k]);
		printf("\n");
		stacktree__free(merged);
	}
	cluster_result__free(&r);
	for (unsigned i = 0; i < n; i++)
		stacktree__free(th[i].tree);
	return 0;
}
