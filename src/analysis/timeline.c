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
	struct timeline *tl;
	size_t cap;
	struct u64map idx; /* tid -> index in runs */
	struct run *runs;
	size_t nr_runs, cap_runs;
};

static struct tl_slice *add(struct builder *b, uint32_t tid, uint32_t pid, enum tl_kind kind,
			    uint64_t start, uint64_t end, bool open, size_t ep)
{
	struct tl_slice *s;

	if (end < start)
		return NULL;
	xgrow((void **)&b->tl->slices, &b->cap, b->tl->nr + 1, sizeof(*b->tl->slices));
	s = &b->tl->slices[b->tl->nr++];
	s->tid = tid;
	s->pid = pid;
	s->kind = kind;
	s->open = open;
	s->start_ns = start;
	s->end_ns = end;
	s->ep = ep;
	s->cpu_ns = 0;
	return s;
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
	struct builder b = {.tl = tl};
	long pid = f ? f->pid : 0, tid = f ? f->tid : 0;
	const char *comm = f ? f->comm : NULL;
	uint64_t key, val;
	size_t i, n, it;

	memset(tl, 0, sizeof(*tl));
	if (f) {
		all = *f;
		all.min_ns = 0;
	}
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct run *r;

		trace__done_before(t, i);

		if (e->h.type == REC_WAKEUP_NEW && e->h.tid) {
			r = run_of(&b, e->h.tid, e->h.pid);
			sched_clock__born(&r->clock);
		}
		if (e->h.type != REC_SWITCH)
			continue;
		if ((e->sw.flags & SWITCH_PREV_TARGET) && e->h.tid) {
			uint64_t cpu;

			r = run_of(&b, e->h.tid, e->h.pid);
			cpu = sched__interval_runtime(&r->clock, e, r->on_since);
			if (r->on_since) {
				struct tl_slice *s = add(&b, e->h.tid, e->h.pid, TL_RUNNING,
							 r->on_since, e->h.ts, false, 0);

				if (s)
					s->cpu_ns = cpu;
			}
			r->on_since = 0;
			r->preempted_since = e->h.aux == 0 ? e->h.ts : 0;
		}
		if ((e->sw.flags & SWITCH_NEXT_TARGET) && e->sw.next_tid) {
			r = run_of(&b, e->sw.next_tid, e->sw.next_pid);
			if (r->preempted_since)
				add(&b, e->sw.next_tid, e->sw.next_pid, TL_PREEMPTED,
				    r->preempted_since, e->h.ts, false, 0);
			r->preempted_since = 0;
			r->on_since = e->h.ts;
		}
	}
	for (it = 0; u64map__next(&b.idx, &it, &key, &val);) {
		const struct run *r = &b.runs[val];

		if (r->on_since)
			add(&b, key, r->pid, TL_RUNNING, r->on_since, t->end_ns, true, 0);
		else if (r->preempted_since)
			add(&b, key, r->pid, TL_PREEMPTED, r->preempted_since, t->end_ns, true, 0);
	}
	/* Keep only the threads the filter lets through (the episodes are filtered already). */
	for (i = 0, n = 0; i < tl->nr; i++)
		if (trace__task_match(t, pid, tid, comm, tl->slices[i].pid, tl->slices[i].tid))
			tl->slices[n++] = tl->slices[i];
	tl->nr = n;
	blocking__analyze_unsorted(t, f ? &all : NULL, &tl->blocks);
	for (i = 0; i < tl->blocks.nr; i++) {
		const struct block_episode *ep = &tl->blocks.eps[i];
		bool woken = ep->wake_ns >= ep->start_ns && ep->wake_ns <= ep->end_ns;

		add(&b, ep->tid, ep->pid, TL_BLOCKED, ep->start_ns,
		    woken ? ep->wake_ns : ep->end_ns, ep->from_start || (!woken && ep->unfinished),
		    i);
		if (woken)
			add(&b, ep->tid, ep->pid, TL_WOKEN, ep->wake_ns, ep->end_ns, ep->unfinished,
			    i);
	}
	if (tl->nr)
		qsort(tl->slices, tl->nr, sizeof(*tl->slices), cmp_slice);
	free(b.runs);
	u64map__free(&b.idx);
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
