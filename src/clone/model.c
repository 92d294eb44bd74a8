/* The model file as the clone reads it: every field it uses is checked here, before
 * anything starts, so a clone never runs half-configured. A model is outside data (it may
 * come from another machine): every number is range-checked, every string bounded. */
#include <errno.h>
#include <jansson.h>
#include <math.h> /* isfinite: a macro, no libm */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clone/clone.h"
#include "util/escape.h"
#include "util/safefile.h"

/* d is finite: whether it is a whole number (within the range the callers allow). */
static bool whole(double d)
{
	return d > -9e15 && d < 9e15 && d == (double)(long long)d;
}

struct ctx {
	char *err;
	size_t errlen;
	int failed;
	const json_t *runs; /* the model's runs */
};

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->failed) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	c->failed = 1;
	return -EINVAL;
}

static const char *const sys_names[CS__COUNT] = {
	[CS_READ] = "read",
	[CS_RECV] = "recv",
	[CS_RECVFROM] = "recvfrom",
	[CS_RECVMSG] = "recvmsg",
	[CS_READV] = "readv",
	[CS_WRITE] = "write",
	[CS_SEND] = "send",
	[CS_SENDTO] = "sendto",
	[CS_SENDMSG] = "sendmsg",
	[CS_WRITEV] = "writev",
	[CS_SENDFILE] = "sendfile",
	[CS_STAT] = "stat",
	[CS_LSTAT] = "lstat",
	[CS_NEWFSTATAT] = "newfstatat",
	[CS_STATX] = "statx",
	[CS_OPEN] = "open",
	[CS_OPENAT] = "openat",
	[CS_FSTAT] = "fstat",
	[CS_PREAD] = "pread64",
	[CS_PWRITE] = "pwrite64",
	[CS_LSEEK] = "lseek",
	[CS_CLOSE] = "close",
	[CS_FSYNC] = "fsync",
	[CS_FDATASYNC] = "fdatasync",
	[CS_EPOLL_WAIT] = "epoll_wait",
	[CS_EPOLL_PWAIT] = "epoll_pwait",
	[CS_EPOLL_CTL] = "epoll_ctl",
	[CS_POLL] = "poll",
	[CS_PPOLL] = "ppoll",
	[CS_SELECT] = "select",
	[CS_PSELECT6] = "pselect6",
	[CS_NANOSLEEP] = "nanosleep",
	[CS_CLOCK_NANOSLEEP] = "clock_nanosleep",
	[CS_FUTEX] = "futex",
	[CS_SETSOCKOPT] = "setsockopt",
	[CS_GETPID] = "getpid",
	[CS_TIMES] = "times",
	[CS_GETTIMEOFDAY] = "gettimeofday",
	[CS_CLOCK_GETTIME] = "clock_gettime",
	[CS_GETSOCKOPT] = "getsockopt",
	[CS_GETPEERNAME] = "getpeername",
	[CS_GETSOCKNAME] = "getsockname",
};

const char *clone_sys__name(enum clone_sys s)
{
	return s > CS_NONE && s < CS__COUNT ? sys_names[s] : "?";
}

enum clone_sys clone_sys__from_name(const char *name)
{
	int i;

	if (!strcmp(name, "pread"))
		return CS_PREAD;
	if (!strcmp(name, "pwrite"))
		return CS_PWRITE;
	if (!strcmp(name, "fstatat") || !strcmp(name, "fstatat64"))
		return CS_NEWFSTATAT;
	for (i = CS_NONE + 1; i < CS__COUNT; i++)
		if (!strcmp(name, sys_names[i]))
			return i;
	return CS_NONE;
}

/* A number at key in obj, within [min, max]; def when absent or null unless required. */
static int get_num(struct ctx *c, const json_t *obj, const char *where, const char *key, double min,
		   double max, bool integer, bool required, double def, double *out)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	double d;

	*out = def;
	if (!v || json_is_null(v)) {
		if (required)
			return fail(c, "%s.%s is missing", where, key);
		return 0;
	}
	if (!json_is_number(v))
		return fail(c, "%s.%s is not a number", where, key);
	d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max || (integer && !whole(d)))
		return fail(c, "%s.%s is %.15g: %s from %.15g to %.15g", where, key, d,
			    integer ? "a whole number" : "a number", min, max);
	*out = d;
	return 0;
}

static int get_uint(struct ctx *c, const json_t *obj, const char *where, const char *key,
		    double min, double max, bool required, double def, unsigned *out)
{
	double d;
	int err = get_num(c, obj, where, key, min, max, true, required, def, &d);

	*out = (unsigned)d;
	return err;
}

static int get_size(struct ctx *c, const json_t *obj, const char *where, const char *key,
		    bool required, uint64_t *out)
{
	double d;
	int err = get_num(c, obj, where, key, 0, CLONE_MAX_SIZE, true, required, 0, &d);

	*out = (uint64_t)d;
	return err;
}

static const char *get_str(struct ctx *c, const json_t *obj, const char *where, const char *key,
			   bool required)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;

	if (!v || json_is_null(v)) {
		if (required)
			fail(c, "%s.%s is missing", where, key);
		return NULL;
	}
	if (!json_is_string(v)) {
		fail(c, "%s.%s is not a string", where, key);
		return NULL;
	}
	return json_string_value(v);
}

static int get_bool(struct ctx *c, const json_t *obj, const char *where, const char *key, bool *out)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return fail(c, "%s.%s is not true or false", where, key);
	*out = json_is_true(v);
	return 0;
}

/* A string of the model file for an error message: its first 40 bytes, escaped (the file
 * may come from anyone; util/escape.h). */
static const char *shown(const char *s, char *buf, size_t size)
{
	name_escape(buf, size, s, strnlen(s, 40));
	return buf;
}

static int pick(struct ctx *c, const char *where, const char *s, const char *const *names, int n,
		int *out)
{
	char e[40 * 4 + 1];
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return fail(c, "%s is '%s', which the clone does not know", where, shown(s, e, sizeof(e)));
}

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, CLONE_NAME, "%s", src);
}

static int parse_dist(struct ctx *c, const json_t *d, const char *where, struct clone_dist *out)
{
	json_t *hist, *b;
	size_t i;
	double mean;

	memset(out, 0, sizeof(*out));
	if (!d || json_is_null(d))
		return 0;
	if (!json_is_object(d))
		return fail(c, "%s is not an object", where);
	get_num(c, d, where, "mean", 0, CLONE_MAX_SIZE, false, false, 0, &mean);
	out->mean = mean;
	get_size(c, d, where, "p50", false, &out->p50);
	get_size(c, d, where, "max", false, &out->max);
	hist = json_object_get(d, "hist");
	if (hist && !json_is_null(hist)) {
		if (!json_is_array(hist))
			return fail(c, "%s.hist is not an array", where);
		json_array_foreach(hist, i, b)
		{
			char w[96];
			uint64_t le, count;

			if (out->nhist == CLONE_MAX_HIST)
				return fail(c, "%s.hist has more than %d buckets", where,
					    CLONE_MAX_HIST);
			snprintf(w, sizeof(w), "%s.hist[%zu]", where, i);
			if (!json_is_object(b))
				return fail(c, "%s is not an object", w);
			get_size(c, b, w, "le", true, &le);
			if (get_num(c, b, w, "count", 0, 1e15, true, true, 0, &mean))
				return -EINVAL;
			count = (uint64_t)mean;
			if (out->nhist && le <= out->le[out->nhist - 1])
				return fail(c, "%s.le is not above the bucket before it", w);
			out->le[out->nhist] = le;
			out->count[out->nhist++] = count;
		}
	}
	return c->failed ? -EINVAL : 0;
}

static json_t *cluster_by_id(const json_t *clusters, json_int_t id)
{
	json_t *cl;
	size_t i;

	json_array_foreach(clusters, i, cl)
	{
		json_t *v = json_object_get(cl, "id");

		if (json_is_integer(v) && json_integer_value(v) == id)
			return cl;
	}
	return NULL;
}

/* The clusters of one role (network_model.roles.ROLE), checked to exist. */
static int role_ids(struct ctx *c, const json_t *roles, const json_t *clusters, const char *role,
		    json_int_t *ids, unsigned max, unsigned *n)
{
	json_t *arr = roles ? json_object_get(roles, role) : NULL, *v;
	size_t i;

	*n = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return fail(c, "network_model.roles.%s is not an array", role);
	json_array_foreach(arr, i, v)
	{
		if (!json_is_integer(v))
			return fail(c, "network_model.roles.%s[%zu] is not a cluster id", role, i);
		if (!cluster_by_id(clusters, json_integer_value(v)))
			return fail(c,
				    "network_model.roles.%s names cluster %lld, which is not in "
				    "clusters",
				    role, (long long)json_integer_value(v));
		if (*n < max)
			ids[(*n)++] = json_integer_value(v);
	}
	return 0;
}

static bool ids_meet(const json_int_t *a, unsigned na, const json_int_t *b, unsigned nb)
{
	unsigned i, j;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

/* A pool size: a number from 1 to CLONE_MAX_POOL, or "per-connection". */
static int parse_pool(struct ctx *c, const json_t *nm, const char *key, unsigned *out,
		      bool *per_conn)
{
	json_t *v = json_object_get(nm, key);
	char e[40 * 4 + 1];
	double d;

	*per_conn = false;
	*out = 1;
	if (json_is_string(v) && !strcmp(json_string_value(v), "per-connection")) {
		*per_conn = true;
		return 0;
	}
	if (json_is_string(v))
		return fail(c, "network_model.%s is '%s': a number or \"per-connection\"", key,
			    shown(json_string_value(v), e, sizeof(e)));
	if (get_num(c, nm, "network_model", key, 1, CLONE_MAX_POOL, true, true, 1, &d))
		return -EINVAL;
	*out = (unsigned)d;
	return 0;
}

static unsigned cluster_threads(struct ctx *c, const json_t *cl, const char *where)
{
	json_t *spr = json_object_get(cl, "size_per_run"), *th = json_object_get(cl, "threads");
	unsigned n = 0;

	if (json_is_array(spr) && json_array_size(spr)) {
		char w[80];

		snprintf(w, sizeof(w), "%s.size_per_run", where);
		/* the last run's size: the clone runs one configuration */
		if (!json_is_number(json_array_get(spr, json_array_size(spr) - 1)))
			return fail(c, "%s holds something other than numbers", w), 0;
		{
			double d = json_number_value(json_array_get(spr, json_array_size(spr) - 1));

			if (!isfinite(d) || d < 0 || d > CLONE_MAX_POOL || !whole(d))
				return fail(c, "%s ends with %.15g: a thread count from 0 to %d", w,
					    d, CLONE_MAX_POOL),
				       0;
			n = (unsigned)d;
		}
	} else if (json_is_array(th)) {
		n = json_array_size(th);
	}
	if (n > CLONE_MAX_POOL)
		return fail(c, "%s has %u threads: at most %d", where, n, CLONE_MAX_POOL), 0;
	return n;
}

static int by_rps(const void *a, const void *b)
{
	const struct clone_bg_run *x = a, *y = b;

	return (x->rps > y->rps) - (x->rps < y->rps);
}

/* work.per_run: the cluster's wake-ups per second and CPU per wake-up in each run, placed
 * at the run's request rate (runs[].throughput_rps); runs within 5 % of one rate are one
 * point, their mean. The recorded CPU per wake-up carries the recorder's probes at each
 * wake-up; where a run has it measured without (on_cpu_us_unrecorded, the last run's
 * rate), that is its figure, and the others' lose what the probes added there. */
static int parse_bg_runs(struct ctx *c, const json_t *work, const char *where, struct clone_bg *bg)
{
	const json_t *pr = json_object_get(work, "per_run"), *e;
	double unrec[CLONE_MAX_RUNS], probes = 0;
	unsigned n = 0, i, k;
	size_t j;

	if (!pr || json_is_null(pr))
		return 0;
	if (!json_is_array(pr))
		return fail(c, "%s.work.per_run is not an array", where);
	json_array_foreach(pr, j, e)
	{
		char w[96];
		double run, rps, wps, cpu;
		const json_t *r;

		snprintf(w, sizeof(w), "%s.work.per_run[%zu]", where, j);
		if (!json_is_object(e))
			return fail(c, "%s is not an object", w);
		if (get_num(c, e, w, "run", 0, CLONE_MAX_THREADS, true, true, 0, &run) ||
		    get_num(c, e, w, "wakes_per_s", 0, 1e6, false, true, 0, &wps) ||
		    get_num(c, e, w, "on_cpu_us", 0, 10e6, false, false, -1, &cpu) ||
		    get_num(c, e, w, "on_cpu_us_unrecorded", 0, 10e6, false, false, 0, &unrec[n]))
			return -EINVAL;
		r = json_array_get(c->runs, (size_t)run);
		if (!r)
			return fail(c, "%s.run is %g: the model has no such run", w, run);
		snprintf(w, sizeof(w), "runs[%g]", run);
		if (get_num(c, r, w, "throughput_rps", 0, 1e9, false, true, 0, &rps))
			return -EINVAL;
		if (unrec[n] > 0 && cpu > unrec[n])
			probes = cpu - unrec[n];
		bg->run[n++] = (struct clone_bg_run){rps, wps, cpu};
		if (n == CLONE_MAX_RUNS)
			break; /* enough points */
	}
	for (i = 0; i < n; i++) {
		double *cpu = &bg->run[i].on_cpu_us;

		if (unrec[i] > 0)
			*cpu = unrec[i];
		else if (*cpu < 0) /* none in that run: the cluster's (already without) */
			*cpu = bg->on_cpu_us;
		else
			*cpu = *cpu > probes ? *cpu - probes : 0;
	}
	qsort(bg->run, n, sizeof(bg->run[0]), by_rps);
	for (i = 0; i < n; i = k) { /* merge each run of close rates into its first point */
		struct clone_bg_run sum = bg->run[i];

		for (k = i + 1; k < n && bg->run[k].rps <= bg->run[i].rps * 1.05; k++) {
			sum.rps += bg->run[k].rps;
			sum.wakes_per_s += bg->run[k].wakes_per_s;
			sum.on_cpu_us += bg->run[k].on_cpu_us;
		}
		bg->run[bg->nruns++] = (struct clone_bg_run){
			sum.rps / (k - i), sum.wakes_per_s / (k - i), sum.on_cpu_us / (k - i)};
	}
	return 0;
}

void clone_bg__at(const struct clone_bg *bg, double rps, double *period_ms, double *on_cpu_us)
{
	const struct clone_bg_run *a, *b;
	double wps, f;
	unsigned i;

	*period_ms = bg->period_ms;
	*on_cpu_us = bg->on_cpu_us;
	if (!bg->nruns)
		return;
	for (i = 1; i < bg->nruns && bg->run[i].rps < rps; i++)
		;
	a = &bg->run[i - 1];
	b = i < bg->nruns ? &bg->run[i] : a;
	f = b->rps > a->rps ? (rps - a->rps) / (b->rps - a->rps) : 0;
	wps = a->wakes_per_s + f * (b->wakes_per_s - a->wakes_per_s);
	if (f < 0) /* below the slowest run: toward no load on that line, never more */
		f = 0;
	*on_cpu_us = a->on_cpu_us + f * (b->on_cpu_us - a->on_cpu_us);
	if (wps > a->wakes_per_s && rps < a->rps)
		wps = a->wakes_per_s;
	*period_ms = wps > 0 ? 1000 / wps : 0;
}

static int parse_bg(struct ctx *c, const json_t *cl, unsigned idx, struct clone_model *m)
{
	struct clone_bg *bg;
	char where[48];
	const char *name, *wait = NULL, *role;
	json_t *work, *sys, *w;
	size_t i;

	snprintf(where, sizeof(where), "clusters[%u]", idx);
	if (m->nbg == CLONE_MAX_BG)
		return fail(c, "more than %d background clusters", CLONE_MAX_BG);
	bg = &m->bg[m->nbg];
	memset(bg, 0, sizeof(*bg));
	name = get_str(c, cl, where, "name", false);
	copy_name(bg->name, name ? name : "bg");
	bg->threads = cluster_threads(c, cl, where);
	get_num(c, cl, where, "period_ms", 0, 86400000, false, false, 0, &bg->period_ms);
	w = json_object_get(cl, "wait");
	if (json_is_object(w))
		wait = get_str(c, w, where, "syscall", false);
	bg->wait = wait ? clone_sys__from_name(wait) : CS_NONE;
	work = json_object_get(cl, "work");
	if (work && !json_is_null(work)) {
		if (!json_is_object(work))
			return fail(c, "%s.work is not an object", where);
		char ww[64];

		snprintf(ww, sizeof(ww), "%s.work", where);
		get_num(c, work, ww, "on_cpu_us", 0, 10e6, false, false, 0, &bg->on_cpu_us);
		/* without the recorder's probes, at the last run's rate */
		get_num(c, work, ww, "on_cpu_us_unrecorded", 0, 10e6, false, false, bg->on_cpu_us,
			&bg->on_cpu_us);
		get_num(c, work, ww, "wake_floor_us", 0, 10e6, false, false, 0, &bg->wake_floor_us);
		sys = json_object_get(work, "syscalls");
		if (json_is_array(sys))
			json_array_foreach(sys, i, w)
			{
				char ws[128];
				const char *sn;
				enum clone_sys s;

				snprintf(ws, sizeof(ws), "%s.work.syscalls[%zu]", where, i);
				sn = get_str(c, w, ws, "name", true);
				s = sn ? clone_sys__from_name(sn) : CS_NONE;

				if (!sn)
					return -EINVAL;
				if (s == CS_NONE || bg->nwork == CLONE_MAX_WORK)
					continue; /* not replayed (docs/clone.md) */
				bg->work[bg->nwork].sys = s;
				get_num(c, w, ws, "per_wake", 0, 1000, false, false, 1,
					&bg->work[bg->nwork].per_wake);
				get_size(c, w, ws, "bytes", false, &bg->work[bg->nwork].bytes);
				bg->nwork++;
			}
		/* wake-ups that follow the load (a clock in some runs, a backing-off one in
		 * others); an idle cluster stays idle */
		role = get_str(c, cl, where, "role", false);
		if (role && !strcmp(role, "background") && parse_bg_runs(c, work, where, bg))
			return -EINVAL;
	}
	if (!c->failed && bg->threads)
		m->nbg++;
	return c->failed ? -EINVAL : 0;
}

static bool is_read(enum clone_sys s)
{
	return s >= CS_READ && s <= CS_READV;
}

static bool is_write(enum clone_sys s)
{
	return s >= CS_WRITE && s <= CS_SENDFILE;
}

static int parse_iov(struct ctx *c, const json_t *iov, const char *where, struct clone_step *st)
{
	json_t *v;
	size_t i;

	if (!json_is_array(iov))
		return fail(c, "%s.iov is not an array of lengths", where);
	if (json_array_size(iov) > CLONE_MAX_IOV || json_array_size(iov) == 0)
		return fail(c, "%s.iov has %zu iovecs: 1 to %d", where, json_array_size(iov),
			    CLONE_MAX_IOV);
	json_array_foreach(iov, i, v)
	{
		double d = json_is_number(v) ? json_number_value(v) : -1;

		if (!isfinite(d) || d < 0 || d > CLONE_MAX_SIZE || !whole(d))
			return fail(c, "%s.iov[%zu] is not a length (0 to %u bytes)", where, i,
				    CLONE_MAX_SIZE);
		st->iov[st->niov++] = (uint64_t)d;
	}
	return 0;
}

static int parse_cycle(struct ctx *c, const json_t *sp, struct clone_model *m)
{
	json_t *cycle = sp ? json_object_get(sp, "cycle") : NULL, *s;
	size_t i;

	if (!cycle || json_is_null(cycle))
		return 0;
	if (!json_is_array(cycle))
		return fail(c, "syscall_profile.cycle is not an array");
	json_array_foreach(cycle, i, s)
	{
		char where[48];
		const char *name, *kind, *ret;
		struct clone_step *st;
		double d;

		snprintf(where, sizeof(where), "syscall_profile.cycle[%zu]", i);
		if (!json_is_object(s))
			return fail(c, "%s is not an object", where);
		name = get_str(c, s, where, "syscall", true);
		if (!name)
			return -EINVAL;
		if (m->nsteps == CLONE_MAX_STEPS)
			return fail(c, "syscall_profile.cycle has more than %d steps",
				    CLONE_MAX_STEPS);
		st = &m->steps[m->nsteps];
		memset(st, 0, sizeof(*st));
		st->sys = clone_sys__from_name(name);
		kind = get_str(c, s, where, "fd_kind", false);
		ret = get_str(c, s, where, "ret", false);
		st->file = kind && !strcmp(kind, "file");
		st->eagain = ret && !strcmp(ret, "EAGAIN");
		get_size(c, s, where, "bytes", false, &st->bytes);
		if (json_object_get(s, "iov") && !json_is_null(json_object_get(s, "iov")))
			parse_iov(c, json_object_get(s, "iov"), where, st);
		get_num(c, s, where, "maxevents", 0, 1 << 20, true, false, 0, &d);
		st->maxevents = (int)d;
		get_num(c, s, where, "timeout_ms", -1, 86400000, true, false, -1, &d);
		st->timeout_ms = (int)d;
		if (c->failed)
			return -EINVAL;
		/* a socket close ends a connection, not a request; unknown syscalls are not
		 * replayed (docs/clone.md says which are) */
		if (st->sys == CS_NONE || (st->sys == CS_CLOSE && !st->file))
			continue;
		if ((is_read(st->sys) || is_write(st->sys)) && st->file && st->sys != CS_SENDFILE)
			st->sys = st->sys == CS_READ  ? CS_PREAD
				  : is_write(st->sys) ? CS_PWRITE
						      : CS_PREAD;
		if (st->sys == CS_EPOLL_WAIT || st->sys == CS_EPOLL_PWAIT || st->sys == CS_POLL ||
		    st->sys == CS_SELECT) {
			m->maxevents = st->maxevents ? st->maxevents : m->maxevents;
			m->wait_timeout_ms = st->timeout_ms;
		}
		m->nsteps++;
	}
	return 0;
}

static bool has_write(const struct clone_model *m)
{
	unsigned i;

	for (i = 0; i < m->nsteps; i++)
		if (is_write(m->steps[i].sys))
			return true;
	return false;
}

static bool has_read(const struct clone_model *m)
{
	unsigned i;

	for (i = 0; i < m->nsteps; i++)
		if (is_read(m->steps[i].sys) && !m->steps[i].file)
			return true;
	return false;
}

/* Without a cycle, or one missing the request's read or the answer's write: a read of the
 * request and a write of the answer, the least a server does. */
static void default_cycle(struct clone_model *m)
{
	struct clone_step *st;

	if (!has_read(m) && m->nsteps < CLONE_MAX_STEPS) {
		memmove(&m->steps[1], &m->steps[0], m->nsteps * sizeof(m->steps[0]));
		st = &m->steps[0];
		memset(st, 0, sizeof(*st));
		st->sys = CS_READ;
		st->bytes = 16384;
		m->nsteps++;
	}
	if (!has_write(m) && m->nsteps < CLONE_MAX_STEPS) {
		st = &m->steps[m->nsteps++];
		memset(st, 0, sizeof(*st));
		st->sys = CS_WRITE;
		st->timeout_ms = -1;
	}
}

static double syscall_per_request(const json_t *sp, const char *name)
{
	json_t *sys = sp ? json_object_get(sp, "syscalls") : NULL, *s;
	double n = 0;
	size_t i;

	json_array_foreach(sys, i, s)
	{
		const char *nm = json_string_value(json_object_get(s, "name"));

		if (nm && !strcmp(nm, name))
			n += json_number_value(json_object_get(s, "per_request"));
	}
	return n;
}

/* f as a use beside the requests (clone_file_use) when the cycle does no file work (nginx's
 * does: its files are served by it) and the network threads made its open (their profile
 * has as many; a background thread's file is its cluster's work). */
static void file_use(const json_t *f, const json_t *sp, struct clone_model *m)
{
	double opens = json_number_value(json_object_get(f, "opens_per_request")),
	       reads = json_number_value(json_object_get(f, "reads_per_request")),
	       rbytes = json_number_value(json_object_get(f, "read_bytes_per_request"));
	json_t *ops = json_object_get(f, "ops"), *o;
	struct clone_file_use *u;
	unsigned i;
	size_t k;

	for (i = 0; i < m->nsteps; i++)
		if (m->steps[i].file ||
		    (m->steps[i].sys >= CS_STAT && m->steps[i].sys <= CS_FDATASYNC))
			return;
	if (!(opens > 0) || !json_is_array(ops) || m->nfile_uses >= CLONE_MAX_FILE_USES)
		return;
	o = json_array_get(ops, 0);
	if (!json_is_string(o) || syscall_per_request(sp, json_string_value(o)) < 0.5 * opens)
		return;
	u = &m->file_use[m->nfile_uses];
	memset(u, 0, sizeof(*u));
	u->per_request = opens < 1000 ? opens : 1000;
	u->read_bytes = reads > 0 && rbytes > 0 ? (uint64_t)(rbytes / reads) : 4096;
	json_array_foreach(ops, k, o)
	{
		enum clone_sys cs = clone_sys__from_name(json_string_value(o));

		if (cs != CS_NONE && u->nops < CLONE_MAX_FILE_OPS)
			u->ops[u->nops++] = cs;
	}
	if (u->nops)
		m->nfile_uses++;
}

static int parse_files(struct ctx *c, const json_t *root, struct clone_model *m)
{
	json_t *files = json_object_get(root, "files"), *f;
	json_t *sp = json_object_get(root, "syscall_profile");
	size_t i;

	if (!files || json_is_null(files))
		return 0;
	if (!json_is_array(files))
		return fail(c, "files is not an array");
	json_array_foreach(files, i, f)
	{
		char where[32];
		uint64_t size;

		snprintf(where, sizeof(where), "files[%zu]", i);
		if (get_size(c, f, where, "size", false, &size))
			return -EINVAL;
		if (size > m->file_size)
			m->file_size = size;
		file_use(f, sp, m);
	}
	return 0;
}

/* The answer's iovec layout: the commonest the syscall had over all requests (its "iov"
 * shares), rather than the one step of the commonest cycle, which may be another kind of
 * answer (memcached's cycle can be a set's 8-byte STORED while 80 % of the answers are a
 * get's [21, 102, 5]). */
static int commonest_iov(struct ctx *c, const json_t *sp, struct clone_model *m)
{
	json_t *sys = sp ? json_object_get(sp, "syscalls") : NULL, *s, *l, *best;
	size_t i, k;
	unsigned n;

	if (!json_is_array(sys))
		return 0;
	for (n = 0; n < m->nsteps; n++) {
		struct clone_step *st = &m->steps[n];
		double share = -1;

		if (!is_write(st->sys) || st->sys == CS_SENDFILE || !st->niov)
			continue;
		best = NULL;
		json_array_foreach(sys, i, s)
		{
			const char *name = json_string_value(json_object_get(s, "name"));
			json_t *iov = json_object_get(s, "iov");

			if (!name || clone_sys__from_name(name) != st->sys || !json_is_array(iov))
				continue;
			json_array_foreach(iov, k, l)
			{
				double sh = json_number_value(json_object_get(l, "share"));

				if (json_is_array(json_object_get(l, "layout")) && sh > share) {
					share = sh;
					best = json_object_get(l, "layout");
				}
			}
		}
		if (best) {
			char where[64];
			struct clone_step tmp = *st;

			snprintf(where, sizeof(where), "syscall_profile.syscalls[%s]",
				 clone_sys__name(st->sys));
			tmp.niov = 0;
			if (parse_iov(c, best, where, &tmp))
				return -EINVAL;
			*st = tmp;
		}
	}
	return 0;
}

/* pread/pwrite offsets make the scratch file as large as the original's reads reached. */
static int parse_offsets(struct ctx *c, const json_t *sp, struct clone_model *m)
{
	json_t *sys = sp ? json_object_get(sp, "syscalls") : NULL, *s;
	size_t i;

	if (!sys || json_is_null(sys))
		return 0;
	if (!json_is_array(sys))
		return fail(c, "syscall_profile.syscalls is not an array");
	json_array_foreach(sys, i, s)
	{
		json_t *off = json_object_get(s, "offsets");
		char where[64];
		uint64_t max;

		snprintf(where, sizeof(where), "syscall_profile.syscalls[%zu].offsets", i);
		if (!json_is_object(off))
			continue;
		if (get_size(c, off, where, "max", false, &max))
			return -EINVAL;
		if (max > m->file_size)
			m->file_size = max;
	}
	return 0;
}

/* The socket calls made once a connection (clone_model.per_accept): each one's calls per
 * request over the accepts per request, where the cycle does not make it. At most
 * PER_ACCEPT_MAX a connection: the figure is derived, and a handful of accepts in a long
 * run would make it anything. */
#define PER_ACCEPT_MAX 64

static int parse_per_accept(struct ctx *c, const json_t *sp, struct clone_model *m)
{
	static const enum clone_sys once[] = {CS_SETSOCKOPT, CS_GETSOCKOPT, CS_GETPEERNAME,
					      CS_GETSOCKNAME};
	json_t *sys = sp ? json_object_get(sp, "syscalls") : NULL, *s;
	double pr[CS__COUNT] = {0}, accepts = 0, empty = 0, v;
	unsigned k, i;
	size_t j;

	if (!json_is_array(sys))
		return 0;
	json_array_foreach(sys, j, s)
	{
		const char *name = json_string_value(json_object_get(s, "name"));
		char where[64];

		if (!name)
			continue;
		snprintf(where, sizeof(where), "syscall_profile.syscalls[%zu]", j);
		if (get_num(c, s, where, "per_request", 0, 1e6, false, false, 0, &v))
			return -EINVAL;
		if (!strcmp(name, "accept") || !strcmp(name, "accept4")) {
			accepts += v;
			empty += json_number_value(
				json_object_get(json_object_get(s, "ret"), "EAGAIN"));
		} else if (clone_sys__from_name(name) != CS_NONE)
			pr[clone_sys__from_name(name)] += v;
	}
	/* An accept that finds none for two or three that find one: the listener drained.
	 * (A server that waits for its listener accepts once a wake-up: none finds none.) */
	m->accept_drain = accepts > 0 && empty >= 0.3 * (accepts - empty);
	/* Connections, not accept calls (one that found none is a call too), and also where
	 * the network threads do not accept (memcached's main thread does: its workers'
	 * getpeername had no accept to go with in their profile). */
	v = json_number_value(json_object_get(sp, "accepts_per_request"));
	if (v > 0)
		accepts = v;
	if (accepts <= 0)
		return 0;
	for (k = 0; k < sizeof(once) / sizeof(once[0]); k++) {
		bool in_cycle = false;

		for (i = 0; i < m->nsteps; i++)
			in_cycle |= m->steps[i].sys == once[k];
		if (in_cycle || pr[once[k]] <= 0)
			continue;
		v = pr[once[k]] / accepts;
		m->per_accept[once[k]] = v < PER_ACCEPT_MAX ? v : PER_ACCEPT_MAX;
	}
	/* epoll_ctl beyond the clone's own a connection (its add, and with EPOLLEXCLUSIVE the
	 * listener's removal and add every 16th accept): memcached's workers make 3.4 a
	 * connection (libevent changing what it waits for), where the clone made 1 (--check:
	 * 0.01 a request against 0.04). Made as changes (EPOLL_CTL_MOD) on the connection. Not
	 * where the clone changes its connections at each request itself (a shared epoll). */
	for (i = 0; i < m->nsteps && pr[CS_EPOLL_CTL] > 0; i++)
		if (m->steps[i].sys == CS_EPOLL_CTL)
			pr[CS_EPOLL_CTL] = 0;
	if (m->network_io == CLONE_IO_EPOLL && m->handoff != CLONE_HANDOFF_SHARED_EPOLL &&
	    pr[CS_EPOLL_CTL] > 0) {
		v = pr[CS_EPOLL_CTL] / accepts - 1 - (m->epoll_exclusive ? 2.0 / 16 : 0);
		if (v > 0)
			m->per_accept[CS_EPOLL_CTL] = v < PER_ACCEPT_MAX ? v : PER_ACCEPT_MAX;
	}
	return 0;
}

static const char *const io_names[] = {"epoll",	   "poll",	  "select",
				       "blocking", "nonblocking", "io_uring"};
static const char *const handoff_names[] = {"none",	 "queue", "shared-epoll",
					    "reuseport", "fork",  "thread"};
static const char *const per_conn_names[] = {"none", "thread", "process"};
static const char *const proto_names[] = {"command", "memcached", "redis", "http"};

static int parse_network_model(struct ctx *c, const json_t *root, struct clone_model *m)
{
	json_t *nm = json_object_get(root, "network_model");
	json_t *clusters = json_object_get(root, "clusters");
	json_t *roles, *cl;
	json_int_t mains[64], accs[64], nets[64], bgs[64], idles[64];
	unsigned nmain, nacc, nnet, nbgc, nidle, i, per;
	const char *s;
	int v = 0;
	bool pc;
	double d;

	if (!json_is_object(nm))
		return fail(c, "network_model is missing");
	if (!json_is_array(clusters))
		return fail(c, "clusters is missing");
	s = get_str(c, nm, "network_model", "network_io", true);
	if (!s || pick(c, "network_model.network_io", s, io_names, 6, &v))
		return -EINVAL;
	m->network_io = v;
	s = get_str(c, nm, "network_model", "accept_io", false);
	m->accept_io = m->network_io;
	if (s && pick(c, "network_model.accept_io", s, io_names, 6, &v))
		return -EINVAL;
	if (s)
		m->accept_io = v;
	if (parse_pool(c, nm, "accept_pool", &m->accept_pool, &pc))
		return -EINVAL;
	if (pc)
		return fail(c, "network_model.accept_pool is \"per-connection\": an acceptor "
			       "comes before its connections");
	if (parse_pool(c, nm, "network_pool", &m->network_pool, &pc))
		return -EINVAL;
	s = get_str(c, nm, "network_model", "per_connection", false);
	if (s && pick(c, "network_model.per_connection", s, per_conn_names, 3, &v))
		return -EINVAL;
	m->per_conn = s ? v : pc ? CLONE_PER_CONN_THREAD : CLONE_PER_CONN_NONE;
	if (pc && m->per_conn == CLONE_PER_CONN_NONE)
		return fail(c, "network_model.network_pool is \"per-connection\" but "
			       "per_connection is \"none\"");
	s = get_str(c, nm, "network_model", "handoff", false);
	if (s && pick(c, "network_model.handoff", s, handoff_names, 6, &v))
		return -EINVAL;
	m->handoff = s ? v : CLONE_HANDOFF_NONE;
	get_bool(c, nm, "network_model", "multi_process", &m->multi_process);
	get_bool(c, nm, "network_model", "reuseport", &m->reuseport);
	get_bool(c, nm, "network_model", "epoll_exclusive", &m->epoll_exclusive);
	get_uint(c, nm, "network_model", "listeners", 1, CLONE_MAX_POOL, false, 1, &m->listeners);
	if (m->handoff == CLONE_HANDOFF_REUSEPORT)
		m->reuseport = true;
	if (m->handoff == CLONE_HANDOFF_FORK)
		m->per_conn = CLONE_PER_CONN_PROCESS;
	if (m->handoff == CLONE_HANDOFF_THREAD && m->per_conn == CLONE_PER_CONN_NONE)
		m->per_conn = CLONE_PER_CONN_THREAD;
	if (m->network_io == CLONE_IO_URING)
		m->network_io = CLONE_IO_EPOLL; /* not reproduced: docs/clone.md */
	if (m->accept_io == CLONE_IO_URING)
		m->accept_io = CLONE_IO_EPOLL;

	/* nonblocking sockets: Ditto's key, else what the I/O model implies */
	m->nonblocking = m->network_io != CLONE_IO_BLOCKING;
	{
		json_t *nmc = json_object_get(root, "network_model_characteristics");

		if (json_is_object(nmc))
			get_bool(c, nmc, "network_model_characteristics", "nonblocking",
				 &m->nonblocking);
	}

	roles = json_object_get(nm, "roles");
	if (roles && !json_is_null(roles) && !json_is_object(roles))
		return fail(c, "network_model.roles is not an object");
	role_ids(c, roles, clusters, "main", mains, 64, &nmain);
	role_ids(c, roles, clusters, "acceptor", accs, 64, &nacc);
	role_ids(c, roles, clusters, "network", nets, 64, &nnet);
	role_ids(c, roles, clusters, "background", bgs, 64, &nbgc);
	role_ids(c, roles, clusters, "idle", idles, 64, &nidle);
	if (c->failed)
		return -EINVAL;
	m->main_accepts = nmain && ids_meet(mains, nmain, accs, nacc);
	m->network_accepts = nnet && ids_meet(nets, nnet, accs, nacc);
	m->main_network = nmain && ids_meet(mains, nmain, nets, nnet);
	if (m->handoff == CLONE_HANDOFF_NONE && m->per_conn == CLONE_PER_CONN_NONE)
		m->network_accepts = true;
	if (m->network_accepts && m->handoff == CLONE_HANDOFF_QUEUE)
		return fail(c, "network_model: handoff is \"queue\" but the network threads "
			       "accept themselves");

	if (nmain && (cl = cluster_by_id(clusters, mains[0])) &&
	    (s = get_str(c, cl, "clusters[]", "name", false)))
		copy_name(m->comm, s);
	if (nacc && (cl = cluster_by_id(clusters, accs[0])) &&
	    (s = get_str(c, cl, "clusters[]", "name", false)))
		copy_name(m->acceptor, s);
	if (nnet && (cl = cluster_by_id(clusters, nets[0])) &&
	    (s = get_str(c, cl, "clusters[]", "name", false)))
		copy_name(m->network, s);

	/* processes the network pool lives in */
	m->processes = 1;
	if (m->multi_process && m->per_conn == CLONE_PER_CONN_NONE) {
		per = 0;
		for (i = 0; i < nnet; i++) {
			cl = cluster_by_id(clusters, nets[i]);
			if (get_num(c, cl, "clusters[]", "processes", 0, CLONE_MAX_POOL, true,
				    false, 0, &d))
				return -EINVAL;
			per += (unsigned)d;
		}
		m->processes = per ? per : m->network_pool;
		if (m->processes > m->network_pool)
			m->processes = m->network_pool;
	}

	for (i = 0; i < nbgc + nidle; i++) {
		json_int_t id = i < nbgc ? bgs[i] : idles[i - nbgc];
		size_t k;
		json_t *x;

		json_array_foreach(clusters, k, x) if (x == cluster_by_id(clusters, id)) break;
		if (ids_meet(&id, 1, mains, nmain) || ids_meet(&id, 1, nets, nnet) ||
		    ids_meet(&id, 1, accs, nacc))
			continue;
		if (parse_bg(c, cluster_by_id(clusters, id), (unsigned)k, m))
			return -EINVAL;
	}
	return c->failed ? -EINVAL : 0;
}

static unsigned total_threads(const struct clone_model *m)
{
	unsigned n = 1, i;

	if (m->per_conn == CLONE_PER_CONN_NONE)
		n += m->network_pool;
	if (!m->network_accepts)
		n += m->accept_pool;
	for (i = 0; i < m->nbg; i++)
		n += m->bg[i].threads;
	return n;
}

/* syscall_profile.cpu_unrecorded: runs without the recorder at two loads, each with its
 * CPU and wake-ups per request; the line through them is the CPU per request the clone
 * aims at for its own wake-ups per request (none: cpu_line stays false). */
static int parse_cpu_line(struct ctx *c, const json_t *sp, struct clone_model *m)
{
	const json_t *a = sp ? json_object_get(sp, "cpu_unrecorded") : NULL;
	double cpu[2], wk[2];
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return fail(c, "syscall_profile.cpu_unrecorded is not an array");
	for (i = 0; i < json_array_size(a) && i < 2; i++) {
		const json_t *r = json_array_get(a, i);
		char where[48];

		snprintf(where, sizeof(where), "syscall_profile.cpu_unrecorded[%zu]", i);
		if (!json_is_object(r))
			return fail(c, "%s is not an object", where);
		if (get_num(c, r, where, "cpu_us_per_request", 0, 10e6, false, true, 0, &cpu[i]) ||
		    get_num(c, r, where, "wakeups_per_request", 0, 1e6, false, true, 0, &wk[i]))
			return -EINVAL;
	}
	/* two loads that woke the threads differently, the busier one cheaper per request */
	if (i < 2 || (wk[0] > wk[1] ? wk[0] - wk[1] : wk[1] - wk[0]) < 0.05)
		return 0;
	m->cpu_k_us = (cpu[0] - cpu[1]) / (wk[0] - wk[1]);
	if (m->cpu_k_us < 0)
		return 0;
	m->cpu_w_us = cpu[0] - m->cpu_k_us * wk[0];
	if (m->cpu_w_us < 0) { /* through the cheaper point, flatter */
		m->cpu_w_us = 0;
		m->cpu_k_us = cpu[wk[1] < wk[0]] / wk[wk[1] < wk[0]];
	}
	m->cpu_x_rate = wk[0];
	m->cpu_x_peak = wk[1];
	m->cpu_line = true;
	return 0;
}

/* The original's CPU per request over its skeleton's, both loaded at once (the model's
 * cpu_beside_skeleton; absent or null: 0, not measured). */
static int parse_cpu_ratio(struct ctx *c, const json_t *sp, struct clone_model *m)
{
	const json_t *b = sp ? json_object_get(sp, "cpu_beside_skeleton") : NULL;

	if (!b || json_is_null(b))
		return 0;
	if (!json_is_object(b))
		return fail(c, "syscall_profile.cpu_beside_skeleton is not an object");
	return get_num(c, b, "syscall_profile.cpu_beside_skeleton", "ratio", 0.01, 100, false, true,
		       0, &m->cpu_ratio);
}

static int parse_root(struct ctx *c, const json_t *root, struct clone_model *m)
{
	const char *schema, *s;
	json_t *target, *load, *req, *sp, *listen;
	double version, cpu;
	char e[40 * 4 + 1];
	int v = 0;

	if (!json_is_object(root))
		return fail(c, "the model is not a JSON object");
	schema = get_str(c, root, "model", "schema", true);
	if (!schema)
		return -EINVAL;
	if (strcmp(schema, "srvscope-model"))
		return fail(c, "schema is '%s', not 'srvscope-model'", shown(schema, e, sizeof(e)));
	if (get_num(c, root, "model", "version", 1, 1e9, true, true, 0, &version))
		return -EINVAL;
	if (version > CLONE_MODEL_VERSION) {
		fail(c,
		     "model version %g is newer than this srvscope reads (%d): use a newer "
		     "srvscope",
		     version, CLONE_MODEL_VERSION);
		return -EPROTONOSUPPORT;
	}

	target = json_object_get(root, "target");
	if (target && !json_is_null(target) && !json_is_object(target))
		return fail(c, "target is not an object");
	s = get_str(c, target, "target", "comm", false);
	copy_name(m->comm, s ? s : "clone");
	snprintf(m->listen_addr, sizeof(m->listen_addr), "127.0.0.1");
	listen = target ? json_object_get(target, "listen") : NULL;
	if (json_is_array(listen) && json_array_size(listen)) {
		json_t *l = json_array_get(listen, 0);
		unsigned port;

		s = get_str(c, l, "target.listen[0]", "addr", false);
		if (s && strlen(s) < sizeof(m->listen_addr))
			snprintf(m->listen_addr, sizeof(m->listen_addr), "%s", s);
		get_uint(c, l, "target.listen[0]", "port", 0, 65535, false, 0, &port);
		m->listen_port = port;
	}

	load = json_object_get(root, "load");
	s = json_is_object(load) ? get_str(c, load, "load", "protocol", false) : NULL;
	m->proto = CLONE_RAW;
	if (s && pick(c, "load.protocol", s, proto_names, 4, &v))
		return -EINVAL;
	if (s)
		m->proto = v;

	c->runs = json_object_get(root, "runs");
	if (parse_network_model(c, root, m))
		return -EINVAL;
	if (!m->acceptor[0])
		memcpy(m->acceptor, m->comm, CLONE_NAME);
	if (!m->network[0])
		memcpy(m->network, m->comm, CLONE_NAME);

	req = json_object_get(root, "request");
	if (req && !json_is_null(req) && !json_is_object(req))
		return fail(c, "request is not an object");
	if (parse_dist(c, req ? json_object_get(req, "request_bytes") : NULL,
		       "request.request_bytes", &m->request) ||
	    parse_dist(c, req ? json_object_get(req, "response_bytes") : NULL,
		       "request.response_bytes", &m->response))
		return -EINVAL;
	if (m->proto == CLONE_RAW && !m->request.p50 && !m->request.mean && !m->request.nhist)
		return fail(c, "request.request_bytes is missing: a model of a protocol the clone "
			       "does not speak needs the request size");

	sp = json_object_get(root, "syscall_profile");
	if (sp && !json_is_null(sp) && !json_is_object(sp))
		return fail(c, "syscall_profile is not an object");
	/* The figure measured without the recorder, when the model has it: the recorded one
	 * carries the probes' cost (a third more for memcached), which a clone would burn. */
	if (get_num(c, sp, "syscall_profile", "on_cpu_us_per_request", 0, 10e6, false, false, 0,
		    &m->on_cpu_us_per_request) ||
	    get_num(c, sp, "syscall_profile", "on_cpu_us_per_request_unrecorded", 0, 10e6, false,
		    false, -1, &cpu))
		return -EINVAL;
	if (cpu >= 0) {
		m->on_cpu_us_per_request = cpu;
		m->cpu_unrecorded = true;
	}
	if (parse_cpu_line(c, sp, m) || parse_cpu_ratio(c, sp, m))
		return -EINVAL;
	m->accept_timeout_ms = -1;
	m->wait_timeout_ms = -1;
	m->maxevents = 32;
	if (parse_cycle(c, sp, m) || commonest_iov(c, sp, m) || parse_files(c, root, m) ||
	    parse_offsets(c, sp, m))
		return -EINVAL;
	default_cycle(m);
	if (parse_per_accept(c, sp, m))
		return -EINVAL;
	for (v = 0; v < (int)m->nsteps; v++) {
		const struct clone_step *st = &m->steps[v];
		unsigned k;

		if (!is_write(st->sys))
			continue;
		if (!st->niov)
			m->answer_bytes += st->bytes;
		for (k = 0; k < st->niov; k++)
			m->answer_bytes += st->iov[k];
	}
	if (total_threads(m) > CLONE_MAX_THREADS)
		return fail(c, "the model asks for %u threads: at most %d", total_threads(m),
			    CLONE_MAX_THREADS);
	return c->failed ? -EINVAL : 0;
}

int clone_model__parse(const char *text, size_t len, struct clone_model *m, char *err,
		       size_t errlen)
{
	struct ctx c = {.err = err, .errlen = errlen};
	json_error_t je;
	json_t *root;
	int ret;

	memset(m, 0, sizeof(*m));
	if (errlen)
		err[0] = 0;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		fail(&c, "not JSON (line %d, column %d: %s)", je.line, je.column, je.text);
		return -EINVAL;
	}
	ret = parse_root(&c, root, m);
	json_decref(root);
	if (!ret && c.failed)
		ret = -EINVAL;
	return ret;
}

int clone_model__load(const char *path, struct clone_model *m, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd, ret;

	fd = safefile__open_read(path, &st);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path, safefile__strerror(fd));
		return fd;
	}
	if (st.st_size > 64 << 20) {
		close(fd);
		snprintf(err, errlen, "'%s' is %lld bytes: a model is smaller than 64 MB", path,
			 (long long)st.st_size);
		return -EFBIG;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, st.st_size - got)) > 0)
		got += n;
	close(fd);
	ret = clone_model__parse(buf, got, m, err, errlen);
	free(buf);
	return ret;
}

uint64_t clone_dist__draw(const struct clone_dist *d, uint64_t prefer, uint64_t *seed)
{
	uint64_t total = 0, r, lo = 0, hi;
	unsigned i;

	for (i = 0; i < d->nhist; i++)
		total += d->count[i];
	if (!total || (d->max && d->p50 == d->max))
		return d->p50 ? d->p50 : (uint64_t)(d->mean + 0.5);
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	r = (*seed >> 11) % total;
	for (i = 0; i < d->nhist; i++) {
		if (r < d->count[i])
			break;
		r -= d->count[i];
		lo = d->le[i];
	}
	hi = d->le[i];
	if (d->max && hi > d->max)
		hi = d->max;
	if (hi <= lo)
		return hi;
	if (prefer > lo && prefer <= hi)
		return prefer;
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return lo + 1 + (*seed >> 11) % (hi - lo);
}
