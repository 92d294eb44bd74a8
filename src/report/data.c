/* One trace's aggregates for the HTML report, computed with the analyses the other reports
 * use (sched, timeline and its blocking episodes, flame), so that the page shows the same
 * figures they print. Only sums and counts go out, never the events: a page of a few
 * megabytes for any trace. */
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/flame.h"
#include "analysis/sched.h"
#include "analysis/timeline.h"
#include "output/json_writer.h"
#include "report/data.h"
#include "report/flametree.h"
#include "report/report.h"
#include "trace/symbols.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/util.h"

#define LONGEST		50     /* episodes listed */
#define FLAME_MIN_SHARE 20000  /* frames under 1/20000 of a graph are not drawn anyway */
#define FLAME_MAX_NODES 100000 /* about 2 MB of JSON a graph, at most */
#define TOP_SYSCALLS	3      /* per thread */

enum { TB_RUN, TB_WAIT, TB_BLOCK, TB_KINDS };

#define WAKE_SLOTS 7 /* enum wake_kind, then WAKE_UNKNOWN */

struct row {
	uint32_t tid, pid;
	const struct sched_task *sched; /* NULL: no scheduling figures */
	struct block_stats blocked;
	struct block_group *groups; /* by syscall */
	size_t nr_groups, cap_groups;
	uint64_t wake_ns[WAKE_SLOTS]; /* blocked time by what ended it */
	uint64_t busy;		      /* runtime + blocked: the busiest rows are kept */
	uint64_t *acc;		      /* TB_KINDS * buckets: ns in each */
};

struct data {
	const struct trace *t;
	const struct report_opts *o;
	struct json_writer *w;
	struct trace_symbols *syms;
	struct sched_report sched;
	struct block_report blocks; /* unsorted */
	struct row *rows;
	size_t nr_rows, cap_rows;
	struct u64map idx; /* tid -> index in rows */
	uint64_t bucket_ns;
};

static const char *name_user(void *ctx, uint32_t pid, uint64_t ts, uint64_t addr)
{
	return trace_symbols__user(ctx, pid, ts, addr);
}

static const char *name_kernel(void *ctx, uint64_t addr)
{
	return trace_symbols__kernel(ctx, addr);
}

static struct row *row_of(struct data *d, uint32_t tid, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map__slot(&d->idx, tid, &created);

	if (created) {
		xgrow((void **)&d->rows, &d->cap_rows, d->nr_rows + 1, sizeof(*d->rows));
		*slot = d->nr_rows;
		d->rows[d->nr_rows] = (struct row){.tid = tid, .pid = pid};
		d->nr_rows++;
	}
	return &d->rows[*slot];
}

/* Both timer kinds are named "timer": one slot, or wakeups_ns would have the key twice. */
static unsigned int wake_slot(uint8_t kind)
{
	if (kind == WAKE_HRTIMER)
		kind = WAKE_TIMER;
	return kind < WAKE_SLOTS - 1 ? kind : WAKE_SLOTS - 1;
}

static const char *slot_name(unsigned int slot)
{
	return blocking__kind_name(slot < WAKE_SLOTS - 1 ? slot : WAKE_UNKNOWN);
}

static void row_add_episode(struct row *r, const struct block_episode *ep)
{
	uint64_t ns = ep->end_ns - ep->start_ns;
	size_t i;

	block_stats__add(&r->blocked, ns);
	r->wake_ns[wake_slot(ep->wake_kind)] += ns;
	/* A thread blocks in a few syscalls: a short list, looked through. */
	for (i = 0; i < r->nr_groups && r->groups[i].key != ep->syscall; i++)
		;
	if (i == r->nr_groups) {
		xgrow((void **)&r->groups, &r->cap_groups, i + 1, sizeof(*r->groups));
		r->groups[r->nr_groups++] = (struct block_group){.key = ep->syscall};
	}
	block_stats__add(&r->groups[i].st, ns);
}

static void build_rows(struct data *d)
{
	const struct block_report *br = &d->blocks;
	size_t i;
	struct row *r;

	for (i = 0; i < d->sched.nr; i++) {
		r = row_of(d, d->sched.tasks[i].tid, d->sched.tasks[i].pid);
		r->sched = &d->sched.tasks[i];
		r->busy += r->sched->runtime_ns;
	}
	for (i = 0; i < br->nr; i++)
		row_add_episode(row_of(d, br->eps[i].tid, br->eps[i].pid), &br->eps[i]);
	for (i = 0; i < d->nr_rows; i++)
		d->rows[i].busy += d->rows[i].blocked.sum_ns;
}

/* Spreads [start, end) over the row's time buckets. */
static void bucket_add(const struct data *d, uint64_t *acc, uint64_t start, uint64_t end)
{
	uint64_t first = d->t->first_ns, b, lo, hi;
	unsigned int n = d->o->buckets;

	if (end <= first || end <= start)
		return;
	if (start < first)
		start = first;
	for (b = (start - first) / d->bucket_ns; b < n && start < end; b++) {
		lo = first + b * d->bucket_ns;
		hi = lo + d->bucket_ns;
		acc[b] += (end < hi ? end : hi) - (start > lo ? start : lo);
		start = hi;
	}
}

static void slice_add(void *ctx, const struct tl_slice *s)
{
	struct data *d = ctx;
	struct row *r = row_of(d, s->tid, s->pid);
	unsigned int n = d->o->buckets;
	unsigned int k = s->kind == TL_RUNNING	 ? TB_RUN
			 : s->kind == TL_BLOCKED ? TB_BLOCK
						 : TB_WAIT;

	if (!r->acc)
		r->acc = xcalloc((size_t)TB_KINDS * n, sizeof(*r->acc));
	bucket_add(d, r->acc + (size_t)k * n, s->start_ns, s->end_ns);
}

/* Each thread's running, runnable and blocked time in buckets, from the timeline's slices
 * as they are found: none is kept. */
static void build_timeline(struct data *d)
{
	unsigned int n = d->o->buckets;

	d->bucket_ns = (d->t->end_ns - d->t->first_ns + n - 1) / n;
	if (!d->bucket_ns)
		d->bucket_ns = 1;
	timeline__each(d->t, &d->blocks, slice_add, d);
}

static int by_busy(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void kv_syscall(struct json_writer *w, const char *key, int nr)
{
	char buf[32];

	json_writer__kv_string(w, key, nr < 0 ? NULL : syscall__name(nr, buf, sizeof(buf)));
}

static void groups_json(struct json_writer *w, const char *key, const struct block_group *g,
			size_t n)
{
	size_t i;

	json_writer__key(w, key);
	json_writer__begin_array(w, n <= TOP_SYSCALLS);
	for (i = 0; i < n; i++) {
		json_writer__begin_object(w, true);
		kv_syscall(w, "syscall", g[i].key);
		json_writer__kv_uint(w, "count", g[i].st.count);
		json_writer__kv_uint(w, "sum_ns", g[i].st.sum_ns);
		json_writer__kv_uint(w, "max_ns", g[i].st.max_ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

static int by_sum(const void *a, const void *b)
{
	const struct block_group *x = a, *y = b;

	if (x->st.sum_ns != y->st.sum_ns)
		return x->st.sum_ns > y->st.sum_ns ? -1 : 1;
	return x->key - y->key;
}

static void hist_json(struct json_writer *w, const uint64_t *hist)
{
	unsigned int b;

	json_writer__key(w, "hist");
	json_writer__begin_array(w, true);
	for (b = 0; b < SCHED_HIST_BUCKETS; b++)
		json_writer__uint(w, hist[b]);
	json_writer__end_array(w);
}

static void row_json(struct data *d, struct row *r)
{
	const struct trace_thread *th = trace__thread(d->t, r->tid);
	const struct sched_task *s = r->sched;
	struct json_writer *w = d->w;
	char title[256];
	size_t i;

	json_writer__begin_object(w, false);
	json_writer__kv_uint(w, "tid", r->tid);
	json_writer__kv_uint(w, "pid", r->pid);
	json_writer__kv_string(w, "comm", th ? th->comm : s ? s->comm : "");
	json_writer__kv_string(w, "title", trace__title(d->t, r->pid, title, sizeof(title)));
	json_writer__kv_uint(w, "runtime_ns", s ? s->runtime_ns : 0);
	json_writer__kv_uint(w, "switches", s ? s->switches : 0);
	json_writer__kv_uint(w, "delays", s ? s->delays : 0);
	json_writer__kv_uint(w, "avg_delay_ns", s && s->delays ? s->delay_sum_ns / s->delays : 0);
	json_writer__kv_uint(w, "max_delay_ns", s ? s->max_delay_ns : 0);
	json_writer__kv_uint(w, "episodes", r->blocked.count);
	json_writer__kv_uint(w, "blocked_ns", r->blocked.sum_ns);
	json_writer__kv_uint(w, "max_blocked_ns", r->blocked.max_ns);
	if (r->nr_groups) /* qsort wants an array, even of nothing */
		qsort(r->groups, r->nr_groups, sizeof(*r->groups), by_sum);
	groups_json(w, "syscalls", r->groups,
		    r->nr_groups < TOP_SYSCALLS ? r->nr_groups : TOP_SYSCALLS);
	json_writer__key(w, "wakeups_ns");
	json_writer__begin_object(w, true);
	for (i = 0; i < WAKE_SLOTS; i++)
		if (r->wake_ns[i])
			json_writer__kv_uint(w, slot_name(i), r->wake_ns[i]);
	json_writer__end_object(w);
	if (s)
		hist_json(w, s->hist);
	if (r->acc) {
		static const char *const keys[TB_KINDS] = {"running", "runnable", "blocked"};
		unsigned int k, b, n = d->o->buckets;

		json_writer__key(w, "timeline");
		json_writer__begin_object(w, true);
		for (k = 0; k < TB_KINDS; k++) {
			json_writer__key(w, keys[k]);
			json_writer__begin_array(w, true);
			/* per mille of the bucket: short numbers */
			for (b = 0; b < n; b++) {
				uint64_t ns = r->acc[(size_t)k * n + b];
				uint64_t v = (ns * 1000 + d->bucket_ns / 2) / d->bucket_ns;

				json_writer__uint(w, v > 1000 ? 1000 : v);
			}
			json_writer__end_array(w);
		}
		json_writer__end_object(w);
	}
	json_writer__end_object(w);
}

static void episode_json(struct data *d, const struct block_episode *ep)
{
	const struct trace_thread *th = trace__thread(d->t, ep->tid);
	struct json_writer *w = d->w;
	char buf[64], name[COMM_ESCAPED_SIZE];
	const char *detail = blocking__wake_detail(ep, name_kernel, d->syms, buf, sizeof(buf));

	json_writer__begin_object(w, true);
	json_writer__kv_uint(w, "tid", ep->tid);
	json_writer__kv_uint(w, "pid", ep->pid);
	json_writer__kv_string(w, "comm", th ? th->comm : "");
	json_writer__kv_uint(w, "start_ns", ep->start_ns - d->t->first_ns);
	json_writer__kv_uint(w, "duration_ns", ep->end_ns - ep->start_ns);
	kv_syscall(w, "syscall", ep->syscall);
	if (ep->fd >= 0)
		json_writer__kv_int(w, "fd", ep->fd);
	else
		json_writer__kv_null(w, "fd");
	json_writer__kv_string(w, "fd_desc",
			       ep->fd >= 0 ? trace__fd_desc(d->t, ep->pid, ep->fd, ep->start_ns)
					   : NULL);
	json_writer__kv_string(w, "wakeup", blocking__kind_name(ep->wake_kind));
	if (ep->wake_kind == WAKE_TASK) {
		json_writer__kv_string(w, "waker", blocking__waker_name(ep, name, sizeof(name)));
		json_writer__kv_uint(w, "waker_tid", ep->waker_tid);
	} else {
		json_writer__kv_string(w, "waker", detail);
	}
	json_writer__kv_bool(w, "from_start", ep->from_start);
	json_writer__kv_bool(w, "unfinished", ep->unfinished);
	json_writer__end_object(w);
}

static int by_duration(const void *a, const void *b)
{
	const struct block_episode *x = *(const struct block_episode *const *)a;
	const struct block_episode *y = *(const struct block_episode *const *)b;
	uint64_t dx = x->end_ns - x->start_ns, dy = y->end_ns - y->start_ns;

	return dx > dy ? -1 : dx < dy;
}

/* The LONGEST longest episodes, longest first: kept sorted while the episodes go by. */
static void longest_json(struct data *d)
{
	const struct block_report *br = &d->blocks;
	const struct block_episode *top[LONGEST + 1];
	size_t n = 0, i, j;

	for (i = 0; i < br->nr; i++) {
		const struct block_episode *ep = &br->eps[i];

		if (n == LONGEST && by_duration(&ep, &top[n - 1]) >= 0)
			continue;
		for (j = n < LONGEST ? n++ : n - 1; j > 0 && by_duration(&ep, &top[j - 1]) < 0; j--)
			top[j] = top[j - 1];
		top[j] = ep;
	}
	json_writer__key(d->w, "longest");
	json_writer__begin_array(d->w, false);
	for (i = 0; i < n; i++)
		episode_json(d, top[i]);
	json_writer__end_array(d->w);
}

static void totals_json(struct data *d)
{
	const struct block_report *br = &d->blocks;
	struct json_writer *w = d->w;
	uint64_t count[WAKE_SLOTS] = {0}, sum[WAKE_SLOTS] = {0}, hist[SCHED_HIST_BUCKETS] = {0};
	struct block_group *g;
	size_t i, ng;
	unsigned int b;

	ng = blocking__by_syscall(br->eps, br->nr, &g);
	groups_json(w, "syscalls", g, ng);
	free(g);
	for (i = 0; i < br->nr; i++) {
		count[wake_slot(br->eps[i].wake_kind)]++;
		sum[wake_slot(br->eps[i].wake_kind)] += br->eps[i].end_ns - br->eps[i].start_ns;
	}
	json_writer__key(w, "wakeups");
	json_writer__begin_array(w, false);
	for (i = 0; i < WAKE_SLOTS; i++) {
		if (!count[i])
			continue;
		json_writer__begin_object(w, true);
		json_writer__kv_string(w, "kind", slot_name(i));
		json_writer__kv_uint(w, "count", count[i]);
		json_writer__kv_uint(w, "sum_ns", sum[i]);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	for (i = 0; i < d->sched.nr; i++)
		for (b = 0; b < SCHED_HIST_BUCKETS; b++)
			hist[b] += d->sched.tasks[i].hist[b];
	hist_json(w, hist);
}

static void flame_json(struct data *d, enum flame_kind kind, const char *key)
{
	struct flame_namer namer = {.user = name_user, .kernel = name_kernel, .ctx = d->syms};
	struct flametree ft;
	struct flame fl;
	size_t i;

	if (kind == FLAME_ON)
		flame__build(d->t, kind, NULL, &namer, &fl);
	else
		flame__build_episodes(d->t, kind, &d->blocks, &namer, &fl);
	flametree__init(&ft);
	for (i = 0; i < fl.nr; i++)
		flametree__add(&ft, fl.lines[i].stack, fl.lines[i].weight);
	flame__free(&fl);
	json_writer__key(d->w, key);
	flametree__write_json(&ft, d->w, FLAME_MIN_SHARE, FLAME_MAX_NODES);
	flametree__free(&ft);
}

static void summary_json(struct data *d, const char *path)
{
	const struct trace *t = d->t;
	struct json_writer *w = d->w;
	uint64_t unknown[65536 / 64] = {0};
	char lost[512];
	size_t i;

	json_writer__kv_string(w, "file", path);
	json_writer__kv_string(w, "host", t->hdr.host);
	json_writer__kv_string(w, "kernel", t->hdr.kernel);
	json_writer__kv_string(w, "machine", t->hdr.machine);
	json_writer__kv_uint(w, "nr_cpus", t->hdr.nr_cpus);
	json_writer__kv_uint(w, "start_realtime_ns", t->hdr.start_realtime_ns);
	json_writer__kv_uint(w, "duration_ns", t->end_ns - t->first_ns);
	json_writer__kv_uint(w, "events", t->nr_ev);
	json_writer__kv_bool(w, "system_wide", t->hdr.flags & TRACE_F_SYSTEM_WIDE);
	json_writer__kv_bool(w, "stacks", t->hdr.flags & TRACE_F_STACKS);
	json_writer__kv_bool(w, "syscalls", t->hdr.flags & TRACE_F_SYSCALLS);
	json_writer__kv_bool(w, "on_cpu", t->hdr.flags & TRACE_F_ON_CPU);
	json_writer__kv_bool(w, "ended", t->ended);
	json_writer__kv_bool(w, "truncated", t->truncated);
	json_writer__kv_uint(w, "lost_events", t->lost_by_reason[LOST_RINGBUF]);
	json_writer__kv_uint(w, "lost_stacks", t->lost_by_reason[LOST_STACK_RINGBUF]);
	json_writer__kv_uint(w, "skipped_events", t->lost_by_reason[LOST_SKIPPED]);
	json_writer__kv_string(w, "lost", trace__lost_summary(t, lost, sizeof(lost)));
	if (t->info) {
		char *info = strndup(t->info, t->info_len);

		json_writer__kv_string(w, "info", info);
		free(info);
	} else {
		json_writer__kv_null(w, "info");
	}
	json_writer__key(w, "damage");
	json_writer__begin_array(w, false);
	for (i = 0; i < t->nr_damage; i++)
		json_writer__string(w, t->damage[i].line);
	json_writer__end_array(w);
	/* Sections this reader does not know (the critical path's, the model's: see
	 * docs/report.md) are named by type, so the page can say what the trace holds. */
	json_writer__key(w, "other_sections");
	json_writer__begin_object(w, true);
	for (i = 0; i < t->nr_secs; i++) {
		uint16_t ty = t->secs[i].type;
		char key[16];
		size_t n = 0, j;

		if (ty <= SEC_TITLE || unknown[ty / 64] & (1ull << (ty % 64)))
			continue;
		unknown[ty / 64] |= 1ull << (ty % 64);
		for (j = i; j < t->nr_secs; j++)
			n += t->secs[j].type == ty;
		snprintf(key, sizeof(key), "%u", ty);
		json_writer__kv_uint(w, key, n);
	}
	json_writer__end_object(w);
}

void report_data__trace(struct json_writer *w, struct trace *t, const char *path,
			const struct report_opts *o)
{
	struct data d = {.t = t, .o = o, .w = w};
	size_t i, shown;

	d.syms = trace_symbols__new(t);
	json_writer__begin_object(w, false);
	summary_json(&d, path);
	/* One pass for the episodes, which the flames and the table share, one for the
	 * scheduling figures, one for the timeline's switches (and one for on-CPU samples). */
	blocking__analyze_unsorted(t, NULL, &d.blocks);
	json_writer__key(w, "flames");
	json_writer__begin_object(w, false);
	flame_json(&d, FLAME_OFF, "off");
	flame_json(&d, FLAME_WAKE, "wake");
	if (t->hdr.flags & TRACE_F_ON_CPU)
		flame_json(&d, FLAME_ON, "on");
	else
		json_writer__kv_null(w, "on");
	json_writer__end_object(w);
	sched__analyze(t, &d.sched);
	build_rows(&d);
	build_timeline(&d);
	trace__drop_events(t);

	if (d.nr_rows) /* the map's indexes are stale after this */
		qsort(d.rows, d.nr_rows, sizeof(*d.rows), by_busy);
	shown = d.nr_rows < o->max_threads ? d.nr_rows : o->max_threads;
	json_writer__kv_uint(w, "threads_total", d.nr_rows);
	json_writer__kv_uint(w, "bucket_ns", d.bucket_ns);
	json_writer__kv_uint(w, "buckets", o->buckets);
	json_writer__kv_uint(w, "episodes", d.blocks.nr);
	totals_json(&d);
	longest_json(&d);
	json_writer__key(w, "threads");
	json_writer__begin_array(w, false);
	for (i = 0; i < shown; i++)
		row_json(&d, &d.rows[i]);
	json_writer__end_array(w);
	json_writer__end_object(w);

	for (i = 0; i < d.nr_rows; i++) {
		free(d.rows[i].acc);
		free(d.rows[i].groups);
	}
	free(d.rows);
	u64map__free(&d.idx);
	block_report__free(&d.blocks);
	sched_report__free(&d.sched);
	trace_symbols__delete(d.syms);
}
