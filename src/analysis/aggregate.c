/* Grouping of identical stacks. A stack's identity is its sequence of (module, symbol)
 * pairs, or (module, offset) for unknown frames, so the same function at different
 * instruction offsets still groups together, as a poor man's profiler does. */
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "util/strpool.h"
#include "util/util.h"

struct agg_priv {
	struct strpool *pool;
	size_t *index; /* open addressing over groups: group number + 1, 0 when empty */
	size_t index_cap;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_str(const char *s)
{
	return s ? fnv1a_str(s, FNV1A_INIT) : 0;
}

static bool same_frame(const struct frame *a, const struct frame *b)
{
	if (a->kernel != b->kernel)
		return false;
	if (a->symbol || b->symbol)
		return a->symbol && b->symbol && !strcmp(a->symbol, b->symbol) &&
		       !strcmp(a->module ? a->module : "", b->module ? b->module : "");
	return a->offset == b->offset &&
	       !strcmp(a->module ? a->module : "", b->module ? b->module : "");
}

/* The frames of t that take part in grouping: kernel frames only when asked. */
static void key_frames(const struct stack_agg *agg, const struct thread_sample *t,
		       const struct frame **first, unsigned int *nr)
{
	unsigned int k = 0;

	while (k < t->nr_frames && t->frames[k].kernel)
		k++;
	*first = agg->kernel ? t->frames : t->frames + k;
	*nr = agg->kernel ? t->nr_frames : t->nr_frames - k;
}

static uint64_t stack_hash(const struct frame *f, unsigned int n)
{
	uint64_t h = n;
	unsigned int i;

	for (i = 0; i < n; i++) {
		h = mix(h, hash_str(f[i].module));
		h = mix(h, f[i].symbol ? hash_str(f[i].symbol) : f[i].offset);
		h = mix(h, f[i].kernel);
	}
	return h;
}

/* Rebuilds the hash index with room for at least room groups. */
static void reindex(struct stack_agg *agg, size_t room)
{
	struct agg_priv *p = agg->priv;
	size_t i;

	free(p->index);
	p->index_cap = 64;
	while (p->index_cap < room * 2 + 2)
		p->index_cap *= 2;
	p->index = xcalloc(p->index_cap, sizeof(*p->index));
	for (i = 0; i < agg->nr_groups; i++) {
		size_t s = agg->groups[i].key & (p->index_cap - 1);

		while (p->index[s])
			s = (s + 1) & (p->index_cap - 1);
		p->index[s] = i + 1;
	}
}

static struct stack_group *find_group(struct stack_agg *agg, const struct frame *f, unsigned int n,
				      uint64_t key)
{
	struct agg_priv *p = agg->priv;
	size_t s = key & (p->index_cap - 1);
	struct stack_group *g;
	unsigned int i;

	for (; p->index[s]; s = (s + 1) & (p->index_cap - 1)) {
		g = &agg->groups[p->index[s] - 1];
		if (g->key != key || g->nr_frames != n)
			continue;
		for (i = 0; i < n && same_frame(&g->frames[i], &f[i]); i++)
			;
		if (i == n)
			return g;
	}
	if ((agg->nr_groups + 1) * 2 > p->index_cap) {
		reindex(agg, agg->nr_groups + 1);
		s = key & (p->index_cap - 1);
		while (p->index[s])
			s = (s + 1) & (p->index_cap - 1);
	}
	xgrow((void **)&agg->groups, &agg->cap_groups, agg->nr_groups + 1, sizeof(*agg->groups));
	g = &agg->groups[agg->nr_groups++];
	memset(g, 0, sizeof(*g));
	g->key = key;
	g->nr_frames = n;
	g->frames = xcalloc(n ? n : 1, sizeof(*g->frames));
	for (i = 0; i < n; i++) {
		g->frames[i] = f[i];
		g->frames[i].symbol = strpool__intern(p->pool, f[i].symbol);
		g->frames[i].module = strpool__intern(p->pool, f[i].module);
	}
	p->index[s] = agg->nr_groups;
	return g;
}

static void add_thread(struct stack_group *g, const struct thread_sample *t)
{
	struct group_thread *gt = NULL;
	size_t i;

	for (i = 0; i < g->nr_threads; i++)
		if (g->threads[i].tid == t->tid)
			gt = &g->threads[i];
	if (!gt) {
		xgrow((void **)&g->threads, &g->cap_threads, g->nr_threads + 1,
		      sizeof(*g->threads));
		gt = &g->threads[g->nr_threads++];
		memset(gt, 0, sizeof(*gt));
		gt->tid = t->tid;
		gt->pid = t->pid;
	}
	/* Names are escaped as they enter the aggregate, which every stacks and top output
	 * reads: a thread names itself, with any bytes it likes. */
	name_escape(gt->name, sizeof(gt->name), t->name, strnlen(t->name, sizeof(t->name)));
	gt->state = t->state;
	gt->syscall = t->syscall;
	gt->count++;
	g->count++;
}

struct stack_agg *stack_agg__new(bool kernel)
{
	struct stack_agg *agg = xcalloc(1, sizeof(*agg));
	struct agg_priv *p = xcalloc(1, sizeof(*p));

	p->pool = strpool__new();
	agg->priv = p;
	agg->kernel = kernel;
	reindex(agg, 0);
	return agg;
}

void stack_agg__delete(struct stack_agg *agg)
{
	struct agg_priv *p;
	size_t i;

	if (!agg)
		return;
	p = agg->priv;
	for (i = 0; i < agg->nr_groups; i++) {
		free(agg->groups[i].frames);
		free(agg->groups[i].threads);
	}
	free(agg->groups);
	strpool__delete(p->pool);
	free(p->index);
	free(p);
	free(agg);
}

void stack_agg__add(struct stack_agg *agg, const struct snapshot *snap)
{
	size_t i;

	agg->pid = snap->pid;
	name_escape(agg->comm, sizeof(agg->comm), snap->comm,
		    strnlen(snap->comm, sizeof(snap->comm)));
	agg->mode = snap->mode;
	agg->samples++;
	if (snap->nr_threads > agg->threads)
		agg->threads = snap->nr_threads;
	if (snap->procs > agg->processes)
		agg->processes = snap->procs;
	agg->exited += snap->exited;
	agg->failed += snap->failed;
	if (snap->freeze_ns > agg->freeze_ns_max)
		agg->freeze_ns_max = snap->freeze_ns;
	for (i = 0; i < snap->nr_threads; i++) {
		const struct thread_sample *t = &snap->threads[i];
		const struct frame *f;
		unsigned int n;

		key_frames(agg, t, &f, &n);
		add_thread(find_group(agg, f, n, stack_hash(f, n)), t);
		if (t->stall_ns) {
			agg->stall.total_ns += t->stall_ns;
			agg->stall.nr++;
			if (t->stall_ns > agg->stall.max_ns)
				agg->stall.max_ns = t->stall_ns;
		}
	}
}

static const char *first_name(const struct stack_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nr_frames; i++)
		if (g->frames[i].symbol)
			return g->frames[i].symbol;
	return "";
}

static int cmp_group(const void *a, const void *b)
{
	const struct stack_group *x = a, *y = b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	c = strcmp(first_name(x), first_name(y));
	if (c)
		return c;
	return x->nr_threads && y->nr_threads ? x->threads[0].tid - y->threads[0].tid : 0;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct group_thread *x = a, *y = b;

	return x->tid - y->tid;
}

void stack_agg__sort(struct stack_agg *agg)
{
	size_t i;

	for (i = 0; i < agg->nr_groups; i++)
		qsort(agg->groups[i].threads, agg->groups[i].nr_threads,
		      sizeof(*agg->groups[i].threads), cmp_thread);
	qsort(agg->groups, agg->nr_groups, sizeof(*agg->groups), cmp_group);
	reindex(agg, agg->nr_groups);
}
