/* srvscope blocking: every blocking episode of every recorded thread (start, duration, the
 * syscall and fd it blocked in, what woke it), then per-syscall and per-fd summaries; text
 * in the layout of the blocking reports of seed 002, or JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "cmd/cmd.h"
#include "critical/critical.h"
#include "output/json_writer.h"
#include "snapshot/snapshot.h"
#include "trace/report_cmdline.h"
#include "trace/symbols.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/escape.h"
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
	"                     then user frames, innermost first) and the waker's stack;\n"
	"                     JSON: stack ids into a table of each distinct stack; a stack\n"
	"                     missing from the trace (damaged) is one [unknown] frame\n"
	"  -f, --format FMT   text (default) or json (docs/blocking-json.md, streamed)\n"
	"      --critical     text: under each episode, what its wait was on the critical\n"
	"                     path (see 'srvscope critical'): the largest parts by thread\n";

struct report {
	const struct trace *t;
	bool stacks;		    /* --stacks */
	struct trace_symbols *syms; /* frame names: stacks, timer callbacks */
	struct json_writer *w;	    /* --format=json */
	struct stack_table *tab;    /* --format=json --stacks: the stacks written */
	struct crit_graph *crit;    /* --critical */
};

/* --critical: the wait's critical path in one line, its three largest parts. */
static void print_episode_critical(struct report *rp, const struct block_episode *ep)
{
	uint64_t end = ep->wake_ns > ep->start_ns ? ep->wake_ns : ep->end_ns;
	struct crit_share top[3];
	struct crit_path p;
	size_t i, n;

	if (end <= ep->start_ns || crit_graph__path(rp->crit, 0, ep->tid, ep->start_ns, end, &p))
		return;
	n = crit_path__top(&p, top, 3);
	printf("  %12s critical path:", "");
	for (i = 0; i < n; i++) {
		const struct trace_thread *th = trace__thread(rp->t, top[i].tid);

		printf("%s %s %u %s %.3f ms", i ? "," : "", th ? th->comm : "?", top[i].tid,
		       crit_edge__name(top[i].edge), top[i].ns / 1e6);
	}
	printf("\n");
	crit_path__free(&p);
}

/* missing: the frame stands for a stack the trace does not hold (see stack_frames). */
typedef void (*frame_fn)(void *arg, const char *name, bool kernel, bool missing);

#define MISSING_FRAME "[unknown]"

/* The frames of a kernel stack then a user stack of process pid, innermost first, each
 * named, the tracing machinery at the top of the kernel stack left out; an interrupt's
 * (irq) cut where it entered. A stack that was recorded but is not in the trace (its
 * stacks section is damaged, or it was lost to a full buffer) is one frame, [unknown],
 * marked missing: one for both when both are missing. */
static void stack_frames(struct report *rp, uint64_t kstack, uint64_t ustack, uint32_t pid,
			 uint64_t ts, bool irq, frame_fn fn, void *arg)
{
	const struct trace_stack *st = trace__stack(rp->t, kstack);
	bool missing = kstack && !st;
	const char *name;
	uint32_t i = 0;

	if (missing)
		fn(arg, MISSING_FRAME, true, true);

	while (st && i < st->nr &&
	       trace_symbols__is_tracing(trace_symbols__kernel(rp->syms, st->ips[i])))
		i++;
	for (; st && i < st->nr; i++) {
		name = trace_symbols__kernel(rp->syms, st->ips[i]);
		fn(arg, name, true, false);
		if (irq && trace_symbols__is_irq_entry(name))
			break;
	}
	st = trace__stack(rp->t, ustack);
	if (ustack && !st && !missing)
		fn(arg, MISSING_FRAME, false, true);
	for (i = 0; st && i < st->nr; i++)
		fn(arg, trace_symbols__user(rp->syms, pid, ts, st->ips[i]), false, false);
	if (st && st->truncated)
		fn(arg, FRAME_TRUNCATED, false, false);
}

static void frame_text(void *arg, const char *name, bool kernel, bool missing)
{
	unsigned int *n = arg;

	if (missing) /* apart: a third %s in the common case costs 5% of the text report */
		printf("        #%-3u %s%s (stack missing from the trace)\n", (*n)++, name,
		       kernel ? " [k]" : "");
	else
		printf("        #%-3u %s%s\n", (*n)++, name, kernel ? " [k]" : "");
}

static void frame_json(void *arg, const char *name, bool kernel, bool missing)
{
	struct json_writer *w = arg;

	json_writer__begin_object(w, true);
	json_writer__kv_string(w, "symbol", name);
	json_writer__kv_bool(w, "kernel", kernel);
	if (missing) /* only then: a key in every frame would weigh on the document */
		json_writer__kv_bool(w, "missing", true);
	json_writer__end_object(w);
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

static const char *kernel_name(void *ctx, uint64_t addr)
{
	struct report *rp = ctx;

	return trace_symbols__kernel(rp->syms, addr);
}

static const char *syscall_name(int nr, char *buf, size_t size)
{
	return nr < 0 ? "-" : syscall__name(nr, buf, size);
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
	bool marks = false, more = false;

	char title[256];

	printf("Blocking report for task %s [pid %u, tid %u]\n", th ? th->comm : "?", eps[0].pid,
	       eps[0].tid);
	/* The workers of postgres or apache2 share a name; their titles tell them apart. */
	if (trace__title(t, eps[0].pid, title, sizeof(title)))
		printf("  command: %s\n", title);
	printf("  %-12s %14s  %-16s %-40s %s\n", "Start (s)", "Duration (ms)", "Syscall", "Fd",
	       "Wakeup");
	for (i = 0; i < n; i++) {
		const struct block_episode *ep = &eps[i];
		const char *desc =
			ep->fd >= 0 ? trace__fd_desc(t, ep->pid, ep->fd, ep->start_ns) : NULL;
		const char *detail = blocking__wake_detail(ep, kernel_name, rp, buf, sizeof(buf));
		char fd[64] = "-", wake[96], name[COMM_ESCAPED_SIZE];

		if (ep->fd >= 0)
			snprintf(fd, sizeof(fd), "%d%s%s%.50s", ep->fd, ep->more_fds ? "+" : "",
				 desc ? " " : "", desc ? desc : "");
		if (ep->wake_kind == WAKE_TASK)
			snprintf(wake, sizeof(wake), "TASK %s %u",
				 blocking__waker_name(ep, name, sizeof(name)), ep->waker_tid);
		else
			snprintf(wake, sizeof(wake), "%s%s%s", blocking__kind_name(ep->wake_kind),
				 detail ? " " : "", detail ? detail : "");
		if (ep->wake_kind != WAKE_TASK)
			for (char *c = wake; *c && *c != ' '; c++)
				*c -= (*c >= 'a' && *c <= 'z') ? 32 : 0;
		marks |= ep->from_start || ep->unfinished;
		more |= ep->more_fds;
		/* A wait that spans the whole recording has both marks. */
		printf("  %-12.6f %12.3f%-2s  %-16s %-40s %s\n", (ep->start_ns - t->first_ns) / 1e9,
		       (ep->end_ns - ep->start_ns) / 1e6,
		       ep->from_start && ep->unfinished ? "<>"
		       : ep->from_start			? "<"
		       : ep->unfinished			? ">"
							: "",
		       syscall_name(ep->syscall, nbuf, sizeof(nbuf)), fd, wake);
		if (rp->crit)
			print_episode_critical(rp, ep);
		if (rp->stacks)
			print_episode_stacks(rp, ep);
	}
	if (marks)
		printf("  (< blocked already when the recording started; > still blocked when it "
		       "ended; <> both)\n");
	if (more)
		printf("  (5+: poll or select waited on fd 5 and others)\n");
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

/* --stacks in JSON: each distinct stack is written once, in the top-level "stacks" table,
 * and episodes refer to it by id (a busy server blocks in the same few places a hundred
 * thousand times). Two references are the same stack when they print the same frames:
 * the same kernel and user stacks, cut at an interrupt's entry or not, and for user frames
 * the same process and the same maps in force. */
struct stack_ref {
	uint64_t kstack, ustack;
	const struct trace_maps *maps; /* user frames' names come from these */
	uint32_t pid;		       /* 0 without user frames */
	bool irq;
	uint64_t ts; /* of the first reference: where the frames are named */
};

struct stack_table {
	struct u64map idx; /* key hash (+ probe) -> index in refs */
	struct stack_ref *refs;
	size_t nr, cap;
};

static bool same_stack(const struct stack_ref *a, const struct stack_ref *b)
{
	return a->kstack == b->kstack && a->ustack == b->ustack && a->maps == b->maps &&
	       a->pid == b->pid && a->irq == b->irq;
}

/* The id (1, 2, ...) of a stack, given one when new; 0 when no stack was recorded. */
static uint64_t stack_table__id(struct stack_table *tab, const struct trace *t, uint64_t kstack,
				uint64_t ustack, uint32_t pid, uint64_t ts, bool irq)
{
	struct stack_ref ref = {.kstack = kstack, .ustack = ustack, .irq = irq && kstack, .ts = ts};
	uint64_t h, *slot;
	bool created;

	if (!kstack && !ustack)
		return 0;
	if (ustack) {
		ref.pid = pid;
		ref.maps = trace__maps(t, pid, ts);
	}
	h = fnv1a(&ref.kstack, sizeof(ref.kstack), FNV1A_INIT);
	h = fnv1a(&ref.ustack, sizeof(ref.ustack), h);
	h = fnv1a(&ref.maps, sizeof(ref.maps), h);
	h = fnv1a(&ref.pid, sizeof(ref.pid), h);
	h = fnv1a(&ref.irq, sizeof(ref.irq), h);
	/* A hash shared by two different stacks moves the second one to the next key. */
	for (;; h++) {
		slot = u64map__slot(&tab->idx, h, &created);
		if (created)
			break;
		if (same_stack(&tab->refs[*slot], &ref))
			return *slot + 1;
	}
	xgrow((void **)&tab->refs, &tab->cap, tab->nr + 1, sizeof(*tab->refs));
	tab->refs[tab->nr] = ref;
	*slot = tab->nr++;
	return tab->nr;
}

static void stack_table__free(struct stack_table *tab)
{
	u64map__free(&tab->idx);
	free(tab->refs);
}

static uint64_t blocked_stack_id(struct report *rp, const struct block_episode *ep)
{
	return stack_table__id(rp->tab, rp->t, ep->kstack, ep->ustack, ep->pid, ep->start_ns,
			       false);
}

static uint64_t waker_stack_id(struct report *rp, const struct block_episode *ep)
{
	return stack_table__id(rp->tab, rp->t, ep->waker_kstack, ep->waker_ustack,
			       waker_pid(rp, ep), ep->wake_ns, ep->wake_kind != WAKE_TASK);
}

/* "stacks": {"1": [frames], ...}, every stack the episodes refer to, in the order of their
 * first reference. */
static void stacks_json(struct report *rp, const struct block_episode *eps, size_t n)
{
	struct json_writer *w = rp->w;
	char id[24];
	size_t i;

	for (i = 0; i < n; i++) {
		blocked_stack_id(rp, &eps[i]);
		waker_stack_id(rp, &eps[i]);
	}
	json_writer__key(w, "stacks");
	json_writer__begin_object(w, false);
	for (i = 0; i < rp->tab->nr; i++) {
		const struct stack_ref *s = &rp->tab->refs[i];

		snprintf(id, sizeof(id), "%zu", i + 1);
		json_writer__key(w, id);
		json_writer__begin_array(w, true);
		stack_frames(rp, s->kstack, s->ustack, s->pid, s->ts, s->irq, frame_json, w);
		json_writer__end_array(w);
	}
	json_writer__end_object(w);
}

static void kv_stack_id(struct json_writer *w, const char *key, uint64_t id)
{
	if (id)
		json_writer__kv_uint(w, key, id);
	else
		json_writer__kv_null(w, key);
}

static void kv_syscall(struct json_writer *w, const char *key, int nr)
{
	char buf[32];

	json_writer__kv_string(w, key, nr < 0 ? NULL : syscall__name(nr, buf, sizeof(buf)));
}

static void stats_json(struct json_writer *w, const struct block_stats *s)
{
	json_writer__kv_uint(w, "count", s->count);
	json_writer__kv_uint(w, "sum_ns", s->sum_ns);
	json_writer__kv_uint(w, "min_ns", s->min_ns);
	json_writer__kv_uint(w, "max_ns", s->max_ns);
	json_writer__kv_uint(w, "mean_ns", (uint64_t)block_stats__mean_ns(s));
	json_writer__kv_uint(w, "stddev_ns", (uint64_t)block_stats__stddev_ns(s));
	json_writer__end_object(w);
}

static void episode_json(struct report *rp, const struct block_episode *ep)
{
	const struct trace *t = rp->t;
	struct json_writer *w = rp->w;
	const char *detail;
	const char *desc = ep->fd >= 0 ? trace__fd_desc(t, ep->pid, ep->fd, ep->start_ns) : NULL;
	char buf[64];

	json_writer__begin_object(w, true);
	json_writer__kv_uint(w, "start_ns", ep->start_ns - t->first_ns);
	json_writer__kv_uint(w, "duration_ns", ep->end_ns - ep->start_ns);
	kv_syscall(w, "syscall", ep->syscall);
	if (ep->fd >= 0)
		json_writer__kv_int(w, "fd", ep->fd);
	else
		json_writer__kv_null(w, "fd");
	json_writer__kv_string(w, "fd_desc", desc);
	if (ep->polled_fd) /* poll, select: fd is the first of the fds waited on */
		json_writer__kv_bool(w, "more_fds", ep->more_fds);
	if (ep->has_ret)
		json_writer__kv_int(w, "ret", ep->ret);
	else
		json_writer__kv_null(w, "ret");
	if (ep->wake_ns && ep->end_ns >= ep->wake_ns)
		json_writer__kv_uint(w, "runq_ns", ep->end_ns - ep->wake_ns);
	else
		json_writer__kv_null(w, "runq_ns");
	json_writer__kv_bool(w, "from_start", ep->from_start);
	json_writer__kv_bool(w, "unfinished", ep->unfinished);
	json_writer__key(w, "wakeup");
	json_writer__begin_object(w, true);
	json_writer__kv_string(w, "kind", blocking__kind_name(ep->wake_kind));
	detail = blocking__wake_detail(ep, kernel_name, rp, buf, sizeof(buf));
	json_writer__kv_string(w, "detail", detail);
	/* Only tasks have these: left out, not null, for the interrupts and timers that are
	 * most wake-ups of a server (a tenth of the document). */
	if (ep->wake_kind == WAKE_TASK) {
		json_writer__kv_uint(w, "waker_tid", ep->waker_tid);
		char name[COMM_ESCAPED_SIZE];

		json_writer__kv_string(w, "waker_comm",
				       blocking__waker_name(ep, name, sizeof(name)));
	}
	json_writer__end_object(w);
	if (rp->stacks) {
		kv_stack_id(w, "stack_id", blocked_stack_id(rp, ep));
		kv_stack_id(w, "waker_stack_id", waker_stack_id(rp, ep));
	}
	json_writer__end_object(w);
}

static void task_json(struct report *rp, const struct block_episode *eps, size_t n)
{
	const struct trace *t = rp->t;
	const struct trace_thread *th = trace__thread(t, eps[0].tid);
	struct json_writer *w = rp->w;
	struct block_group *g;
	size_t i, ng;
	char title[256];

	json_writer__begin_object(w, false);
	json_writer__kv_uint(w, "pid", eps[0].pid);
	json_writer__kv_uint(w, "tid", eps[0].tid);
	json_writer__kv_string(w, "comm", th ? th->comm : "");
	json_writer__kv_string(w, "title", trace__title(t, eps[0].pid, title, sizeof(title)));
	json_writer__key(w, "blocks");
	json_writer__begin_array(w, false);
	for (i = 0; i < n; i++)
		episode_json(rp, &eps[i]);
	json_writer__end_array(w);
	json_writer__key(w, "summary");
	json_writer__begin_array(w, false);
	ng = blocking__by_syscall(eps, n, &g);
	for (i = 0; i < ng; i++) {
		json_writer__begin_object(w, true);
		kv_syscall(w, "syscall", g[i].key);
		stats_json(w, &g[i].st);
	}
	free(g);
	json_writer__end_array(w);
	json_writer__key(w, "per_fd");
	json_writer__begin_array(w, false);
	ng = blocking__by_fd(eps, n, &g);
	for (i = 0; i < ng; i++) {
		json_writer__begin_object(w, true);
		json_writer__kv_int(w, "fd", g[i].key);
		json_writer__kv_string(
			w, "desc", trace__fd_desc(t, eps[0].pid, g[i].key, eps[n - 1].start_ns));
		stats_json(w, &g[i].st);
	}
	free(g);
	json_writer__end_array(w);
	json_writer__end_object(w);
}

/* The whole document, streamed: a line per episode, the stacks once each. */
static int report_json(struct report *rp, const struct block_report *r)
{
	const struct trace *t = rp->t;
	struct stack_table tab = {0};
	size_t i, j;
	int ret;

	rp->w = json_writer__new(stdout);
	if (!rp->w)
		return error("out of memory");
	rp->tab = &tab;
	json_writer__begin_object(rp->w, false);
	json_writer__kv_uint(rp->w, "trace_start_ns", t->first_ns);
	json_writer__kv_uint(rp->w, "lost_events", t->lost_by_reason[LOST_RINGBUF]);
	json_writer__kv_uint(rp->w, "lost_stacks", t->lost_by_reason[LOST_STACK_RINGBUF]);
	json_writer__kv_uint(rp->w, "skipped_events", t->lost_by_reason[LOST_SKIPPED]);
	if (rp->stacks)
		stacks_json(rp, r->eps, r->nr);
	json_writer__key(rp->w, "tasks");
	json_writer__begin_array(rp->w, false);
	for (i = 0; i < r->nr; i = j) {
		for (j = i + 1; j < r->nr && r->eps[j].tid == r->eps[i].tid; j++)
			;
		task_json(rp, r->eps + i, j - i);
	}
	json_writer__end_array(rp->w);
	json_writer__end_object(rp->w);
	ret = json_writer__delete(rp->w);
	stack_table__free(&tab);
	if (ret)
		return error("cannot write the report: %s", strerror(-ret));
	return 0;
}

int cmd_blocking(int argc, char **argv)
{
	static const struct option longopts[] = {REPORT_CMDLINE_OPT_FILTERS,
						 {"min-ms", required_argument, NULL, 'm'},
						 {"stacks", no_argument, NULL, 's'},
						 {"critical", no_argument, NULL, 256},
						 REPORT_CMDLINE_OPT_FORMAT,
						 REPORT_CMDLINE_OPT_HELP,
						 {0}};
	struct report_cmdline rc;
	struct block_filter f = {0};
	struct block_report r;
	struct report rp = {0};
	struct crit_graph crit;
	bool want_crit = false;
	struct trace *t;
	bool json;
	double ms;
	size_t i, j;
	char lost[512];
	int c, ret = 0;

	report_cmdline__init(&rc, "blocking", usage_text, "text", "json");
	report_cmdline__filters(&rc, &f.pid, &f.tid, &f.comm);
	while ((c = report_cmdline__next(&rc, argc, argv, "p:t:c:m:sf:h", longopts)) > 0) {
		if (c == 's')
			rp.stacks = true;
		if (c == 256)
			want_crit = true;
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
	if (want_crit && !json) {
		char err[256];

		if (crit_graph__build(&crit, &t, 1, err, sizeof(err)))
			error("blocking: --critical: %s", err);
		else
			rp.crit = &crit;
	}
	/* The episodes hold what the report prints: the events' index is no longer needed
	 * while it writes them (and the stacks' names are looked up). */
	trace__drop_events(t);
	if (json) {
		ret = report_json(&rp, &r);
	} else {
		for (i = 0; i < r.nr; i = j) {
			for (j = i + 1; j < r.nr && r.eps[j].tid == r.eps[i].tid; j++)
				;
			print_task_text(&rp, r.eps + i, j - i);
		}
		if (!r.nr)
			printf("No blocking episode%s.\n\n",
			       f.pid || f.tid || f.comm || f.min_ns ? " matches the filters" : "");
		size_t unknown = 0, no_waking = 0;
		char val[8];

		/* Ended, yet no wake-up event seen: the trace says nothing of their waker. Woken
		 * (a wake-up event) with no waking before it: the waker's CPU ran the kernel's
		 * sched_waking, no BPF program got it (docs/record.md). */
		for (i = 0; i < r.nr; i++)
			if (r.eps[i].wake_kind == WAKE_UNKNOWN && !r.eps[i].unfinished) {
				unknown++;
				no_waking += r.eps[i].wake_ns != 0;
			}
		printf("%zu episode%s, %.3f s traced on %s (%s); %zu UNKNOWN (%zu ended with no "
		       "wake-up event seen, %zu woken with no waking event%s); %s\n",
		       r.nr, r.nr == 1 ? "" : "s", (t->end_ns - t->first_ns) / 1e9, t->hdr.host,
		       t->hdr.kernel, unknown, unknown - no_waking, no_waking,
		       !strcmp(trace__info_value(t, "wakers", val, sizeof(val)), "0")
			       ? ": recorded without wakings, as srvscope model records"
			       : "",
		       trace__lost_summary(t, lost, sizeof(lost)));
	}
	if (rp.crit)
		crit_graph__free(rp.crit);
	trace_symbols__delete(rp.syms);
	block_report__free(&r);
	trace__close(t);
	return ret ? 1 : 0;
}
