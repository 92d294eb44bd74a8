/* Times srvscope's thread clustering (src/model/cluster.c) on 1000 threads shaped like a
 * server's roles, next to a naive baseline run in the same process: every pair of threads
 * (no merging of identical trees) and average linkage that scans the whole matrix for each
 * merge, O(n^3). Checks that both give the same clusters and prints the ratio.
 * Usage: cluster [THREADS [ROLES]]  (built and run by bench/cluster.sh) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/cluster.h"

#define PATHS 30 /* per role */
#define DEPTH 24 /* at most, below the role's own frames */

static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* CPU time: the machine may be shared, which stretches wall time for both sides alike
 * only on average. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct role {
	char paths[PATHS][DEPTH + 4][32];
	unsigned depth[PATHS];
	double weight[PATHS];
};

/* A role: a thread function and PATHS stacks below it, each a walk through a small
 * vocabulary of the role's functions ending in a wait or on CPU. */
static void make_role(struct role *r, unsigned id)
{
	static const char *waits[] = {"epoll_wait", "futex_wait", "clock_nanosleep",
				      "read",	    "sendmsg",	  "recvfrom",
				      "poll",	    "accept4"};

	rng_state = 0x9e3779b97f4a7c15ull * (id + 1);
	for (unsigned p = 0; p < PATHS; p++) {
		unsigned d = 6 + rng() % (DEPTH - 6), i = 0;

		snprintf(r->paths[p][i++], 32, "clone3");
		snprintf(r->paths[p][i++], 32, "start_thread");
		snprintf(r->paths[p][i++], 32, "role%u_main", id);
		snprintf(r->paths[p][i++], 32, "role%u_loop", id);
		for (unsigned k = 0; k < d; k++)
			snprintf(r->paths[p][i++], 32, "role%u_fn%u", id,
				 (unsigned)(rng() % (4 + k)));
		snprintf(r->paths[p][i++], 32, "%s", waits[rng() % 8]);
		r->depth[p] = i;
		r->weight[p] = 1 + rng() % 100;
	}
}

/* A thread of role r: its paths with weights jittered by up to +-50% from `seed` (threads
 * given the same seed have identical trees). */
static struct stacktree *make_thread(const struct role *r, uint64_t seed)
{
	struct stacktree *t = stacktree__new();
	const char *frames[DEPTH + 4];

	if (!t)
		exit(1);
	rng_state = seed * 0x2545f4914f6cdd1dull + 1;
	for (unsigned p = 0; p < PATHS; p++) {
		double jitter = 0.5 + (rng() % 1001) / 1000.0;

		for (unsigned i = 0; i < r->depth[p]; i++)
			frames[i] = r->paths[p][i];
		if (stacktree__add(t, frames, r->depth[p], (uint64_t)(r->weight[p] * jitter * 1e6)))
			exit(1);
	}
	return t;
}

/* The baseline: the same distance, every pair of threads, average linkage by scanning for
 * the closest pair at each merge; cut by the same rule (the widest gap of 0, the merge
 * heights, 1). Fills lab[] with a representative thread per cluster. */
static void naive(const struct cluster_thread *t, unsigned n, unsigned *lab)
{
	double *d = malloc((size_t)n * n * sizeof(*d)), *h = malloc(n * sizeof(*h));
	unsigned *size = malloc(n * sizeof(*size)), *ma = malloc(n * sizeof(*ma));
	unsigned *mb = malloc(n * sizeof(*mb)), *parent = malloc(n * sizeof(*parent));
	char *gone = calloc(n, 1);
	double lo = 0, best = -1, cut = 0;

	for (unsigned i = 0; i < n; i++) {
		size[i] = 1;
		parent[i] = i;
		d[(size_t)i * n + i] = 0;
		for (unsigned j = i + 1; j < n; j++)
			d[(size_t)i * n + j] = d[(size_t)j * n + i] =
				stacktree__distance(t[i].tree, t[j].tree);
	}
	for (unsigned s = 0; s + 1 < n; s++) {
		unsigned a = 0, b = 0;
		double m = 2;

		for (unsigned i = 0; i < n; i++)
			for (unsigned j = i + 1; !gone[i] && j < n; j++)
				if (!gone[j] && d[(size_t)i * n + j] < m) {
					m = d[(size_t)i * n + j];
					a = i;
					b = j;
				}
		for (unsigned k = 0; k < n; k++) {
			double x =
				(size[a] * d[(size_t)k * n + a] + size[b] * d[(size_t)k * n + b]) /
				(size[a] + size[b]);

			d[(size_t)k * n + a] = d[(size_t)a * n + k] = x;
		}
		size[a] += size[b];
		gone[b] = 1;
		ma[s] = a;
		mb[s] = b;
		h[s] = m;
	}
	/* Merges come out in increasing height here: the cut is a prefix. */
	for (unsigned s = 0; s < n; s++) {
		double x = s + 1 < n ? h[s] : 1;

		if (x - lo > best) {
			best = x - lo;
			cut = s;
		}
		lo = x;
	}
	for (unsigned s = 0; s < cut; s++) {
		unsigned ra = ma[s], rb = mb[s];

		while (parent[ra] != ra)
			ra = parent[ra];
		while (parent[rb] != rb)
			rb = parent[rb];
		parent[rb] = ra;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned r = i;

		while (parent[r] != r)
			r = parent[r];
		lab[i] = r;
	}
	free(d);
	free(h);
	free(size);
	free(ma);
	free(mb);
	free(parent);
	free(gone);
}

/* Whether two labellings make the same partition. */
static int same_partition(const unsigned *x, const unsigned *y, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if ((x[i] == x[j]) != (y[i] == y[j]))
				return 0;
	return 1;
}

static int run(unsigned n, unsigned roles, unsigned distinct)
{
	struct role *r = malloc(roles * sizeof(*r));
	struct cluster_thread *t = calloc(n, sizeof(*t));
	unsigned *lab = malloc(n * sizeof(*lab));
	struct cluster_result res;
	double t0, ours, base;
	int same;

	for (unsigned i = 0; i < roles; i++)
		make_role(&r[i], i);
	for (unsigned i = 0; i < n; i++) {
		t[i].tid = 100 + i;
		t[i].tree = make_thread(&r[i % roles], i % distinct);
	}
	t0 = now();
	if (cluster__threads(t, n, &res)) {
		fprintf(stderr, "cluster: out of memory\n");
		return 1;
	}
	ours = now() - t0;
	t0 = now();
	naive(t, n, lab);
	base = now() - t0;
	same = same_partition(res.assign, lab, n);
	printf("%u threads, %u distinct trees, %u roles: srvscope %.3f s CPU (%u clusters, "
	       "threshold %.3f), naive all-pairs %.3f s CPU: %.1fx faster%s\n",
	       n, res.distinct, roles, ours, res.nr_clusters, res.threshold, base, base / ours,
	       same ? ", same clusters" : ", DIFFERENT clusters");
	cluster_result__free(&res);
	for (unsigned i = 0; i < n; i++)
		stacktree__free(t[i].tree);
	free(t);
	free(r);
	free(lab);
	return !same || ours > 2;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	unsigned roles = argc > 2 ? (unsigned)atoi(argv[2]) : 5;
	int err = 0;

	if (!n || !roles) {
		fprintf(stderr, "usage: cluster [THREADS [ROLES]]\n");
		return 2;
	}
	err |= run(n, roles, 50 < n ? 50 : n);
	err |= run(n, roles, n);
	return err;
}
