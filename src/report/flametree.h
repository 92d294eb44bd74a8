/* Folded stacks ("thread;outer;...;inner", a weight each) merged into one tree of frames,
 * the shape a flame graph draws, written as compact JSON for the HTML report: a table of
 * distinct names and the nodes in depth-first order. Nodes too thin to be drawn are
 * folded into their parent, so that the document stays small however many stacks the
 * trace holds. */
#ifndef SRVSCOPE_REPORT_FLAMETREE_H
#define SRVSCOPE_REPORT_FLAMETREE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/u64map.h"

struct json_writer;

struct flametree_node {
	uint32_t parent;		    /* index; the root (index 0) is its own parent */
	uint32_t name;			    /* index in names */
	uint32_t first_child, next_sibling; /* 0: none (the root is no one's child) */
	uint64_t weight;		    /* this frame and everything above it */
};

struct flametree {
	struct flametree_node *nodes; /* nodes[0]: the root, all the stacks */
	size_t nr, cap;
	char **names; /* distinct frame names, malloc'ed */
	size_t nr_names, cap_names;
	struct u64map name_idx;	 /* hash of a name (+ probe) -> index in names */
	struct u64map child_idx; /* hash of (parent, name) (+ probe) -> node index */
};

void flametree__init(struct flametree *ft);
void flametree__free(struct flametree *ft);
/* Adds a folded stack (frames separated by ';', root first) of the given weight. */
void flametree__add(struct flametree *ft, const char *stack, uint64_t weight);
/* {"total": W, "names": [...], "nodes": [parent, name, weight, ...]}: three numbers per
 * node, in depth-first order with each node's children by name, so that a parent comes
 * before its children (parent -1 for the root). Nodes weighing less than total/min_share
 * are left out (their weight stays in their parent's), and lighter and lighter ones after
 * them while more than max_nodes would be written. Returns the nodes written. */
size_t flametree__write_json(const struct flametree *ft, struct json_writer *w, uint64_t min_share,
			     size_t max_nodes);

#endif
