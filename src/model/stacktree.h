/* The inside of a stack tree, for the clustering code next to it (src/model/cluster.c);
 * everyone else uses the contract in model/cluster.h. */
#ifndef SRVSCOPE_MODEL_STACKTREE_H
#define SRVSCOPE_MODEL_STACKTREE_H

#include <stddef.h>
#include <stdint.h>

/* Frames past this depth are left out (a runaway recursion); the weight still counts. */
#define STACKTREE_MAX_DEPTH 1024

struct st_node {
	uint64_t hash;		    /* of the name */
	uint64_t ns, cnt;	    /* time and paths at or below this node */
	uint64_t mass_ns, mass_cnt; /* the sums of ns and cnt over this node's subtree */
	struct st_node **kids;	    /* sorted by (hash, name) */
	unsigned nr_kids, cap;
	unsigned len; /* of the name */
	char name[];
};

struct stacktree {
	struct st_node *root; /* nameless: its weight is the thread's whole time */
	size_t nr_nodes;
};

/* Points *out at the normalised form of a frame name (*out_len bytes, not terminated):
 * an offset "+0x.." cut off, a bare address or an empty name made "[unknown]". Returns
 * nonzero when the frame is anonymous (an address or a module without symbols). */
int stacktree__normalise(const char *name, const char **out, size_t *out_len);

#endif
