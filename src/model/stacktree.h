/* The inside of a stack tree, for the clustering code next to it (src/model/cluster.c);
 * everyone else uses the contract in model/cluster.h. */
#ifndef SRVSCOPE_MODEL_STACKTREE_H
#define SRVSCOPE_MODEL_STACKTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frames past this depth are left out (a runaway recursion); the weight still counts. */
#define STACKTREE_MAX_DEPTH 1024

struct st_node {
	uint64_t hash;	       /* of the name */
	uint64_t ns, cnt;      /* time and paths at or below this node */
	struct st_node **kids; /* sorted by (hash, name) */
	unsigned nr_kids, cap;
	unsigned len; /* of the name */
	char name[];
};

struct stacktree {
	struct st_node *root; /* nameless: its weight is the thread's whole time */
	size_t nr_nodes;      /* below the root */
	/* The sums of ns and cnt over every node below the root: divided by the root's,
	 * the tree's mass, the denominator of the distance. */
	uint64_t mass_ns, mass_cnt;
};

/* Weights in time, or in counts when no time was given at all (so a tree built of
 * samples of weight 0 still has a shape). */
static inline int stacktree__by_count(const struct stacktree *t)
{
	return t->root->ns == 0;
}

/* The sum of the shares of the nodes below the root (0 for an empty tree). */
double stacktree__mass(const struct stacktree *t);

/* Points *out at the normalised form of a frame name (*out_len bytes, not terminated): a
 * bare address or an empty name made "[unknown]", a symbol's "+0x1a/0x80" cut off, and a
 * module's "+0x1904b" cut off at the leaf (the innermost frame) only. Returns nonzero
 * when the frame is anonymous ("[unknown]", or a module without its offset). */
int stacktree__normalise(const char *name, bool leaf, const char **out, size_t *out_len);

/* The distances between every pair of the m trees (which should be distinct: identical
 * ones may come out a rounding error above 0), in single precision, into d[] condensed:
 * the pair (i, j), i < j, at i * (2m - i - 1) / 2 + j - i - 1. Returns 0 or -ENOMEM. */
int stacktree__all_pairs(const struct stacktree *const *trees, unsigned m, float *d);

#endif
