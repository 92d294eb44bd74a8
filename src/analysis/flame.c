/* Builds folded stacks in two steps: weights are first summed per distinct (thread, stack
 * ids, waker) tuple, cheap to compare; only then is each tuple named once and the lines
 * with equal text merged. The first step runs once per episode or sample, millions of
 * times: a thread's last tuple is checked before the hash table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/flame.h"
#include "snapshot/snapshot.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/escape.h"
#include "util/util.h"

struct gkey {
	uint32_t tid, pid;
	uint64_t ustack, kstack;
	uint64_t wk, wu, wfunc; /* waker side, FLAME_WAKE only */
	uint32_t wkind, wdetail, waker_tid;
	char wname[16]; /* as recorded: escaped when shown */
};

struct group {
	struct gkey k;
	uint64_t ts; /* of the earliest occurrence: picks the maps to name user frames with */
	uint64_t weight;
};

#define LAST_SLOTS 256

struct groups {
	struct u64map idx;
	struct group *g;
	size_t nr, cap;
	uint32_t last[LAST_SLOTS]; /* by tid: index + 1 of the thread's last group; 0: none */
};

struct sbuf {
	char *s;
	size_t len, cap;
	bool missing_last; /* the last frame stands for a missing stack (sb_missing) */
};

int flame__parse_kind(const char *s, enum flame_kind *kind)
{
	if (!strcmp(s, "off"))
		*kind = FLAME_OFF;
	else if (!strcmp(s, "wake"))
		*kind = FLAME_WAKE;
	else if (!strcmp(s, "on"))
		*kind = FLAME_ON;
	else
		return -1;
	return 0;
}

/* A key is compared and hashed as a whole, padding included: callers zero it first. */
static uint64_t hash_key(const struct gkey *k)
{
	uint64_t w[sizeof(*k) / 8], h = 0;
	size_t i;

	_Static_assert(sizeof(*k) % 8 == 0, "struct gkey is hashed by 64-bit words");
	memcpy(w, k, sizeof(w));
	for (i = 0; i < ARRAY_SIZE(w); i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

static void group_add(struct group *g, uint64_t ts, uint64_t weight)
{
	g->weight += weight;
	if (ts < g->ts)
		g->ts = ts;
}

static void add(struct groups *gs, const struct gkey *k, uint64_t ts, uint64_t weight)
{
	uint32_t *last = &gs->last[k->tid % LAST_SLOTS];
	uint64_t h;

	if (*last && !memcmp(&gs->g[*last - 1].k, k, sizeof(*k))) {
		group_add(&gs->g[*last - 1], ts, weight);
		return;
	}
	for (h = hash_key(k);; h++) {
		bool created;
		uint64_t *slot = u64map__slot(&gs->idx, h, &created);
		struct group *g;

		if (created) {
			xgrow((void **)&gs->g, &gs->cap, gs->nr + 1, sizeof(*gs->g));
			*slot = gs->nr;
			g = &gs->g[gs->nr++];
			g->k = *k;
			g->ts = ts;
			g->weight = weight;
			*last = gs->nr;
			return;
		}
		g = &gs->g[*slot];
		if (!memcmp(&g->k, k, sizeof(*k))) {
			group_add(g, ts, weight);
			*last = *slot + 1;
			return;
		}
	}
}

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	xgrow((void **)&b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Appends ";name" (or "name" first), with ';' and line breaks in names made harmless. */
static void sb_frame(struct sbuf *b, const char *name, bool kernel)
{
	size_t start;
	char *c;

	b->missing_last = false;
	if (b->len)
		sb_add(b, ";", 1);
	start = b->len;
	sb_add(b, name, strlen(name));
	for (c = b->s + start; *c; c++)
		if (*c == ';')
			*c = ':';
		else if (*c == '\n' || *c == '\r')
			*c = ' ';
	if (kernel)
		sb_add(b, "_[k]", 4);
}

/* A stack that was recorded but is not in the trace (its stacks section is damaged, or it
 * was lost to a full buffer): one [unknown] frame, so that the reader sees a part is
 * missing rather than a shorter stack; one for both the user and the kernel stack. */
static void sb_missing(struct sbuf *b, bool kernel)
{
	if (b->missing_last)
		return;
	sb_frame(b, "[unknown]", kernel);
	b->missing_last = true;
}

/* The kernel's scheduler and lock functions (the __sched and __lock text sections): the
 * kernel leaves them out of a sleeping task's stack when another task reads it (the start
 * snapshot's stacks), and the recorder's stacks, taken by the task itself as it switches
 * out, have them. Off-CPU stacks drop them, so one wait has one shape either way. */
struct sched_text {
	uint64_t lo[2], hi[2];
};

static uint64_t kallsyms_addr(const char *text, size_t text_len, const char *name)
{
	const char *end = text + text_len, *p = text, *hit, *line;
	size_t len = strlen(name);

	while (p < end && (hit = memmem(p, end - p, name, len))) {
		p = hit + len;
		if (hit == text || hit[-1] != ' ' || (p < end && *p != '\n'))
			continue;
		for (line = hit; line > text && line[-1] != '\n'; line--)
			;
		return strtoull(line, NULL, 16);
	}
	return 0;
}

static void sched_text__init(struct sched_text *st, const struct trace *t)
{
	size_t len;
	const char *text = trace__kallsyms(t, &len); /* kept for the symbol table */

	memset(st, 0, sizeof(*st));
	if (!text)
		return;
	st->lo[0] = kallsyms_addr(text, len, "__sched_text_start");
	st->hi[0] = kallsyms_addr(text, len, "__sched_text_end");
	st->lo[1] = kallsyms_addr(text, len, "__lock_text_start");
	st->hi[1] = kallsyms_addr(text, len, "__lock_text_end");
}

static bool sched_text__has(const struct sched_text *st, uint64_t ip)
{
	return (ip >= st->lo[0] && ip < st->hi[0]) || (ip >= st->lo[1] && ip < st->hi[1]);
}

/* Frames of a stack, outermost first (outer = true) or innermost first; irq: an interrupt's
 * kernel stack, cut at its entry; nosched: the scheduler's frames to leave out, or NULL. */
static void sb_stack(struct sbuf *b, const struct trace *t, const struct flame_namer *n,
		     uint64_t id, uint32_t pid, uint64_t ts, bool kernel, bool outer, bool irq,
		     const struct sched_text *nosched)
{
	const struct trace_stack *st = trace__stack(t, id);
	uint32_t i, nr, skip = 0;

	if (!st) {
		if (id)
			sb_missing(b, kernel);
		return;
	}
	nr = st->nr;
	while (kernel && skip < nr && trace_symbols__is_tracing(n->kernel(n->ctx, st->ips[skip])))
		skip++;
	if (irq)
		for (i = skip; i < nr; i++)
			if (trace_symbols__is_irq_entry(n->kernel(n->ctx, st->ips[i]))) {
				nr = i + 1;
				break;
			}
	/* The unwind stopped short: the mark stands where the missing callers would. */
	if (st->truncated && outer)
		sb_frame(b, FRAME_TRUNCATED, kernel);
	for (i = 0; i < nr - skip; i++) {
		uint64_t ip = st->ips[outer ? nr - 1 - i : skip + i];

		if (kernel && nosched && sched_text__has(nosched, ip))
			continue;
		sb_frame(b, kernel ? n->kernel(n->ctx, ip) : n->user(n->ctx, pid, ts, ip), kernel);
	}
	if (st->truncated && !outer)
		sb_frame(b, FRAME_TRUNCATED, kernel);
}

static void waker_label(struct sbuf *b, const struct gkey *k, const struct flame_namer *n)
{
	char buf[96], name[COMM_ESCAPED_SIZE];

	name_escape(name, sizeof(name), k->wname, strnlen(k->wname, sizeof(k->wname)));
	switch (k->wkind) {
	case WAKE_TASK:
		sb_frame(b, name[0] ? name : "?", false);
		return;
	case WAKE_SOFTIRQ:
		snprintf(buf, sizeof(buf), "[softirq %s]", blocking__softirq_name(k->wdetail));
		break;
	case WAKE_HARDIRQ:
		snprintf(buf, sizeof(buf), "[hardirq %u %s]", k->wdetail, name);
		break;
	case WAKE_IPI:
		snprintf(buf, sizeof(buf), "[ipi %s]", blocking__ipi_name(k->wdetail));
		break;
	case WAKE_HRTIMER:
	case WAKE_TIMER:
		snprintf(buf, sizeof(buf), "[timer %s]", n->kernel(n->ctx, k->wfunc));
		break;
	default:
		snprintf(buf, sizeof(buf), "[unknown]");
	}
	sb_frame(b, buf, false);
}

static bool thread_ok(const struct trace *t, const struct flame_filter *f, uint32_t tid,
		      uint32_t pid)
{
	return !f || trace__task_match(t, f->pid, f->tid, f->comm, pid, tid);
}

/* Off-CPU or wake-up weights from episodes: blocked until woken. */
static void collect_episodes(const struct block_report *r, enum flame_kind kind, struct groups *gs)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		const struct block_episode *ep = &r->eps[i];
		/* Blocked until woken; the wait for a CPU after that is scheduling delay
		 * ('sched' reports it), not blocking. */
		uint64_t end = ep->wake_ns >= ep->start_ns && ep->wake_ns <= ep->end_ns
				       ? ep->wake_ns
				       : ep->end_ns;
		uint64_t us = (end - ep->start_ns) / 1000;
		struct gkey k;

		if (!us)
			continue;
		memset(&k, 0, sizeof(k));
		k.tid = ep->tid;
		k.pid = ep->pid;
		k.ustack = ep->ustack;
		k.kstack = ep->kstack;
		if (kind == FLAME_WAKE) {
			k.wkind = ep->wake_kind;
			k.wk = ep->waker_kstack;
			k.wu = ep->waker_ustack;
			switch (ep->wake_kind) {
			case WAKE_TASK:
				k.waker_tid = ep->waker_tid;
				memcpy(k.wname, ep->waker_name, sizeof(k.wname));
				break;
			case WAKE_HARDIRQ:
				memcpy(k.wname, ep->waker_name, sizeof(k.wname));
				/* fall through */
			case WAKE_SOFTIRQ:
			case WAKE_IPI:
				k.wdetail = ep->wake_detail;
				break;
			case WAKE_HRTIMER:
			case WAKE_TIMER:
				k.wfunc = ep->wake_func;
				break;
			}
		}
		add(gs, &k, ep->start_ns, us);
	}
}

static void collect(const struct trace *t, enum flame_kind kind, const struct flame_filter *f,
		    struct groups *gs)
{
	struct block_filter bf = {0};
	struct block_report r;
	size_t i;

	if (kind == FLAME_ON) {
		for (i = 0; i < t->nr_ev; i++) {
			const struct rec *e = t->ev[i];
			struct gkey k;

			trace__done_before(t, i);

			if (e->h.type != REC_SAMPLE || !thread_ok(t, f, e->h.tid, e->h.pid))
				continue;
			memset(&k, 0, sizeof(k));
			k.tid = e->h.tid;
			k.pid = e->h.pid;
			k.ustack = e->sample.ustack;
			k.kstack = e->sample.kstack;
			add(gs, &k, e->h.ts, 1);
		}
		return;
	}
	if (f) {
		bf.pid = f->pid;
		bf.tid = f->tid;
		bf.comm = f->comm;
	}
	blocking__analyze_unsorted(t, &bf, &r);
	collect_episodes(&r, kind, gs);
	block_report__free(&r);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct flame_line *)a)->stack, ((const struct flame_line *)b)->stack);
}

/* The folded lines of the groups gathered; frees them. */
static void build(const struct trace *t, enum flame_kind kind, const struct flame_namer *n,
		  struct groups *gsp, struct flame *out)
{
	struct groups gs = *gsp;
	struct u64map lines = {0};
	struct sbuf b = {0};
	struct sched_text sched;
	size_t i, cap = 0;

	/* After the episodes are freed: the kallsyms text it decompresses is megabytes. */
	sched_text__init(&sched, t);
	for (i = 0; i < gs.nr; i++) {
		const struct group *g = &gs.g[i];
		const struct trace_thread *th = trace__thread(t, g->k.tid);
		uint64_t h;

		b.len = 0;
		sb_frame(&b, th && th->comm[0] ? th->comm : "?", false);
		sb_stack(&b, t, n, g->k.ustack, g->k.pid, g->ts, false, true, false, NULL);
		sb_stack(&b, t, n, g->k.kstack, g->k.pid, g->ts, true, true, false,
			 kind == FLAME_ON ? NULL : &sched);
		if (kind == FLAME_WAKE) {
			sb_frame(&b, "--", false);
			sb_stack(&b, t, n, g->k.wk, 0, g->ts, true, false, g->k.wkind != WAKE_TASK,
				 NULL);
			if (g->k.wkind == WAKE_TASK) {
				const struct trace_thread *w = trace__thread(t, g->k.waker_tid);

				sb_stack(&b, t, n, g->k.wu, w ? w->pid : 0, g->ts, false, false,
					 false, NULL);
			}
			waker_label(&b, &g->k, n);
		}
		out->total += g->weight;
		for (h = fnv1a(b.s, b.len, FNV1A_INIT);; h++) {
			bool created;
			uint64_t *slot = u64map__slot(&lines, h, &created);

			if (created) {
				xgrow((void **)&out->lines, &cap, out->nr + 1, sizeof(*out->lines));
				*slot = out->nr;
				out->lines[out->nr].stack = xstrdup(b.s);
				out->lines[out->nr++].weight = g->weight;
				break;
			}
			if (!strcmp(out->lines[*slot].stack, b.s)) {
				out->lines[*slot].weight += g->weight;
				break;
			}
		}
	}
	if (out->nr)
		qsort(out->lines, out->nr, sizeof(*out->lines), cmp_line);
	free(b.s);
	free(gs.g);
	u64map__free(&gs.idx);
	u64map__free(&lines);
}

void flame__build(const struct trace *t, enum flame_kind kind, const struct flame_filter *f,
		  const struct flame_namer *n, struct flame *out)
{
	struct groups gs = {0};

	memset(out, 0, sizeof(*out));
	collect(t, kind, f, &gs);
	build(t, kind, n, &gs, out);
}

void flame__build_episodes(const struct trace *t, enum flame_kind kind,
			   const struct block_report *eps, const struct flame_namer *n,
			   struct flame *out)
{
	struct groups gs = {0};

	memset(out, 0, sizeof(*out));
	collect_episodes(eps, kind, &gs);
	build(t, kind, n, &gs, out);
}

void flame__free(struct flame *fl)
{
	size_t i;

	for (i = 0; i < fl->nr; i++)
		free(fl->lines[i].stack);
	free(fl->lines);
	memset(fl, 0, sizeof(*fl));
}
