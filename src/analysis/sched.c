/* Runtime, switches and scheduling delay per thread, from switch and wake-up events in time
 * order. A delay starts when a thread is woken (sched_wakeup) or preempted and ends when it
 * is switched in. */
#include <stdlib.h>
#include <string.h>

#include "analysis/sched.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/util.h"

struct state {
	struct sched_report *r;
	struct u64map idx;
	size_t cap;
	const struct trace *t;
};

static struct sched_task *task(struct state *s, uint32_t tid, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map__slot(&s->idx, tid, &created);
	struct sched_task *k;

	if (created) {
		xgrow((void **)&s->r->tasks, &s->cap, s->r->nr + 1, sizeof(*s->r->tasks));
		*slot = s->r->nr;
		k = &s->r->tasks[s->r->nr++];
		memset(k, 0, sizeof(*k));
		k->tid = tid;
		k->pid = pid;
	}
	return &s->r->tasks[*slot];
}

unsigned int sched__bucket(uint64_t delay_ns)
{
	uint64_t us = delay_ns / 1000;
	unsigned int b = 0;

	while (us && b < SCHED_HIST_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

static void switch_in(struct sched_task *k, uint64_t ts)
{
	k->on_since = ts;
	if (k->ready_since && ts >= k->ready_since) {
		uint64_t d = ts - k->ready_since;

		k->delays++;
		k->delay_sum_ns += d;
		k->hist[sched__bucket(d)]++;
		if (d > k->max_delay_ns) {
			k->max_delay_ns = d;
			k->max_delay_at_ns = ts;
		}
	}
	k->ready_since = 0;
}

uint64_t sched__interval_runtime(struct sched_clock *c, const struct rec *e, uint64_t on_since)
{
	uint64_t now = e->sw.runtime_ns, prev = c->charged, d = 0;

	if (!on_since || e->h.ts < on_since)
		d = 0; /* as the timeline, which has no slice for it */
	else if (now && (prev || c->born) && now >= prev)
		d = now - prev;
	else
		d = e->h.ts - on_since;
	c->charged = now;
	c->born = false;
	return d;
}

static void switch_out(struct sched_task *k, const struct rec *e)
{
	k->runtime_ns += sched__interval_runtime(&k->clock, e, k->on_since);
	k->on_since = 0;
	k->switches++;
	if (e->h.aux == 0)
		k->preemptions++;
	k->ready_since = e->h.aux == 0 ? e->h.ts : 0;
}

static double avg(const struct sched_task *k)
{
	return k->delays ? (double)k->delay_sum_ns / k->delays : 0;
}

static int cmp_task(const void *a, const void *b)
{
	const struct sched_task *x = a, *y = b;

	if (avg(x) != avg(y))
		return avg(x) < avg(y) ? 1 : -1;
	if (x->runtime_ns != y->runtime_ns)
		return x->runtime_ns < y->runtime_ns ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void sched__analyze(const struct trace *t, struct sched_report *r)
{
	struct state s = {.r = r, .t = t};
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct sched_task *k;

		trace__done_before(t, i);

		switch (e->h.type) {
		case REC_SWITCH:
			if ((e->sw.flags & SWITCH_PREV_TARGET) && e->h.tid)
				switch_out(task(&s, e->h.tid, e->h.pid), e);
			if ((e->sw.flags & SWITCH_NEXT_TARGET) && e->sw.next_tid) {
				k = task(&s, e->sw.next_tid, e->sw.next_pid);
				/* when it became ready: unknown */
				if (e->sw.flags & SWITCH_NEXT_GAP)
					k->ready_since = 0;
				switch_in(k, e->h.ts);
			}
			break;
		case REC_WAKEUP:
		case REC_WAKEUP_NEW:
			if (!e->h.tid)
				break;
			k = task(&s, e->h.tid, e->h.pid);
			if (e->h.type == REC_WAKEUP_NEW)
				sched_clock__born(&k->clock);
			if (!k->on_since && !k->ready_since)
				k->ready_since = e->h.ts;
			break;
		}
	}
	for (i = 0; i < r->nr; i++) {
		const struct trace_thread *th = trace__thread(t, r->tasks[i].tid);

		if (th) {
			memcpy(r->tasks[i].comm, th->comm, sizeof(th->comm));
			if (!r->tasks[i].pid)
				r->tasks[i].pid = th->pid;
		}
	}
	if (r->nr)
		qsort(r->tasks, r->nr, sizeof(*r->tasks), cmp_task);
	u64map__free(&s.idx);
}

void sched_report__free(struct sched_report *r)
{
	free(r->tasks);
	r->tasks = NULL;
	r->nr = 0;
}
