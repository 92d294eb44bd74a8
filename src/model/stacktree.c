/* A thread's call-stack tree (its stacks as paths of frame names, outermost first, each
 * node weighted by the time spent at or below it) and the distance between two such trees.
 * Frame names are normalised on the way in so that names differing only by an address or
 * an offset compare equal. See docs/model-clustering.md for what the distance computes. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"
#include "model/stacktree.h"
#include "util/util.h"

struct stacktree *stacktree__new(void)
{
	struct stacktree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->root = calloc(1, sizeof(*t->root) + 1);
	if (!t->root) {
		free(t);
		return NULL;
	}
	return t;
}

static void node_free(struct st_node *n)
{
	for (unsigned i = 0; i < n->nr_kids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n);
}

void stacktree__free(struct stacktree *t)
{
	if (!t)
		return;
	node_free(t->root);
	free(t);
}

static bool is_hex(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

static bool is_0x(const char *s, size_t len)
{
	return len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && is_hex(s + 2, len - 2);
}

/* Where a trailing "+0x1f" or "+0x1f/0x80" starts in name (len when there is none);
 * *sized set for the second form, a symbol's offset and size. */
static size_t offset_at(const char *name, size_t len, bool *sized)
{
	const char *plus = NULL, *end = name + len, *slash;

	*sized = false;
	for (size_t i = len; i-- > 0;)
		if (name[i] == '+') {
			plus = name + i;
			break;
		}
	if (!plus || plus == name)
		return len;
	slash = memchr(plus + 1, '/', end - plus - 1);
	if (slash && !is_0x(slash + 1, end - slash - 1))
		return len;
	if (!is_0x(plus + 1, (slash ? slash : end) - plus - 1))
		return len;
	*sized = slash != NULL;
	return plus - name;
}

int stacktree__normalise(const char *name, bool leaf, const char **out, size_t *out_len)
{
	size_t len = name ? strlen(name) : 0, cut;
	bool sized;

	/* A bare address names no place that another thread or another run (with its own
	 * address space layout) could share: all such frames are one unknown place. */
	if (!len || is_0x(name, len) || !strcmp(name, "[unknown]")) {
		*out = "[unknown]";
		*out_len = strlen("[unknown]");
		return 1;
	}
	*out = name;
	*out_len = len;
	cut = offset_at(name, len, &sized);
	if (cut == len)
		return 0;
	/* "sym+0x1a/0x80" is a place in a known function: the function is the place. */
	if (sized) {
		*out_len = cut;
		return 0;
	}
	/* "memcached+0x1904b" (srvscope's name for a frame in a module without a symbol
	 * there) is, above the leaf, a return address: the same call site in every thread
	 * and every run of that binary (module-relative), and the only thing that tells a
	 * stripped server's thread functions apart. At the leaf it is where a sample hit,
	 * which varies from sample to sample within one function: the module is the place. */
	if (leaf) {
		*out_len = cut;
		return 1;
	}
	return 0;
}

/* A hash of a frame name taken 8 bytes at a time: every frame of every stack added is
 * hashed, and byte-at-a-time FNV-1a was most of the cost of an add. */
static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, v;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (len) {
		v = 0;
		memcpy(&v, s, len);
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static int kid_cmp(uint64_t h, const char *name, size_t len, const struct st_node *k)
{
	int c;

	if (h != k->hash)
		return h < k->hash ? -1 : 1;
	c = memcmp(name, k->name, len < k->len ? len : k->len);
	if (c)
		return c;
	return len < k->len ? -1 : len > k->len;
}

/* The child of n named name[0..len), created when absent; children stay sorted by (hash,
 * name) so that two trees' children are walked side by side. */
static struct st_node *kid_get(struct stacktree *t, struct st_node *n, const char *name, size_t len)
{
	uint64_t h = name_hash(name, len);
	unsigned lo = 0, hi = n->nr_kids;
	struct st_node *k;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		int c = kid_cmp(h, name, len, n->kids[mid]);

		if (!c)
			return n->kids[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (n->nr_kids == n->cap) {
		unsigned cap = n->cap ? n->cap * 2 : 2;
		struct st_node **kids = realloc(n->kids, cap * sizeof(*kids));

		if (!kids)
			return NULL;
		n->kids = kids;
		n->cap = cap;
	}
	k = calloc(1, sizeof(*k) + len + 1);
	if (!k)
		return NULL;
	memcpy(k->name, name, len);
	k->len = len;
	k->hash = h;
	memmove(n->kids + lo + 1, n->kids + lo, (n->nr_kids - lo) * sizeof(*n->kids));
	n->kids[lo] = k;
	n->nr_kids++;
	t->nr_nodes++;
	return k;
}

int stacktree__add(struct stacktree *t, const char *const *frames, unsigned nr, uint64_t ns)
{
	struct st_node *path[STACKTREE_MAX_DEPTH];
	unsigned depth = 0;
	int prev_anon = 0;
	const char *prev = NULL;
	size_t prev_len = 0;

	if (!t || (nr && !frames))
		return -EINVAL;
	for (unsigned i = 0; i < nr && depth < STACKTREE_MAX_DEPTH; i++) {
		struct st_node *parent = depth ? path[depth - 1] : t->root;
		const char *name;
		size_t len;
		int anon = stacktree__normalise(frames[i], i + 1 == nr, &name, &len);

		/* Unwinding through code without symbols finds a varying number of frames
		 * there: a run of one anonymous place is one frame. */
		if (anon && prev_anon && len == prev_len && !memcmp(name, prev, len))
			continue;
		path[depth] = kid_get(t, parent, name, len);
		if (!path[depth])
			return -ENOMEM;
		depth++;
		prev = name;
		prev_len = len;
		prev_anon = anon;
	}
	t->root->ns += ns;
	t->root->cnt++;
	for (unsigned i = 0; i < depth; i++) {
		path[i]->ns += ns;
		path[i]->cnt++;
	}
	t->mass_ns += ns * depth;
	t->mass_cnt += depth;
	return 0;
}

static double w(const struct st_node *n, bool cnt)
{
	return cnt ? (double)n->cnt : (double)n->ns;
}

double stacktree__mass(const struct stacktree *t)
{
	bool cnt = stacktree__by_count(t);
	double total = w(t->root, cnt);

	if (total <= 0)
		return 0;
	return (cnt ? (double)t->mass_cnt : (double)t->mass_ns) / total;
}

struct side {
	bool cnt;
	double total;
};

/* Below two matched nodes: the sum over their matched descendants of the smaller of their
 * two shares (what the two trees have in common); *differ set when a node is in one tree
 * only or a share differs. */
static double common_below(const struct st_node *a, const struct side *sa, const struct st_node *b,
			   const struct side *sb, bool *differ)
{
	unsigned i = 0, j = 0;
	double s = 0;

	while (i < a->nr_kids && j < b->nr_kids) {
		const struct st_node *ka = a->kids[i], *kb = b->kids[j];
		int c = kid_cmp(ka->hash, ka->name, ka->len, kb);

		if (c < 0) {
			i++;
			*differ = true;
		} else if (c > 0) {
			j++;
			*differ = true;
		} else {
			double x = w(ka, sa->cnt) / sa->total, y = w(kb, sb->cnt) / sb->total;

			if (x != y)
				*differ = true;
			s += (x < y ? x : y) + common_below(ka, sa, kb, sb, differ);
			i++;
			j++;
		}
	}
	if (i < a->nr_kids || j < b->nr_kids)
		*differ = true;
	return s;
}

/* The sum of |a(v) - b(v)| over every node of either tree is Ma + Mb - 2 S, where S is
 * the sum of min(a(v), b(v)) over the nodes in both: only the common part is walked.
 * Trees with equal shares everywhere are at 0 exactly (equal fractions divide to the same
 * double), which the merging of identical trees relies on. */
double stacktree__distance(const struct stacktree *a, const struct stacktree *b)
{
	struct side sa, sb;
	bool differ = false;
	double ma, mb, d;

	if (a == b)
		return 0;
	ma = a ? stacktree__mass(a) : 0;
	mb = b ? stacktree__mass(b) : 0;
	if (ma <= 0 || mb <= 0)
		return ma <= 0 && mb <= 0 ? 0 : 1;
	sa.cnt = stacktree__by_count(a);
	sa.total = w(a->root, sa.cnt);
	sb.cnt = stacktree__by_count(b);
	sb.total = w(b->root, sb.cnt);
	d = 1 - 2 * common_below(a->root, &sa, b->root, &sb, &differ) / (ma + mb);
	if (!differ)
		return 0;
	return d < 0 ? 0 : d > 1 ? 1 : d;
}

static int merge_below(struct stacktree *t, struct st_node *dst, const struct st_node *src)
{
	for (unsigned i = 0; i < src->nr_kids; i++) {
		const struct st_node *s = src->kids[i];
		struct st_node *d = kid_get(t, dst, s->name, s->len);

		if (!d)
			return -ENOMEM;
		d->ns += s->ns;
		d->cnt += s->cnt;
		if (merge_below(t, d, s))
			return -ENOMEM;
	}
	return 0;
}

int stacktree__merge(struct stacktree *dst, const struct stacktree *src)
{
	struct st_node *r;

	if (!dst || !src)
		return -EINVAL;
	if (dst == src)
		return -EINVAL;
	r = dst->root;
	r->ns += src->root->ns;
	r->cnt += src->root->cnt;
	dst->mass_ns += src->mass_ns;
	dst->mass_cnt += src->mass_cnt;
	return merge_below(dst, r, src->root);
}

unsigned stacktree__heaviest(const struct stacktree *t, const char **names, unsigned max)
{
	const struct st_node *n;
	unsigned nr = 0;
	bool cnt;

	if (!t)
		return 0;
	cnt = stacktree__by_count(t);
	n = t->root;
	while (nr < max && n->nr_kids) {
		const struct st_node *best = n->kids[0];
		double below = 0;

		/* Ties go to the smaller name, so the answer does not depend on hashing. */
		for (unsigned i = 0; i < n->nr_kids; i++) {
			const struct st_node *k = n->kids[i];

			below += w(k, cnt);
			if (w(k, cnt) > w(best, cnt) ||
			    (w(k, cnt) == w(best, cnt) && strcmp(k->name, best->name) < 0))
				best = k;
		}
		/* Stacks that end at n weigh more than any child: the path ends here (an
		 * interrupt now and then under a wait is not where the thread waits). */
		if (n != t->root && w(n, cnt) - below >= w(best, cnt))
			break;
		names[nr++] = best->name;
		n = best;
	}
	return nr;
}
