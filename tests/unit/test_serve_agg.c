/* serve's aggregate fed through a trace writer's sink, as the recorder feeds it: blocking
 * episodes by syscall and wake kind, scheduling delays, profile windows, the caps, label
 * escaping and lost counts, read back from the Prometheus text it writes. */
#include <stdlib.h>

#include "bpf/record.h"
#include "rec_build.h"
#include "serve/agg.h"
#include "unit.h"

static struct serve_agg *agg;

static void ev(void *ctx, const struct rec *r)
{
	serve_agg__event(ctx, r);
}

static void st(void *ctx, uint64_t id, uint32_t flags, const uint64_t *ips, uint32_t nr)
{
	serve_agg__stack(ctx, id, flags, ips, nr);
}

static void nm(void *ctx, uint32_t tid, uint32_t pid, const char *comm)
{
	serve_agg__name(ctx, tid, pid, comm);
}

static void lo(void *ctx, const void *p, size_t len)
{
	serve_agg__lost(ctx, p, len);
}

static char *metrics(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	serve_agg__metrics(agg, f);
	fclose(f);
	return buf;
}

/* The value of the metric line that starts with prefix, -1 when absent. */
static double value(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

#define MS 1000000ull

int main(void)
{
	struct serve_limits lim = {.threads = 100, .series = 100, .stacks = 2, .entries = 100};
	struct trace_sink sink = {ev, st, nm, lo, NULL};
	struct serve_window *w;
	struct tb b;
	uint64_t ips[3] = {0x1000, 0x2000, 0x3000}, got[4];
	int user = 0, trunc = 0;
	char *m;

	agg = serve_agg__new(&lim);
	sink.ctx = agg;
	b.w = trace_writer__open_sink(&sink);
	trace_writer__add_name(b.w, 10, 10, "server");
	trace_writer__add_name(b.w, 11, 10, "worker");
	trace_writer__add_stack(b.w, 77, 1, ips, 3);
	w = serve_agg__window_open(agg, SERVE_WINDOW_OFF);

	/* worker: 7 ms in nanosleep (35) until a timer, on a CPU 0.1 ms later; 3 ms in poll
	 * (7) until a task wakes it, on a CPU 0.5 ms later; preempted for 0.2 ms. */
	tb_switch(&b, 10 * MS, 11, 10, 1, 0, 0, 35, -1, 0, 77);
	tb_waking_irq(&b, 17 * MS, 11, 10, WAKE_HRTIMER, 0, 0xffff, 0);
	tb_switch(&b, 17 * MS + 100000, 0, 0, 0, 11, 10, -1, -1, 0, 0);
	tb_switch(&b, 18 * MS, 11, 10, 1, 0, 0, 7, -1, 0, 77);
	tb_waking_task(&b, 21 * MS, 11, 10, 10, "server", 0, 0);
	tb_switch(&b, 21 * MS + 500000, 0, 0, 0, 11, 10, -1, -1, 0, 0);
	tb_switch(&b, 22 * MS, 11, 10, 0, 0, 0, -1, -1, 0, 0);
	tb_switch(&b, 22 * MS + 200000, 0, 0, 0, 11, 10, -1, -1, 0, 0);
	serve_agg__window_close(agg, w);
	/* After the window: counted in the metrics, not in the window. */
	tb_switch(&b, 30 * MS, 11, 10, 1, 0, 0, 35, -1, 0, 0);
	tb_switch(&b, 31 * MS, 0, 0, 0, 11, 10, -1, -1, 0, 0);

	m = metrics();
	is_int((long long)(value(m, "srvscope_offcpu_seconds_total{process=\"server\","
				    "thread=\"worker\",syscall=\"nanosleep\"}") *
				   1e6 +
			   0.5),
	       8000, "nanosleep: 7 ms to the timer, then 1 ms with no waking seen");
	is_int((long long)(value(m, "srvscope_offcpu_seconds_total{process=\"server\","
				    "thread=\"worker\",syscall=\"poll\"}") *
				   1e6 +
			   0.5),
	       3000, "poll: 3 ms to the waking task");
	is_int((long long)value(m, "srvscope_blocking_episodes_total{process=\"server\","
				   "thread=\"worker\",syscall=\"nanosleep\"}"),
	       2, "two nanosleep episodes");
	is_int((long long)(value(m, "srvscope_offcpu_wake_seconds_total{process=\"server\","
				    "thread=\"worker\",wake=\"hrtimer\"}") *
				   1e6 +
			   0.5),
	       7000, "woken by a timer: 7 ms");
	is_int((long long)(value(m, "srvscope_offcpu_wake_seconds_total{process=\"server\","
				    "thread=\"worker\",wake=\"task\"}") *
				   1e6 +
			   0.5),
	       3000, "woken by a task: 3 ms");
	is_int((long long)(value(m, "srvscope_offcpu_wake_seconds_total{process=\"server\","
				    "thread=\"worker\",wake=\"unknown\"}") *
				   1e6 +
			   0.5),
	       1000, "no waking seen: unknown");
	is_int((long long)value(m, "srvscope_sched_delay_seconds_count{process=\"server\","
				   "thread=\"worker\"}"),
	       3, "three scheduling delays (after two wakings and a preemption)");
	is_int((long long)(value(m, "srvscope_sched_delay_seconds_sum{process=\"server\","
				    "thread=\"worker\"}") *
				   1e6 +
			   0.5),
	       800, "delays: 0.1 + 0.5 + 0.2 ms");
	is_int((long long)value(m, "srvscope_sched_delay_seconds_bucket{process=\"server\","
				   "thread=\"worker\",le=\"0.00025\"}"),
	       2, "two delays up to 250 us (cumulative buckets)");
	is_int((long long)value(m, "srvscope_sched_delay_seconds_bucket{process=\"server\","
				   "thread=\"worker\",le=\"+Inf\"}"),
	       3, "the +Inf bucket holds them all");
	free(m);

	is_int(w->nr, 1, "the window has one (thread, stack) entry");
	is_int(w->e[0].value, 10 * MS, "its value: both episodes that ended in it, 7 + 3 ms");
	is_int(w->e[0].ustack, 77, "with their user stack id");
	is_str(w->e[0].comm, "worker", "and the thread's name");
	serve_window__free(w);

	is_int(serve_agg__stack_copy(agg, 77, got, 4, &user, &trunc), 3, "the stack is kept");
	ok(got[2] == 0x3000 && user && !trunc, "its frames and kind");
	trace_writer__add_stack(b.w, 78, 0, ips, 1);
	trace_writer__add_stack(b.w, 79, 0, ips, 1); /* past .stacks = 2 */
	is_int(serve_agg__stack_copy(agg, 79, got, 4, &user, &trunc), 0,
	       "a stack past the limit is not kept");

	/* A name with a quote, a backslash and a newline: escaped as the format says. */
	trace_writer__add_name(b.w, 12, 12, "a\"b\\c\nd");
	tb_switch(&b, 40 * MS, 12, 12, 1, 0, 0, 0, -1, 0, 0);
	tb_switch(&b, 41 * MS, 0, 0, 0, 12, 12, -1, -1, 0, 0);
	m = metrics();
	ok(strstr(m, "{process=\"a\\\"b\\\\c\\nd\",thread=\"a\\\"b\\\\c\\nd\",syscall=\"read\"}") !=
		   NULL,
	   "label values escaped");
	is_int((long long)value(m, "srvscope_stacks_dropped_total"), 1,
	       "the dropped stack counted");
	free(m);

	/* Lost counts: the recorder's per-CPU totals, summed by reason. */
	{
		uint64_t payload[1 + 2 * LOST_REASONS] = {0};
		uint32_t h[2] = {2, LOST_REASONS};

		memcpy(payload, h, 8);
		payload[1 + LOST_RINGBUF] = 5;
		payload[1 + LOST_REASONS + LOST_RINGBUF] = 7;
		payload[1 + LOST_REASONS + LOST_STACK_FAILED] = 1;
		trace_writer__section(b.w, SEC_LOST, payload, sizeof(payload));
		trace_writer__section(b.w, SEC_LOST, payload, 12); /* cut short: ignored */
	}
	m = metrics();
	is_int((long long)value(m, "srvscope_lost_events_total{reason=\"ringbuf\"}"), 12,
	       "lost events summed over the CPUs");
	is_int((long long)value(m, "srvscope_lost_events_total{reason=\"stack_failed\"}"), 1,
	       "failed stacks");
	free(m);

	/* Past the label sets' limit new ones share "[other]". */
	{
		uint32_t t;
		char name[16];

		for (t = 100; t < 160; t++) {
			snprintf(name, sizeof(name), "t%u", t);
			trace_writer__add_name(b.w, t, t, name);
			tb_switch(&b, 50 * MS + t, t, t, 1, 0, 0, 0, -1, 0, 0);
			tb_switch(&b, 51 * MS + t, 0, 0, 0, t, t, -1, -1, 0, 0);
		}
	}
	m = metrics();
	ok(strstr(m, "process=\"[other]\",thread=\"[other]\"") != NULL,
	   "label sets past the limit go to [other]");
	ok(value(m, "srvscope_series_overflow_total") > 0, "and are counted");
	free(m);

	trace_writer__close(b.w, 0);
	serve_agg__delete(agg);
	return done_testing();
}
