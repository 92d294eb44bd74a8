/* The CPU profile: sampled stacks with their counts, interned functions, threads,
 * processes and cores; and the pure analyses over it (per function self and total, per
 * component by self or inclusive). */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "util/escape.h"
#include "util/strpool.h"
#include "util/util.h"

struct cpu_profile *cpu_profile__new(int nr_cpus)
{
	struct cpu_profile *p = xcalloc(1, sizeof(*p));

	p->pool = strpool__new();
	p->nr_cpus = nr_cpus > 0 ? nr_cpus : 1;
	p->cores = xcalloc(p->nr_cpus, sizeof(*p->cores));
	return p;
}

static void free_samples(struct cpu_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_stacks; i++)
		free(p->stacks[i].frames);
	p->nr_stacks = 0;
	u64map__free(&p->stack_idx);
	memset(&p->stack_idx, 0, sizeof(p->stack_idx));
	for (i = 0; i < p->nr_threads; i++) {
		p->threads[i].samples = 0;
		memset(p->threads[i].on_cpu, 0, p->nr_cpus * sizeof(uint64_t));
	}
	for (i = 0; i < (size_t)p->nr_cpus; i++)
		p->cores[i].samples = 0;
	p->samples = p->kernel_samples = p->lost = p->stacks_lost = 0;
}

void cpu_profile__clear(struct cpu_profile *p)
{
	free_samples(p);
}

void cpu_profile__delete(struct cpu_profile *p)
{
	size_t i;

	if (!p)
		return;
	free_samples(p);
	free(p->stacks);
	for (i = 0; i < p->nr_threads; i++)
		free(p->threads[i].on_cpu);
	free(p->threads);
	u64map__free(&p->thread_idx);
	free(p->procs);
	free(p->cores);
	free(p->funcs);
	u64map__free(&p->func_idx);
	free(p->comp_series);
	strpool__delete(p->pool);
	free(p);
}

static const char *intern_safe(struct cpu_profile *p, const char *s)
{
	char *e;
	const char *r;

	if (name_is_safe(s, strlen(s)))
		return strpool__intern(p->pool, s);
	e = name_escape_dup(s);
	r = strpool__intern(p->pool, e);
	free(e);
	return r;
}

uint32_t cpu_profile__func(struct cpu_profile *p, const char *name, const char *module, bool kernel)
{
	uint64_t h = fnv1a_str(name, FNV1A_INIT), *slot;
	struct cpu_func *f;
	bool created;

	h = fnv1a_str(module ? module : "", fnv1a(&kernel, 1, h));
	/* Open addressing over the hash: a collision of two different functions moves on
	 * to the next key. */
	for (;;) {
		slot = u64map__slot(&p->func_idx, h, &created);
		if (created)
			break;
		f = &p->funcs[*slot - 1];
		if (f->kernel == kernel && !strcmp(f->name, name) &&
		    !strcmp(f->module, module ? module : ""))
			return *slot - 1;
		h++;
	}
	xgrow((void **)&p->funcs, &p->cap_funcs, p->nr_funcs + 1, sizeof(*p->funcs));
	f = &p->funcs[p->nr_funcs];
	f->name = intern_safe(p, name);
	f->module = intern_safe(p, module ? module : "");
	f->kernel = kernel;
	f->comp = -1;
	*slot = p->nr_funcs + 1;
	return p->nr_funcs++;
}

struct cpu_thread *cpu_profile__thread(struct cpu_profile *p, pid_t pid, pid_t tid,
				       const char *comm)
{
	uint64_t *slot;
	struct cpu_thread *t;
	bool created;

	slot = u64map__slot(&p->thread_idx, (uint32_t)tid, &created);
	if (!created) {
		t = &p->threads[*slot - 1];
		if (comm && !t->comm[0]) {
			snprintf(t->comm, sizeof(t->comm), "%.15s", comm);
			name_escape_inplace(t->comm, sizeof(t->comm));
		}
		return t;
	}
	xgrow((void **)&p->threads, &p->cap_threads, p->nr_threads + 1, sizeof(*p->threads));
	t = &p->threads[p->nr_threads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->last_cpu = -1;
	t->prev_cpu = -1;
	t->on_cpu = xcalloc(p->nr_cpus, sizeof(uint64_t));
	if (comm) {
		snprintf(t->comm, sizeof(t->comm), "%.15s", comm);
		name_escape_inplace(t->comm, sizeof(t->comm));
	}
	*slot = ++p->nr_threads;
	return t;
}

struct cpu_process *cpu_profile__process(struct cpu_profile *p, pid_t pid)
{
	struct cpu_process *c;
	size_t i;

	for (i = 0; i < p->nr_procs; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	xgrow((void **)&p->procs, &p->cap_procs, p->nr_procs + 1, sizeof(*p->procs));
	c = &p->procs[p->nr_procs++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	return c;
}

void cpu_profile__add(struct cpu_profile *p, pid_t pid, pid_t tid, const char *comm,
		      const uint32_t *frames, uint32_t nr, uint64_t count, int cpu)
{
	uint64_t h = FNV1A_INIT, *slot;
	struct cpu_thread *t = cpu_profile__thread(p, pid, tid, comm);
	struct cpu_stack *s;
	bool created;

	if (cpu >= 0 && cpu < p->nr_cpus) {
		t->on_cpu[cpu] += count;
		p->cores[cpu].samples += count;
	}
	t->samples += count;
	p->samples += count;
	if (nr && p->funcs[frames[0]].kernel)
		p->kernel_samples += count;
	h = fnv1a(&pid, sizeof(pid), h);
	h = fnv1a(&tid, sizeof(tid), h);
	h = fnv1a(frames, nr * sizeof(*frames), h);
	for (;;) {
		slot = u64map__slot(&p->stack_idx, h, &created);
		if (created)
			break;
		s = &p->stacks[*slot - 1];
		if (s->tid == tid && s->pid == pid && s->nr == nr &&
		    !memcmp(s->frames, frames, nr * sizeof(*frames))) {
			s->count += count;
			return;
		}
		h++;
	}
	xgrow((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks));
	s = &p->stacks[p->nr_stacks];
	s->pid = pid;
	s->tid = tid;
	s->count = count;
	s->nr = nr;
	s->frames = xmalloc((nr ? nr : 1) * sizeof(*frames));
	memcpy(s->frames, frames, nr * sizeof(*frames));
	*slot = ++p->nr_stacks;
}

void cpu_profile__classify(struct cpu_profile *p, const struct comp_table *t)
{
	size_t i;

	for (i = 0; i < p->nr_funcs; i++)
		p->funcs[i].comp = comp_table__classify(t, p->funcs[i].name, p->funcs[i].kernel);
}

static int cmp_rows(const void *a, const void *b)
{
	const struct cpu_func_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

struct cpu_func_row *cpu_profile__functions(const struct cpu_profile *p, size_t *nr)
{
	struct cpu_func_row *rows = xcalloc(p->nr_funcs ? p->nr_funcs : 1, sizeof(*rows));
	uint64_t *seen = xcalloc(p->nr_funcs ? p->nr_funcs : 1, sizeof(uint64_t));
	size_t i, j, n = 0;

	for (i = 0; i < p->nr_funcs; i++)
		rows[i].func = i;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct cpu_stack *s = &p->stacks[i];

		if (s->nr)
			rows[s->frames[0]].self += s->count;
		/* A recursive function is counted once per stack in its total. */
		for (j = 0; j < s->nr; j++) {
			if (seen[s->frames[j]] == i + 1)
				continue;
			seen[s->frames[j]] = i + 1;
			rows[s->frames[j]].total += s->count;
		}
	}
	free(seen);
	for (i = 0; i < p->nr_funcs; i++)
		if (rows[i].total)
			rows[n++] = rows[i];
	qsort(rows, n, sizeof(*rows), cmp_rows);
	*nr = n;
	return rows;
}

static void add_unmatched(struct cpu_comp_share *o, uint32_t func, uint64_t count)
{
	size_t i;

	for (i = 0; i < o->nr_unmatched; i++)
		if (o->unmatched_funcs[i] == func) {
			o->unmatched_counts[i] += count;
			return;
		}
	o->unmatched_funcs = xrealloc(o->unmatched_funcs, (i + 1) * sizeof(uint32_t));
	o->unmatched_counts = xrealloc(o->unmatched_counts, (i + 1) * sizeof(uint64_t));
	o->unmatched_funcs[i] = func;
	o->unmatched_counts[i] = count;
	o->nr_unmatched++;
}

void cpu_profile__components(const struct cpu_profile *p, const struct comp_table *t,
			     bool inclusive, bool (*filter)(const struct cpu_stack *, void *),
			     void *arg, struct cpu_comp_share *o)
{
	size_t i, j, k;

	memset(o, 0, sizeof(*o));
	o->per_comp = xcalloc(comp_table__nr(t) + 1, sizeof(uint64_t));
	for (i = 0; i < p->nr_stacks; i++) {
		const struct cpu_stack *s = &p->stacks[i];
		int comp = -1;

		if (!s->nr || !p->funcs[s->frames[0]].kernel || (filter && !filter(s, arg)))
			continue;
		o->kernel_total += s->count;
		comp = p->funcs[s->frames[0]].comp;
		for (j = 1; inclusive && comp < 0 && j < s->nr && p->funcs[s->frames[j]].kernel;
		     j++)
			comp = p->funcs[s->frames[j]].comp;
		if (comp >= 0) {
			o->per_comp[comp] += s->count;
			continue;
		}
		o->unmatched += s->count;
		add_unmatched(o, s->frames[0], s->count);
	}
	/* by samples, descending (a few dozen entries: insertion sort) */
	for (i = 1; i < o->nr_unmatched; i++)
		for (k = i; k > 0 && o->unmatched_counts[k] > o->unmatched_counts[k - 1]; k--) {
			uint64_t c = o->unmatched_counts[k];
			uint32_t f = o->unmatched_funcs[k];

			o->unmatched_counts[k] = o->unmatched_counts[k - 1];
			o->unmatched_funcs[k] = o->unmatched_funcs[k - 1];
			o->unmatched_counts[k - 1] = c;
			o->unmatched_funcs[k - 1] = f;
		}
}

void cpu_comp_share__free(struct cpu_comp_share *s)
{
	free(s->per_comp);
	free(s->unmatched_funcs);
	free(s->unmatched_counts);
	memset(s, 0, sizeof(*s));
}
