/* Running and preempted slices come from the switch events in time order; blocked and woken
 * slices from the blocking episodes, which already pair each sleep with its wake-up and
 * waker. The two never overlap: a sleeping switch-out starts an episode, a runnable one a
 * preempted slice, and either ends at the next switch-in. */
#include <stdlib.h>
#include <string.h>

#include "analysis/sched.h"
#include "analysis/timeline.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/util.h"

struct run {
	uint64_t on_since, preempted_since;
	uint32_t pid;
	struct sched_clock clock;
};

struct builder {
	void (*fn)(void *ctx, const struct tl_slice *s);
	void *ctx;
	struct u64map idx; /* tid -> index in runs */
	struct run *runs;
	size_t nr_runs, cap_runs;
};

static void add(struct builder *b, uint32_t tid, uint32_t pid, enum tl_kind kind, uint64_t start,
		uint64_t end, bool open, size_t ep, uint64_t cpu_ns)
{
	struct tl_slice s = {.tid = tid,
			     .pid = pid,
			     .kind = kind,
			     .open = open,
			     .start_ns = start,
			     .end_ns = end,
			     .ep = ep,
			     .cpu_ns = cpu_ns};

	if (end >= start)
		b->fn(b->ctx, &s);
}

static struct run *run_of(struct builder *b, uint32_t tid, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map__slot(&b->idx, tid, &created);

	if (created) {
		xgrow((void **)&b->runs, &b->cap_runs, b->nr_runs + 1, sizeof(*b->runs));
		*slot = b->nr_runs;
		memset(&b->runs[b->nr_runs], 0, sizeof(*b->runs));
		b->runs[b->nr_runs++].pid = pid;
	}
	return &b->runs[*slot];
}

/* Running and preempted slices, from the switches in time order. */
static void switch_slices(const struct trace *t, struct builder *b)
{
	uint64_t key, val;
	size_t i, it;

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct run *r;

		trace__done_before(t, i);

		if (e->h.type == REC_WAKEUP_NEW && e->h.tid) {
			r = run_of(b, e->h.tid, e->h.pid);
			sched_clock__born(&r->clock);
		}
		if (e->h.type != REC_SWITCH)
			continue;
		if ((e->sw.flags & SWITCH_PREV_TARGET) && e->h.tid) {
			uint64_t cpu;

			r = run_of(b, e->h.tid, e->h.pid);
			if (e->sw.flags & SWITCH_PREV_GAP) /* its switches were left out */
				r->on_since = 0;
			cpu = sched__interval_runtime(&r->clock, e, r->on_since);
			if (r->on_since)
				add(b, e->h.tid, e->h.pid, TL_RUNNING, r->on_since, e->h.ts, false,
				    0, cpu);
			r->on_since = 0;
			r->preempted_since = e->h.aux == 0 ? e->h.ts : 0;
		}
		if ((e->sw.flags & SWITCH_NEXT_TARGET) && e->sw.next_tid) {
			r = run_of(b, e->sw.next_tid, e->sw.next_pid);
			if (e->sw.flags & SWITCH_NEXT_GAP)
				r->preempted_since = 0;
			if (r->preempted_since)
				add(b, e->sw.next_tid, e->sw.next_pid, TL_PREEMPTED,
				    r->preempted_since, e->h.ts, false, 0, 0);
			r->preempted_since = 0;
			r->on_since = e->h.ts;
		}
	}
	for (it = 0; u64map__next(&b->idx, &it, &key, &val);) {
		const struct run *r = &b->runs[val];

		if (r->on_since)
			add(b, key, r->pid, TL_RUNNING, r->on_since, t->end_ns, true, 0, 0);
		else if (r->preempted_since)
			add(b, key, r->pid, TL_PREEMPTED, r->preempted_since, t->end_ns, true, 0,
			    0);
	}
	free(b->runs);
	u64map__free(&b->idx);
}

/* Blocked and woken slices, from the episodes. */
static void episode_slices(const struct block_report *blocks, struct builder *b)
{
	size_t i;

	for (i = 0; i < blocks->nr; i++) {
		const struct block_episode *ep = &blocks->eps[i];
		bool woken = ep->wake_ns >= ep->start_ns && ep->wake_ns <= ep->end_ns;

		add(b, ep->tid, ep->pid, TL_BLOCKED, ep->start_ns, woken ? ep->wake_ns : ep->end_ns,
		    ep->from_start || (!woken && ep->unfinished), i, 0);
		if (woken)
			add(b, ep->tid, ep->pid, TL_WOKEN, ep->wake_ns, ep->end_ns, ep->unfinished,
			    i, 0);
	}
}

void timeline__each(const struct trace *t, const struct block_report *blocks,
		    void (*fn)(void *ctx, const struct tl_slice *s), void *ctx)
{
	struct builder b = {.fn = fn, .ctx = ctx};

	switch_slices(t, &b);
	episode_slices(blocks, &b);
}

struct store {
	struct timeline *tl;
	size_t cap;
	const struct trace *t;
	long pid, tid;
	const char *comm;
};

/* Keeps only the threads the filter lets through (the episodes are filtered already). */
static void store(void *ctx, const struct tl_slice *s)
{
	struct store *st = ctx;

	if (!trace__task_match(st->t, st->pid, st->tid, st->comm, s->pid, s->tid))
		return;
	xgrow((void **)&st->tl->slices, &st->cap, st->tl->nr + 1, sizeof(*st->tl->slices));
	st->tl->slices[st->tl->nr++] = *s;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct tl_slice *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

void timeline__build(const struct trace *t, const struct block_filter *f, struct timeline *tl)
{
	struct block_filter all = {0};
	struct store st = {.tl = tl, .t = t};
	struct builder b = {.fn = store, .ctx = &st};

	memset(tl, 0, sizeof(*tl));
	if (f) {
		all = *f;
		all.min_ns = 0;
		st.pid = f->pid;
		st.tid = f->tid;
		st.comm = f->comm;
	}
	switch_slices(t, &b);
	blocking__analyze_unsorted(t, f ? &all : NULL, &tl->blocks);
	episode_slices(&tl->blocks, &b);
	if (tl->nr)
		qsort(tl->slices, tl->nr, sizeof(*tl->slices), cmp_slice);
}

void timeline__free(struct timeline *tl)
{
	free(tl->slices);
	block_report__free(&tl->blocks);
	memset(tl, 0, sizeof(*tl));
}

const char *timeline__kind_name(enum tl_kind kind)
{
	static const char *const names[] = {"running", "runnable (preempted)", "blocked",
					    "runnable (woken)"};

	return kind < ARRAY_SIZE(names) ? names[kind] : "?";
}
