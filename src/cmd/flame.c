/* srvscope flame: folded stacks, an SVG flame graph or a speedscope document from a trace
 * file: off-CPU time by the blocked thread's stack, wake-up time joined to the waker's
 * stack, or on-CPU samples. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/flame.h"
#include "cmd/cmd.h"
#include "output/flamegraph.h"
#include "output/pprof.h"
#include "output/speedscope.h"
#include "trace/report_cmdline.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope flame FILE --kind=off|wake|on [--format=folded|svg|speedscope|pprof]\n"
	"                       [--pid P] [--tid T] [--comm NAME] [--title TEXT]\n"
	"\n"
	"  -k, --kind KIND    off: blocked time (us) by the blocked thread's stack\n"
	"                     wake: blocked time (us), the wakee's stack then '--' then the\n"
	"                           waker's stack (innermost first) and its name\n"
	"                     on: on-CPU samples (record with --on-cpu)\n"
	"  -f, --format FMT   folded (default: 'thread;outer;...;inner COUNT', kernel\n"
	"                     frames suffixed _[k]), svg (interactive flame graph) or\n"
	"                     speedscope (JSON for speedscope.app: a profile per thread)\n"
	"                     or pprof (gzip'd profile.proto for go tool pprof, Parca,\n"
	"                     Pyroscope: off_cpu/nanoseconds or samples/count and\n"
	"                     cpu/nanoseconds; label thread; docs/pprof.md)\n"
	"  -p, --pid P        only the threads of process P\n"
	"  -t, --tid T        only thread T\n"
	"  -c, --comm NAME    only threads named NAME\n"
	"      --title TEXT   the SVG's title\n";

static const char *name_user(void *ctx, uint32_t pid, uint64_t ts, uint64_t addr)
{
	return trace_symbols__user(ctx, pid, ts, addr);
}

static const char *name_kernel(void *ctx, uint64_t addr)
{
	return trace_symbols__kernel(ctx, addr);
}

static struct flamegraph_entry *entries(const struct flame *fl)
{
	struct flamegraph_entry *e = xcalloc(fl->nr + 1, sizeof(*e));
	size_t i;

	for (i = 0; i < fl->nr; i++) {
		e[i].stack = fl->lines[i].stack;
		e[i].weight = fl->lines[i].weight;
	}
	return e;
}

static int write_speedscope(const struct flame *fl, enum flame_kind kind, const char *name)
{
	struct flamegraph_entry *e = entries(fl);
	struct speedscope_opts o = {
		.name = name,
		.unit = kind == FLAME_ON ? "none" : "microseconds",
	};
	int err = speedscope__write(stdout, e, fl->nr, &o);

	free(e);
	return err;
}

static int write_svg(const struct trace *t, const struct flame *fl, enum flame_kind kind,
		     const char *title)
{
	static const char *const titles[] = {"Off-CPU time", "Wake-up time", "On-CPU samples"};
	struct flamegraph_entry *e = entries(fl);
	struct flamegraph_opts o = {
		.title = title ? title : titles[kind],
		.unit = kind == FLAME_ON ? "samples" : "us",
	};
	char sub[256], lost[256];
	int err;

	snprintf(sub, sizeof(sub), "%s, %s, %.3f s; %s", t->hdr.host, t->hdr.kernel,
		 (t->end_ns - t->first_ns) / 1e9, trace__lost_summary(t, lost, sizeof(lost)));
	o.subtitle = sub;
	err = flamegraph__write_svg(stdout, e, fl->nr, &o);
	free(e);
	return err;
}

/* The on-CPU sampling rate the recorder wrote in the trace's info, 0 when unknown. */
static long trace_on_cpu_hz(const struct trace *t)
{
	const char *s = t->info, *end = t->info ? t->info + t->info_len : NULL;

	for (; s && s < end; s = memchr(s, '\n', end - s), s = s ? s + 1 : NULL)
		if ((size_t)(end - s) > 10 && !memcmp(s, "on_cpu_hz=", 10))
			return strtol(s + 10, NULL, 10);
	return 0;
}

/* Off and wake weights are microseconds (pprof: off_cpu/nanoseconds, the same totals
 * times 1000); on-CPU samples also get their duration when the rate is known. */
static int write_pprof(const struct trace *t, const struct flame *fl, enum flame_kind kind)
{
	static const struct pprof_value_type off[] = {{"off_cpu", "nanoseconds"}};
	static const struct pprof_value_type on[] = {{"samples", "count"}, {"cpu", "nanoseconds"}};
	long hz = kind == FLAME_ON ? trace_on_cpu_hz(t) : 0;
	int64_t period = hz ? 1000000000 / hz : 0;
	struct pprof *p;
	size_t i;
	int err;

	if (kind == FLAME_ON)
		p = pprof__new(on, hz ? 2 : 1, &on[1], period);
	else
		p = pprof__new(off, 1, &off[0], 1000);
	pprof__set_time(p, (int64_t)(t->hdr.start_realtime_ns + (t->first_ns - t->hdr.start_ns)),
			(int64_t)(t->end_ns - t->first_ns));
	pprof__add_comment(p, kind == FLAME_WAKE ? "srvscope flame --kind=wake: the wakee's "
						   "stack, then '--', then the waker's"
						 : "srvscope flame");
	for (i = 0; i < fl->nr; i++) {
		int64_t v[2] = {(int64_t)fl->lines[i].weight,
				(int64_t)fl->lines[i].weight * period};

		if (kind != FLAME_ON)
			v[0] *= 1000;
		pprof__add_folded(p, fl->lines[i].stack, v, 0);
	}
	err = pprof__write(p, stdout);
	pprof__delete(p);
	return err;
}

int cmd_flame(int argc, char **argv)
{
	enum { OPT_TITLE = 256 };
	static const struct option longopts[] = {{"kind", required_argument, NULL, 'k'},
						 REPORT_CMDLINE_OPT_FORMAT,
						 REPORT_CMDLINE_OPT_FILTERS,
						 {"title", required_argument, NULL, OPT_TITLE},
						 REPORT_CMDLINE_OPT_HELP,
						 {0}};
	struct report_cmdline rc;
	struct flame_filter f = {0};
	struct flame_namer namer = {.user = name_user, .kernel = name_kernel};
	struct trace_symbols *syms;
	enum flame_kind kind = FLAME_OFF;
	bool have_kind = false;
	const char *title = NULL;
	struct flame fl;
	struct trace *t;
	size_t i;
	int c, err = 0;

	report_cmdline__init(&rc, "flame", usage_text, "folded", "svg");
	report_cmdline__add_format(&rc, "speedscope");
	report_cmdline__add_format(&rc, "pprof");
	report_cmdline__filters(&rc, &f.pid, &f.tid, &f.comm);
	while ((c = report_cmdline__next(&rc, argc, argv, "k:f:p:t:c:h", longopts)) > 0) {
		switch (c) {
		case 'k':
			if (flame__parse_kind(optarg, &kind)) {
				error("invalid value '%s' for --kind: expected off, wake or on",
				      optarg);
				return 2;
			}
			have_kind = true;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		}
	}
	if (c < 0)
		return rc.status;
	if (!have_kind)
		return report_cmdline__needs(&rc, "--kind=off, wake or on");
	if (!strcmp(rc.format, "pprof") && isatty(STDOUT_FILENO))
		return usage_error("flame", "pprof is binary: redirect the output to a file");
	t = report_cmdline__open(&rc, argc, argv);
	if (!t)
		return rc.status;
	if (kind == FLAME_ON && !(t->hdr.flags & TRACE_F_ON_CPU))
		warning("this trace has no on-CPU samples: record with --on-cpu");
	syms = trace_symbols__new(t);
	namer.ctx = syms;
	flame__build(t, kind, &f, &namer, &fl);
	if (!strcmp(rc.format, "svg"))
		err = write_svg(t, &fl, kind, title);
	else if (!strcmp(rc.format, "pprof"))
		err = write_pprof(t, &fl, kind);
	else if (!strcmp(rc.format, "speedscope"))
		err = write_speedscope(&fl, kind, title ? title : argv[rc.first]);
	else
		for (i = 0; i < fl.nr; i++)
			printf("%s %" PRIu64 "\n", fl.lines[i].stack, fl.lines[i].weight);
	if (fflush(stdout))
		err = -1;
	flame__free(&fl);
	trace_symbols__delete(syms);
	trace__close(t);
	return err ? 1 : 0;
}
