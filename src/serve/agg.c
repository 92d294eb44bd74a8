/* serve's aggregate: a thread's switch out while not runnable opens a blocking episode
 * (its syscall and stacks kept), the waking that ends it says how long it was blocked and
 * by what kind of waker, its switch in how long it then waited for a CPU (scheduling
 * delay; a preempted thread's wait is from its switch out). The same definitions as
 * 'srvscope blocking' and 'sched' (docs/serve.md). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/record.h"
#include "serve/agg.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/keytab.h"
#include "util/util.h"

/* Scheduling delay histogram bounds, seconds (the last bucket, +Inf, is implicit). */
static const double delay_bounds[] = {0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
				      0.005,   0.01,	0.025,	0.05,	 0.1,	 0.5,	1};
#define NR_BUCKETS (ARRAY_SIZE(delay_bounds) + 1)

enum series_kind { SERIES_SYSCALL, SERIES_WAKE, SERIES_DELAY, SERIES_COMPONENT };
#define WAKE_UNKNOWN 6 /* blocked until switched in, no waking seen */
static const char *const wake_names[] = {"task",  "hardirq", "softirq", "hrtimer",
					 "timer", "ipi",     "unknown"};

struct series_key {
	char process[16], thread[16];
	int32_t kind, val;
};

struct series {
	struct series_key k;
	uint64_t ns, count;
	uint64_t buckets[NR_BUCKETS];
};

struct tstate {
	uint32_t tid, pid;
	char comm[16];
	uint64_t block_ts, wake_ts, runq_ts;
	uint64_t kstack, ustack;
	int32_t syscall;
	uint8_t wake_kind;
};

struct stack {
	uint32_t flags, nr;
	uint64_t *ips;
};

struct serve_agg {
	pthread_mutex_t lock;
	struct serve_limits lim;

	struct u64map tidx; /* tid -> index in threads */
	struct tstate *threads;
	size_t nr_threads, cap_threads;
	uint64_t thread_resets;

	struct keytab skeys; /* struct series_key -> id (index + 1) */
	struct series *series;
	size_t cap_series;
	uint64_t series_overflow;

	struct u64map stidx; /* stack id -> index + 1 */
	struct stack *stacks;
	size_t nr_stacks, cap_stacks;
	uint64_t stacks_dropped;

	/* On-CPU by component (serve_agg__set_components): kernel stack id -> component + 2
	 * (1: unmatched), the names, what a sample weighs. */
	serve_classify_fn classify;
	void *classify_arg;
	const char *const *comp_names;
	size_t nr_comps;
	double sample_s;
	struct u64map comp_of;

	uint64_t events, episodes_open_lost;
	uint64_t lost[LOST_REASONS];
	struct serve_window *windows;
};

struct serve_agg *serve_agg__new(const struct serve_limits *lim)
{
	struct serve_agg *a = xcalloc(1, sizeof(*a));

	pthread_mutex_init(&a->lock, NULL);
	a->lim = *lim;
	return a;
}

static void drop_threads(struct serve_agg *a)
{
	u64map__free(&a->tidx);
	memset(&a->tidx, 0, sizeof(a->tidx));
	a->nr_threads = 0;
}

void serve_agg__delete(struct serve_agg *a)
{
	size_t i;

	if (!a)
		return;
	drop_threads(a);
	free(a->threads);
	keytab__free(&a->skeys);
	free(a->series);
	for (i = 0; i < a->nr_stacks; i++)
		free(a->stacks[i].ips);
	free(a->stacks);
	u64map__free(&a->stidx);
	u64map__free(&a->comp_of);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* The thread's state, created (with its process) when new. Past the limit every state is
 * dropped: the episodes open then are lost (counted), names come back with the next
 * events that carry them. */
static struct tstate *thread(struct serve_agg *a, uint32_t tid, uint32_t pid)
{
	uint64_t idx;
	struct tstate *t;

	if (u64map__get(&a->tidx, tid, &idx)) {
		t = &a->threads[idx];
		if (pid && !t->pid)
			t->pid = pid;
		return t;
	}
	if (a->nr_threads >= a->lim.threads) {
		for (idx = 0; idx < a->nr_threads; idx++)
			a->episodes_open_lost += a->threads[idx].block_ts != 0;
		drop_threads(a);
		a->thread_resets++;
	}
	xgrow((void **)&a->threads, &a->cap_threads, a->nr_threads + 1, sizeof(*a->threads));
	t = &a->threads[a->nr_threads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->syscall = -1;
	u64map__put(&a->tidx, tid, a->nr_threads++);
	return t;
}

static void set_comm(struct tstate *t, const char *comm)
{
	size_t n = strnlen(comm, sizeof(t->comm) - 1);

	memcpy(t->comm, comm, n);
	t->comm[n] = '\0';
}

static const char *process_name(struct serve_agg *a, const struct tstate *t)
{
	uint64_t idx;

	if (t->pid && t->pid != t->tid && u64map__get(&a->tidx, t->pid, &idx) &&
	    a->threads[idx].comm[0])
		return a->threads[idx].comm;
	return t->comm[0] ? t->comm : "?";
}

static struct series *series(struct serve_agg *a, const struct tstate *t, int kind, int val)
{
	struct series_key k;
	bool created;
	uint64_t id;

	memset(&k, 0, sizeof(k));
	snprintf(k.process, sizeof(k.process), "%s", process_name(a, t));
	snprintf(k.thread, sizeof(k.thread), "%s", t->comm[0] ? t->comm : "?");
	k.kind = kind;
	k.val = val;
	if (a->skeys.nr >= a->lim.series && !keytab__get(&a->skeys, &k, sizeof(k))) {
		/* Past the limit, new label sets share one: the metrics' size stays bounded. */
		a->series_overflow++;
		snprintf(k.process, sizeof(k.process), "[other]");
		snprintf(k.thread, sizeof(k.thread), "[other]");
	}
	id = keytab__find(&a->skeys, &k, sizeof(k), &created);
	if (created) {
		xgrow((void **)&a->series, &a->cap_series, id, sizeof(*a->series));
		memset(&a->series[id - 1], 0, sizeof(*a->series));
		a->series[id - 1].k = k;
	}
	return &a->series[id - 1];
}

static void window_add(struct serve_agg *a, enum serve_window_kind kind, const struct tstate *t,
		       uint64_t kstack, uint64_t ustack, uint64_t value)
{
	struct serve_window *w;

	for (w = a->windows; w; w = w->next) {
		uint64_t key[4] = {t->tid, t->pid, kstack, ustack};
		struct serve_entry *e;
		bool created;
		uint64_t id;

		if (w->kind != kind)
			continue;
		if (w->nr >= a->lim.entries && !keytab__get(w->idx, key, sizeof(key))) {
			w->dropped += value;
			continue;
		}
		id = keytab__find(w->idx, key, sizeof(key), &created);
		if (created) {
			xgrow((void **)&w->e, &w->cap, id, sizeof(*w->e));
			e = &w->e[id - 1];
			memset(e, 0, sizeof(*e));
			e->tid = t->tid;
			e->pid = t->pid;
			e->kstack = kstack;
			e->ustack = ustack;
			w->nr = id;
		}
		e = &w->e[id - 1];
		e->value += value;
		memcpy(e->comm, t->comm, sizeof(e->comm)); /* the latest name */
	}
}

static void add_delay(struct serve_agg *a, const struct tstate *t, uint64_t ns)
{
	struct series *s = series(a, t, SERIES_DELAY, 0);
	size_t b;

	for (b = 0; b < ARRAY_SIZE(delay_bounds) && ns > delay_bounds[b] * 1e9; b++)
		;
	s->buckets[b]++;
	s->ns += ns;
	s->count++;
}

/* The thread is back on a CPU: its episode ends, or its wait after a preemption. */
static void switch_in(struct serve_agg *a, struct tstate *t, uint64_t ts)
{
	if (t->block_ts) {
		uint64_t end = t->wake_ts ? t->wake_ts : ts;
		uint64_t off = end > t->block_ts ? end - t->block_ts : 0;
		struct series *s = series(a, t, SERIES_SYSCALL, t->syscall);

		s->ns += off;
		s->count++;
		s = series(a, t, SERIES_WAKE, t->wake_ts ? t->wake_kind : WAKE_UNKNOWN);
		s->ns += off;
		s->count++;
		if (off)
			window_add(a, SERVE_WINDOW_OFF, t, t->kstack, t->ustack, off);
		if (t->wake_ts)
			add_delay(a, t, ts > t->wake_ts ? ts - t->wake_ts : 0);
	} else if (t->runq_ts) {
		add_delay(a, t, ts > t->runq_ts ? ts - t->runq_ts : 0);
	}
	t->block_ts = t->wake_ts = t->runq_ts = 0;
}

static void block(struct tstate *t, uint64_t ts, int32_t syscall, uint64_t kstack, uint64_t ustack)
{
	t->block_ts = ts ? ts : 1;
	t->wake_ts = t->runq_ts = 0;
	t->syscall = syscall;
	t->kstack = kstack;
	t->ustack = ustack;
}

void serve_agg__set_components(struct serve_agg *a, serve_classify_fn classify, void *arg,
			       const char *const *names, size_t nr_names, double sample_s)
{
	pthread_mutex_lock(&a->lock);
	a->classify = classify;
	a->classify_arg = arg;
	a->comp_names = names;
	a->nr_comps = nr_names;
	a->sample_s = sample_s;
	pthread_mutex_unlock(&a->lock);
}

/* The component of a sample's kernel stack: an index into comp_names, nr_comps for
 * "unmatched" (classified as none, or its frames not kept), nr_comps + 1 for "user". */
static int32_t sample_component(struct serve_agg *a, uint64_t kstack)
{
	uint64_t v, idx;
	bool created;
	uint64_t *slot;
	int c = -1;

	if (!kstack)
		return (int32_t)a->nr_comps + 1;
	if (u64map__get(&a->comp_of, kstack, &v))
		return (int32_t)v - 2 < 0 ? (int32_t)a->nr_comps : (int32_t)v - 2;
	if (u64map__get(&a->stidx, kstack, &idx)) {
		const struct stack *s = &a->stacks[idx - 1];

		c = a->classify(a->classify_arg, s->ips, s->nr);
	} else {
		return (int32_t)a->nr_comps; /* not kept (over the limit): not remembered */
	}
	if (c >= (int)a->nr_comps)
		c = -1;
	slot = u64map__slot(&a->comp_of, kstack, &created);
	*slot = (uint64_t)(c + 2);
	return c < 0 ? (int32_t)a->nr_comps : c;
}

static void count_component(struct serve_agg *a, const struct tstate *t, uint64_t kstack)
{
	struct series *s = series(a, t, SERIES_COMPONENT, sample_component(a, kstack));

	if (s)
		s->count++;
}

void serve_agg__event(struct serve_agg *a, const struct rec *r)
{
	struct tstate *t;

	pthread_mutex_lock(&a->lock);
	a->events++;
	switch (r->h.type) {
	case REC_SWITCH:
		if (r->sw.flags & SWITCH_PREV_TARGET) {
			t = thread(a, r->h.tid, r->h.pid);
			if (r->h.aux) {
				block(t, r->h.ts, r->sw.syscall, r->sw.kstack, r->sw.ustack);
			} else {
				t->block_ts = t->wake_ts = 0;
				t->runq_ts = r->h.ts;
			}
		}
		if (r->sw.flags & SWITCH_NEXT_TARGET)
			switch_in(a, thread(a, r->sw.next_tid, r->sw.next_pid), r->h.ts);
		break;
	case REC_WAKING:
		t = thread(a, r->h.tid, r->h.pid);
		if (t->block_ts && !t->wake_ts) {
			t->wake_ts = r->h.ts > t->block_ts ? r->h.ts : t->block_ts;
			t->wake_kind = r->h.aux & 0xff;
			if (t->wake_kind >= WAKE_UNKNOWN)
				t->wake_kind = WAKE_UNKNOWN;
		}
		break;
	case REC_STATE:
		t = thread(a, r->h.tid, r->h.pid);
		set_comm(t, r->state.comm);
		/* Blocked since before the recording: the episode counts from its start. */
		if ((r->h.aux & 0xff) == 'S' || (r->h.aux & 0xff) == 'D')
			block(t, r->h.ts, r->state.syscall, r->state.kstack, r->state.ustack);
		break;
	case REC_FORK:
	case REC_EXEC:
	case REC_COMM:
	case REC_WAKEUP_NEW:
		set_comm(thread(a, r->h.tid, r->h.pid), r->task.comm);
		break;
	case REC_EXIT:
		t = thread(a, r->h.tid, r->h.pid);
		t->block_ts = t->wake_ts = t->runq_ts = 0;
		break;
	case REC_SAMPLE:
		t = thread(a, r->h.tid, r->h.pid);
		window_add(a, SERVE_WINDOW_ON, t, r->sample.kstack, r->sample.ustack, 1);
		if (a->classify)
			count_component(a, t, r->sample.kstack);
		break;
	}
	pthread_mutex_unlock(&a->lock);
}

void serve_agg__stack(struct serve_agg *a, uint64_t id, uint32_t flags, const uint64_t *ips,
		      uint32_t nr)
{
	struct stack *s;
	bool created;
	uint64_t *slot;

	pthread_mutex_lock(&a->lock);
	if (a->nr_stacks >= a->lim.stacks) {
		a->stacks_dropped++;
		goto out;
	}
	slot = u64map__slot(&a->stidx, id, &created);
	if (!created)
		goto out;
	xgrow((void **)&a->stacks, &a->cap_stacks, a->nr_stacks + 1, sizeof(*a->stacks));
	*slot = ++a->nr_stacks;
	s = &a->stacks[a->nr_stacks - 1];
	s->flags = flags;
	s->nr = nr;
	s->ips = xmalloc((nr ? nr : 1) * sizeof(*ips));
	memcpy(s->ips, ips, nr * sizeof(*ips));
out:
	pthread_mutex_unlock(&a->lock);
}

void serve_agg__name(struct serve_agg *a, uint32_t tid, uint32_t pid, const char *comm)
{
	pthread_mutex_lock(&a->lock);
	set_comm(thread(a, tid, pid), comm);
	pthread_mutex_unlock(&a->lock);
}

void serve_agg__lost(struct serve_agg *a, const void *payload, size_t len)
{
	uint32_t h[2];
	const uint64_t *v = (const uint64_t *)((const char *)payload + 8);
	uint64_t sum[LOST_REASONS] = {0};
	size_t cpu, r;

	if (len < 8)
		return;
	memcpy(h, payload, 8);
	if (h[1] != LOST_REASONS || 8 + (size_t)h[0] * h[1] * 8 > len)
		return;
	for (cpu = 0; cpu < h[0]; cpu++)
		for (r = 0; r < LOST_REASONS; r++)
			sum[r] += v[cpu * LOST_REASONS + r];
	pthread_mutex_lock(&a->lock);
	memcpy(a->lost, sum, sizeof(sum)); /* the counts are the recorder's totals so far */
	pthread_mutex_unlock(&a->lock);
}

/* A label value: backslash, quote and newline escaped as the format says; other control
 * and non-ASCII bytes (a thread names itself) written as the text \xNN. */
static void put_label(FILE *f, const char *name, const char *v)
{
	fprintf(f, "%s=\"", name);
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c == '\\' || c == '"')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_series_labels(const struct serve_agg *a, FILE *f, const struct series *s)
{
	char buf[32];

	put_label(f, "process", s->k.process);
	fputc(',', f);
	put_label(f, "thread", s->k.thread);
	if (s->k.kind == SERIES_SYSCALL) {
		fputc(',', f);
		put_label(f, "syscall",
			  s->k.val >= 0 ? syscall__name(s->k.val, buf, sizeof(buf)) : "none");
	} else if (s->k.kind == SERIES_WAKE) {
		fputc(',', f);
		put_label(f, "wake", wake_names[s->k.val]);
	} else if (s->k.kind == SERIES_COMPONENT) {
		fputc(',', f);
		put_label(f, "component",
			  s->k.val < (int32_t)a->nr_comps    ? a->comp_names[s->k.val]
			  : s->k.val == (int32_t)a->nr_comps ? "unmatched"
							     : "user");
	}
}

static void put_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_counters(struct serve_agg *a, FILE *f, int kind, const char *name, bool ns)
{
	size_t i;

	for (i = 0; i < a->skeys.nr; i++) {
		const struct series *s = &a->series[i];

		if (s->k.kind != kind)
			continue;
		fprintf(f, "%s{", name);
		put_series_labels(a, f, s);
		if (ns)
			fprintf(f, "} %.9f\n", s->ns / 1e9);
		else
			fprintf(f, "} %llu\n", (unsigned long long)s->count);
	}
}

void serve_agg__metrics(struct serve_agg *a, FILE *f)
{
	static const char *const lost_names[] = {"ringbuf", "stack_ringbuf", "stack_failed",
						 "skipped"};
	size_t i, b;

	pthread_mutex_lock(&a->lock);
	put_family(f, "srvscope_offcpu_seconds_total", "counter",
		   "Time threads spent blocked, from the switch out to the wake-up, by the "
		   "syscall they blocked in.");
	put_counters(a, f, SERIES_SYSCALL, "srvscope_offcpu_seconds_total", true);
	put_family(f, "srvscope_offcpu_wake_seconds_total", "counter",
		   "The same blocked time by what woke the thread (task, hardirq, softirq, "
		   "hrtimer, timer; unknown when no wake-up was seen).");
	put_counters(a, f, SERIES_WAKE, "srvscope_offcpu_wake_seconds_total", true);
	put_family(f, "srvscope_blocking_episodes_total", "counter",
		   "Blocking episodes (switch out while not runnable, until back on a CPU) "
		   "that ended, by syscall.");
	put_counters(a, f, SERIES_SYSCALL, "srvscope_blocking_episodes_total", false);
	put_family(f, "srvscope_sched_delay_seconds", "histogram",
		   "Time from a thread's wake-up (or preemption) to its next run on a CPU.");
	for (i = 0; i < a->skeys.nr; i++) {
		const struct series *s = &a->series[i];
		uint64_t cum = 0;

		if (s->k.kind != SERIES_DELAY)
			continue;
		for (b = 0; b < NR_BUCKETS; b++) {
			cum += s->buckets[b];
			fputs("srvscope_sched_delay_seconds_bucket{", f);
			put_series_labels(a, f, s);
			if (b < ARRAY_SIZE(delay_bounds))
				fprintf(f, ",le=\"%g\"} %llu\n", delay_bounds[b],
					(unsigned long long)cum);
			else
				fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
		}
		fputs("srvscope_sched_delay_seconds_sum{", f);
		put_series_labels(a, f, s);
		fprintf(f, "} %.9f\n", s->ns / 1e9);
		fputs("srvscope_sched_delay_seconds_count{", f);
		put_series_labels(a, f, s);
		fprintf(f, "} %llu\n", (unsigned long long)s->count);
	}
	if (a->classify) {
		put_family(f, "srvscope_oncpu_seconds_total", "counter",
			   "On-CPU time from the samples (serve --on-cpu), by the kernel component "
			   "of the sampled function (docs/cpu.md; user: in user mode; unmatched: a "
			   "kernel function no rule names).");
		for (i = 0; i < a->skeys.nr; i++) {
			const struct series *s = &a->series[i];

			if (s->k.kind != SERIES_COMPONENT)
				continue;
			fputs("srvscope_oncpu_seconds_total{", f);
			put_series_labels(a, f, s);
			fprintf(f, "} %.6f\n", s->count * a->sample_s);
		}
	}
	put_family(f, "srvscope_lost_events_total", "counter",
		   "Events and stacks the recorder lost (ringbuf: an event found the ring buffer "
		   "full; stack_ringbuf: a stack did; stack_failed: the kernel took no stack; "
		   "skipped: the kernel skipped a program's run, the event came while it ran on "
		   "the same CPU).");
	for (i = 0; i < LOST_REASONS; i++)
		fprintf(f, "srvscope_lost_events_total{reason=\"%s\"} %llu\n", lost_names[i],
			(unsigned long long)a->lost[i]);
	put_family(f, "srvscope_events_total", "counter", "Events received from the recorder.");
	fprintf(f, "srvscope_events_total %llu\n", (unsigned long long)a->events);
	put_family(f, "srvscope_threads", "gauge", "Threads whose state is followed.");
	fprintf(f, "srvscope_threads %zu\n", a->nr_threads);
	put_family(f, "srvscope_thread_resets_total", "counter",
		   "Times the followed threads passed the limit and their states were dropped.");
	fprintf(f, "srvscope_thread_resets_total %llu\n", (unsigned long long)a->thread_resets);
	put_family(f, "srvscope_series_overflow_total", "counter",
		   "Updates that found the label sets' limit reached, counted under \"[other]\".");
	fprintf(f, "srvscope_series_overflow_total %llu\n", (unsigned long long)a->series_overflow);
	put_family(f, "srvscope_stacks", "gauge", "Distinct stacks kept for the profiles.");
	fprintf(f, "srvscope_stacks %zu\n", a->nr_stacks);
	put_family(f, "srvscope_stacks_dropped_total", "counter",
		   "Stacks not kept because the limit was reached (their frames show as missing).");
	fprintf(f, "srvscope_stacks_dropped_total %llu\n", (unsigned long long)a->stacks_dropped);
	pthread_mutex_unlock(&a->lock);
}

struct serve_window *serve_agg__window_open(struct serve_agg *a, enum serve_window_kind kind)
{
	struct serve_window *w = xcalloc(1, sizeof(*w));

	w->kind = kind;
	w->idx = xcalloc(1, sizeof(struct keytab));
	pthread_mutex_lock(&a->lock);
	w->next = a->windows;
	a->windows = w;
	pthread_mutex_unlock(&a->lock);
	return w;
}

void serve_agg__window_close(struct serve_agg *a, struct serve_window *w)
{
	struct serve_window **p;

	pthread_mutex_lock(&a->lock);
	for (p = &a->windows; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	w->next = NULL;
	keytab__free(w->idx);
	free(w->idx);
	w->idx = NULL;
}

void serve_window__free(struct serve_window *w)
{
	if (!w)
		return;
	if (w->idx) {
		keytab__free(w->idx);
		free(w->idx);
	}
	free(w->e);
	free(w);
}

unsigned int serve_agg__stack_copy(struct serve_agg *a, uint64_t id, uint64_t *ips,
				   unsigned int max, int *user, int *truncated)
{
	unsigned int n = 0;
	uint64_t idx;

	pthread_mutex_lock(&a->lock);
	if (id && u64map__get(&a->stidx, id, &idx)) {
		const struct stack *s = &a->stacks[idx - 1];

		n = s->nr < max ? s->nr : max;
		memcpy(ips, s->ips, n * sizeof(*ips));
		*user = !!(s->flags & TRACE_STACK_USER);
		*truncated = !!(s->flags & TRACE_STACK_TRUNCATED) || s->nr > max;
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}
