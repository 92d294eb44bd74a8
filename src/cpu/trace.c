/* 'srvscope cpu TRACE': the on-CPU samples (REC_SAMPLE records) of a trace made by 'record
 * --on-cpu', symbolized through the trace's saved maps and kallsyms, as one profile. The
 * /proc figures of a live run (thread times, RSS, cores) are not in a trace: only the
 * samples are reported. */
#include <stdlib.h>

#include "bpf/record.h"
#include "cpu/cpu.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "util/util.h"

/* Appends the frames of stack id, innermost first; kernel ones without the tracing
 * machinery that took them. */
static uint32_t add_frames(struct cpu_profile *p, const struct trace *t, struct trace_symbols *sy,
			   uint64_t id, bool kernel, uint32_t pid, uint64_t ts, uint32_t **fr,
			   size_t *cap, uint32_t n)
{
	const struct trace_stack *st = id ? trace__stack(t, id) : NULL;
	uint32_t i = 0;

	if (!id)
		return n;
	xgrow((void **)fr, cap, n + (st ? st->nr : 0) + 1, sizeof(uint32_t));
	if (!st) { /* recorded but missing from the file */
		(*fr)[n++] = cpu_profile__func(p, "[unknown]", kernel ? "[kernel]" : "[unknown]",
					       kernel);
		return n;
	}
	while (kernel && i < st->nr &&
	       trace_symbols__is_tracing(trace_symbols__kernel(sy, st->ips[i])))
		i++;
	for (; i < st->nr; i++) {
		const char *name = kernel ? trace_symbols__kernel(sy, st->ips[i])
					  : trace_symbols__user(sy, pid, ts, st->ips[i]);

		(*fr)[n++] = cpu_profile__func(p, name, kernel ? "[kernel]" : "", kernel);
	}
	return n;
}

int cpu_trace__report(const char *path, const struct comp_table *ct,
		      const struct cpu_report_opts *o)
{
	struct trace *t = trace__open_report(path);
	struct trace_symbols *sy;
	struct cpu_profile *p;
	uint32_t *fr = NULL;
	size_t cap = 0, i;
	int ret;

	if (!t)
		return 1;
	if (!(t->hdr.flags & TRACE_F_ON_CPU)) {
		trace__close(t);
		return error("'%s' has no on-CPU samples: record with 'srvscope record --on-cpu'",
			     path),
		       1;
	}
	sy = trace_symbols__new(t);
	p = cpu_profile__new(t->hdr.nr_cpus);
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		const struct trace_thread *th;
		uint32_t n;

		if (e->h.type != REC_SAMPLE)
			continue;
		n = add_frames(p, t, sy, e->sample.kstack, true, e->h.pid, e->h.ts, &fr, &cap, 0);
		n = add_frames(p, t, sy, e->sample.ustack, false, e->h.pid, e->h.ts, &fr, &cap, n);
		if (!n) {
			xgrow((void **)&fr, &cap, 1, sizeof(uint32_t));
			fr[n++] = cpu_profile__func(p, "[unknown]", "[unknown]", false);
		}
		th = trace__thread(t, e->h.tid);
		cpu_profile__add(p, e->h.pid, e->h.tid, th ? th->comm : NULL, fr, n, 1, -1);
	}
	p->duration_ns = t->end_ns > t->first_ns ? t->end_ns - t->first_ns : 0;
	p->end_ns = t->end_ns;
	cpu_profile__classify(p, ct);
	ret = cpu_report__write(stdout, p, ct, o);
	if (fflush(stdout))
		ret = -1;
	free(fr);
	cpu_profile__delete(p);
	trace_symbols__delete(sy);
	trace__close(t);
	return ret ? 1 : 0;
}
