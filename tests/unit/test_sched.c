/* sched__analyze over hand-made switch and wake-up sequences: runtime counts only intervals
 * seen from switch-in to switch-out, delays start at a wake-up or a preemption. */
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

	is_int(sched__bucket(999), 0, "< 1 us");
	is_int(sched__bucket(1000), 1, "1 us");
	is_int(sched__bucket(1500000), 11, "1.5 ms: < 2048 us");
	is_int(sched__bucket(~0ull), SCHED_HIST_BUCKETS - 1, "the last bucket takes the rest");
	return done_testing();
}
