/* The critical path over a hand-made trace (A waits on B, B on C, C on a timer), and the
 * convex-hull clock synchronisation over made-up packets whose true clocks are known. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "critical/critical.h"
#include "rec_build.h"
#include "unit.h"
#include "util/util.h"

enum { A = 10, B = 11, C = 12, P = 10 };

static void path_test(void)
{
	static const struct {
		uint32_t tid;
		enum crit_edge edge;
		int64_t start, end;
	} want[] = {
		{C, CRIT_TIMER, 200, 600},   {C, CRIT_PREEMPTED, 600, 610},
		{C, CRIT_RUNNING, 610, 800}, {B, CRIT_PREEMPTED, 800, 820},
		{B, CRIT_RUNNING, 820, 850}, {A, CRIT_PREEMPTED, 850, 870},
	};
	struct trace *t, *two[2];
	struct crit_graph g;
	struct crit_path p;
	char err[256];
	size_t i, n = 0;
	struct tb b;

	tb_open(&b);
	trace_writer__add_name(b.w, A, P, "a");
	trace_writer__add_name(b.w, B, P, "b");
	trace_writer__add_name(b.w, C, P, "c");
	tb_switch(&b, 50, 0, 0, 0, C, P, -1, -1, 0, 0);
	tb_switch(&b, 100, 0, 0, 0, A, P, -1, -1, 0, 0);
	tb_switch(&b, 120, 0, 0, 0, B, P, -1, -1, 0, 0);
	tb_switch(&b, 150, C, P, 1, 0, 0, 35, -1, 0, 0);  /* nanosleep */
	tb_switch(&b, 160, B, P, 1, 0, 0, 202, -1, 0, 0); /* futex */
	tb_switch(&b, 200, A, P, 1, 0, 0, 0, 3, 0, 0);	  /* read */
	tb_waking_irq(&b, 600, C, P, WAKE_HRTIMER, 0, 0x1234, 0);
	tb_switch(&b, 610, 0, 0, 0, C, P, -1, -1, 0, 0);
	tb_waking_task(&b, 800, B, P, C, "c", 0, 0);
	tb_switch(&b, 820, 0, 0, 0, B, P, -1, -1, 0, 0);
	tb_waking_task(&b, 850, A, P, B, "b", 0, 0);
	tb_switch(&b, 870, 0, 0, 0, A, P, -1, -1, 0, 0);
	tb_switch(&b, 880, B, P, 1, 0, 0, 202, -1, 0, 0);
	tb_switch(&b, 900, C, P, 1, 0, 0, 35, -1, 0, 0);
	t = tb_read(&b, 1000);
	if (!ok(t != NULL, "trace read back"))
		return;
	ok(!crit_graph__build(&g, &t, 1, err, sizeof(err)), "graph over one host");
	ok(!crit_graph__path(&g, 0, A, 200, 870, &p), "path of A over its wait");
	for (i = 0; i < p.nr && i < ARRAY_SIZE(want); i++) {
		const struct crit_segment *s = &p.segs[i];

		n += s->tid == want[i].tid && s->edge == want[i].edge &&
		     s->start_ns == want[i].start && s->end_ns == want[i].end;
		if (s->tid != want[i].tid || s->edge != want[i].edge)
			printf("# segment %zu: %u %s %" PRId64 "-%" PRId64 "\n", i, s->tid,
			       crit_edge__name(s->edge), s->start_ns, s->end_ns);
	}
	is_int(p.nr, ARRAY_SIZE(want), "six segments");
	is_int(n, ARRAY_SIZE(want), "C's timer, C woken and running, B woken and running, A woken");
	is_int(p.hops, 2, "two wake-ups crossed");
	crit_path__free(&p);
	ok(!crit_graph__path(&g, 0, A, 0, 1000, &p) && p.nr && p.segs[0].edge == CRIT_UNKNOWN &&
		   p.segs[0].start_ns == 0 && p.segs[0].end_ns == 100,
	   "before the thread is seen: UNKNOWN");
	crit_path__free(&p);
	crit_graph__free(&g);
	two[0] = two[1] = t;
	ok(crit_graph__build(&g, two, 2, err, sizeof(err)) == -EINVAL && strstr(err, "same host"),
	   "the same trace twice is refused: %s", err);
	trace__close(t);
}

/* Packets between X (the true clock) and Y, whose clock is offset and drifts; one-way
 * delays of delay_ns plus up to jitter_ns. */
static double y_of(double x, double offset, double ppm)
{
	return x + offset + x * ppm / 1e6;
}

static double sync_error(double offset, double ppm, double delay_ns, double jitter_ns, int n,
			 enum crit_sync_quality *q)
{
	struct crit_sync s = {0};
	struct crit_sync_result r;
	double worst = 0, x;
	int i;

	srand(42);
	for (i = 0; i < n; i++) {
		double t = 10e9 + i * 2e9 / n, d1 = delay_ns + jitter_ns * rand() / RAND_MAX,
		       d2 = delay_ns + jitter_ns * rand() / RAND_MAX;

		crit_sync__add(&s, (uint64_t)t, (uint64_t)y_of(t + d1, offset, ppm), true);
		/* Y sends at t + d1 + 1 ms (Y's clock), X receives d2 later. */
		crit_sync__add(&s, (uint64_t)(t + d1 + 1e6 + d2),
			       (uint64_t)y_of(t + d1 + 1e6, offset, ppm), false);
	}
	crit_sync__solve(&s, &r);
	*q = r.quality;
	for (x = 10e9; x <= 12e9; x += 1e8) {
		double y = r.slope * (x - s.x0) + r.intercept + s.y0;

		worst = fmax(worst, fabs(y - y_of(x, offset, ppm)));
	}
	crit_sync__free(&s);
	return worst;
}

static void sync_test(void)
{
	struct crit_sync s = {0};
	struct crit_sync_result r;
	enum crit_sync_quality q;
	double e;

	e = sync_error(5e9, 100, 50e3, 30e3, 200, &q);
	ok(q == CRIT_SYNC_ACCURATE && e < 2e3, "+5 s, +100 ppm, 50-80 us delays: within %.0f ns",
	   e);
	e = sync_error(-5e9, -100, 20e6, 200e3, 50, &q);
	ok(q == CRIT_SYNC_ACCURATE && e < 100e3,
	   "-5 s, -100 ppm, a 20 ms delay line: within %.0f ns (same delay both ways)", e);

	crit_sync__solve(&s, &r);
	is_int(r.quality, CRIT_SYNC_ABSENT, "no packet: absent");
	crit_sync__add(&s, 100, 200, true);
	crit_sync__add(&s, 300, 400, true);
	crit_sync__solve(&s, &r);
	is_int(r.quality, CRIT_SYNC_FAILED, "one way only: failed");
	crit_sync__add(&s, 150, 400, false); /* sent by Y after X received it: impossible */
	crit_sync__add(&s, 350, 600, false);
	crit_sync__solve(&s, &r);
	is_int(r.quality, CRIT_SYNC_FAILED, "packets that contradict every line: failed");
	crit_sync__free(&s);
	crit_sync__add(&s, 1000, 1100, true);
	crit_sync__add(&s, 1300, 1150, false);
	crit_sync__solve(&s, &r);
	ok(r.quality == CRIT_SYNC_APPROXIMATE && fabs(r.intercept + 125) < 1e-6,
	   "one packet each way: approximate, the middle of the offsets allowed");
	crit_sync__free(&s);
	is_str(crit_sync__quality_name(CRIT_SYNC_ACCURATE), "accurate", "quality names");
}

int main(void)
{
	path_test();
	sync_test();
	return done_testing();
}
