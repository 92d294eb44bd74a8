/* Threads grouped by the likeness of their call-stack trees: identical trees merged first,
 * then average-linkage agglomerative clustering of the distinct ones, cut at the widest gap
 * between merge heights; and the clusters of two runs matched to each other.
 * docs/model-clustering.md says why each rule is what it is. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"
#include "model/stacktree.h"
#include "util/util.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	return fnv1a(&v, sizeof(v), h);
}

/* A hash of a tree's names and weight shares: trees with equal shares hash alike (equal
 * fractions divide to the same double, so their bits are compared, no rounding). */
static uint64_t sig_below(const struct st_node *n, bool cnt, double total, uint64_t h)
{
	for (unsigned i = 0; i < n->nr_kids; i++) {
		const struct st_node *k = n->kids[i];
		double share = (cnt ? (double)k->cnt : (double)k->ns) / total;
		uint64_t bits;

		memcpy(&bits, &share, sizeof(bits));
		h = mix(mix(h, k->hash), bits);
		h = sig_below(k, cnt, total, h);
		h = mix(h, 0x9e3779b97f4a7c15ull); /* the end of k's children */
	}
	return h;
}

static uint64_t signature(const struct stacktree *t)
{
	bool cnt;
	double total;

	if (!t)
		return 0;
	cnt = stacktree__by_count(t);
	total = cnt ? (double)t->root->cnt : (double)t->root->ns;
	if (total <= 0 || !t->root->nr_kids)
		return 0;
	return sig_below(t->root, cnt, total, FNV1A_INIT);
}

/* Index of the pair (i, j), i != j, in a condensed triangular matrix of m rows. */
static size_t tri(size_t i, size_t j, size_t m)
{
	if (i > j) {
		size_t x = i;

		i = j;
		j = x;
	}
	return i * (2 * m - i - 1) / 2 + (j - i - 1);
}

struct merge {
	unsigned a, b; /* slots merged; the result lives in a */
	double h;
};

/* Average linkage over m clusters of sizes size[] with distances d[] (condensed, updated
 * in place), by the nearest-neighbour chain: O(m^2) time, since average linkage is
 * reducible (merging two clusters never brings a third one nearer than both were).
 * Fills the m - 1 merges in the order made. */
static int nn_chain(float *d, double *size, unsigned m, struct merge *out)
{
	unsigned *chain, len = 0, nr = 0;
	bool *gone;

	chain = malloc(m * sizeof(*chain));
	gone = calloc(m, sizeof(*gone));
	if (!chain || !gone) {
		free(chain);
		free(gone);
		return -ENOMEM;
	}
	while (nr + 1 < m) {
		unsigned a, b = m, prev;
		float best = 0;

		if (!len) {
			for (a = 0; gone[a]; a++)
				;
			chain[len++] = a;
		}
		a = chain[len - 1];
		prev = len >= 2 ? chain[len - 2] : m;
		/* The chain's previous element wins ties, or the chain could cycle. */
		if (prev < m) {
			b = prev;
			best = d[tri(a, prev, m)];
		}
		for (unsigned k = 0; k < m; k++) {
			if (k != a && !gone[k] && (b == m || d[tri(a, k, m)] < best)) {
				best = d[tri(a, k, m)];
				b = k;
			}
		}
		if (b != prev) {
			chain[len++] = b;
			continue;
		}
		/* a and b are each other's nearest: merge b into a. */
		len -= 2;
		for (unsigned k = 0; k < m; k++) {
			size_t ka = tri(k, a, m);

			if (k == a || k == b || gone[k])
				continue;
			d[ka] = (float)((size[a] * d[ka] + size[b] * d[tri(k, b, m)]) /
					(size[a] + size[b]));
		}
		size[a] += size[b];
		gone[b] = true;
		out[nr].a = a;
		out[nr].b = b;
		out[nr].h = best;
		nr++;
	}
	free(chain);
	free(gone);
	return 0;
}

static int merge_cmp(const void *x, const void *y)
{
	const struct merge *a = x, *b = y;

	return a->h < b->h ? -1 : a->h > b->h;
}

/* The cut: the widest gap between consecutive merge heights, counting 0 (every distinct
 * tree apart) and 1 (the height at which trees have nothing in common) as heights too.
 * merges[] sorted by height. Returns how many merges lie below the cut. */
static unsigned widest_gap(const struct merge *mg, unsigned nr, double *threshold)
{
	double lo = 0, best = -1;
	unsigned below = 0;

	for (unsigned i = 0; i <= nr; i++) {
		double h = i < nr ? mg[i].h : 1;

		if (h - lo > best) {
			best = h - lo;
			below = i;
			*threshold = (lo + h) / 2;
		}
		lo = h;
	}
	return below;
}

static unsigned uf_find(unsigned *parent, unsigned x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Average linkage over m trees of weights size[] (changed), cut at the widest gap:
 * parent[] (m entries) a union-find forest whose roots are the clusters. */
static int cut(const struct stacktree **trees, double *size, unsigned m, unsigned *parent,
	       double *threshold)
{
	struct merge *mg;
	float *d;
	int err;

	*threshold = 0;
	for (unsigned s = 0; s < m; s++)
		parent[s] = s;
	if (m < 2)
		return 0;
	d = malloc((size_t)m * (m - 1) / 2 * sizeof(*d));
	mg = malloc(m * sizeof(*mg));
	err = d && mg ? stacktree__all_pairs(trees, m, d) : -ENOMEM;
	if (!err)
		err = nn_chain(d, size, m, mg);
	if (!err) {
		unsigned below;

		qsort(mg, m - 1, sizeof(*mg), merge_cmp);
		below = widest_gap(mg, m - 1, threshold);
		/* Average linkage never merges below an earlier merge (no inversions), so
		 * the merges under the cut, applied in any order, give its clusters. */
		for (unsigned i = 0; i < below; i++)
			parent[uf_find(parent, mg[i].b)] = uf_find(parent, mg[i].a);
	}
	free(mg);
	free(d);
	return err;
}

struct group {
	unsigned size; /* threads */
	uint32_t min_tid;
	unsigned rank;
};

static int group_cmp(const void *x, const void *y, void *arg)
{
	const struct group *g = arg;
	const struct group *a = &g[*(const unsigned *)x], *b = &g[*(const unsigned *)y];

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->min_tid < b->min_tid ? -1 : a->min_tid > b->min_tid;
}

/* Groups identical trees: rep[i] is the index of the first thread whose tree equals
 * thread i's; returns the number of distinct trees, their first threads in first[]. */
static int dedup(const struct cluster_thread *t, unsigned n, unsigned *rep, unsigned *first,
		 unsigned *distinct)
{
	unsigned cap = 1, *head, *next, m = 0;
	uint64_t *sig;

	while (cap < 2 * n)
		cap *= 2;
	head = malloc(cap * sizeof(*head));
	next = malloc(n * sizeof(*next));
	sig = malloc(n * sizeof(*sig));
	if (!head || !next || !sig) {
		free(head);
		free(next);
		free(sig);
		return -ENOMEM;
	}
	memset(head, 0xff, cap * sizeof(*head));
	for (unsigned i = 0; i < n; i++) {
		unsigned *slot, j;

		sig[i] = signature(t[i].tree);
		slot = &head[sig[i] & (cap - 1)];
		for (j = *slot; j != UINT32_MAX; j = next[j])
			if (sig[j] == sig[i] && stacktree__distance(t[j].tree, t[i].tree) == 0)
				break;
		if (j != UINT32_MAX) {
			rep[i] = j;
			continue;
		}
		rep[i] = i;
		next[i] = *slot;
		*slot = i;
		first[m++] = i;
	}
	free(head);
	free(next);
	free(sig);
	*distinct = m;
	return 0;
}

int cluster__threads(const struct cluster_thread *t, unsigned n, struct cluster_result *res)
{
	unsigned *rep = NULL, *first = NULL, *slot_of = NULL, *parent = NULL, *order = NULL;
	const struct stacktree **trees = NULL;
	unsigned m = 0, nr_groups = 0;
	struct group *groups = NULL;
	double *size = NULL;
	int err = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (!n)
		return 0;
	if (!t)
		return -EINVAL;
	rep = malloc(n * sizeof(*rep));
	first = malloc(n * sizeof(*first));
	slot_of = malloc(n * sizeof(*slot_of));
	res->assign = malloc(n * sizeof(*res->assign));
	if (!rep || !first || !slot_of || !res->assign)
		goto out;
	err = dedup(t, n, rep, first, &m);
	if (err)
		goto out;
	err = -ENOMEM;
	res->distinct = m;
	parent = malloc(m * sizeof(*parent));
	size = calloc(m, sizeof(*size));
	trees = malloc(m * sizeof(*trees));
	groups = calloc(m, sizeof(*groups));
	order = malloc(m * sizeof(*order));
	if (!parent || !size || !trees || !groups || !order)
		goto out;
	for (unsigned s = 0; s < m; s++) {
		slot_of[first[s]] = s;
		trees[s] = t[first[s]].tree;
	}
	for (unsigned i = 0; i < n; i++)
		size[slot_of[rep[i]]] += 1;
	err = cut(trees, size, m, parent, &res->threshold);
	if (err)
		goto out;

	for (unsigned i = 0; i < n; i++) {
		struct group *g = &groups[uf_find(parent, slot_of[rep[i]])];

		if (!g->size++ || t[i].tid < g->min_tid)
			g->min_tid = t[i].tid;
	}
	for (unsigned s = 0; s < m; s++)
		if (groups[s].size)
			order[nr_groups++] = s;
	qsort_r(order, nr_groups, sizeof(*order), group_cmp, groups);
	for (unsigned r = 0; r < nr_groups; r++)
		groups[order[r]].rank = r;
	for (unsigned i = 0; i < n; i++)
		res->assign[i] = groups[uf_find(parent, slot_of[rep[i]])].rank;
	res->nr_clusters = nr_groups;
out:
	free(trees);
	free(order);
	free(groups);
	free(size);
	free(parent);
	free(slot_of);
	free(first);
	free(rep);
	if (err)
		cluster_result__free(res);
	return err;
}

void cluster_result__free(struct cluster_result *res)
{
	if (!res)
		return;
	free(res->assign);
	memset(res, 0, sizeof(*res));
}

int cluster__match(const struct stacktree *const *a, unsigned na, const struct stacktree *const *b,
		   unsigned nb, int *map)
{
	const struct stacktree **trees = NULL;
	unsigned m = na + nb, *parent = NULL;
	double *size = NULL, threshold;
	int err = -ENOMEM;

	if ((na && !a) || (nb && !b) || (nb && !map))
		return -EINVAL;
	for (unsigned j = 0; j < nb; j++)
		map[j] = -1;
	if (!na || !nb)
		return 0;
	trees = malloc(m * sizeof(*trees));
	size = malloc(m * sizeof(*size));
	parent = malloc(m * sizeof(*parent));
	if (!trees || !size || !parent)
		goto out;
	for (unsigned i = 0; i < m; i++) {
		trees[i] = i < na ? a[i] : b[i - na];
		size[i] = 1;
	}
	/* The clusters of both runs clustered together, by the same rule as threads: a
	 * cluster of B and one of A that land in one cluster would have been one cluster
	 * had they been in one run. */
	err = cut(trees, size, m, parent, &threshold);
	if (err)
		goto out;
	for (unsigned j = 0; j < nb; j++) {
		unsigned root = uf_find(parent, na + j);
		double best = 2;

		/* Several clusters of B may be one of A (a pool that one run split into busy
		 * and idle threads): each goes to the nearest of A's beside it. */
		for (unsigned i = 0; i < na; i++)
			if (uf_find(parent, i) == root) {
				double x = stacktree__distance(a[i], b[j]);

				if (x < best) {
					best = x;
					map[j] = (int)i;
				}
			}
	}
out:
	free(parent);
	free(size);
	free(trees);
	return err;
}
