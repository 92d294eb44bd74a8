/* flame__build with a fake namer: folded lines for off-CPU, wake-up and on-CPU graphs, the
 * tracing frames dropped, interrupt stacks cut at their entry, weights merged. */
#include <stdio.h>

#include "analysis/flame.h"
#include "rec_build.h"
#include "unit.h"

static const char *user_name(void *ctx, uint32_t pid, uint64_t ts, uint64_t addr)
{
	static char buf[8][32];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "u%llx", (unsigned long long)addr);
	return buf[i];
}

static const char *kernel_name(void *ctx, uint64_t addr)
{
	switch (addr) {
	case 0x100:
		return "bpf_prog_abc_sched_switch";
	case 0x101:
		return "__traceiter_sched_switch";
	case 0x102:
		return "schedule";
	case 0x103:
		return "do_sys;read";
	case 0x200:
		return "try_to_wake_up";
	case 0x201:
		return "asm_common_interrupt";
	case 0x202:
		return "interrupted_code";
	case 0xf00:
		return "hrtimer_wakeup";
	}
	return "?";
}

static const struct flame_line *line(const struct flame *fl, const char *stack)
{
	for (size_t i = 0; i < fl->nr; i++)
		if (!strcmp(fl->lines[i].stack, stack))
			return &fl->lines[i];
	for (size_t i = 0; i < fl->nr; i++)
		printf("#   have '%s' %llu\n", fl->lines[i].stack, (unsigned long long)fl->lines[i].weight);
	return NULL;
}

int main(void)
{
	struct flame_namer n = { .user = user_name, .kernel = kernel_name };
	uint64_t kips[4] = { 0x100, 0x101, 0x102, 0x103 }, uips[2] = { 0xa, 0xb };
	uint64_t irq[3] = { 0x200, 0x201, 0x202 }, waker_u[1] = { 0xc };
	struct flame_filter f = { 0 };
	const struct flame_line *l;
	struct flame fl;
	struct trace *t;
	struct tb b;
	struct rec r;
	enum flame_kind kind;

	tb_open(&b);
	trace_writer__add_name(b.w, 10, 10, "app");
	trace_writer__add_name(b.w, 11, 10, "helper");
	trace_writer__add_stack(b.w, 1, false, kips, 4);
	trace_writer__add_stack(b.w, 2, true, uips, 2);
	trace_writer__add_stack(b.w, 3, false, irq, 3);
	trace_writer__add_stack(b.w, 4, true, waker_u, 1);
	/* Two blocked episodes of 10 at the same place: 3 us (woken by irq) and 5 us (by 11). */
	tb_switch(&b, 10000, 10, 10, 1, 0, 0, 0, 3, 1, 2);
	tb_waking_irq(&b, 13000, 10, 10, WAKE_HARDIRQ, 24, 0, 3);
	tb_switch(&b, 13500, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 20000, 10, 10, 1, 11, 10, 0, 3, 1, 2);
	tb_waking_task(&b, 25000, 10, 10, 11, "helper", 0, 4);
	tb_switch(&b, 26000, 11, 10, 0, 10, 10, -1, -1, 0, 0);
	/* Three on-CPU samples of 11. */
	for (int i = 0; i < 3; i++) {
		tb_rec(&b, 30000 + i, REC_SAMPLE, 11, 10, 0, &r);
		r.sample.ustack = 4;
		trace_writer__add_event(b.w, &r);
	}
	t = tb_read(&b, 40000);

	flame__build(t, FLAME_OFF, NULL, &n, &fl);
	l = line(&fl, "app;ub;ua;do_sys:read_[k];schedule_[k]");
	ok(l && l->weight == 3 + 5,
	   "off: thread, user outer to inner, kernel _[k] without tracing frames; ';' in names "
	   "made ':'; weights (us, until woken) merged");
	is_int(fl.total, 8, "total");
	flame__free(&fl);

	flame__build(t, FLAME_WAKE, NULL, &n, &fl);
	l = line(&fl, "app;ub;ua;do_sys:read_[k];schedule_[k];--;try_to_wake_up_[k];"
		      "asm_common_interrupt_[k];[hardirq 24 eth0]");
	ok(l && l->weight == 3, "wake: an interrupt's stack cut at its entry, then its name");
	l = line(&fl, "app;ub;ua;do_sys:read_[k];schedule_[k];--;uc;helper");
	ok(l && l->weight == 5, "wake: a task's stack innermost first, then its name");
	flame__free(&fl);

	flame__build(t, FLAME_ON, NULL, &n, &fl);
	l = line(&fl, "helper;uc");
	ok(fl.nr == 1 && l && l->weight == 3, "on: samples counted");
	flame__free(&fl);

	f.comm = "helper";
	flame__build(t, FLAME_OFF, &f, &n, &fl);
	ok(fl.nr == 0, "filters apply");
	flame__free(&fl);

	ok(!flame__parse_kind("wake", &kind) && kind == FLAME_WAKE && flame__parse_kind("x", &kind),
	   "kind names");
	trace__close(t);
	return done_testing();
}
