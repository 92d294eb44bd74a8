/* The model as JSON (docs/model-json.md, built with jansson: a small document) and as the
 * short summary printed on stdout. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "util/escape.h"
#include "util/util.h"

#define SRVSCOPE_MODEL_GENERATOR "srvscope 0.1 model"

/* A name the target chose (a thread's or process's name, its command line, a path it
 * opened) as a JSON string: escaped as every report shows it (util/escape.h), so that it is
 * valid UTF-8 (jansson refuses anything else, and the object holding it would be lost)
 * and carries no control byte. */
static json_t *jname(const char *s)
{
	char *e = name_escape_dup(s);
	json_t *j = json_string(e);

	free(e);
	return j;
}

static json_t *num_or_null(double v, bool known)
{
	return known ? json_real(v) : json_null();
}

static json_t *pool_json(unsigned n, bool per_conn)
{
	return per_conn ? json_string("per-connection") : json_integer(n);
}

static size_t distinct_pids(const struct model_run *run)
{
	struct u64map pids = {0};
	size_t i, n;

	for (i = 0; i < run->nr_thr; i++)
		u64map__put(&pids, run->thr[i].pid, 1);
	n = pids.nr;
	u64map__free(&pids);
	return n;
}

static json_t *runs_json(const struct model *m)
{
	json_t *a = json_array();
	size_t r;

	for (r = 0; r < m->nr_runs; r++) {
		const struct model_run *run = &m->runs[r];
		double secs = run->end_ns > run->start_ns ? (run->end_ns - run->start_ns) / 1e9 : 0;
		double dur = run->load_elapsed_s > 0 ? run->load_elapsed_s : secs;
		json_t *lat = json_null();

		if (run->have_latency)
			lat = json_pack("{s:f, s:f, s:f, s:f}", "p50", run->p50_us, "p90",
					run->p90_us, "p99", run->p99_us, "max", run->max_us);
		json_array_append_new(
			a,
			json_pack(
				"{s:i, s:o, s:o, s:o, s:I, s:o, s:f, s:o, s:I, s:I, s:I, s:o, s:f}",
				"index", (int)r, "conns",
				run->conns ? json_integer(run->conns) : json_null(), "rate",
				num_or_null(run->rate, run->rate > 0), "duration_s",
				num_or_null(run->duration_s, run->duration_s > 0), "requests",
				(json_int_t)model_run__requests(run), "client_requests",
				run->client_requests ? json_integer(run->client_requests)
						     : json_null(),
				"throughput_rps",
				dur > 0 ? (double)model_run__requests(run) / dur : 0.0,
				"latency_us", lat, "errors", (json_int_t)run->errors, "threads",
				(json_int_t)run->nr_thr, "processes",
				(json_int_t)distinct_pids(run), "trace",
				run->trace_path ? json_string(run->trace_path) : json_null(),
				"syscalls_sampled", run->sampled));
		json_object_set_new(json_array_get(a, r), "reconnect_s",
				    num_or_null(run->reconnect_s, run->reconnect_s >= 0));
		json_object_set_new(json_array_get(a, r), "on_cpu_us_per_request",
				    run->cycles ? json_real(run->net_on_ns / 1e3 / run->cycles)
						: json_null());
		json_object_set_new(json_array_get(a, r), "user_us_per_request",
				    run->cycles && run->net_user
					    ? json_real(run->net_user_ns / 1e3 / run->cycles)
					    : json_null());
	}
	return a;
}

/* Every process seen: the last run that saw it names it. */
static json_t *processes_json(const struct model *m)
{
	json_t *a = json_array();
	struct u64map seen = {0};
	size_t r, i, j;

	for (r = m->nr_runs; r-- > 0;) {
		const struct model_run *run = &m->runs[r];

		for (i = 0; i < run->nr_thr; i++) {
			const struct model_thread *th = &run->thr[i];
			char title[512];
			uint64_t ppid;
			bool created;
			json_t *tids;

			u64map__slot(&seen, th->pid, &created);
			if (!created)
				continue;
			tids = json_array();
			for (j = 0; j < run->nr_thr; j++)
				if (run->thr[j].pid == th->pid)
					json_array_append_new(tids, json_integer(run->thr[j].tid));
			json_array_append_new(
				a, json_pack("{s:I, s:o, s:o, s:o, s:o}", "pid",
					     (json_int_t)th->pid, "ppid",
					     u64map__get(&run->procs, th->pid, &ppid)
						     ? json_integer((json_int_t)ppid)
						     : json_null(),
					     "comm", jname(th->comm), "title",
					     m->traces && m->traces[r] &&
							     trace__title(m->traces[r], th->pid,
									  title, sizeof(title))
						     ? json_string(title)
						     : json_null(),
					     "threads", tids));
		}
	}
	u64map__free(&seen);
	return a;
}

/* Every thread seen, its last run's facts (threads live on from run to run). */
static json_t *threads_json(const struct model *m)
{
	json_t *a = json_array();
	struct u64map seen = {0};
	size_t r, i;

	for (r = m->nr_runs; r-- > 0;)
		for (i = 0; i < m->runs[r].nr_thr; i++) {
			const struct model_thread *th = &m->runs[r].thr[i];
			bool created;

			u64map__slot(&seen, th->tid, &created);
			if (!created)
				continue;
			json_array_append_new(
				a,
				json_pack("{s:I, s:I, s:o, s:i, s:I, s:I, s:I, s:I, s:I}", "tid",
					  (json_int_t)th->tid, "pid", (json_int_t)th->pid, "comm",
					  jname(th->comm), "cluster", th->cluster, "on_cpu_ns",
					  (json_int_t)th->on_ns, "off_cpu_ns",
					  (json_int_t)th->off_ns, "accepts",
					  (json_int_t)th->accepts, "conns", (json_int_t)th->conns,
					  "io_syscalls", (json_int_t)th->conn_io));
		}
	u64map__free(&seen);
	return a;
}

/* What a background cluster's threads do per wake-up (docs/model-json.md). */
static json_t *work_json(const struct model *m, const struct model_cluster *c)
{
	json_t *a, *pr;
	char buf[32];
	unsigned i;

	if ((c->role != ROLE_BACKGROUND && c->role != ROLE_IDLE) || !c->wakes)
		return json_null();
	a = json_array();
	pr = json_array();
	for (i = 0; i < c->nr_work; i++) {
		json_t *o = json_pack("{s:s, s:f}", "name",
				      syscall__name(c->work[i].nr, buf, sizeof(buf)), "per_wake",
				      c->work[i].per_wake);

		if (c->work[i].bytes > 0)
			json_object_set_new(o, "bytes", json_integer((json_int_t)c->work[i].bytes));
		json_array_append_new(a, o);
	}
	for (i = 0; c->per_run && i < m->nr_runs; i++) {
		const struct model_bg_run *r = &c->per_run[i];

		json_array_append_new(pr, json_pack("{s:i, s:f, s:o, s:o, s:o}", "run", (int)i,
						    "wakes_per_s", r->wakes_per_s, "period_ms",
						    num_or_null(r->period_ms, r->period_ms > 0),
						    "on_cpu_us",
						    num_or_null(r->on_cpu_us, r->on_cpu_us > 0),
						    "on_cpu_us_unrecorded",
						    num_or_null(r->on_cpu_us_unrecorded,
								r->on_cpu_us_unrecorded > 0)));
	}
	return json_pack(
		"{s:I, s:f, s:o, s:o, s:o, s:o, s:o}", "wakes", (json_int_t)c->wakes, "on_cpu_us",
		c->work_on_cpu_us, "on_cpu_us_unrecorded",
		num_or_null(c->work_on_cpu_us_unrecorded, c->work_on_cpu_us_unrecorded > 0),
		"wake_floor_us", num_or_null(m->wake_floor_us, m->wake_floor_us > 0),
		"wake_floor_period_ms", num_or_null(m->wake_floor_period_ms, m->wake_floor_us > 0),
		"syscalls", a, "per_run", pr);
}

static json_t *clusters_json(const struct model *m)
{
	json_t *a = json_array();
	size_t i, j;
	int r;

	for (i = 0; i < m->nr_clusters; i++) {
		const struct model_cluster *c = &m->clusters[i];
		json_t *roles = json_array(), *thr = json_array(), *spr = json_array(),
		       *stack = json_array();
		struct u64map seen = {0};

		for (r = 0; r < ROLES; r++)
			if (c->roles[r])
				json_array_append_new(roles, json_string(model__role_name(r)));
		for (j = 0; j < c->nr_items; j++) {
			const struct model_thread *th =
				&m->runs[c->items[j].run].thr[c->items[j].thr];
			bool created;

			u64map__slot(&seen, th->tid, &created);
			if (created)
				json_array_append_new(thr, json_integer(th->tid));
		}
		u64map__free(&seen);
		for (j = 0; j < m->nr_runs; j++)
			json_array_append_new(spr, json_integer(c->size_per_run[j]));
		for (j = 0; j < c->stack_len; j++)
			json_array_append_new(stack, json_string(c->stack[j]));
		json_array_append_new(
			a, json_pack("{s:i, s:o, s:s, s:o, s:o, s:i, s:o, s:b, s:f, s:o, s:o, s:o, "
				     "s:o}",
				     "id", c->id, "name", jname(c->name), "role",
				     model__role_name(c->role), "roles", roles, "threads", thr,
				     "processes", (int)c->processes, "size_per_run", spr,
				     "grows_with_conns", c->grows_with_conns, "on_cpu_share",
				     c->on_cpu_share, "wait",
				     c->wait < WK_KINDS ? json_pack("{s:s, s:f}", "syscall",
								    model__wait_name(c->wait),
								    "share", c->wait_share)
							: json_null(),
				     "period_ms", num_or_null(c->period_ms, c->period_ms > 0),
				     "work", work_json(m, c), "stack", stack));
	}
	return a;
}

static json_t *roles_json(const struct model *m)
{
	json_t *o = json_object();
	size_t i;
	int r;

	for (r = 0; r < ROLES; r++) {
		json_t *a = json_array();

		for (i = 0; i < m->nr_clusters; i++)
			if (m->clusters[i].roles[r])
				json_array_append_new(a, json_integer(m->clusters[i].id));
		json_object_set_new(o, model__role_name(r), a);
	}
	return o;
}

/* A size distribution from power-of-two buckets: mean, bucketed p50/p90, max. */
static json_t *sizes_json(const uint64_t *hist, uint64_t n, double sum, uint64_t max)
{
	uint64_t acc = 0, p50 = 0, p90 = 0;
	json_t *h;
	int b;

	if (!n)
		return json_null();
	h = json_array();
	for (b = 0; b < MODEL_SIZE_BUCKETS; b++) {
		if (!hist[b])
			continue;
		acc += hist[b];
		if (!p50 && acc * 2 >= n)
			p50 = 1ull << b;
		if (!p90 && acc * 10 >= n * 9)
			p90 = 1ull << b;
		json_array_append_new(h, json_pack("{s:I, s:I}", "le", (json_int_t)(1ull << b),
						   "count", (json_int_t)hist[b]));
	}
	/* the buckets' upper bounds: no more than the largest seen */
	p50 = p50 < max ? p50 : max;
	p90 = p90 < max ? p90 : max;
	return json_pack("{s:f, s:I, s:I, s:I, s:o}", "mean", sum / n, "p50", (json_int_t)p50,
			 "p90", (json_int_t)p90, "max", (json_int_t)max, "hist", h);
}

struct sc_sum {
	int nr;
	struct model_sc_stat s;
	struct u64map args, timeouts, flags;
};

static void add_map(struct u64map *to, const struct u64map *from)
{
	uint64_t k, v;
	size_t i;

	for (i = 0; u64map__next(from, &i, &k, &v);)
		*u64map__slot(to, k, NULL) += v;
}

static void add_iov(struct model_sc_stat *d, const struct model_sc_stat *s)
{
	size_t i, j;

	d->iov_n += s->iov_n;
	d->iov_other += s->iov_other;
	for (i = 0; i < ARRAY_SIZE(s->iov) && s->iov[i].count; i++) {
		for (j = 0; j < ARRAY_SIZE(d->iov); j++) {
			if (!d->iov[j].count) {
				d->iov[j] = s->iov[i];
				break;
			}
			if (d->iov[j].n == s->iov[i].n &&
			    !memcmp(d->iov[j].len, s->iov[i].len, sizeof(s->iov[i].len))) {
				d->iov[j].count += s->iov[i].count;
				break;
			}
		}
		if (j == ARRAY_SIZE(d->iov))
			d->iov_other += s->iov[i].count;
	}
	if (s->off_n) {
		if (!d->off_n || s->off_min < d->off_min)
			d->off_min = s->off_min;
		if (s->off_max > d->off_max)
			d->off_max = s->off_max;
		d->off_n += s->off_n;
		d->off_aligned += s->off_aligned;
	}
}

static void sum_syscalls(const struct model *m, struct sc_sum *out, uint64_t *cycles,
			 uint64_t *on_ns, uint64_t *unknown)
{
	size_t r;
	int nr, b, k;

	for (r = 0; r < m->nr_runs; r++) {
		const struct model_run *run = &m->runs[r];

		*cycles += run->cycles;
		*on_ns += run->net_on_ns;
		*unknown += run->unknown_syscalls;
		for (nr = 0; nr < MODEL_MAX_SYSCALL; nr++) {
			const struct model_sc_stat *s = &run->sc[nr];
			struct model_sc_stat *d = &out[nr].s;
			uint64_t key, val;
			size_t i;

			out[nr].nr = nr;
			if (!s->count)
				continue;
			d->count += s->count;
			d->ok += s->ok;
			d->eagain += s->eagain;
			d->err += s->err;
			d->ns += s->ns;
			for (k = 0; k < FDK_KINDS; k++)
				d->fd_kind[k] += s->fd_kind[k];
			for (b = 0; b < MODEL_SIZE_BUCKETS; b++) {
				d->sock_hist[b] += s->sock_hist[b];
				d->file_hist[b] += s->file_hist[b];
			}
			d->sock_n += s->sock_n;
			d->file_n += s->file_n;
			d->sock_sum += s->sock_sum;
			d->file_sum += s->file_sum;
			if (s->sock_max > d->sock_max)
				d->sock_max = s->sock_max;
			if (s->file_max > d->file_max)
				d->file_max = s->file_max;
			for (i = 0; u64map__next(&s->arg_vals, &i, &key, &val);)
				*u64map__slot(&out[nr].args, key, NULL) += val;
			add_map(&out[nr].timeouts, &s->timeouts);
			add_map(&out[nr].flags, &s->flags);
			add_iov(d, s);
		}
	}
}

static int by_count(const void *a, const void *b)
{
	const struct sc_sum *x = a, *y = b;

	return x->s.count < y->s.count ? 1 : x->s.count > y->s.count ? -1 : x->nr - y->nr;
}

static const char *arg_key_name(int nr)
{
	switch (nr) {
	case 232: /* epoll_wait */
	case 281:
	case 441:
		return "maxevents";
	case 7: /* poll */
		return "timeout_ms";
	case 233:
		return "ops"; /* epoll_ctl: EPOLL_CTL_ADD 1, DEL 2, MOD 3 */
	case 72:
		return "cmds"; /* fcntl */
	default:
		return NULL;
	}
}

static int by_val_desc(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : (x[0] > y[0]) - (x[0] < y[0]);
}

/* {"value": share of calls} from a value -> calls map, the 10 commonest values (as signed
 * ints, or hex) and "other" for the rest. */
static json_t *shares_json(const struct u64map *m, uint64_t calls, bool hex)
{
	uint64_t k, v, *kv, rest = 0;
	size_t i, n = 0;
	char buf[32];
	json_t *o;

	if (!m->nr)
		return json_null();
	o = json_object();
	kv = xcalloc(m->nr, 2 * sizeof(*kv));
	for (i = 0; u64map__next(m, &i, &k, &v); n++) {
		kv[2 * n] = k;
		kv[2 * n + 1] = v;
	}
	qsort(kv, n, 2 * sizeof(*kv), by_val_desc);
	for (i = 0; i < n; i++) {
		if (i >= 10) {
			rest += kv[2 * i + 1];
			continue;
		}
		if (hex)
			snprintf(buf, sizeof(buf), "0x%" PRIx64, kv[2 * i]);
		else
			snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)(int32_t)kv[2 * i]);
		json_object_set_new(o, buf, json_real(calls ? (double)kv[2 * i + 1] / calls : 0));
	}
	if (rest)
		json_object_set_new(o, "other", json_real(calls ? (double)rest / calls : 0));
	free(kv);
	return o;
}

struct flag_name {
	uint32_t bit;
	const char *name;
};

static const struct flag_name msg_flags[] = {
	{0x1, "MSG_OOB"},
	{0x2, "MSG_PEEK"},
	{0x4, "MSG_DONTROUTE"},
	{0x8, "MSG_CTRUNC"},
	{0x20, "MSG_TRUNC"},
	{0x40, "MSG_DONTWAIT"},
	{0x80, "MSG_EOR"},
	{0x100, "MSG_WAITALL"},
	{0x4000, "MSG_NOSIGNAL"},
	{0x8000, "MSG_MORE"},
	{0x10000, "MSG_WAITFORONE"},
	{0x40000000, "MSG_CMSG_CLOEXEC"},
	{0x4000000, "MSG_ZEROCOPY"},
	{0},
};
static const struct flag_name sock_flags[] = {
	{04000, "SOCK_NONBLOCK"},
	{02000000, "SOCK_CLOEXEC"},
	{0},
};
static const struct flag_name epoll_flags[] = {
	{0x1, "EPOLLIN"},
	{0x2, "EPOLLPRI"},
	{0x4, "EPOLLOUT"},
	{0x8, "EPOLLERR"},
	{0x10, "EPOLLHUP"},
	{0x2000, "EPOLLRDHUP"},
	{1u << 28, "EPOLLEXCLUSIVE"},
	{1u << 29, "EPOLLWAKEUP"},
	{1u << 30, "EPOLLONESHOT"},
	{1u << 31, "EPOLLET"},
	{0},
};

/* {"FLAG": calls with it per call} from a flags value -> calls map; "none" for calls
 * without any, the bits without a name in hex. */
static json_t *flags_json(const struct u64map *m, uint64_t calls, int nr)
{
	const struct flag_name *names = nr == 288   ? sock_flags
					: nr == 233 ? epoll_flags
						    : msg_flags;
	uint64_t k, v;
	size_t i, j;
	char buf[32];
	json_t *o;

	if (!m->nr)
		return json_null();
	o = json_object();
	for (i = 0; u64map__next(m, &i, &k, &v);) {
		uint32_t rest = (uint32_t)k;
		const char *key;

		if (!rest) {
			key = "none";
			json_object_set_new(o, key,
					    json_real(json_number_value(json_object_get(o, key)) +
						      (double)v / calls));
			continue;
		}
		for (j = 0; names[j].name; j++) {
			if (!(rest & names[j].bit))
				continue;
			rest &= ~names[j].bit;
			key = names[j].name;
			json_object_set_new(o, key,
					    json_real(json_number_value(json_object_get(o, key)) +
						      (double)v / calls));
		}
		if (rest) {
			snprintf(buf, sizeof(buf), "0x%x", rest);
			json_object_set_new(o, buf,
					    json_real(json_number_value(json_object_get(o, buf)) +
						      (double)v / calls));
		}
	}
	return o;
}

static json_t *iov_json(const struct model_sc_stat *s)
{
	json_t *a;
	size_t i, j;

	if (!s->iov_n)
		return json_null();
	a = json_array();
	for (i = 0; i < ARRAY_SIZE(s->iov) && s->iov[i].count; i++) {
		json_t *l = json_array();

		for (j = 0; j < s->iov[i].n && j < 7; j++)
			json_array_append_new(l, json_integer(s->iov[i].len[j]));
		json_array_append_new(a, json_pack("{s:o, s:I, s:f}", "layout", l, "iovcnt",
						   (json_int_t)s->iov[i].n, "share",
						   (double)s->iov[i].count / s->iov_n));
	}
	return a;
}

/* The runs without the recorder (docs/model-json.md): null when there were none. */
static json_t *cpu_runs_json(const struct model *m)
{
	json_t *a;
	unsigned i;

	if (!m->nr_cpu_unrecorded)
		return json_null();
	a = json_array();
	for (i = 0; i < m->nr_cpu_unrecorded; i++) {
		const struct model_cpu_run *c = &m->cpu_unrecorded[i];

		json_array_append_new(a,
				      json_pack("{s:I, s:f, s:I, s:f, s:f}", "conns",
						(json_int_t)c->conns, "rate", c->rate, "requests",
						(json_int_t)c->requests, "cpu_us_per_request",
						c->cpu_us, "wakeups_per_request", c->wakeups));
	}
	return a;
}

/* The original beside its skeleton (docs/model-json.md): null when not measured. */
static json_t *beside_json(const struct model *m)
{
	const struct model_beside *b = &m->beside;
	json_t *sl;
	unsigned i;

	if (!(b->ratio > 0))
		return json_null();
	sl = json_array();
	for (i = 0; i < b->nr_slices; i++)
		json_array_append_new(sl, json_real(b->slice_ratio[i]));
	return json_pack("{s:I, s:f, s:I, s:I, s:f, s:f, s:f, s:o}", "conns", (json_int_t)b->conns,
			 "rate", b->rate, "requests", (json_int_t)b->requests, "skeleton_requests",
			 (json_int_t)b->skeleton_requests, "original_cpu_us_per_request",
			 b->original_us, "skeleton_cpu_us_per_request", b->skeleton_us, "ratio",
			 b->ratio, "slice_ratios", sl);
}

/* The network threads' CPU time outside syscalls per measured request, over the runs that
 * wrote every syscall (model__analyze); null when none did. */
static json_t *user_json(const struct model *m)
{
	uint64_t cycles = 0, ns = 0;
	size_t r;

	for (r = 0; r < m->nr_runs; r++)
		if (m->runs[r].net_user) {
			cycles += m->runs[r].cycles;
			ns += m->runs[r].net_user_ns;
		}
	return cycles ? json_real(ns / 1e3 / cycles) : json_null();
}

static json_t *profile_json(const struct model *m, struct sc_sum *sum, size_t *nr_out)
{
	uint64_t cycles = 0, on_ns = 0, unknown = 0, conns = 0, reqs = 0;
	json_t *a = json_array(), *o;
	double per;
	size_t r;
	int nr, k;

	sum_syscalls(m, sum, &cycles, &on_ns, &unknown);
	qsort(sum, MODEL_MAX_SYSCALL, sizeof(*sum), by_count);
	per = cycles ? 1.0 / cycles : 0;
	for (nr = 0; nr < MODEL_MAX_SYSCALL && sum[nr].s.count; nr++) {
		const struct model_sc_stat *s = &sum[nr].s;
		json_t *kinds = json_object(), *ret = json_object(), *extra = json_null();
		const char *key = arg_key_name(sum[nr].nr);
		char buf[32];

		for (k = 0; k < FDK_KINDS; k++)
			if (s->fd_kind[k])
				json_object_set_new(kinds, model__fd_kind_name(k),
						    json_real(s->fd_kind[k] * per));
		if (s->ok)
			json_object_set_new(ret, "ok", json_real(s->ok * per));
		if (s->eagain)
			json_object_set_new(ret, "EAGAIN", json_real(s->eagain * per));
		if (s->err)
			json_object_set_new(ret, "error", json_real(s->err * per));
		if (key) {
			uint64_t kk, v;
			size_t i;

			extra = json_object();
			for (i = 0; u64map__next(&sum[nr].args, &i, &kk, &v);) {
				snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)(int32_t)kk);
				json_object_set_new(extra, buf, json_real((double)v / s->count));
			}
		}
		json_array_append_new(
			a, json_pack("{s:s, s:f, s:I, s:o, s:{s:o, s:o}, s:o, s:n, s:n, s:n, s:o, "
				     "s:o, s:f}",
				     "name", syscall__name(sum[nr].nr, buf, sizeof(buf)),
				     "per_request", s->count * per, "count", (json_int_t)s->count,
				     "fd_kinds", kinds, "bytes", "socket",
				     sizes_json(s->sock_hist, s->sock_n, s->sock_sum, s->sock_max),
				     "file",
				     sizes_json(s->file_hist, s->file_n, s->file_sum, s->file_max),
				     "ret", ret, "iov", "flags", "offsets", "maxevents",
				     key && !strcmp(key, "maxevents") ? json_incref(extra)
								      : json_null(),
				     "timeout_ms",
				     key && !strcmp(key, "timeout_ms") ? json_incref(extra)
								       : json_null(),
				     "time_us_per_call", s->ns / 1e3 / s->count));
		json_decref(extra);
		{
			json_t *o = json_array_get(a, json_array_size(a) - 1);

			json_object_set_new(o, "iov", iov_json(s));
			json_object_set_new(o, "flags",
					    flags_json(&sum[nr].flags, s->count, sum[nr].nr));
			if (s->off_n)
				json_object_set_new(o, "offsets",
						    json_pack("{s:I, s:I, s:f}", "min",
							      (json_int_t)s->off_min, "max",
							      (json_int_t)s->off_max, "aligned_4k",
							      (double)s->off_aligned / s->off_n));
			if (sum[nr].timeouts.nr)
				json_object_set_new(
					o, "timeout_ms",
					shares_json(&sum[nr].timeouts, s->count, false));
		}
	}
	*nr_out = (size_t)nr;
	o = json_pack("{s:I, s:f, s:o, s:o, s:o, s:o, s:I, s:o}", "requests", (json_int_t)cycles,
		      "on_cpu_us_per_request", cycles ? on_ns / 1e3 / cycles : 0.0,
		      "user_us_per_request", user_json(m), "on_cpu_us_per_request_unrecorded",
		      m->nr_cpu_unrecorded ? json_real(m->cpu_unrecorded[0].cpu_us) : json_null(),
		      "cpu_unrecorded", cpu_runs_json(m), "cpu_beside_skeleton", beside_json(m),
		      "unknown", (json_int_t)unknown, "syscalls", a);
	/* Connections accepted per request, over every run: what the calls made once a
	 * connection are divided by (srvscope clone), whichever thread accepted. */
	for (r = 0; r < m->nr_runs; r++) {
		conns += m->runs[r].nr_conn;
		reqs += model_run__requests(&m->runs[r]);
	}
	json_object_set_new(o, "accepts_per_request",
			    reqs ? json_real((double)conns / (double)reqs) : json_null());
	return o;
}

static uint64_t cycle_key(const struct model_cycle *c)
{
	uint64_t h = FNV1A_INIT;
	unsigned i;

	for (i = 0; i < c->len; i++) {
		h = fnv1a(&c->steps[i].nr, sizeof(c->steps[i].nr), h);
		h = fnv1a(&c->steps[i].kind, 2, h);
	}
	return h;
}

/* The commonest syscall sequence of a request over every run, and its share. */
static void cycle_json(const struct model *m, json_t *profile)
{
	const struct model_cycle *best = NULL;
	struct u64map counts = {0};
	uint64_t total = 0, best_n = 0;
	json_t *a = json_array();
	size_t r, i;
	unsigned j, k;
	char buf[32];

	for (r = 0; r < m->nr_runs; r++) {
		total += m->runs[r].seqs_seen;
		for (i = 0; i < m->runs[r].nr_seqs; i++) {
			const struct model_cycle *c = &m->runs[r].seqs[i];
			uint64_t *n = u64map__slot(&counts, cycle_key(c), NULL);

			*n += c->count;
			if (*n > best_n) {
				best_n = *n;
				best = c;
			}
		}
	}
	u64map__free(&counts);
	for (j = 0; best && j < best->len; j++) {
		const struct model_step *st = &best->steps[j];
		json_t *o = json_pack("{s:s}", "syscall", syscall__name(st->nr, buf, sizeof(buf)));

		if (syscall__has_fd(st->nr))
			json_object_set_new(o, "fd_kind",
					    json_string(model__fd_kind_name(st->kind)));
		if (st->bytes)
			json_object_set_new(o, "bytes", json_integer(st->bytes));
		json_object_set_new(o, "ret",
				    json_string(st->ret == 1 ? "EAGAIN"
						: st->ret    ? "error"
							     : "ok"));
		if (st->iov_n) {
			json_t *l = json_array();

			for (k = 0; k < st->iov_n && k < 4; k++)
				json_array_append_new(l, json_integer(st->iov[k]));
			json_object_set_new(o, "iov", l);
		}
		if (st->maxevents != -2)
			json_object_set_new(o, "maxevents", json_integer(st->maxevents));
		if (st->timeout_ms != -2)
			json_object_set_new(o, "timeout_ms", json_integer(st->timeout_ms));
		json_array_append_new(a, o);
	}
	json_object_set_new(profile, "cycle", a);
	json_object_set_new(profile, "cycle_share",
			    total ? json_real((double)best_n / total) : json_null());
}

static json_t *ops_json(const int16_t *ops, unsigned n)
{
	json_t *a = json_array();
	char buf[32];
	unsigned i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(syscall__name(ops[i], buf, sizeof(buf))));
	return a;
}

/* The network threads' files over every run: a file of the same path, or of the same
 * shape of use when no path is known, is one entry. */
static json_t *files_json(const struct model *m)
{
	struct model_file *all = NULL;
	struct u64map idx = {0};
	size_t nr = 0, cap = 0, r, i;
	uint64_t cycles = 0;
	json_t *a = json_array();

	for (r = 0; r < m->nr_runs; r++) {
		cycles += m->runs[r].cycles;
		for (i = 0; i < m->runs[r].nr_files; i++) {
			const struct model_file *f = &m->runs[r].files[i];
			struct model_file *d;
			bool created;
			uint64_t *slot = u64map__slot(&idx, f->key, &created);
			int b;

			if (created) {
				xgrow((void **)&all, &cap, nr + 1, sizeof(*all));
				all[nr] = *f;
				memset(&all[nr].per_use, 0, sizeof(all[nr].per_use));
				all[nr].opens = all[nr].uses = all[nr].reads = all[nr].writes = 0;
				all[nr].read_bytes = all[nr].written_bytes = 0;
				*slot = ++nr;
			}
			d = &all[*slot - 1];
			d->opens += f->opens;
			d->uses += f->uses;
			d->reads += f->reads;
			d->writes += f->writes;
			d->read_bytes += f->read_bytes;
			d->written_bytes += f->written_bytes;
			d->positional |= f->positional;
			d->append |= f->append;
			if (f->off_max > d->off_max)
				d->off_max = f->off_max;
			for (b = 0; b < MODEL_SIZE_BUCKETS; b++)
				d->per_use.hist[b] += f->per_use.hist[b];
			d->per_use.n += f->per_use.n;
			d->per_use.sum += f->per_use.sum;
			if (f->per_use.max > d->per_use.max)
				d->per_use.max = f->per_use.max;
		}
	}
	for (i = 0; i < nr; i++) {
		const struct model_file *f = &all[i];
		double per = cycles ? 1.0 / cycles : 0;
		/* its size: as /proc gave it, else the most a use read or wrote of it (a file
		 * served whole per request: its size) */
		int64_t size = f->size >= 0 ? f->size : (int64_t)f->per_use.max;

		json_array_append_new(
			a, json_pack("{s:o, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:o, s:o}",
				     "path", f->path ? jname(f->path) : json_null(), "opened",
				     f->before ? "before" : "during", "access",
				     f->append	     ? "append"
				     : f->positional ? "positional"
						     : "sequential",
				     "size", (json_int_t)size, "opens_per_request", f->opens * per,
				     "reads_per_request", f->reads * per, "writes_per_request",
				     f->writes * per, "read_bytes_per_request", f->read_bytes * per,
				     "written_bytes_per_request", f->written_bytes * per,
				     "bytes_per_use",
				     sizes_json(f->per_use.hist, f->per_use.n, f->per_use.sum,
						f->per_use.max),
				     "ops", ops_json(f->ops, f->nr_ops)));
	}
	free(all);
	u64map__free(&idx);
	return a;
}

static void free_sums(struct sc_sum *sum)
{
	int i;

	for (i = 0; i < MODEL_MAX_SYSCALL; i++) {
		u64map__free(&sum[i].args);
		u64map__free(&sum[i].timeouts);
		u64map__free(&sum[i].flags);
	}
	free(sum);
}

/* A listening socket's SO_REUSEPORT, as the first run's snapshot read it; null when not
 * known. */
static json_t *listen_reuseport(const struct model *m, uint64_t inode)
{
	size_t r, i;

	for (r = 0; r < m->nr_runs; r++)
		for (i = 0; i < m->runs[r].fds.nr; i++) {
			const struct model_fd *e = &m->runs[r].fds.fd[i];

			if (e->listening && e->inode == inode && e->reuseport >= 0)
				return json_boolean(e->reuseport);
		}
	return json_null();
}

int model__write_json(const struct model *m, FILE *f)
{
	const struct model_netmodel *n = &m->net;
	struct sc_sum *sum = xcalloc(MODEL_MAX_SYSCALL, sizeof(*sum));
	json_t *doc, *profile, *request, *listen;
	size_t i;
	size_t nsc;
	int err;

	profile = profile_json(m, sum, &nsc);
	cycle_json(m, profile);
	json_error_t jerr;

	{
		struct model_sizes req = {0}, resp = {0};
		size_t r;
		int b;

		for (r = 0; r < m->nr_runs; r++) {
			const struct model_run *run = &m->runs[r];

			for (b = 0; b < MODEL_SIZE_BUCKETS; b++) {
				req.hist[b] += run->req_bytes.hist[b];
				resp.hist[b] += run->resp_bytes.hist[b];
			}
			req.n += run->req_bytes.n;
			resp.n += run->resp_bytes.n;
			req.sum += run->req_bytes.sum;
			resp.sum += run->resp_bytes.sum;
			if (run->req_bytes.max > req.max)
				req.max = run->req_bytes.max;
			if (run->resp_bytes.max > resp.max)
				resp.max = run->resp_bytes.max;
		}
		request = json_pack("{s:o, s:o}", "request_bytes",
				    sizes_json(req.hist, req.n, req.sum, req.max), "response_bytes",
				    sizes_json(resp.hist, resp.n, resp.sum, resp.max));
	}
	listen = json_array();
	for (i = 0; i < m->nr_listen; i++)
		json_array_append_new(listen, json_pack("{s:s, s:s, s:i, s:o}", "proto",
							m->listen[i].v6 ? "tcp6" : "tcp", "addr",
							m->listen[i].addr, "port",
							(int)m->listen[i].port, "reuseport",
							listen_reuseport(m, m->listen[i].inode)));
	doc = json_pack_ex(
		&jerr, 0,
		"{s:s, s:i, s:s, s:I, "
		"s:{s:I, s:o, s:o, s:o, s:o}, "
		"s:{s:o, s:o, s:o}, "
		"s:o, s:o, s:o, s:o, "
		"s:{s:s, s:s, s:f, s:I, s:I}, "
		"s:{s:b, s:b, s:b, s:b, s:b, s:I, s:I}, "
		"s:{s:s, s:s, s:o, s:o, s:b, s:s, s:f, s:s, s:I, s:o, s:b, s:b, s:o}, "
		"s:o, s:o, s:o}",
		"schema", "srvscope-model", "version", 1, "generator", SRVSCOPE_MODEL_GENERATOR,
		"created_realtime_s", (json_int_t)time(NULL), "target", "pid", (json_int_t)m->pid,
		"comm", jname(m->comm), "exe", m->exe[0] ? jname(m->exe) : json_null(), "title",
		m->title[0] ? json_string(m->title) : json_null(), "listen", listen, "load",
		"protocol", m->protocol ? json_string(m->protocol) : json_null(), "url",
		m->url ? json_string(m->url) : json_null(), "command",
		m->command ? json_string(m->command) : json_null(), "runs", runs_json(m),
		"processes", processes_json(m), "threads", threads_json(m), "clusters",
		clusters_json(m), "clustering", "distance", "weighted-tree-edit", "linkage",
		"average", "threshold", m->threshold, "threads", (json_int_t)0, "distinct_trees",
		(json_int_t)m->distinct_trees, "network_model_characteristics", "accept_dispatch",
		n->accept_dispatch, "network_dispatch", n->network_dispatch, "network_epoll",
		n->network_epoll, "nonblocking", n->nonblocking, "blocking", n->blocking,
		"accept_thread_pool_size", (json_int_t)n->accept_pool, "network_thread_pool_size",
		(json_int_t)n->network_pool, "network_model", "network_io", n->network_io,
		"accept_io", n->accept_io, "accept_pool",
		pool_json(n->accept_pool, n->accept_per_conn), "network_pool",
		pool_json(n->network_pool, n->network_per_conn), "multi_process", n->multi_process,
		"per_connection", n->per_connection, "handoff_share", n->handoff_share, "handoff",
		n->handoff, "listeners", (json_int_t)n->listeners, "reuseport",
		n->reuseport < 0 ? json_null() : json_boolean(n->reuseport), "shared_epoll",
		n->shared_epoll, "epoll_exclusive", n->epoll_exclusive, "roles", roles_json(m),
		"request", request, "syscall_profile", profile, "files", files_json(m));
	free_sums(sum);
	if (!doc) {
		error("model JSON: %s", jerr.text);
		return -EINVAL;
	}
	{
		size_t threads = 0, r;

		for (r = 0; r < m->nr_runs; r++)
			threads += m->runs[r].nr_thr;
		json_object_set_new(json_object_get(doc, "clustering"), "threads",
				    json_integer((json_int_t)threads));
	}
	err = json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -EIO : 0;
	if (!err && fputc('\n', f) == EOF)
		err = -EIO;
	json_decref(doc);
	return err;
}

/* The clusters playing role r: "mc-worker: 4 threads (cluster 0)", or "postgres: 1 of 111
 * threads" when only some of a cluster's threads play it (most per run). */
static void print_clusters_of(const struct model *m, enum model_role r, FILE *f)
{
	char name[COMM_ESCAPED_SIZE];
	size_t i, j, printed = 0;

	for (i = 0; i < m->nr_clusters; i++) {
		const struct model_cluster *c = &m->clusters[i];
		unsigned size = 0, *doing = xcalloc(m->nr_runs ? m->nr_runs : 1, sizeof(*doing));
		unsigned most = 0;

		if (!c->roles[r]) {
			free(doing);
			continue;
		}
		for (j = 0; j < c->nr_items; j++) {
			const struct model_thread *th =
				&m->runs[c->items[j].run].thr[c->items[j].thr];
			bool plays = r == ROLE_ACCEPTOR	 ? th->acceptor
				     : r == ROLE_NETWORK ? th->network
				     : r == ROLE_MAIN ? th->tid == m->runs[c->items[j].run].main_pid
						      : true;

			doing[c->items[j].run] += plays;
		}
		for (j = 0; j < m->nr_runs; j++) {
			if (c->size_per_run[j] > size)
				size = c->size_per_run[j];
			if (doing[j] > most)
				most = doing[j];
		}
		free(doing);
		if (most == size)
			fprintf(f, "%s%s: %u thread%s (cluster %d)", printed++ ? ", " : "",
				name_shown(c->name, name, sizeof(name)), size, size == 1 ? "" : "s",
				c->id);
		else
			fprintf(f, "%s%s: %u of %u threads (cluster %d)", printed++ ? ", " : "",
				name_shown(c->name, name, sizeof(name)), most, size, c->id);
	}
	if (!printed)
		fprintf(f, "none");
}

void model__print_summary(const struct model *m, FILE *f)
{
	const struct model_netmodel *n = &m->net;
	struct sc_sum *sum = xcalloc(MODEL_MAX_SYSCALL, sizeof(*sum));
	uint64_t cycles = 0, on_ns = 0, unknown = 0;
	char buf[32], name[COMM_ESCAPED_SIZE];
	size_t i, r;

	fprintf(f, "%s (pid %u), %zu run(s):",
		m->comm[0] ? name_shown(m->comm, name, sizeof(name)) : "?", m->pid, m->nr_runs);
	for (r = 0; r < m->nr_runs; r++)
		fprintf(f, " %s%" PRIu64 " requests", r ? "/ " : "",
			model_run__requests(&m->runs[r]));
	fprintf(f, "\n");
	fprintf(f, "  accepts:       ");
	print_clusters_of(m, ROLE_ACCEPTOR, f);
	fprintf(f, "\n  serves conns:  ");
	print_clusters_of(m, ROLE_NETWORK, f);
	fprintf(f, "\n  main thread:   ");
	print_clusters_of(m, ROLE_MAIN, f);
	fprintf(f, "\n  pools:         accept %u%s, network %u%s%s\n", n->accept_pool,
		n->accept_per_conn ? " (one per connection)" : "", n->network_pool,
		n->network_per_conn ? " (one per connection)" : "",
		n->multi_process ? ", in several processes" : "");
	fprintf(f,
		"  I/O model:     network %s, accept %s, %s sockets, %.0f%% of connections "
		"handed over (%s)\n",
		n->network_io, n->accept_io, n->nonblocking ? "non-blocking" : "blocking",
		n->handoff_share * 100, n->handoff);
	fprintf(f,
		"  Ditto:         accept_dispatch %s, network_dispatch %s, epoll %s, pools "
		"%u/%u\n",
		n->accept_dispatch ? "true" : "false", n->network_dispatch ? "true" : "false",
		n->network_epoll ? "true" : "false", n->accept_pool, n->network_pool);
	sum_syscalls(m, sum, &cycles, &on_ns, &unknown);
	qsort(sum, MODEL_MAX_SYSCALL, sizeof(*sum), by_count);
	fprintf(f, "  per request:   ");
	for (i = 0; i < 6 && sum[i].s.count && cycles; i++)
		fprintf(f, "%s%s %.2f", i ? ", " : "", syscall__name(sum[i].nr, buf, sizeof(buf)),
			(double)sum[i].s.count / cycles);
	if (cycles && m->nr_cpu_unrecorded)
		fprintf(f, "; %.1f us on-CPU (%.1f unrecorded)\n", on_ns / 1e3 / cycles,
			m->cpu_unrecorded[0].cpu_us);
	else if (cycles)
		fprintf(f, "; %.1f us on-CPU\n", on_ns / 1e3 / cycles);
	else
		fprintf(f, "no request/response cycle seen\n");
	fprintf(f, "  clusters:      ");
	for (i = 0; i < m->nr_clusters; i++) {
		const struct model_cluster *c = &m->clusters[i];
		unsigned size = 0;

		for (r = 0; r < m->nr_runs; r++)
			if (c->size_per_run[r] > size)
				size = c->size_per_run[r];
		fprintf(f, "%s%d %s x%u %s", i ? ", " : "", c->id,
			name_shown(c->name, name, sizeof(name)), size, model__role_name(c->role));
	}
	fprintf(f, "\n");
	free_sums(sum);
}
