/* Thread clustering by call-stack similarity: each thread's stacks (on-CPU samples and
 * off-CPU waits) form a weighted tree; threads whose trees are alike form one role.
 * Pure analysis: no I/O, no globals. See docs/model-clustering.md for the distance and
 * the threshold rule. */
#ifndef SRVSCOPE_MODEL_CLUSTER_H
#define SRVSCOPE_MODEL_CLUSTER_H

#include <stdint.h>

struct stacktree;

/* One thread's call-stack tree: the stacks it was seen in (on-CPU samples and off-CPU
 * waits), each a path of frame names, outermost first, weighted by time in ns. */
struct cluster_thread {
	uint32_t tid, pid;
	const char *comm;
	struct stacktree *tree;
};

/* Returns NULL with errno set when out of memory. */
struct stacktree *stacktree__new(void);
/* Adds a path (frames[0] outermost) with weight ns; frame names are copied or interned. */
int stacktree__add(struct stacktree *t, const char *const *frames, unsigned nr, uint64_t ns);
void stacktree__free(struct stacktree *t);
/* Normalised weighted tree edit distance in [0,1]: 0 for trees of equal shape and weight
 * shares, 1 for trees with nothing in common. */
double stacktree__distance(const struct stacktree *a, const struct stacktree *b);

struct cluster_result {
	unsigned nr_clusters;
	unsigned *assign;  /* per input thread: its cluster, 0..nr_clusters-1, ordered by
			    * cluster size descending then smallest tid */
	double threshold;  /* the cut the data chose */
	unsigned distinct; /* distinct trees after merging identical ones */
};

/* Average-linkage agglomerative clustering with a threshold chosen from the data (no
 * per-application constant: e.g. the largest gap in the merge heights / a silhouette
 * criterion; document the rule and why). Identical trees are merged before pairing. */
/* The rule chosen: the cut is the widest gap between consecutive values of 0, the merge
 * heights and 1 (docs/model-clustering.md says why). A thread whose tree is NULL counts as
 * one without stacks. n == 0 gives no cluster and assign NULL. Returns 0, -EINVAL or
 * -ENOMEM (res then holds nothing to free). */
int cluster__threads(const struct cluster_thread *t, unsigned n, struct cluster_result *res);
void cluster_result__free(struct cluster_result *res);
/* Matches clusters of run B to clusters of run A by distance of their merged trees; map[b]
 * = a or -1. */
int cluster__match(const struct stacktree *const *a, unsigned na, const struct stacktree *const *b,
		   unsigned nb, int *map);
/* (cluster__match: the clusters of both runs are clustered together by cluster__threads'
 * rule; a cluster of B maps to the nearest cluster of A in its group, so several of B may
 * map to one of A. Returns 0, -EINVAL or -ENOMEM.) */
/* Merges src into dst (weights added): a cluster's tree. */
int stacktree__merge(struct stacktree *dst, const struct stacktree *src);
/* The heaviest root-to-leaf path (for the model's "stack" field): fills up to max names. */
unsigned stacktree__heaviest(const struct stacktree *t, const char **names, unsigned max);
/* (stacktree__heaviest: outermost first, the normalised names, valid while the tree lives;
 * returns how many were filled. The path stops where more stacks end than go on.) */

#endif
