/* timeline__build over a hand-made sequence: one thread runs, blocks, is woken by another,
 * runs, is preempted and runs to the end of the recording; its slices tile its time. */
#include "analysis/timeline.h"
#include "rec_build.h"
#include "unit.h"
#include "util/util.h"

int main(void)
{
	static const struct {
		enum tl_kind kind;
		uint64_t start, end;
		bool open;
	} want[] = {
		{TL_RUNNING, 100, 300, false},	 {TL_BLOCKED, 300, 400, false},
		{TL_WOKEN, 400, 450, false},	 {TL_RUNNING, 450, 600, false},
		{TL_PREEMPTED, 600, 700, false}, {TL_RUNNING, 700, 1000, true},
	};
	struct block_filter only10 = {.tid = 10};
	struct timeline tl;
	struct trace *t;
	struct tb b;
	size_t i, n = 0;

	tb_open(&b);
	trace_writer__add_name(b.w, 10, 10, "app");
	trace_writer__add_name(b.w, 11, 10, "helper");
	tb_switch(&b, 100, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 300, 10, 10, 1, 11, 10, 0, 3, 0, 0);
	tb_waking_task(&b, 400, 10, 10, 11, "helper", 0, 0);
	tb_simple(&b, 400, REC_WAKEUP, 10, 10);
	tb_switch(&b, 450, 11, 10, 1, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 600, 10, 10, 0, 11, 10, -1, -1, 0, 0);
	tb_switch(&b, 700, 11, 10, 1, 10, 10, -1, -1, 0, 0);
	t = tb_read(&b, 1000);
	if (!ok(t != NULL, "trace read back"))
		return done_testing();
	timeline__build(t, &only10, &tl);
	is_int(tl.nr, ARRAY_SIZE(want), "six slices for the thread (the other filtered out)");
	for (i = 0; i < tl.nr && i < ARRAY_SIZE(want); i++) {
		const struct tl_slice *s = &tl.slices[i];

		n += s->tid == 10 && s->kind == want[i].kind && s->start_ns == want[i].start &&
		     s->end_ns == want[i].end && s->open == want[i].open;
	}
	is_int(n, ARRAY_SIZE(want), "running, blocked, woken, running, preempted, running (cut)");
	ok(tl.nr > 2 && tl.blocks.eps[tl.slices[1].ep].waker_tid == 11 &&
		   tl.blocks.eps[tl.slices[1].ep].syscall == 0,
	   "the blocked slice has its episode: read, woken by thread 11");
	ok(tl.nr == 6 && tl.slices[0].cpu_ns == 200 && tl.slices[3].cpu_ns == 150 &&
		   !tl.slices[5].cpu_ns,
	   "running slices carry their CPU time (by the clock here: no runtime recorded)");
	is_str(timeline__kind_name(TL_WOKEN), "runnable (woken)", "kind names");
	timeline__free(&tl);
	timeline__build(t, NULL, &tl);
	n = 0;
	for (i = 0; i < tl.nr; i++)
		n += tl.slices[i].tid == 11;
	is_int(n, 4, "unfiltered: the helper's running and blocked slices too");
	timeline__free(&tl);
	trace__close(t);
	return done_testing();
}
