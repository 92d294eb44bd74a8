/* A per-thread state machine over the events in time order: switch-out in a sleeping state
 * opens an episode, the first wake-up names its cause, switch-in closes it, and the
 * syscall record written at the syscall's exit gives the return value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "analysis/blocking.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/escape.h"
#include "util/util.h"

#define TASK_REPORT_DEAD (0x10 | 0x20 | 0x80) /* EXIT_DEAD, EXIT_ZOMBIE, TASK_DEAD */
#define NO_EPISODE	 SIZE_MAX

struct thr {
	bool seen, open, woken;
	/* A waking seen before the switch-out it ends: the waker ran on another CPU while
	 * the thread was between blocking and its sched_switch event. Kept until the thread
	 * blocks (it is that episode's), or its wake-up completes without a block. */
	const struct rec *early_waking;
	struct block_episode ep;
	int32_t last_syscall, last_fd; /* of the last wait: what a restart_syscall resumes */
	uint32_t last_fd_flags;
	size_t unmatched, tail; /* closed episodes not yet given their syscall's return */
};

struct state {
	struct u64map idx;
	struct thr *thr;
	size_t nr_thr, cap_thr;
	struct block_report *r;
	size_t cap_eps;
	size_t *next; /* per episode: the next one of the same thread awaiting its return */
	/* Direct-mapped cache in front of idx: events alternate between a few threads. */
	uint32_t cache_tid[256];
	uint32_t cache_idx[256]; /* index + 1; 0: empty */
};

bool blocking__is_blocked_state(uint32_t state)
{
	return state && !(state & TASK_REPORT_DEAD);
}

static struct thr *thr(struct state *s, uint32_t tid)
{
	bool created;
	uint64_t *slot;

	if (s->cache_idx[tid & 255] && s->cache_tid[tid & 255] == tid)
		return &s->thr[s->cache_idx[tid & 255] - 1];
	slot = u64map__slot(&s->idx, tid, &created);

	if (created) {
		xgrow((void **)&s->thr, &s->cap_thr, s->nr_thr + 1, sizeof(*s->thr));
		*slot = s->nr_thr;
		memset(&s->thr[s->nr_thr], 0, sizeof(*s->thr));
		s->thr[s->nr_thr].unmatched = NO_EPISODE;
		s->thr[s->nr_thr].last_syscall = -1;
		s->nr_thr++;
	}
	s->cache_tid[tid & 255] = tid;
	s->cache_idx[tid & 255] = *slot + 1;
	return &s->thr[*slot];
}

static void emit(struct state *s, struct thr *th)
{
	size_t i = s->r->nr;

	if (i + 1 > s->cap_eps) {
		xgrow((void **)&s->r->eps, &s->cap_eps, i + 1, sizeof(*s->r->eps));
		s->next = xrealloc(s->next, s->cap_eps * sizeof(*s->next));
	}
	s->r->eps[i] = th->ep;
	s->r->nr++;
	s->next[i] = NO_EPISODE;
	/* Append to the thread's chain of episodes awaiting their syscall's exit. */
	if (th->unmatched == NO_EPISODE)
		th->unmatched = i;
	else
		s->next[th->tail] = i;
	th->tail = i;
	th->open = th->woken = false;
}

static void open_episode(struct thr *th, uint64_t ts, uint32_t tid, uint32_t pid, uint32_t state,
			 int32_t syscall, int32_t fd, uint32_t fd_flags)
{
	/* A timed wait interrupted by a signal or a ptrace stop (a snapshot) resumes in
	 * restart_syscall, which carries on the wait it interrupted: report that one. */
	if (syscall == __NR_restart_syscall && th->last_syscall >= 0) {
		syscall = th->last_syscall;
		fd = th->last_fd;
		fd_flags = th->last_fd_flags;
	} else {
		th->last_syscall = syscall;
		th->last_fd = fd;
		th->last_fd_flags = fd_flags;
	}
	memset(&th->ep, 0, sizeof(th->ep));
	th->ep.tid = tid;
	th->ep.pid = pid;
	th->ep.start_ns = ts;
	th->ep.state = state;
	th->ep.syscall = syscall;
	th->ep.fd = fd;
	th->ep.polled_fd = fd_flags & SWITCH_POLLED_FD;
	th->ep.more_fds = fd_flags & SWITCH_MORE_FDS;
	th->ep.wake_kind = WAKE_UNKNOWN;
	th->open = true;
	th->woken = false;
}

/* The thread's switches were left out (SWITCH_*_GAP): its open wait is dropped. */
static void forget(struct thr *th)
{
	th->open = false;
	th->early_waking = NULL;
}

static void on_waking(struct thr *th, const struct rec *e)
{
	struct block_episode *ep = &th->ep;

	if (!th->open || th->woken)
		return;
	th->woken = true;
	ep->wake_ns = e->h.ts;
	ep->wake_kind = e->h.aux & 0xff;
	ep->waker_tid = e->wk.waker_tid;
	ep->waker_kstack = e->wk.kstack;
	ep->waker_ustack = e->wk.ustack;
	switch (ep->wake_kind) {
	case WAKE_TASK:
		/* Raw: escaping here would cut it to 16 bytes (blocking__waker_name). */
		memcpy(ep->waker_name, e->wk.u.comm, sizeof(ep->waker_name));
		ep->waker_name[sizeof(ep->waker_name) - 1] = '\0';
		break;
	case WAKE_HARDIRQ:
		memcpy(ep->waker_name, e->wk.u.irq, sizeof(ep->waker_name));
		ep->waker_name[sizeof(ep->waker_name) - 1] = '\0';
		ep->wake_detail = e->wk.detail;
		break;
	case WAKE_SOFTIRQ:
	case WAKE_IPI:
		ep->wake_detail = e->wk.detail;
		break;
	case WAKE_HRTIMER:
	case WAKE_TIMER:
		ep->wake_func = e->wk.u.func;
		break;
	default:
		ep->wake_kind = WAKE_UNKNOWN;
	}
}

/* A syscall record arrives at the syscall's exit: episodes inside it get its number (when
 * the switch did not know it) and return value. */
static void on_syscall(struct state *s, struct thr *th, const struct rec *e)
{
	size_t i = th->unmatched;

	while (i != NO_EPISODE) {
		struct block_episode *ep = &s->r->eps[i];

		if (ep->start_ns >= e->sc.enter_ts && ep->start_ns <= e->h.ts) {
			if (ep->syscall < 0 || ep->syscall == (int32_t)e->h.aux ||
			    e->h.aux == __NR_restart_syscall) {
				ep->syscall = e->h.aux;
				ep->ret = e->sc.ret;
				ep->has_ret = true;
			}
		}
		i = s->next[i];
	}
	th->unmatched = NO_EPISODE;
}

static bool keep(const struct trace *t, const struct block_filter *f,
		 const struct block_episode *ep)
{
	if (!f)
		return true;
	if (ep->end_ns - ep->start_ns < f->min_ns)
		return false;
	return trace__task_match(t, f->pid, f->tid, f->comm, ep->pid, ep->tid);
}

static int cmp_ep(const void *a, const void *b)
{
	const struct block_episode *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static void analyze(const struct trace *t, const struct block_filter *f, struct block_report *r,
		    bool sorted)
{
	struct state s = {.r = r};
	size_t i, n;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct thr *th;

		trace__done_before(t, i);

		switch (e->h.type) {
		case REC_SWITCH:
			if (e->sw.flags & SWITCH_PREV_TARGET) {
				th = thr(&s, e->h.tid);
				th->seen = true;
				/* Its switches were left out since: a wait under way is not known
				 * to be one. */
				if (e->sw.flags & SWITCH_PREV_GAP)
					forget(th);
				if (th->open) /* a switch-in was lost: close at this point */
					th->ep.end_ns = e->h.ts, emit(&s, th);
				if (blocking__is_blocked_state(e->h.aux)) {
					open_episode(th, e->h.ts, e->h.tid, e->h.pid, e->h.aux,
						     e->sw.syscall, e->sw.fd, e->sw.flags);
					th->ep.kstack = e->sw.kstack;
					th->ep.ustack = e->sw.ustack;
					if (th->early_waking)
						on_waking(th, th->early_waking);
				}
				th->early_waking = NULL;
			}
			if ((e->sw.flags & SWITCH_NEXT_TARGET) && e->sw.next_tid) {
				th = thr(&s, e->sw.next_tid);
				th->seen = true;
				if (e->sw.flags & SWITCH_NEXT_GAP)
					forget(th);
				if (th->open) {
					th->ep.end_ns = e->h.ts;
					emit(&s, th);
				}
			}
			break;
		case REC_WAKING:
			th = thr(&s, e->h.tid);
			th->seen = true;
			if (th->open)
				on_waking(th, e);
			else
				th->early_waking = e;
			break;
		case REC_WAKEUP:
			th = thr(&s, e->h.tid);
			th->early_waking = NULL; /* woken without blocking, or below */
			if (th->open && !th->woken) {
				th->woken = true;
				th->ep.wake_ns = e->h.ts;
			}
			break;
		case REC_STATE:
			th = thr(&s, e->h.tid);
			if (th->seen)
				break;
			th->seen = true;
			if ((e->h.aux & 0xff) == 'S' || (e->h.aux & 0xff) == 'D') {
				open_episode(th, e->h.ts, e->h.tid, e->h.pid,
					     (e->h.aux & 0xff) == 'D' ? 2 : 1, e->state.syscall,
					     e->state.fd, e->h.aux >> 8);
				th->ep.from_start = true;
				th->ep.kstack = e->state.kstack;
				th->ep.ustack = e->state.ustack;
			}
			break;
		case REC_SYSCALL:
			on_syscall(&s, thr(&s, e->h.tid), e);
			break;
		case REC_EXIT:
			th = thr(&s, e->h.tid);
			th->open = false;
			break;
		}
	}
	for (i = 0; i < s.nr_thr; i++) {
		if (!s.thr[i].open)
			continue;
		s.thr[i].ep.end_ns =
			t->end_ns > s.thr[i].ep.start_ns ? t->end_ns : s.thr[i].ep.start_ns;
		s.thr[i].ep.unfinished = true;
		emit(&s, &s.thr[i]);
	}
	for (i = 0, n = 0; i < r->nr; i++) {
		struct block_episode *ep = &r->eps[i];

		if (!ep->polled_fd && (ep->syscall < 0 || !syscall__has_fd(ep->syscall)))
			ep->fd = -1;
		if (keep(t, f, ep))
			r->eps[n++] = *ep;
	}
	r->nr = n;
	if (n && sorted)
		qsort(r->eps, n, sizeof(*r->eps), cmp_ep);
	free(s.thr);
	free(s.next);
	u64map__free(&s.idx);
}

void blocking__analyze(const struct trace *t, const struct block_filter *f, struct block_report *r)
{
	analyze(t, f, r, true);
}

void blocking__analyze_unsorted(const struct trace *t, const struct block_filter *f,
				struct block_report *r)
{
	analyze(t, f, r, false);
}

const char *blocking__waker_name(const struct block_episode *ep, char *buf, size_t size)
{
	name_escape(buf, size, ep->waker_name, strnlen(ep->waker_name, sizeof(ep->waker_name)));
	return buf;
}

void block_report__free(struct block_report *r)
{
	free(r->eps);
	r->eps = NULL;
	r->nr = 0;
}

const char *blocking__kind_name(uint8_t kind)
{
	switch (kind) {
	case WAKE_TASK:
		return "task";
	case WAKE_HARDIRQ:
		return "hardirq";
	case WAKE_SOFTIRQ:
		return "softirq";
	case WAKE_HRTIMER:
	case WAKE_TIMER:
		return "timer";
	case WAKE_IPI:
		return "ipi";
	}
	return "unknown";
}

const char *blocking__ipi_name(uint32_t vector)
{
	static const char *const names[IPI_VECTORS] = {"irq_work", "call_function",
						       "call_function_single", "reschedule",
						       "x86_platform_ipi"};

	return vector < ARRAY_SIZE(names) ? names[vector] : "?";
}

const char *blocking__softirq_name(uint32_t vec)
{
	static const char *const names[] = {"HI",	"TIMER",   "NET_TX", "NET_RX",	"BLOCK",
					    "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};

	return vec < ARRAY_SIZE(names) ? names[vec] : "?";
}

void block_stats__add(struct block_stats *s, uint64_t ns)
{
	double ms = ns / 1e6;

	if (!s->count || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->count++;
	s->sum_ns += ns;
	s->sumsq += ms * ms;
}

double block_stats__mean_ns(const struct block_stats *s)
{
	return s->count ? (double)s->sum_ns / s->count : 0;
}

/* Newton's method: the build links no libm for one square root. */
static double square_root(double x)
{
	double r = x > 1 ? x : 1, n;
	int i;

	for (i = 0; i < 100; i++) {
		n = 0.5 * (r + x / r);
		if (n == r)
			break;
		r = n;
	}
	return r;
}

double block_stats__stddev_ns(const struct block_stats *s)
{
	double mean_ms, var;

	if (s->count < 2)
		return 0;
	mean_ms = block_stats__mean_ns(s) / 1e6;
	var = (s->sumsq - s->count * mean_ms * mean_ms) / (s->count - 1);
	return var > 0 ? square_root(var) * 1e6 : 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct block_group *x = a, *y = b;

	if (x->st.sum_ns != y->st.sum_ns)
		return x->st.sum_ns < y->st.sum_ns ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static size_t group(const struct block_episode *eps, size_t n, bool by_fd, struct block_group **out)
{
	struct block_group *g = NULL;
	struct u64map idx = {0};
	size_t nr = 0, cap = 0, i;

	for (i = 0; i < n; i++) {
		int32_t key = by_fd ? eps[i].fd : eps[i].syscall;
		bool created;
		uint64_t *slot;

		if (by_fd && key < 0)
			continue;
		slot = u64map__slot(&idx, (uint32_t)key, &created);
		if (created) {
			xgrow((void **)&g, &cap, nr + 1, sizeof(*g));
			memset(&g[nr], 0, sizeof(*g));
			g[nr].key = key;
			*slot = nr++;
		}
		block_stats__add(&g[*slot].st, eps[i].end_ns - eps[i].start_ns);
	}
	u64map__free(&idx);
	if (nr)
		qsort(g, nr, sizeof(*g), cmp_group);
	*out = g;
	return nr;
}

size_t blocking__by_syscall(const struct block_episode *eps, size_t n, struct block_group **out)
{
	return group(eps, n, false, out);
}

size_t blocking__by_fd(const struct block_episode *eps, size_t n, struct block_group **out)
{
	return group(eps, n, true, out);
}

const char *blocking__wake_detail(const struct block_episode *ep,
				  const char *(*kernel)(void *ctx, uint64_t addr), void *ctx,
				  char *buf, size_t size)
{
	switch (ep->wake_kind) {
	case WAKE_SOFTIRQ:
		return blocking__softirq_name(ep->wake_detail);
	case WAKE_IPI:
		return blocking__ipi_name(ep->wake_detail);
	case WAKE_HARDIRQ: {
		char name[COMM_ESCAPED_SIZE];

		snprintf(buf, size, "%u %s", ep->wake_detail,
			 blocking__waker_name(ep, name, sizeof(name)));
		return buf;
	}
	case WAKE_HRTIMER:
	case WAKE_TIMER:
		return kernel(ctx, ep->wake_func);
	}
	return NULL;
}
