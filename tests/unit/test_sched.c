/* sched__analyze over hand-made switch and wake-up sequences: runtime counts only intervals
 * seen from switch-in to switch-out, as the kernel charged them when the switch records
 * carry it, delays start at a wake-up or a preemption. */
#include "analysis/sched.h"
#include "rec_build.h"
#include "unit.h"

static const struct sched_task *find(const struct sched_report *r, uint32_t tid)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->tasks[i].tid == tid)
			return &r->tasks[i];
	return NULL;
}

/* A switch-out of tid carrying the kernel's sum_exec_runtime. */
static void out_rt(struct tb *b, uint64_t ts, uint32_t tid, uint64_t runtime)
{
	struct rec r;

	tb_rec(b, ts, REC_SWITCH, tid, tid, 1, &r);
	r.sw.flags = SWITCH_PREV_TARGET;
	r.sw.runtime_ns = runtime;
	trace_writer__add_event(b->w, &r);
}

/* The kernel charges a thread woken onto an idle CPU from its enqueue, before the switch:
 * the runtime is the kernel's, from one switch-out to the next. */
static void kernel_runtime(void)
{
	struct sched_report r;
	const struct sched_task *k;
	struct trace *t;
	struct tb b;

	tb_open(&b);
	/* 20 is born in the recording: its first interval is all it was ever charged. */
	tb_simple(&b, 50, REC_WAKEUP_NEW, 20, 20);
	tb_switch(&b, 100, 0, 0, 0, 20, 20, -1, -1, 0, 0);
	out_rt(&b, 200, 20, 130);
	tb_switch(&b, 300, 0, 0, 0, 20, 20, -1, -1, 0, 0);
	out_rt(&b, 400, 20, 260);
	/* 21 was there before: its first interval by the clock, then the kernel's. */
	tb_switch(&b, 100, 0, 0, 0, 21, 21, -1, -1, 0, 0);
	out_rt(&b, 200, 21, 50000);
	tb_switch(&b, 300, 0, 0, 0, 21, 21, -1, -1, 0, 0);
	out_rt(&b, 400, 21, 50170);
	/* An interval whose switch-in is missing is not counted (the timeline has no slice
	 * for it), but the next one still is the kernel's difference. */
	out_rt(&b, 600, 21, 50300);
	tb_switch(&b, 700, 0, 0, 0, 21, 21, -1, -1, 0, 0);
	out_rt(&b, 800, 21, 50410);
	t = tb_read(&b, 1000);
	sched__analyze(t, &r);
	k = find(&r, 20);
	ok(k && k->runtime_ns == 260 && k->switches == 2, "born in the recording: the kernel's "
							  "sum_exec_runtime");
	k = find(&r, 21);
	ok(k && k->runtime_ns == 100 + 170 + 110 && k->switches == 4,
	   "there before: the first interval by the clock, then the kernel's differences");
	sched_report__free(&r);
	trace__close(t);
}

int main(void)
{
	struct sched_report r;
	const struct sched_task *k;
	struct trace *t;
	struct tb b;

	tb_open(&b);
	trace_writer__add_name(b.w, 10, 10, "app");
	/* 10 runs 100..300, blocks; woken at 400, runs 450..600, preempted; runs 700..750. */
	tb_switch(&b, 100, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 300, 10, 10, 1, 11, 10, 0, 3, 0, 0);
	tb_simple(&b, 400, REC_WAKEUP, 10, 10);
	tb_switch(&b, 450, 11, 10, 1, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 600, 10, 10, 0, 11, 10, -1, -1, 0, 0);
	tb_switch(&b, 700, 11, 10, 1, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 750, 10, 10, 1, 0, 0, -1, -1, 0, 0);
	/* A wake-up of a running thread is no delay. */
	tb_simple(&b, 720, REC_WAKEUP, 10, 10);
	t = tb_read(&b, 1000);
	sched__analyze(t, &r);
	k = find(&r, 10);
	if (!ok(k != NULL, "the thread is reported"))
		return done_testing();
	is_str(k->comm, "app", "its name");
	is_int(k->runtime_ns, 200 + 150 + 50, "runtime: the sum of its on-CPU intervals");
	is_int(k->switches, 3, "switches: times switched out");
	is_int(k->delays, 2, "two delays: after the wake-up and after the preemption");
	is_int(k->delay_sum_ns, 50 + 100, "their sum");
	is_int(k->max_delay_ns, 100, "the longest");
	is_int(k->max_delay_at_ns, 700, "and when it ended");
	is_int(k->hist[0], 2, "both under 1 us in the histogram");
	k = find(&r, 11);
	ok(k && k->runtime_ns == 150 + 100 && k->switches == 2, "the other thread: runtime "
								"from its first seen switch-in");
	ok(r.tasks[0].tid == 10, "sorted by average delay");
	sched_report__free(&r);
	trace__close(t);

	kernel_runtime();

	is_int(sched__bucket(999), 0, "< 1 us");
	is_int(sched__bucket(1000), 1, "1 us");
	is_int(sched__bucket(1500000), 11, "1.5 ms: < 2048 us");
	is_int(sched__bucket(~0ull), SCHED_HIST_BUCKETS - 1, "the last bucket takes the rest");
	return done_testing();
}
