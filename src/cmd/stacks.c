/* srvscope stacks: the stacks of every thread of a process, grouped like a poor man's
 * profiler; several samples aggregate into thread-sample counts. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "attach/ptrace.h"
#include "cmd/cmd.h"
#include "output/output.h"
#include "proc/task.h"
#include "snapshot/snapshot.h"
#include "stacks/stacks.h"
#include "stacks/cmdline.h"
#include "stacks/tree.h"
#include "util/escape.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope stacks -p PID [options]\n"
	"\n"
	"Shows the stack of every thread of PID and of its descendants (the workers of a\n"
	"server's master), identical stacks grouped and counted.\n"
	"\n"
	"  -p, --pid PID         process to look at, with its descendants (required)\n"
	"      --no-children     PID alone, not its descendants\n"
	"  -n, --samples COUNT   take COUNT samples and aggregate them (default 1)\n"
	"  -i, --interval MS     milliseconds between samples (default 100)\n"
	"  -f, --format FMT      text (default), raw (gdb style), folded, json, speedscope,\n"
	"                        pprof (gzip'd profile.proto for go tool pprof: docs/pprof.md)\n"
	"  -k, --kernel          add kernel frames below the user frames\n"
	"      --mode MODE       auto (default: nostop when the kernel allows), ptrace, nostop\n"
	"      --consistent      ptrace: freeze all threads together (reports the freeze time)\n"
	"      --stack-size N    bytes of each thread's stack copied (default 16384;\n"
	"                        ptrace: at least 65536 for a running thread)\n"
	"  -q, --quiet           no notices on stderr\n";

int cmd_stacks(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"samples", required_argument, NULL, 'n'},
		{"interval", required_argument, NULL, 'i'},
		{"format", required_argument, NULL, 'f'},
		{"consistent", no_argument, NULL, 'C'},
		STACKS_CMDLINE_LONGOPTS,
		{0},
	};
	struct stacks_cmdline cl;
	struct stacks_tree *tree;
	struct stack_agg *agg;
	long samples = 1, interval = 100, s;
	uint64_t start;
	enum output_format fmt = OUTPUT_TEXT;
	int c, ret = 0;

	stacks_cmdline__init(&cl);
	while ((c = getopt_long(argc, argv, ":p:n:i:f:kqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_long("-n", optarg, 1, 1000000, &samples))
				return 2;
			break;
		case 'i':
			if (parse_long("-i", optarg, 0, 3600000, &interval))
				return 2;
			break;
		case 'f':
			if (output__parse_format(optarg, &fmt))
				return 2;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case '?':
		case ':':
			return option_error("stacks", c, argv);
		default:
			c = stacks_cmdline__option(&cl, c, optarg);
			if (c == 1)
				break;
			return 2;
		}
	}
	if (stacks_cmdline__finish(&cl, argc, argv, optind) < 0)
		return 2;
	if (fmt == OUTPUT_PPROF && isatty(STDOUT_FILENO))
		return usage_error("stacks", "pprof is binary: redirect the output to a file");
	start = now_ns();
	tree = stacks_tree__new(cl.pid, &cl.opts, !cl.no_children);
	if (!tree)
		return 1;
	stacks_cmdline__trap_signals();
	agg = stack_agg__new(cl.opts.kernel);
	proc__title(cl.pid, agg->title, sizeof(agg->title)); /* "postgres: walwriter" */
	name_escape_inplace(agg->title, sizeof(agg->title)); /* the process wrote it */
	for (s = 0; s < samples && !ptrace_interrupted; s++) {
		struct snapshot *snap;

		if (s)
			stacks_cmdline__sleep_ms(interval);
		snap = stacks_tree__sample(tree);
		if (!snap) {
			ret = stacks_tree__exit_status(tree, s);
			break;
		}
		if (fmt == OUTPUT_RAW)
			output__raw(stdout, snap);
		stack_agg__add(agg, snap);
		snapshot__delete(snap);
	}
	if (agg->samples) {
		stack_agg__sort(agg);
		if (fmt == OUTPUT_TEXT)
			output__text(stdout, agg);
		else if (fmt == OUTPUT_FOLDED)
			output__folded(stdout, agg);
		else if (fmt == OUTPUT_JSON)
			output__json(stdout, agg, false);
		else if (fmt == OUTPUT_SPEEDSCOPE) {
			char name[64];

			snprintf(name, sizeof(name), "srvscope stacks -p %d", (int)cl.pid);
			output__speedscope(stdout, agg, name);
		} else if (fmt == OUTPUT_PPROF && output__pprof(stdout, agg, now_ns() - start))
			ret = 1;
	}
	stack_agg__delete(agg);
	stacks_tree__delete(tree);
	return ret;
}
