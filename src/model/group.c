/* Threads into clusters: each thread of each run becomes a stack tree (its off-CPU waits
 * weighted by their time, its on-CPU samples by its CPU time, frames named through the
 * run's trace) and src/model/cluster.c groups the trees. Threads of every run are
 * clustered together, so a cluster is the same role in every run. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/cluster.h"
#include "model/frames.h"
#include "model/group.h"
#include "model/model.h"
#include "trace/symbols.h"
#include "util/util.h"

/* A tree from the stack ids themselves, when no trace names the frames (fuzzing). */
static int add_unnamed(struct stacktree *t, const struct model_stack *s)
{
	char u[24], k[24];
	const char *frames[2] = {u, k};

	snprintf(u, sizeof(u), "u%" PRIx64, s->ustack);
	snprintf(k, sizeof(k), "k%" PRIx64, s->kstack);
	return stacktree__add(t, frames, 2, s->ns);
}

int model__group(const struct model *m, const struct model_item *items, size_t n, int *assign,
		 double *threshold, size_t *distinct)
{
	struct cluster_thread *ct = xcalloc(n ? n : 1, sizeof(*ct));
	struct trace_symbols **sym = xcalloc(m->nr_runs ? m->nr_runs : 1, sizeof(*sym));
	const char *frames[MODEL_MAX_FRAMES];
	struct cluster_result res = {0};
	int err = 0;
	size_t i, j;

	for (i = 0; i < m->nr_runs; i++)
		if (m->traces && m->traces[i])
			sym[i] = trace_symbols__new(m->traces[i]);
	for (i = 0; i < n && !err; i++) {
		const struct model_run *run = &m->runs[items[i].run];
		const struct model_thread *th = &run->thr[items[i].thr];
		struct trace_symbols *s = sym[items[i].run];

		ct[i].tid = th->tid;
		ct[i].pid = th->pid;
		ct[i].comm = th->comm;
		ct[i].tree = stacktree__new();
		if (!ct[i].tree) {
			err = -ENOMEM;
			break;
		}
		for (j = 0; j < th->nr_stacks && !err; j++) {
			const struct model_stack *st = &th->stacks[j];
			size_t nf;

			if (!s) {
				err = add_unnamed(ct[i].tree, st);
				continue;
			}
			nf = model__frames(m->traces[items[i].run], s, th->pid, run->start_ns,
					   st->ustack, st->kstack, frames, MODEL_MAX_FRAMES);
			err = stacktree__add(ct[i].tree, frames, (unsigned)nf, st->ns);
		}
	}
	if (!err && n)
		err = cluster__threads(ct, (unsigned)n, &res);
	if (!err) {
		for (i = 0; i < n; i++)
			assign[i] = (int)res.assign[i];
		*threshold = res.threshold;
		*distinct = res.distinct;
	}
	for (i = 0; i < n; i++)
		stacktree__free(ct[i].tree);
	for (i = 0; i < m->nr_runs; i++)
		trace_symbols__delete(sym[i]);
	free(sym);
	free(ct);
	if (err)
		return err;
	err = (int)res.nr_clusters;
	cluster_result__free(&res);
	return err;
}
