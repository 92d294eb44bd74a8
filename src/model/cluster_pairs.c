/* The distances between every pair of distinct stack trees at once, through an inverted
 * index of call paths: the trees' common part, the only part the distance has to look at,
 * is found path by path instead of tree pair by tree pair. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"
#include "model/stacktree.h"
#include "util/util.h"

/* A call path (a node's name under its parent's path), numbered across every tree. */
struct path {
	uint64_t hash; /* of the name and the parent's number */
	const struct st_node *node;
	uint32_t parent, id; /* id 0: an empty slot */
};

struct index {
	struct path *slot;
	size_t mask;
	uint32_t nr_paths;
	/* One entry per node of every tree, in tree order: its path, its tree, its share. */
	uint32_t *path_of, *tree_of;
	float *share;
	size_t nr;
};

static uint32_t path_id(struct index *x, uint32_t parent, const struct st_node *n)
{
	uint64_t h = fnv1a(&parent, sizeof(parent), n->hash);
	size_t i = h & x->mask;

	for (;; i = (i + 1) & x->mask) {
		struct path *p = &x->slot[i];

		if (!p->id) {
			*p = (struct path){h, n, parent, ++x->nr_paths};
			return p->id;
		}
		if (p->hash == h && p->parent == parent && p->node->len == n->len &&
		    !memcmp(p->node->name, n->name, n->len))
			return p->id;
	}
}

static void index_tree(struct index *x, uint32_t tree, const struct st_node *n, uint32_t parent,
		       bool cnt, double total)
{
	for (unsigned i = 0; i < n->nr_kids; i++) {
		const struct st_node *k = n->kids[i];
		uint32_t id = path_id(x, parent, k);

		x->path_of[x->nr] = id;
		x->tree_of[x->nr] = tree;
		x->share[x->nr] = (float)((cnt ? (double)k->cnt : (double)k->ns) / total);
		x->nr++;
		index_tree(x, tree, k, id, cnt, total);
	}
}

int stacktree__all_pairs(const struct stacktree *const *trees, unsigned m, float *d)
{
	struct index x = {0};
	size_t nodes = 0, cap = 1, npairs = (size_t)m * (m - 1) / 2;
	uint32_t *start = NULL, *tree = NULL;
	float *share = NULL;
	double *mass = NULL;
	int err = -ENOMEM;

	for (unsigned i = 0; i < m; i++)
		nodes += trees[i] ? trees[i]->nr_nodes : 0;
	while (cap < 2 * nodes + 2)
		cap *= 2;
	x.mask = cap - 1;
	x.slot = calloc(cap, sizeof(*x.slot));
	x.path_of = malloc((nodes + 1) * sizeof(*x.path_of));
	x.tree_of = malloc((nodes + 1) * sizeof(*x.tree_of));
	x.share = malloc((nodes + 1) * sizeof(*x.share));
	mass = malloc(m * sizeof(*mass));
	if (!x.slot || !x.path_of || !x.tree_of || !x.share || !mass)
		goto out;
	for (unsigned i = 0; i < m; i++) {
		const struct stacktree *t = trees[i];

		mass[i] = t ? stacktree__mass(t) : 0;
		if (mass[i] > 0) {
			bool cnt = stacktree__by_count(t);

			index_tree(&x, i, t->root, 0, cnt,
				   cnt ? (double)t->root->cnt : (double)t->root->ns);
		}
	}
	free(x.slot);
	x.slot = NULL;

	/* The entries grouped by path (a counting sort, stable: trees stay in order). */
	start = calloc(x.nr_paths + 2, sizeof(*start));
	tree = malloc((x.nr + 1) * sizeof(*tree));
	share = malloc((x.nr + 1) * sizeof(*share));
	if (!start || !tree || !share)
		goto out;
	for (size_t e = 0; e < x.nr; e++)
		start[x.path_of[e] + 1]++;
	for (uint32_t p = 1; p <= x.nr_paths + 1; p++)
		start[p] += start[p - 1];
	for (size_t e = 0; e < x.nr; e++) {
		uint32_t at = start[x.path_of[e]]++;

		tree[at] = x.tree_of[e];
		share[at] = x.share[e];
	}
	/* start[p] now ends path p's entries, and starts path p + 1's. */

	memset(d, 0, npairs * sizeof(*d));
	for (uint32_t p = 1, from = start[0]; p <= x.nr_paths; from = start[p++]) {
		for (uint32_t a = from; a + 1 < start[p]; a++) {
			/* The pair (i, j > i) is at row + j in the condensed matrix (row wraps
			 * below 0 for i = 0, which unsigned arithmetic allows). */
			size_t i = tree[a], row = i * (2 * m - i - 1) / 2 - i - 1;
			float sa = share[a];

			for (uint32_t b = a + 1; b < start[p]; b++)
				d[row + tree[b]] += sa < share[b] ? sa : share[b];
		}
	}
	/* From the common part S to the distance: 1 - 2 S / (Ma + Mb). */
	for (unsigned i = 0, k = 0; i < m; i++)
		for (unsigned j = i + 1; j < m; j++, k++) {
			double v;

			if (mass[i] <= 0 || mass[j] <= 0) {
				d[k] = mass[i] <= 0 && mass[j] <= 0 ? 0 : 1;
				continue;
			}
			v = 1 - 2 * d[k] / (mass[i] + mass[j]);
			d[k] = (float)(v < 0 ? 0 : v > 1 ? 1 : v);
		}
	err = 0;
out:
	free(share);
	free(tree);
	free(start);
	free(mass);
	free(x.share);
	free(x.tree_of);
	free(x.path_of);
	free(x.slot);
	return err;
}
