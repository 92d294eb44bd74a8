/* srvscope top: the stacks of every thread of a process, grouped, sorted by share and
 * refreshed every interval on a full screen; with stdout not a terminal (or --format),
 * one snapshot per interval in that format instead. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/aggregate.h"
#include "attach/ptrace.h"
#include "cmd/cmd.h"
#include "output/output.h"
#include "output/tui.h"
#include "output/tui_view.h"
#include "proc/task.h"
#include "snapshot/snapshot.h"
#include "stacks/cmdline.h"
#include "stacks/stacks.h"
#include "stacks/tree.h"
#include "util/escape.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope top -p PID [options]\n"
	"\n"
	"A live view of the stacks of every thread of PID and of its descendants, identical\n"
	"stacks grouped and sorted by their share of the threads. Keys: q quit, space pause,\n"
	"t per-thread view, k kernel frames, c cumulative/last-sample shares, / filter,\n"
	"arrows + Enter to select and expand. When stdout is not a terminal, prints one\n"
	"snapshot per interval.\n"
	"\n"
	"  -p, --pid PID          process to look at, with its descendants (required)\n"
	"      --no-children      PID alone, not its descendants\n"
	"  -i, --interval MS      milliseconds between refreshes (default 1000)\n"
	"  -n, --iterations N     exit after N refreshes (default: run until q or a signal)\n"
	"  -f, --format FMT       output when not on a terminal: raw (default), folded, json\n"
	"                         (one JSON document per line), speedscope (likewise), text,\n"
	"                         pprof (one profile of every refresh, written at the end)\n"
	"  -k, --kernel           show kernel frames (below the user frames)\n"
	"      --mode MODE        auto (default: nostop when the kernel allows), ptrace, nostop\n"
	"      --stack-size N     bytes of each thread's stack copied (default 16384;\n"
	"                         ptrace: at least 65536 for a running thread)\n"
	"  -q, --quiet            no notices on stderr\n";

struct top {
	struct stacks_cmdline cl;
	struct stacks_tree *tree;
	long interval_ms, iterations;
	enum output_format fmt;
	bool fmt_given;

	/* Screen mode: aggregates without [0] and with [1] kernel frames, since the start
	 * and for the latest sample only. */
	struct stack_agg *cum[2], *last[2];
	struct snapshot *snap; /* the latest sample */
	char comm[COMM_ESCAPED_SIZE];
	bool kernel_captured;
	bool show_kernel; /* --kernel */
	struct tui_status st;
	char message[200];
};

static void top__drop_aggs(struct stack_agg **aggs)
{
	stack_agg__delete(aggs[0]);
	stack_agg__delete(aggs[1]);
	aggs[0] = aggs[1] = NULL;
}

/* Takes one sample into the cumulative aggregates and the header's figures; the
 * latest-sample aggregates are built when shown. Returns 0, or -1 when the target cannot
 * be sampled any more (message printed). */
static int top__sample(struct top *tp)
{
	struct snapshot *snap;
	uint64_t t0 = now_ns();
	size_t i;
	int k;

	snap = stacks_tree__sample(tp->tree);
	if (!snap)
		return -1;
	tp->st.sample_ns = now_ns() - t0;
	tp->st.capture_ns = snap->capture_ns;
	tp->st.threads = snap->nr_threads;
	tp->st.samples++;
	tp->st.mode = stacks_tree__mode(tp->tree);
	tp->st.stall_ns = tp->st.stall_max_ns = 0;
	for (i = 0; i < snap->nr_threads; i++) {
		tp->st.stall_ns += snap->threads[i].stall_ns;
		if (snap->threads[i].stall_ns > tp->st.stall_max_ns)
			tp->st.stall_max_ns = snap->threads[i].stall_ns;
	}
	name_escape(tp->comm, sizeof(tp->comm), snap->comm,
		    strnlen(snap->comm, sizeof(snap->comm)));
	tp->st.comm = tp->comm;
	for (k = 0; k <= (int)tp->kernel_captured; k++) {
		if (!tp->cum[k])
			tp->cum[k] = stack_agg__new(k);
		stack_agg__add(tp->cum[k], snap);
		stack_agg__sort(tp->cum[k]);
	}
	tp->st.cum_samples = tp->cum[0]->samples;
	top__drop_aggs(tp->last);
	snapshot__delete(tp->snap);
	tp->snap = snap;
	return 0;
}

static const struct stack_agg *top__shown(struct top *tp, const struct tui_view *v)
{
	int k = v->show_kernel && tp->kernel_captured;

	if (v->cumulative)
		return tp->cum[k] ? tp->cum[k] : tp->cum[0]; /* kernel stacks just turned on */
	if (!tp->last[k] && tp->snap) {
		tp->last[k] = stack_agg__new(k);
		stack_agg__add(tp->last[k], tp->snap);
		stack_agg__sort(tp->last[k]);
	}
	return tp->last[k] ? tp->last[k] : tp->last[0];
}

/* 'k' without kernel stacks being taken: start taking them, with a new tree of sessions
 * in the same mode. The kernel-frame aggregates start from this sample on. */
static void top__capture_kernel(struct top *tp)
{
	struct stacks_opts opts = tp->cl.opts;
	struct stacks_tree *s;

	opts.kernel = true;
	opts.mode = strcmp(stacks_tree__mode(tp->tree), "nostop") ? STACKS_MODE_PTRACE
								  : STACKS_MODE_NOSTOP;
	s = stacks_tree__new(tp->cl.pid, &opts, !tp->cl.no_children);
	if (!s) {
		snprintf(tp->message, sizeof(tp->message),
			 "cannot take kernel stacks (the reason is printed on exit)");
		return;
	}
	/* The latest sample's frames name strings of the old sessions: aggregate them first. */
	top__drop_aggs(tp->last);
	if (tp->snap) {
		tp->last[0] = stack_agg__new(false);
		stack_agg__add(tp->last[0], tp->snap);
		stack_agg__sort(tp->last[0]);
	}
	snapshot__delete(tp->snap);
	tp->snap = NULL;
	stacks_tree__delete(tp->tree);
	tp->tree = s;
	tp->cl.opts = opts;
	tp->kernel_captured = true;
	tp->st.kernel_captured = true;
	snprintf(tp->message, sizeof(tp->message), "kernel stacks are taken from now on");
}

static int top__screen(struct top *tp)
{
	struct tui_view view;
	struct tui *tui;
	uint64_t next = now_ns();
	long refreshes = 0;
	bool dirty = false, rebuild = false;
	int ret = 0;

	tui_view__init(&view);
	view.show_kernel = tp->show_kernel;
	tui = tui__open();
	if (!tui)
		return 1;
	while (!ptrace_interrupted) {
		uint64_t now = now_ns();
		long wait_ms;
		int key;

		if (!tp->st.paused && now >= next) {
			if (top__sample(tp) < 0) {
				ret = stacks_tree__exit_status(tp->tree, refreshes);
				break;
			}
			next += tp->interval_ms * 1000000ull;
			if (next < now)
				next = now + tp->interval_ms * 1000000ull;
			refreshes++;
			rebuild = true;
		}
		if (rebuild && tp->cum[0]) {
			tui_view__build(&view, top__shown(tp, &view));
			dirty = true;
		}
		rebuild = false;
		if (dirty) {
			tp->st.message = tp->message[0] ? tp->message : NULL;
			tui__draw(tui, &tp->st, &view);
			dirty = false;
		}
		if (tp->iterations && refreshes >= tp->iterations)
			break;
		now = now_ns();
		wait_ms = tp->st.paused || next <= now ? 250 : (long)((next - now) / 1000000);
		key = tui__getkey(tui, wait_ms > 250 ? 250 : wait_ms);
		if (key < 0)
			continue;
		tp->message[0] = '\0';
		dirty = true;
		switch (tui__key(tui, &view, key)) {
		case TUI_QUIT:
			goto out_close;
		case TUI_PAUSE:
			tp->st.paused = !tp->st.paused;
			if (!tp->st.paused)
				next = now_ns();
			break;
		case TUI_KERNEL:
			if (view.show_kernel && !tp->kernel_captured)
				top__capture_kernel(tp);
			rebuild = true;
			break;
		case TUI_REBUILD:
		case TUI_CUMULATIVE:
			rebuild = true;
			break;
		case TUI_REDRAW:
		case TUI_NONE:
			break;
		}
	}
out_close:
	tui__close(tui);
	tui_view__fini(&view);
	return ret;
}

/* pprof is one binary document: the refreshes add up in one aggregate, written when top
 * ends (-n, a signal, the target's exit). */
static int top__pprof_end(struct top *tp, struct stack_agg *all, uint64_t start, int ret)
{
	if (all->samples) {
		stack_agg__sort(all);
		if (output__pprof(stdout, all, now_ns() - start))
			ret = 1;
	}
	stack_agg__delete(all);
	return ret;
}

/* Not on a terminal: one snapshot per interval, flushed as it comes. */
static int top__stream(struct top *tp)
{
	uint64_t next = now_ns(), start = next;
	struct stack_agg *all = NULL;
	long i;

	for (i = 0; !tp->iterations || i < tp->iterations; i++) {
		struct snapshot *snap;
		uint64_t now = now_ns();

		if (i) {
			next += tp->interval_ms * 1000000ull;
			if (next > now)
				stacks_cmdline__sleep_ms((long)((next - now) / 1000000));
			else
				next = now;
		}
		if (ptrace_interrupted)
			break;
		snap = stacks_tree__sample(tp->tree);
		if (!snap) {
			if (all)
				return top__pprof_end(tp, all, start,
						      stacks_tree__exit_status(tp->tree, i));
			return stacks_tree__exit_status(tp->tree, i);
		}
		if (tp->fmt == OUTPUT_PPROF) {
			if (!all) {
				all = stack_agg__new(tp->cl.opts.kernel);
				proc__title(tp->cl.pid, all->title, sizeof(all->title));
				name_escape_inplace(all->title, sizeof(all->title));
			}
			stack_agg__add(all, snap);
			snapshot__delete(snap);
			continue;
		}
		if (tp->fmt == OUTPUT_RAW) {
			output__raw(stdout, snap);
		} else {
			struct stack_agg *agg = stack_agg__new(tp->cl.opts.kernel);

			proc__title(tp->cl.pid, agg->title, sizeof(agg->title));
			name_escape_inplace(agg->title, sizeof(agg->title));
			stack_agg__add(agg, snap);
			stack_agg__sort(agg);
			if (tp->fmt == OUTPUT_JSON)
				output__json(stdout, agg, true);
			else if (tp->fmt == OUTPUT_SPEEDSCOPE)
				output__speedscope(stdout, agg, "srvscope top");
			else if (tp->fmt == OUTPUT_FOLDED)
				output__folded(stdout, agg);
			else
				output__text(stdout, agg);
			stack_agg__delete(agg);
		}
		fflush(stdout);
		snapshot__delete(snap);
		if (ferror(stdout))
			return 1;
	}
	return all ? top__pprof_end(tp, all, start, 0) : 0;
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"iterations", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'},
		STACKS_CMDLINE_LONGOPTS,
		{0},
	};
	struct top tp;
	bool screen;
	int c, ret;

	memset(&tp, 0, sizeof(tp));
	stacks_cmdline__init(&tp.cl);
	tp.interval_ms = 1000;
	tp.fmt = OUTPUT_RAW;
	while ((c = getopt_long(argc, argv, ":p:i:n:f:kqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_long("-i", optarg, 10, 3600000, &tp.interval_ms))
				return 2;
			break;
		case 'n':
			if (parse_long("-n", optarg, 1, 1000000000, &tp.iterations))
				return 2;
			break;
		case 'f':
			if (output__parse_format(optarg, &tp.fmt))
				return 2;
			tp.fmt_given = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case '?':
		case ':':
			return option_error("top", c, argv);
		default:
			c = stacks_cmdline__option(&tp.cl, c, optarg);
			if (c == 1)
				break;
			return 2;
		}
	}
	if (stacks_cmdline__finish(&tp.cl, argc, argv, optind) < 0)
		return 2;
	if (tp.fmt == OUTPUT_PPROF && isatty(STDOUT_FILENO))
		return usage_error("top", "pprof is binary: redirect the output to a file");
	screen = isatty(STDOUT_FILENO) && !tp.fmt_given;
	/* Kernel stacks cost a few percent of a core at 10 Hz on 1000 threads (taking and
	 * symbolizing them): taken with --kernel, or from the first 'k' on. */
	tp.kernel_captured = tp.cl.opts.kernel;
	tp.show_kernel = tp.cl.opts.kernel;
	tp.cl.opts.kernel = tp.kernel_captured;
	/* Before the screen is set up, so that ncurses leaves these signals to us. */
	stacks_cmdline__trap_signals();
	tp.tree = stacks_tree__new(tp.cl.pid, &tp.cl.opts, !tp.cl.no_children);
	if (!tp.tree)
		return 1;
	tp.st.pid = tp.cl.pid;
	tp.st.interval_ms = tp.interval_ms;
	tp.st.kernel_captured = tp.kernel_captured;
	tp.st.mode = stacks_tree__mode(tp.tree);
	ret = screen ? top__screen(&tp) : top__stream(&tp);
	top__drop_aggs(tp.cum);
	top__drop_aggs(tp.last);
	snapshot__delete(tp.snap);
	stacks_tree__delete(tp.tree);
	return ret;
}
