/* srvscope timeline: each recorded thread's time as running, runnable and blocked slices,
 * with wake-up arrows between threads, in the Trace Event Format that Perfetto's UI and
 * chrome://tracing open. */
#include <stdio.h>
#include <string.h>

#include "analysis/timeline.h"
#include "cmd/cmd.h"
#include "output/chrome_trace.h"
#include "trace/report_cmdline.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope timeline FILE [--pid P] [--tid T] [--comm NAME] [--format=chrome]\n"
	"\n"
	"Each thread's time as slices: running, runnable (after a preemption or a wake-up,\n"
	"waiting for a CPU), blocked (named by the syscall, with the fd and what woke it), and\n"
	"an arrow from each waker thread to the thread it woke. The output is a JSON trace in\n"
	"the Trace Event Format: open it in https://ui.perfetto.dev or chrome://tracing.\n"
	"\n"
	"  -p, --pid P        only the threads of process P\n"
	"  -t, --tid T        only thread T\n"
	"  -c, --comm NAME    only threads named NAME\n"
	"  -f, --format FMT   chrome (the default and only one)\n";

static const char *kernel_name(void *ctx, uint64_t addr)
{
	return trace_symbols__kernel(ctx, addr);
}

int cmd_timeline(int argc, char **argv)
{
	static const struct option longopts[] = {REPORT_CMDLINE_OPT_FORMAT,
						 REPORT_CMDLINE_OPT_FILTERS,
						 REPORT_CMDLINE_OPT_HELP,
						 {0}};
	struct report_cmdline rc;
	struct block_filter f = {0};
	struct trace_symbols *syms;
	struct timeline tl;
	struct trace *t;
	int c, err;

	report_cmdline__init(&rc, "timeline", usage_text, "chrome", NULL);
	report_cmdline__filters(&rc, &f.pid, &f.tid, &f.comm);
	while ((c = report_cmdline__next(&rc, argc, argv, "f:p:t:c:h", longopts)) > 0)
		;
	if (c < 0)
		return rc.status;
	t = report_cmdline__open(&rc, argc, argv);
	if (!t)
		return rc.status;
	timeline__build(t, &f, &tl);
	syms = trace_symbols__new(t);
	err = chrome_trace__write(stdout, t, &tl, kernel_name, syms);
	if (fflush(stdout))
		err = -1;
	trace_symbols__delete(syms);
	timeline__free(&tl);
	trace__close(t);
	return err ? 1 : 0;
}
