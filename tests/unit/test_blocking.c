/* blocking__analyze over hand-made traces: episodes with their syscall, fd and waker,
 * threads already blocked when the recording started, return values from syscall records,
 * filters, and the per-syscall and per-fd statistics. */
#include "analysis/blocking.h"
#include "rec_build.h"
#include "unit.h"

static struct trace *sample(void)
{
	struct tb b;
	struct rec r;

	tb_open(&b);
	trace_writer__add_name(b.w, 10, 10, "server");
	trace_writer__add_name(b.w, 11, 10, "acceptor");
	trace_writer__add_name(b.w, 12, 12, "client");
	/* 11 was already blocked in accept(4) when the recording started. */
	tb_rec(&b, 1000, REC_STATE, 11, 10, 'S', &r);
	r.state.syscall = 43;
	r.state.fd = 4;
	trace_writer__add_event(b.w, &r);
	/* 10 blocks in read(3) at 2000, woken by NET_RX at 2500, runs at 2600. */
	tb_switch(&b, 2000, 10, 10, 1, 0, 0, 0, 3, 0x1, 0x2);
	tb_waking_irq(&b, 2500, 10, 10, WAKE_SOFTIRQ, 3, 0, 0x3);
	tb_simple(&b, 2510, REC_WAKEUP, 10, 10);
	tb_switch(&b, 2600, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	/* 10 wakes 11 at 3000; 11 runs at 3100; its accept returns 5 at 3200. */
	tb_waking_task(&b, 3000, 11, 10, 10, "server", 0x4, 0x5);
	tb_switch(&b, 3100, 10, 10, 1, 11, 10, 202, 0, 0x1, 0x2);
	tb_rec(&b, 3200, REC_SYSCALL, 11, 10, 43, &r);
	r.sc.ret = 5;
	r.sc.enter_ts = 500;
	trace_writer__add_event(b.w, &r);
	/* 10 (blocked in futex at 3100) is woken by a timer at 4000. */
	tb_waking_irq(&b, 4000, 10, 10, WAKE_HRTIMER, 0, 0xffffffff81000100ull, 0x6);
	tb_switch(&b, 4100, 11, 10, 0, 10, 10, -1, -1, 0, 0);
	/* 12, another process, blocks at 5000 and is never woken before the end. */
	tb_switch(&b, 5000, 12, 12, 2, 0, 0, 1, 7, 0, 0);
	/* A preemption is no episode. */
	tb_switch(&b, 5100, 11, 10, 0, 0, 0, -1, -1, 0, 0);
	return tb_read(&b, 6000);
}

static void episodes(void)
{
	struct trace *t = sample();
	struct block_report r;
	const struct block_episode *e;

	blocking__analyze(t, NULL, &r);
	is_int(r.nr, 4, "four episodes");
	/* sorted by pid, tid, start */
	e = &r.eps[0];
	ok(e->tid == 10 && e->start_ns == 2000 && e->end_ns == 2600 && e->wake_ns == 2500,
	   "read: from switch-out to switch-in, woken at the wake-up");
	ok(e->syscall == 0 && e->fd == 3 && e->kstack == 0x1 && e->ustack == 0x2,
	   "read: syscall, fd and stacks");
	ok(e->wake_kind == WAKE_SOFTIRQ && e->wake_detail == 3 && e->waker_kstack == 0x3,
	   "read: woken by a softirq, with its kernel stack");
	is_str(blocking__softirq_name(e->wake_detail), "NET_RX", "vector 3 is NET_RX");
	e = &r.eps[1];
	ok(e->tid == 10 && e->syscall == 202 && e->fd == -1 && e->wake_kind == WAKE_HRTIMER &&
		   e->wake_func == 0xffffffff81000100ull,
	   "futex: no fd (its first argument is an address), woken by a timer");
	e = &r.eps[2];
	ok(e->tid == 11 && e->from_start && e->start_ns == 1000 && e->end_ns == 3100,
	   "a thread blocked before the recording starts at the recording's start");
	ok(e->wake_kind == WAKE_TASK && e->waker_tid == 10 && !strcmp(e->waker_name, "server") &&
		   e->waker_ustack == 0x5,
	   "woken by a task: its tid, name and stacks");
	ok(e->has_ret && e->ret == 5 && e->syscall == 43 && e->fd == 4,
	   "the syscall record gives the return value");
	e = &r.eps[3];
	ok(e->tid == 12 && e->unfinished && e->end_ns == 6000 && e->wake_kind == WAKE_UNKNOWN,
	   "still blocked at the end: until the end, cause unknown");
	is_str(blocking__kind_name(WAKE_HRTIMER), "timer", "kind names");
	is_str(blocking__kind_name(WAKE_UNKNOWN), "unknown", "unknown kind");
	block_report__free(&r);
	trace__close(t);
}

/* A thread woken from an irq_work (perf's overflow wake-up, a BPF ring buffer's): kind ipi,
 * the vector its detail; not the task the interrupt found running. */
static void ipi_wakeup(void)
{
	char buf[64];
	struct block_report r;
	struct trace *t;
	struct tb b;

	tb_open(&b);
	trace_writer__add_name(b.w, 20, 20, "poller");
	tb_switch(&b, 2000, 20, 20, 1, 0, 0, 7, 3, 0, 0); /* poll */
	tb_waking_ipi(&b, 2500, 20, 20, 1, IPI_IRQ_WORK, 2490);
	tb_switch(&b, 2600, 0, 0, 0, 20, 20, -1, -1, 0, 0);
	tb_switch(&b, 3000, 20, 20, 1, 0, 0, 7, 3, 0, 0);
	tb_waking_ipi(&b, 3500, 20, 20, 0, 17, 3490); /* a vector this reader does not know */
	tb_switch(&b, 3600, 0, 0, 0, 20, 20, -1, -1, 0, 0);
	t = tb_read(&b, 4000);
	if (!ok(t != NULL, "ipi: trace read back"))
		return;
	blocking__analyze(t, NULL, &r);
	ok(r.nr == 2 && r.eps[0].wake_kind == WAKE_IPI && r.eps[0].wake_detail == IPI_IRQ_WORK &&
		   r.eps[0].wake_ns == 2500,
	   "woken from irq_work: kind IPI, the vector its detail");
	is_str(blocking__kind_name(r.eps[0].wake_kind), "ipi", "kind name ipi");
	is_str(blocking__wake_detail(&r.eps[0], NULL, NULL, buf, sizeof(buf)), "irq_work",
	       "detail irq_work");
	is_str(blocking__wake_detail(&r.eps[1], NULL, NULL, buf, sizeof(buf)), "?",
	       "an unknown vector: ?");
	is_str(blocking__ipi_name(IPI_CALL_FUNCTION_SINGLE), "call_function_single",
	       "vector names are the tracepoints' stems");
	block_report__free(&r);
	trace__close(t);
}

static void filters(void)
{
	struct trace *t = sample();
	struct block_filter f = {.comm = "server"};
	struct block_report r;

	blocking__analyze(t, &f, &r);
	ok(r.nr == 2 && r.eps[0].tid == 10 && r.eps[1].tid == 10, "--comm");
	block_report__free(&r);
	f = (struct block_filter){.pid = 12};
	blocking__analyze(t, &f, &r);
	ok(r.nr == 1 && r.eps[0].tid == 12, "--pid");
	block_report__free(&r);
	f = (struct block_filter){.min_ns = 1500};
	blocking__analyze(t, &f, &r);
	ok(r.nr == 1 && r.eps[0].tid == 11, "--min-ms");
	block_report__free(&r);
	f = (struct block_filter){.tid = 11};
	blocking__analyze(t, &f, &r);
	ok(r.nr == 1 && r.eps[0].tid == 11, "--tid");
	block_report__free(&r);
	trace__close(t);
}

static void stats(void)
{
	struct block_episode eps[5];
	struct block_group *g;
	struct block_stats s = {0};
	size_t n, i;

	for (i = 0; i < 4; i++)
		block_stats__add(&s, (i + 1) * 1000000);
	ok(s.count == 4 && s.sum_ns == 10000000 && s.min_ns == 1000000 && s.max_ns == 4000000,
	   "count, sum, min, max");
	is_int((long long)block_stats__mean_ns(&s), 2500000, "mean");
	is_int((long long)(block_stats__stddev_ns(&s) + 0.5), 1290994, "sample standard deviation");
	memset(eps, 0, sizeof(eps));
	for (i = 0; i < 5; i++) {
		eps[i].syscall = i < 3 ? 0 : 7;
		eps[i].fd = i < 3 ? 3 : -1;
		eps[i].start_ns = 0;
		eps[i].end_ns = (i + 1) * 100;
	}
	n = blocking__by_syscall(eps, 5, &g);
	ok(n == 2 && g[0].key == 7 && g[0].st.count == 2 && g[0].st.sum_ns == 900 &&
		   g[1].key == 0 && g[1].st.sum_ns == 600,
	   "grouped by syscall, largest total first");
	free(g);
	n = blocking__by_fd(eps, 5, &g);
	ok(n == 1 && g[0].key == 3 && g[0].st.count == 3, "grouped by fd, without fd-less ones");
	free(g);
	ok(blocking__is_blocked_state(1) && blocking__is_blocked_state(2) &&
		   !blocking__is_blocked_state(0) && !blocking__is_blocked_state(0x80),
	   "sleeping states block; running and dead ones do not");
}

/* The waker on another CPU can fire sched_waking between the thread's block and its
 * sched_switch: the waking comes first in time and still ends the episode that follows.
 * A waking whose wake-up completes without a block (the thread had not slept yet) is
 * no later episode's. */
static void early_waking(void)
{
	struct tb b;
	struct block_report r;
	struct trace *t;

	tb_open(&b);
	trace_writer__add_name(b.w, 20, 20, "worker");
	tb_waking_task(&b, 1000, 20, 20, 30, "waker", 0x4, 0x5);
	tb_switch(&b, 1001, 20, 20, 1, 0, 0, 202, -1, 0x1, 0x2);
	tb_simple(&b, 1010, REC_WAKEUP, 20, 20);
	tb_switch(&b, 1100, 0, 0, 0, 20, 20, -1, -1, 0, 0);
	/* woken before it slept: no block follows, the wake-up completes */
	tb_waking_irq(&b, 2000, 20, 20, WAKE_SOFTIRQ, 3, 0, 0x3);
	tb_simple(&b, 2001, REC_WAKEUP, 20, 20);
	tb_switch(&b, 3000, 20, 20, 1, 0, 0, 202, -1, 0x1, 0x2);
	tb_switch(&b, 3100, 0, 0, 0, 20, 20, -1, -1, 0, 0);
	t = tb_read(&b, 4000);
	blocking__analyze(t, NULL, &r);
	is_int(r.nr, 2, "two episodes");
	ok(r.nr == 2 && r.eps[0].wake_kind == WAKE_TASK && r.eps[0].waker_tid == 30 &&
		   r.eps[0].wake_ns == 1000,
	   "a waking just before the switch-out ends that episode");
	ok(r.nr == 2 && r.eps[1].wake_kind == WAKE_UNKNOWN,
	   "a waking whose wake-up completed before the block is not the next episode's");
	block_report__free(&r);
	trace__close(t);
}

/* A wake-up with no waking before it (the kernel ran sched_waking on the waker's CPU, no BPF
 * program got it): UNKNOWN, with the wake-up's time, which tells it apart from an episode
 * that no wake-up event ended (wake_ns 0). */
static void wakeup_without_waking(void)
{
	struct block_report r;
	struct trace *t;
	struct tb b;

	tb_open(&b);
	tb_switch(&b, 1000, 10, 10, 2, 0, 0, 75, 3, 0, 0);
	tb_simple(&b, 1500, REC_WAKEUP, 10, 10);
	tb_switch(&b, 1600, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 2000, 10, 10, 2, 0, 0, 75, 3, 0, 0);
	tb_switch(&b, 2600, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	t = tb_read(&b, 3000);
	blocking__analyze(t, NULL, &r);
	is_int(r.nr, 2, "two episodes");
	ok(r.nr == 2 && r.eps[0].wake_kind == WAKE_UNKNOWN && r.eps[0].wake_ns == 1500 &&
		   r.eps[0].end_ns == 1600,
	   "a wake-up with no waking: UNKNOWN, woken at the wake-up");
	ok(r.nr == 2 && r.eps[1].wake_kind == WAKE_UNKNOWN && r.eps[1].wake_ns == 0,
	   "no wake-up event at all: UNKNOWN, never woken");
	block_report__free(&r);
	trace__close(t);
}

/* A waker that named itself with 15 control bytes: its name is shown whole, escaped. */
static void hostile_waker(void)
{
	struct trace *t;
	struct block_report r;
	struct tb b;
	char name[COMM_ESCAPED_SIZE];

	tb_open(&b);
	tb_switch(&b, 1000, 10, 10, 1, 0, 0, 0, 3, 0, 0);
	tb_waking_task(&b, 2000, 10, 11, 11,
		       "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 0, 0);
	tb_switch(&b, 2100, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	t = tb_read(&b, 3000);
	blocking__analyze(t, NULL, &r);
	ok(r.nr == 1 && r.eps[0].wake_kind == WAKE_TASK, "woken by a task with a hostile name");
	is_str(r.nr ? blocking__waker_name(&r.eps[0], name, sizeof(name)) : "",
	       "\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f",
	       "the waker's name escaped whole, not cut to 16 bytes");
	block_report__free(&r);
	trace__close(t);
}

/* Switch windows: a thread's switches left out between syscall windows, its next record
 * flagged. A wait whose start or end is in a gap is not one. */
static void switch_gaps(void)
{
	struct block_report r;
	struct trace *t;
	struct tb b;

	tb_open(&b);
	tb_switch_flags(&b, 1000, 10, 10, 1, 0, 0, 232, 0, 0);
	tb_switch_flags(&b, 1400, 0, 0, 0, 10, 10, -1, 0, 0);
	tb_switch_flags(&b, 2000, 10, 10, 1, 0, 0, 232, 0, 0);
	/* left out: its switch-in, then more; the next one it is in says so */
	tb_switch_flags(&b, 9000, 0, 0, 0, 10, 10, -1, SWITCH_NEXT_GAP, 0);
	tb_switch_flags(&b, 9500, 10, 10, 1, 0, 0, 232, 0, 0);
	/* left out from here too, its next record a switch-out */
	tb_switch_flags(&b, 12000, 10, 10, 1, 0, 0, 7, SWITCH_PREV_GAP, 0);
	tb_switch_flags(&b, 12300, 0, 0, 0, 10, 10, -1, 0, 0);
	t = tb_read(&b, 13000);
	blocking__analyze(t, NULL, &r);
	is_int(r.nr, 2, "gaps: the two waits seen whole");
	ok(r.nr == 2 && r.eps[0].start_ns == 1000 && r.eps[0].end_ns == 1400,
	   "gaps: a wait before the gap");
	ok(r.nr == 2 && r.eps[1].start_ns == 12000 && r.eps[1].end_ns == 12300 &&
		   r.eps[1].syscall == 7,
	   "gaps: the wait after a flagged switch-out; none across either gap");
	block_report__free(&r);
	trace__close(t);
}

int main(void)
{
	switch_gaps();
	episodes();
	ipi_wakeup();
	early_waking();
	wakeup_without_waking();
	hostile_waker();
	filters();
	stats();
	return done_testing();
}
