/* srvscope timeline: each recorded thread's time as running, runnable and blocked slices,
 * with wake-up arrows between threads, in the Trace Event Format that Perfetto's UI and
 * chrome://tracing open. */
#include <stdio.h>
#include <string.h>

#include "analysis/timeline.h"
#include "cmd/cmd.h"
#include "critical/critical.h"
#include "output/chrome_trace.h"
#include "output/critical_chrome.h"
#include "trace/report_cmdline.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope timeline FILE [--pid P] [--tid T] [--comm NAME] [--format=chrome]\n"
	"                         [--critical T]\n"
	"\n"
	"Each thread's time as slices: running, runnable (after a preemption or a wake-up,\n"
	"waiting for a CPU), blocked (named by the syscall, with the fd and what woke it), and\n"
	"an arrow from each waker thread to the thread it woke. The output is a JSON trace in\n"
	"the Trace Event Format: open it in https://ui.perfetto.dev or chrome://tracing.\n"
	"\n"
	"  -p, --pid P        only the threads of process P\n"
	"  -t, --tid T        only thread T\n"
	"  -c, --comm NAME    only threads named NAME\n"
	"  -f, --format FMT   chrome (the default and only one)\n"
	"      --critical T   add a track with the critical path of thread T over its life\n"
	"                     (see 'srvscope critical')\n";

static const char *kernel_name(void *ctx, uint64_t addr)
{
	return trace_symbols__kernel(ctx, addr);
}

/* --critical T: the path, written as a track at the end of the timeline's events. */
struct critical_track {
	struct crit_graph g;
	struct crit_path p;
	int64_t base;
};

static int critical_more(FILE *f, bool *first, void *arg)
{
	struct critical_track *c = arg;

	return critical_chrome__track(f, &c->g, &c->p, c->base, first);
}

static int critical_path(struct trace *t, long tid, struct critical_track *c)
{
	char err[256];
	int64_t first, last;

	if (crit_graph__build(&c->g, &t, 1, err, sizeof(err)))
		return error("timeline: %s", err);
	c->base = t->first_ns;
	if (!crit_graph__thread_span(&c->g, 0, tid, &first, &last) ||
	    crit_graph__path(&c->g, 0, tid, first, last, &c->p)) {
		crit_graph__free(&c->g);
		return error("timeline: --critical %ld: the thread is not in the trace", tid);
	}
	return 0;
}

int cmd_timeline(int argc, char **argv)
{
	static const struct option longopts[] = {REPORT_CMDLINE_OPT_FORMAT,
						 REPORT_CMDLINE_OPT_FILTERS,
						 REPORT_CMDLINE_OPT_HELP,
						 {"critical", required_argument, NULL, 256},
						 {0}};
	struct critical_track crit;
	long crit_tid = 0;
	struct report_cmdline rc;
	struct block_filter f = {0};
	struct trace_symbols *syms;
	struct timeline tl;
	struct trace *t;
	int c, err;

	report_cmdline__init(&rc, "timeline", usage_text, "chrome", NULL);
	report_cmdline__filters(&rc, &f.pid, &f.tid, &f.comm);
	while ((c = report_cmdline__next(&rc, argc, argv, "f:p:t:c:h", longopts)) > 0)
		if (c == 256 && parse_long("--critical", optarg, 1, 4194304, &crit_tid))
			return 2;
	if (c < 0)
		return rc.status;
	t = report_cmdline__open(&rc, argc, argv);
	if (!t)
		return rc.status;
	if (crit_tid && critical_path(t, crit_tid, &crit)) {
		trace__close(t);
		return 1;
	}
	timeline__build(t, &f, &tl);
	syms = trace_symbols__new(t);
	err = chrome_trace__write_more(stdout, t, &tl, kernel_name, syms,
				       crit_tid ? critical_more : NULL, &crit);
	if (crit_tid) {
		crit_path__free(&crit.p);
		crit_graph__free(&crit.g);
	}
	if (fflush(stdout))
		err = -1;
	trace_symbols__delete(syms);
	timeline__free(&tl);
	trace__close(t);
	return err ? 1 : 0;
}
