/* srvscope blocking: every blocking episode of every recorded thread (start, duration, the
 * syscall and fd it blocked in, what woke it), then per-syscall and per-fd summaries; text
 * in the layout of the blocking reports of seed 002, or JSON. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "cmd/cmd.h"
#include "trace/report_cmdline.h"
#include "trace/symbols.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope blocking FILE [--pid P] [--tid T] [--comm NAME] [--min-ms X]\n"
	"                          [--stacks] [--format=text|json]\n"
	"\n"
	"Per thread, every time it blocked: when, for how long, in which syscall and fd, and\n"
	"what woke it (a softirq such as NET_RX, a hard irq, a timer, or a task); then totals\n"
	"per syscall and per fd.\n"
	"\n"
	"  -p, --pid P        only the threads of process P\n"
	"  -t, --tid T        only thread T\n"
	"  -c, --comm NAME    only threads named NAME\n"
	"  -m, --min-ms X     only episodes of at least X milliseconds\n"
	"  -s, --stacks       with each episode, where the thread blocked (kernel frames,\n"
	"                     then user frames, innermost first) and the waker's stack\n"
	"  -f, --format FMT   text (default) or json\n";

struct report {
	const struct trace *t;
	bool stacks;		    /* --stacks */
	struct trace_symbols *syms; /* frame names: stacks, timer callbacks */
};

typedef void (*frame_fn)(void *arg, const char *name, bool kernel);

/* The frames of a kernel stack then a user stack of process pid, innermost first, each
 * named, the tracing machinery at the top of the kernel stack left out; an interrupt's
 * (irq) cut where it entered. */
static void stack_frames(struct report *rp, uint64_t kstack, uint64_t ustack, uint32_t pid,
			 uint64_t ts, bool irq, frame_fn fn, void *arg)
{
	const struct trace_stack *st = trace__stack(rp->t, kstack);
	const char *name;
	uint32_t i = 0;

	while (st && i < st->nr &&
	       trace_symbols__is_tracing(trace_symbols__kernel(rp->syms, st->ips[i])))
		i++;
	for (; st && i < st->nr; i++) {
		name = trace_symbols__kernel(rp->syms, st->ips[i]);
		fn(arg, name, true);
		if (irq && trace_symbols__is_irq_entry(name))
			break;
	}
	st = trace__stack(rp->t, ustack);
	for (i = 0; st && i < st->nr; i++)
		fn(arg, trace_symbols__user(rp->syms, pid, ts, st->ips[i]), false);
}

static void frame_text(void *arg, const char *name, bool kernel)
{
	unsigned int *n = arg;

	printf("        #%-3u %s%s\n", (*n)++, name, kernel ? " [k]" : "");
}

static void frame_json(void *arg, const char *name, bool kernel)
{
	json_t *o = json_object();

	json_object_set_new(o, "symbol", json_string(name));
	json_object_set_new(o, "kernel", json_boolean(kernel));
	json_array_append_new(arg, o);
}

/* The waker's process, for its user frames: a task's, from the trace's threads. */
static uint32_t waker_pid(struct report *rp, const struct block_episode *ep)
{
	const struct trace_thread *w = trace__thread(rp->t, ep->waker_tid);

	return w ? w->pid : 0;
}

static void print_episode_stacks(struct report *rp, const struct block_episode *ep)
{
	unsigned int n = 0;

	if (!ep->kstack && !ep->ustack)
		printf("      blocked at: (no stack recorded)\n");
	else
		printf("      blocked at:\n");
	stack_frames(rp, ep->kstack, ep->ustack, ep->pid, ep->start_ns, false, frame_text, &n);
	if (!ep->waker_kstack && !ep->waker_ustack)
		return;
	printf("      woken from:\n");
	n = 0;
	stack_frames(rp, ep->waker_kstack, ep->waker_ustack, waker_pid(rp, ep), ep->wake_ns,
		     ep->wake_kind != WAKE_TASK, frame_text, &n);
}

static void episode_stacks_json(struct report *rp, const struct block_episode *ep, json_t *b)
{
	json_t *a = json_array(), *w = json_array();

	stack_frames(rp, ep->kstack, ep->ustack, ep->pid, ep->start_ns, false, frame_json, a);
	json_object_set_new(b, "stack", a);
	stack_frames(rp, ep->waker_kstack, ep->waker_ustack, waker_pid(rp, ep), ep->wake_ns,
		     ep->wake_kind != WAKE_TASK, frame_json, w);
	json_object_set_new(b, "waker_stack", w);
}

static const char *kernel_name(void *ctx, uint64_t addr)
{
	struct report *rp = ctx;

	return trace_symbols__kernel(rp->syms, addr);
}

static const char *syscall_name(int nr, char *buf, size_t size)
{
	return nr < 0 ? "-" : syscall__name(nr, buf, size);
}

static json_t *syscall_json(int nr)
{
	char buf[32];

	return nr < 0 ? json_null() : json_string(syscall__name(nr, buf, sizeof(buf)));
}

static void print_stats_header(const char *what)
{
	printf("  %-16s %7s %12s %12s %12s %12s %12s\n", what, "Count", "Sum (ms)", "Min (ms)",
	       "Max (ms)", "Mean (ms)", "Stddev (ms)");
}

static void print_stats(const char *key, const struct block_stats *s)
{
	printf("  %-16s %7" PRIu64 " %12.3f %12.3f %12.3f %12.3f %12.3f\n", key, s->count,
	       s->sum_ns / 1e6, s->min_ns / 1e6, s->max_ns / 1e6, block_stats__mean_ns(s) / 1e6,
	       block_stats__stddev_ns(s) / 1e6);
}

static void print_task_text(struct report *rp, const struct block_episode *eps, size_t n)
{
	const struct trace *t = rp->t;
	const struct trace_thread *th = trace__thread(t, eps[0].tid);
	struct block_group *g;
	size_t i, ng;
	char buf[64], nbuf[32], key[32];
	bool marks = false;

	printf("Blocking report for task %s [pid %u, tid %u]\n", th ? th->comm : "?", eps[0].pid,
	       eps[0].tid);
	printf("  %-12s %14s  %-16s %-40s %s\n", "Start (s)", "Duration (ms)", "Syscall", "Fd",
	       "Wakeup");
	for (i = 0; i < n; i++) {
		const struct block_episode *ep = &eps[i];
		const char *desc =
			ep->fd >= 0 ? trace__fd_desc(t, ep->pid, ep->fd, ep->start_ns) : NULL;
		const char *detail = blocking__wake_detail(ep, kernel_name, rp, buf, sizeof(buf));
		char fd[64] = "-", wake[96];

		if (ep->fd >= 0)
			snprintf(fd, sizeof(fd), "%d%s%.50s", ep->fd, desc ? " " : "",
				 desc ? desc : "");
		if (ep->wake_kind == WAKE_TASK)
			snprintf(wake, sizeof(wake), "TASK %s %u", ep->waker_name, ep->waker_tid);
		else
			snprintf(wake, sizeof(wake), "%s%s%s", blocking__kind_name(ep->wake_kind),
				 detail ? " " : "", detail ? detail : "");
		if (ep->wake_kind != WAKE_TASK)
			for (char *c = wake; *c && *c != ' '; c++)
				*c -= (*c >= 'a' && *c <= 'z') ? 32 : 0;
		marks |= ep->from_start || ep->unfinished;
		printf("  %-12.6f %13.3f%s  %-16s %-40s %s\n", (ep->start_ns - t->first_ns) / 1e9,
		       (ep->end_ns - ep->start_ns) / 1e6,
		       ep->from_start ? "<" : (ep->unfinished ? ">" : " "),
		       syscall_name(ep->syscall, nbuf, sizeof(nbuf)), fd, wake);
		if (rp->stacks)
			print_episode_stacks(rp, ep);
	}
	if (marks)
		printf("  (< blocked already when the recording started; > still blocked when it "
		       "ended)\n");
	printf("\n");
	print_stats_header("Syscall");
	ng = blocking__by_syscall(eps, n, &g);
	for (i = 0; i < ng; i++)
		print_stats(syscall_name(g[i].key, nbuf, sizeof(nbuf)), &g[i].st);
	free(g);
	ng = blocking__by_fd(eps, n, &g);
	if (ng) {
		printf("\n");
		print_stats_header("Fd");
		for (i = 0; i < ng; i++) {
			const char *desc =
				trace__fd_desc(t, eps[0].pid, g[i].key, eps[n - 1].start_ns);

			snprintf(key, sizeof(key), "%d", g[i].key);
			print_stats(key, &g[i].st);
			if (desc)
				printf("    %s\n", desc);
		}
	}
	free(g);
	printf("\n");
}

static json_t *stats_json(json_t *o, const struct block_stats *s)
{
	json_object_set_new(o, "count", json_integer(s->count));
	json_object_set_new(o, "sum_ns", json_integer(s->sum_ns));
	json_object_set_new(o, "min_ns", json_integer(s->min_ns));
	json_object_set_new(o, "max_ns", json_integer(s->max_ns));
	json_object_set_new(o, "mean_ns", json_integer((json_int_t)block_stats__mean_ns(s)));
	json_object_set_new(o, "stddev_ns", json_integer((json_int_t)block_stats__stddev_ns(s)));
	return o;
}

static json_t *task_json(struct report *rp, const struct block_episode *eps, size_t n)
{
	const struct trace *t = rp->t;
	const struct trace_thread *th = trace__thread(t, eps[0].tid);
	json_t *o = json_object(), *blocks = json_array(), *sum = json_array(), *fds = json_array();
	struct block_group *g;
	size_t i, ng;
	char buf[64];

	json_object_set_new(o, "pid", json_integer(eps[0].pid));
	json_object_set_new(o, "tid", json_integer(eps[0].tid));
	json_object_set_new(o, "comm", json_string(th ? th->comm : ""));
	for (i = 0; i < n; i++) {
		const struct block_episode *ep = &eps[i];
		json_t *b = json_object(), *w = json_object();
		const char *detail = blocking__wake_detail(ep, kernel_name, rp, buf, sizeof(buf));
		const char *desc =
			ep->fd >= 0 ? trace__fd_desc(t, ep->pid, ep->fd, ep->start_ns) : NULL;

		json_object_set_new(b, "start_ns", json_integer(ep->start_ns - t->first_ns));
		json_object_set_new(b, "duration_ns", json_integer(ep->end_ns - ep->start_ns));
		json_object_set_new(b, "syscall", syscall_json(ep->syscall));
		json_object_set_new(b, "fd", ep->fd >= 0 ? json_integer(ep->fd) : json_null());
		json_object_set_new(b, "fd_desc", desc ? json_string(desc) : json_null());
		json_object_set_new(b, "ret", ep->has_ret ? json_integer(ep->ret) : json_null());
		json_object_set_new(b, "runq_ns",
				    ep->wake_ns && ep->end_ns >= ep->wake_ns
					    ? json_integer(ep->end_ns - ep->wake_ns)
					    : json_null());
		json_object_set_new(b, "from_start", json_boolean(ep->from_start));
		json_object_set_new(b, "unfinished", json_boolean(ep->unfinished));
		json_object_set_new(w, "kind", json_string(blocking__kind_name(ep->wake_kind)));
		json_object_set_new(w, "detail", detail ? json_string(detail) : json_null());
		json_object_set_new(w, "waker_tid",
				    ep->wake_kind == WAKE_TASK ? json_integer(ep->waker_tid)
							       : json_null());
		json_object_set_new(w, "waker_comm",
				    ep->wake_kind == WAKE_TASK ? json_string(ep->waker_name)
							       : json_null());
		json_object_set_new(b, "wakeup", w);
		if (rp->stacks)
			episode_stacks_json(rp, ep, b);
		json_array_append_new(blocks, b);
	}
	json_object_set_new(o, "blocks", blocks);
	ng = blocking__by_syscall(eps, n, &g);
	for (i = 0; i < ng; i++) {
		json_t *s = json_object();

		json_object_set_new(s, "syscall", syscall_json(g[i].key));
		json_array_append_new(sum, stats_json(s, &g[i].st));
	}
	free(g);
	json_object_set_new(o, "summary", sum);
	ng = blocking__by_fd(eps, n, &g);
	for (i = 0; i < ng; i++) {
		json_t *s = json_object();
		const char *desc = trace__fd_desc(t, eps[0].pid, g[i].key, eps[n - 1].start_ns);

		json_object_set_new(s, "fd", json_integer(g[i].key));
		json_object_set_new(s, "desc", desc ? json_string(desc) : json_null());
		json_array_append_new(fds, stats_json(s, &g[i].st));
	}
	free(g);
	json_object_set_new(o, "per_fd", fds);
	return o;
}

int cmd_blocking(int argc, char **argv)
{
	static const struct option longopts[] = {REPORT_CMDLINE_OPT_FILTERS,
						 {"min-ms", required_argument, NULL, 'm'},
						 {"stacks", no_argument, NULL, 's'},
						 REPORT_CMDLINE_OPT_FORMAT,
						 REPORT_CMDLINE_OPT_HELP,
						 {0}};
	struct report_cmdline rc;
	struct block_filter f = {0};
	struct block_report r;
	struct report rp = {0};
	struct trace *t;
	bool json;
	double ms;
	size_t i, j;
	char lost[512];
	json_t *root = NULL, *tasks = NULL;
	int c, ret = 0;

	report_cmdline__init(&rc, "blocking", usage_text, "text", "json");
	report_cmdline__filters(&rc, &f.pid, &f.tid, &f.comm);
	while ((c = report_cmdline__next(&rc, argc, argv, "p:t:c:m:sf:h", longopts)) > 0) {
		if (c == 's')
			rp.stacks = true;
		if (c == 'm') {
			if (parse_double("--min-ms", optarg, 0, 1e9, &ms))
				return 2;
			f.min_ns = ms * 1e6;
		}
	}
	if (c < 0)
		return rc.status;
	t = report_cmdline__open(&rc, argc, argv);
	if (!t)
		return rc.status;
	json = !strcmp(rc.format, "json");
	rp.t = t;
	rp.syms = trace_symbols__new(t); /* names are looked up only when needed */
	blocking__analyze(t, &f, &r);
	if (json) {
		root = json_object();
		tasks = json_array();
		json_object_set_new(root, "trace_start_ns", json_integer(t->first_ns));
		json_object_set_new(root, "lost_events",
				    json_integer(t->lost_by_reason[LOST_RINGBUF]));
		json_object_set_new(root, "lost_stacks",
				    json_integer(t->lost_by_reason[LOST_STACK_RINGBUF]));
	}
	for (i = 0; i < r.nr; i = j) {
		for (j = i + 1; j < r.nr && r.eps[j].tid == r.eps[i].tid; j++)
			;
		if (json)
			json_array_append_new(tasks, task_json(&rp, r.eps + i, j - i));
		else
			print_task_text(&rp, r.eps + i, j - i);
	}
	if (json) {
		json_object_set_new(root, "tasks", tasks);
		ret = json_dumpf(root, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(root);
	} else {
		if (!r.nr)
			printf("No blocking episode%s.\n\n",
			       f.pid || f.tid || f.comm || f.min_ns ? " matches the filters" : "");
		size_t unknown = 0;

		/* Ended, yet no wake-up event seen: the trace says nothing of their waker. */
		for (i = 0; i < r.nr; i++)
			unknown += r.eps[i].wake_kind == WAKE_UNKNOWN && !r.eps[i].unfinished;
		printf("%zu episodes (%zu woken by no event seen: UNKNOWN), %.3f s traced on %s "
		       "(%s); %s\n",
		       r.nr, unknown, (t->end_ns - t->first_ns) / 1e9, t->hdr.host, t->hdr.kernel,
		       trace__lost_summary(t, lost, sizeof(lost)));
	}
	trace_symbols__delete(rp.syms);
	block_report__free(&r);
	trace__close(t);
	return ret ? 1 : 0;
}
