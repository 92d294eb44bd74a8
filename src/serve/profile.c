/* serve's named answers: stacks from the recorder (ids kept by the aggregate) resolved
 * against the processes' current maps, the way 'srvscope flame' resolves a trace's; and
 * the nostop sampler of 'srvscope stacks' for /stacks. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "bpf/record.h"
#include "output/output.h"
#include "output/pprof.h"
#include "proc/maps.h"
#include "proc/task.h"
#include "serve/profile.h"
#include "snapshot/snapshot.h"
#include "stacks/tree.h"
#include "symbol/symbolizer.h"
#include "trace/symbols.h"
#include "trace/u64map.h"
#include "util/escape.h"
#include "util/util.h"

/* One symbolizer per process met in a window, over its maps as they are now. */
struct syms {
	struct u64map idx; /* pid -> index */
	struct proc_syms {
		struct proc_maps *maps;
		struct symbolizer *sym;
	} * p;
	size_t nr, cap;
};

static struct symbolizer *syms__get(struct syms *s, pid_t pid)
{
	uint64_t i;

	if (!u64map__get(&s->idx, (uint64_t)pid, &i)) {
		xgrow((void **)&s->p, &s->cap, s->nr + 1, sizeof(*s->p));
		/* A process gone since: its frames stay unnamed, its kernel frames not. */
		s->p[s->nr].maps = proc_maps__read(pid);
		s->p[s->nr].sym = symbolizer__new(s->p[s->nr].maps ? pid : 0, s->p[s->nr].maps);
		i = s->nr++;
		u64map__put(&s->idx, (uint64_t)pid, i);
	}
	return s->p[i].sym;
}

static void syms__free(struct syms *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		symbolizer__delete(s->p[i].sym);
		proc_maps__delete(s->p[i].maps);
	}
	free(s->p);
	u64map__free(&s->idx);
}

/* The scheduler's and the lock functions' text (__sched_text_*, __lock_text_*): the same
 * frames 'srvscope flame' leaves out of off-CPU stacks, found once in /proc/kallsyms. */
static struct {
	bool read;
	uint64_t lo[2], hi[2];
} nosched;

static void nosched__init(void)
{
	static const char *const names[4] = {"__sched_text_start", "__sched_text_end",
					     "__lock_text_start", "__lock_text_end"};
	uint64_t *slots[4] = {&nosched.lo[0], &nosched.hi[0], &nosched.lo[1], &nosched.hi[1]};
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256];
	unsigned long long addr;
	int i, found = 0;

	nosched.read = true;
	while (f && found < 4 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*c %255s", &addr, name) != 2)
			continue;
		for (i = 0; i < 4; i++)
			if (!strcmp(name, names[i])) {
				*slots[i] = addr;
				found++;
			}
	}
	if (f)
		fclose(f);
}

static bool nosched__has(uint64_t ip)
{
	return (ip >= nosched.lo[0] && ip < nosched.hi[0]) ||
	       (ip >= nosched.lo[1] && ip < nosched.hi[1]);
}

static const struct frame missing_user = {0, "[unknown]", NULL, 0, false};
static const struct frame missing_kernel = {0, "[unknown]", NULL, 0, true};

/* Appends the frames of stack id to fr (innermost first). */
static size_t add_stack(struct serve_agg *a, struct symbolizer *sym, uint64_t id, bool kernel,
			struct frame *fr, size_t n)
{
	uint64_t ips[REC_MAX_FRAMES];
	int user = 0, truncated = 0;
	unsigned int nr, i, skip = 0;
	struct sym_result r;

	if (!id)
		return n;
	nr = serve_agg__stack_copy(a, id, ips, REC_MAX_FRAMES, &user, &truncated);
	if (!nr) {
		fr[n++] = kernel ? missing_kernel : missing_user;
		return n;
	}
	if (kernel) {
		/* The tracing machinery that took the stack is not the thread's. */
		for (; skip < nr; skip++) {
			symbolizer__resolve_kernel(sym, ips[skip], &r);
			if (!r.symbol || !trace_symbols__is_tracing(r.symbol))
				break;
		}
		for (i = skip; i < nr; i++) {
			if (nosched__has(ips[i]))
				continue;
			symbolizer__resolve_kernel(sym, ips[i], &r);
			fr[n++] = (struct frame){ips[i], r.symbol, r.module, r.offset, true};
		}
		return n;
	}
	for (i = 0; i < nr; i++) {
		/* A return address points after the call: look up the call itself. */
		uint64_t lookup = i ? ips[i] - 1 : ips[i];

		symbolizer__resolve(sym, lookup, &r);
		if (i && !r.symbol)
			r.offset++;
		fr[n++] = (struct frame){ips[i], r.symbol, r.module, r.offset, false};
	}
	if (truncated)
		fr[n++] = (struct frame){0, FRAME_TRUNCATED, NULL, 0, false};
	return n;
}

int serve_profile__pprof(struct serve_agg *a, const struct serve_window *w, unsigned int hz,
			 pid_t pid, pid_t main_pid, uint64_t duration_ns, uint8_t **buf,
			 size_t *len)
{
	static const struct pprof_value_type off[] = {{"off_cpu", "nanoseconds"}};
	static const struct pprof_value_type on[] = {{"samples", "count"}, {"cpu", "nanoseconds"}};
	int64_t period = hz ? 1000000000 / hz : 0;
	struct frame *fr = xcalloc(2 * REC_MAX_FRAMES + 4, sizeof(*fr));
	struct syms syms = {0};
	struct pprof *p;
	size_t i;
	int err;

	if (w->kind == SERVE_WINDOW_ON) {
		p = pprof__new(on, 2, &on[1], period);
	} else {
		p = pprof__new(off, 1, &off[0], 1);
		if (!nosched.read)
			nosched__init();
	}
	pprof__set_time(p, (int64_t)(now_realtime_ns() - duration_ns), (int64_t)duration_ns);
	if (main_pid)
		pprof__add_main(p, main_pid);
	for (i = 0; i < w->nr; i++) {
		const struct serve_entry *e = &w->e[i];
		struct symbolizer *sym;
		char comm[COMM_ESCAPED_SIZE];
		int64_t v[2] = {(int64_t)e->value, (int64_t)e->value * period};
		size_t n = 0;

		if (pid && (pid_t)e->pid != pid)
			continue;
		sym = syms__get(&syms, (pid_t)e->pid);
		n = add_stack(a, sym, e->kstack, true, fr, n);
		n = add_stack(a, sym, e->ustack, false, fr, n);
		snprintf(comm, sizeof(comm), "%s", e->comm[0] ? e->comm : "?");
		name_escape_inplace(comm, sizeof(comm)); /* the thread chose it */
		pprof__add_frames(p, (pid_t)e->pid, fr, n, v,
				  &(struct pprof_labels){.thread = comm, .tid = e->tid});
	}
	if (w->dropped)
		pprof__add_comment(p, "some samples were left out: the window's entries "
				      "reached their limit");
	err = pprof__encode(p, buf, len);
	pprof__delete(p);
	syms__free(&syms);
	free(fr);
	return err;
}

int serve_profile__stacks_json(pid_t pid, char **buf, size_t *len)
{
	struct stacks_opts opts = {
		.mode = STACKS_MODE_NOSTOP,
		.kernel = true,
		.stack_size = STACKS_DEFAULT_STACK_SIZE,
	};
	struct stacks_tree *tree = stacks_tree__new(pid, &opts, true);
	struct snapshot *snap;
	struct stack_agg *agg;
	FILE *f;

	if (!tree)
		return -ESRCH;
	snap = stacks_tree__sample(tree);
	if (!snap) {
		stacks_tree__delete(tree);
		return -ESRCH;
	}
	agg = stack_agg__new(true);
	proc__title(pid, agg->title, sizeof(agg->title));
	name_escape_inplace(agg->title, sizeof(agg->title)); /* the process wrote it */
	stack_agg__add(agg, snap);
	stack_agg__sort(agg);
	snapshot__delete(snap);
	f = open_memstream(buf, len);
	if (!f) {
		stack_agg__delete(agg);
		stacks_tree__delete(tree);
		return -ENOMEM;
	}
	output__json(f, agg, true);
	fclose(f);
	stack_agg__delete(agg);
	stacks_tree__delete(tree);
	return 0;
}
