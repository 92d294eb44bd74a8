/* serve's runtime: the HTTP daemon (libmicrohttpd, a thread per connection, capped) is
 * started first, so a busy port is reported before any BPF is loaded; then the recorder
 * runs in this thread, its sink feeding the aggregate, until a signal ends it; then the
 * daemon stops (requests waiting for a profile are answered 503 at once). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "record/record.h"
#include "serve/profile.h"
#include "symbol/symbolizer.h"
#include "serve/serve.h"
#include "trace/trace.h"
#include "util/util.h"

/* Request headers and the request line must fit in this: bigger ones get 431. */
#define CONN_MEMORY	(32 * 1024)
#define CONN_TIMEOUT	10 /* seconds a connection may sit idle */
#define THREAD_STACK	(1024 * 1024)
#define DEFAULT_SECONDS 30 /* as Go's /debug/pprof/profile */

struct server {
	const struct serve_opts *o;
	struct serve_agg *agg;
	struct MHD_Daemon *d;
	volatile int stopping;
	int profiles;		  /* profile and /stacks requests in flight (atomic) */
	pthread_mutex_t sym_lock; /* symbolizer and sampler caches are process-wide */
	uint64_t start_realtime_ns;
	/* Answers by status class, and those refused before any work (atomic). */
	uint64_t answered[6];
};

static void sink_event(void *ctx, const struct rec *r)
{
	serve_agg__event(ctx, r);
}

static void sink_stack(void *ctx, uint64_t id, uint32_t flags, const uint64_t *ips, uint32_t nr)
{
	serve_agg__stack(ctx, id, flags, ips, nr);
}

static void sink_name(void *ctx, uint32_t tid, uint32_t pid, const char *comm)
{
	serve_agg__name(ctx, tid, pid, comm);
}

static void sink_lost(void *ctx, const void *payload, size_t len)
{
	serve_agg__lost(ctx, payload, len);
}

/* ---- answers ---- */

static enum MHD_Result reply(struct server *s, struct MHD_Connection *c, unsigned int code,
			     const char *type, void *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (code == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	__atomic_fetch_add(&s->answered[code / 100 < 6 ? code / 100 : 5], 1, __ATOMIC_RELAXED);
	return ret;
}

/* An error: one line of text saying what to do. */
static enum MHD_Result reply_error(struct server *s, struct MHD_Connection *c, unsigned int code,
				   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result reply_error(struct server *s, struct MHD_Connection *c, unsigned int code,
				   const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return reply(s, c, code, "text/plain; charset=utf-8", msg, (size_t)n);
}

static void self_metrics(struct server *s, FILE *f)
{
	static const char *const classes[] = {"", "1xx", "2xx", "3xx", "4xx", "5xx"};
	struct rusage ru;
	long rss = 0, vsz = 0;
	FILE *st = fopen("/proc/self/statm", "r");
	size_t i;

	if (st) {
		if (fscanf(st, "%ld %ld", &vsz, &rss) != 2)
			vsz = rss = 0;
		fclose(st);
	}
	getrusage(RUSAGE_SELF, &ru);
	fprintf(f,
		"# HELP process_cpu_seconds_total CPU time the agent used (user and system).\n"
		"# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.6f\n",
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	fprintf(f,
		"# HELP process_resident_memory_bytes The agent's resident memory.\n"
		"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %ld\n",
		rss * sysconf(_SC_PAGESIZE));
	fprintf(f,
		"# HELP process_virtual_memory_bytes The agent's virtual memory.\n"
		"# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %ld\n",
		vsz * sysconf(_SC_PAGESIZE));
	fprintf(f,
		"# HELP process_start_time_seconds When the agent started (Unix time).\n"
		"# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n",
		s->start_realtime_ns / 1e9);
	fprintf(f, "# HELP srvscope_http_responses_total HTTP answers by status class.\n"
		   "# TYPE srvscope_http_responses_total counter\n");
	for (i = 1; i < ARRAY_SIZE(classes); i++)
		fprintf(f, "srvscope_http_responses_total{code=\"%s\"} %llu\n", classes[i],
			(unsigned long long)__atomic_load_n(&s->answered[i], __ATOMIC_RELAXED));
}

static enum MHD_Result get_metrics(struct server *s, struct MHD_Connection *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	serve_agg__metrics(s->agg, f);
	self_metrics(s, f);
	fclose(f);
	return reply(s, c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf, len);
}

/* Whether pid is served: named by -p, or a descendant of one (any process with -a). */
static bool served(const struct serve_opts *o, pid_t pid)
{
	int depth;

	if (o->all)
		return pid > 0;
	for (depth = 0; pid > 1 && depth < 64; depth++) {
		char path[64], buf[512], *p;
		size_t i;

		for (i = 0; i < o->nr_pids; i++)
			if (o->pids[i] == pid)
				return true;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			return false;
		/* The parent is the second field after the name, which ends at the last ')'. */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %*c %d", &pid) != 1)
			return false;
	}
	return false;
}

/* A decimal in [min, max], nothing else (no sign, exponent, space or suffix). */
static bool parse_arg(const char *s, long min, long max, long *out)
{
	long v = 0;

	if (!s || !*s || strlen(s) > 9)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* ?pid=: absent (0), or a served process. Replies and returns false otherwise. */
static bool pid_arg(struct server *s, struct MHD_Connection *c, pid_t *pid, enum MHD_Result *ret)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	long p;

	*pid = 0;
	if (!v)
		return true;
	if (!parse_arg(v, 1, INT_MAX, &p)) {
		*ret = reply_error(s, c, MHD_HTTP_BAD_REQUEST, "pid must be a process id\n");
		return false;
	}
	if (!served(s->o, (pid_t)p)) {
		*ret = reply_error(s, c, MHD_HTTP_FORBIDDEN,
				   "process %ld is not served: serve watches only the processes "
				   "given with -p and their descendants\n",
				   p);
		return false;
	}
	*pid = (pid_t)p;
	return true;
}

static bool take_slot(struct server *s)
{
	if (__atomic_add_fetch(&s->profiles, 1, __ATOMIC_SEQ_CST) > (int)s->o->max_profiles) {
		__atomic_sub_fetch(&s->profiles, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	return true;
}

static void give_slot(struct server *s)
{
	__atomic_sub_fetch(&s->profiles, 1, __ATOMIC_SEQ_CST);
}

static enum MHD_Result get_profile(struct server *s, struct MHD_Connection *c,
				   enum serve_window_kind kind)
{
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	long seconds = DEFAULT_SECONDS;
	struct serve_window *w;
	enum MHD_Result ret;
	uint64_t start, end;
	uint8_t *buf;
	size_t len;
	pid_t pid;
	int err;

	if (kind == SERVE_WINDOW_ON && !s->o->on_cpu_hz)
		return reply_error(s, c, MHD_HTTP_NOT_FOUND,
				   "no on-CPU samples: start serve with --on-cpu\n");
	if (sec && !parse_arg(sec, 1, s->o->max_seconds, &seconds))
		return reply_error(s, c, MHD_HTTP_BAD_REQUEST,
				   "seconds must be a whole number from 1 to %u\n",
				   s->o->max_seconds);
	if (seconds > (long)s->o->max_seconds)
		seconds = s->o->max_seconds; /* the default, when the limit is lower */
	if (!pid_arg(s, c, &pid, &ret))
		return ret;
	if (!take_slot(s))
		return reply_error(s, c, MHD_HTTP_TOO_MANY_REQUESTS,
				   "%u profiles are being taken already: retry later\n",
				   s->o->max_profiles);
	w = serve_agg__window_open(s->agg, kind);
	start = now_ns();
	end = start + seconds * 1000000000ull;
	while (!s->stopping && now_ns() < end) {
		uint64_t left = end - now_ns();
		struct timespec ts = {0, left > 100000000 ? 100000000 : (long)left};

		nanosleep(&ts, NULL);
	}
	serve_agg__window_close(s->agg, w);
	if (s->stopping) {
		serve_window__free(w);
		give_slot(s);
		return reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "srvscope serve is stopping\n");
	}
	pthread_mutex_lock(&s->sym_lock);
	err = serve_profile__pprof(s->agg, w, s->o->on_cpu_hz, pid,
				   pid		   ? pid
				   : s->o->nr_pids ? s->o->pids[0]
						   : 0,
				   now_ns() - start, &buf, &len);
	pthread_mutex_unlock(&s->sym_lock);
	serve_window__free(w);
	give_slot(s);
	if (err)
		return reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot encode: %s\n",
				   strerror(-err));
	return reply(s, c, MHD_HTTP_OK, "application/octet-stream", buf, len);
}

static enum MHD_Result get_stacks(struct server *s, struct MHD_Connection *c)
{
	enum MHD_Result ret;
	char *buf = NULL;
	size_t len = 0;
	pid_t pid;
	int err;

	if (!pid_arg(s, c, &pid, &ret))
		return ret;
	if (!pid && s->o->nr_pids == 1)
		pid = s->o->pids[0];
	if (!pid)
		return reply_error(s, c, MHD_HTTP_BAD_REQUEST,
				   "say which process: /stacks?pid=PID\n");
	if (!take_slot(s))
		return reply_error(s, c, MHD_HTTP_TOO_MANY_REQUESTS,
				   "%u profiles are being taken already: retry later\n",
				   s->o->max_profiles);
	pthread_mutex_lock(&s->sym_lock);
	err = serve_profile__stacks_json(pid, &buf, &len);
	pthread_mutex_unlock(&s->sym_lock);
	give_slot(s);
	if (err == -ESRCH)
		return reply_error(s, c, MHD_HTTP_NOT_FOUND, "cannot take the stacks of %d\n",
				   (int)pid);
	if (err)
		return reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot take stacks: %s\n",
				   strerror(-err));
	return reply(s, c, MHD_HTTP_OK, "application/json", buf, len);
}

static const char index_text[] =
	"srvscope serve\n"
	"\n"
	"/metrics                         Prometheus metrics\n"
	"/debug/pprof/offcpu?seconds=N    off-CPU profile (pprof) over the next N seconds\n"
	"/debug/pprof/profile?seconds=N   on-CPU profile (pprof; serve --on-cpu)\n"
	"/stacks?pid=PID                  the stacks of every thread now (JSON)\n"
	"\n"
	"The profiles take &pid=PID too. docs/serve.md says more.\n";

/* Whether the request carries "Authorization: Bearer TOKEN", compared in constant time. */
static bool authorized(const struct server *s, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	size_t n, i;
	unsigned char diff = 0;

	if (!s->o->token)
		return true;
	if (!h || strncmp(h, "Bearer ", 7))
		return false;
	h += 7;
	n = strlen(s->o->token);
	if (strlen(h) != n)
		return false;
	for (i = 0; i < n; i++)
		diff |= (unsigned char)h[i] ^ (unsigned char)s->o->token[i];
	return !diff;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req)
{
	static int first;
	struct server *s = cls;

	if (!*req) { /* the headers are in; the body, if any, comes next */
		*req = &first;
		return MHD_YES;
	}
	if (*upload_data_size) { /* read-only: a body is read and thrown away */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_error(s, c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "srvscope serve is read-only: use GET\n");
	if (!authorized(s, c))
		return reply_error(s, c, MHD_HTTP_UNAUTHORIZED,
				   "send the token: Authorization: Bearer TOKEN\n");
	if (!strcmp(url, "/metrics"))
		return get_metrics(s, c);
	if (!strcmp(url, "/debug/pprof/offcpu"))
		return get_profile(s, c, SERVE_WINDOW_OFF);
	if (!strcmp(url, "/debug/pprof/profile"))
		return get_profile(s, c, SERVE_WINDOW_ON);
	if (!strcmp(url, "/stacks"))
		return get_stacks(s, c);
	if (!strcmp(url, "/") || !strcmp(url, "/debug/pprof/"))
		return reply(s, c, MHD_HTTP_OK, "text/plain; charset=utf-8", xstrdup(index_text),
			     sizeof(index_text) - 1);
	return reply_error(s, c, MHD_HTTP_NOT_FOUND, "no such page: see /\n");
}

/* "ADDR:PORT" or "[ADDR6]:PORT", numeric only (no resolver: the static binary has none).
 * 0 or -1 after a message. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(spec, ':'), *host = spec;
	char buf[INET6_ADDRSTRLEN + 1];
	size_t hl;
	long port;

	if (!colon || !parse_arg(colon + 1, 1, 65535, &port))
		return error("invalid value '%s' for --listen: expected ADDR:PORT, e.g. "
			     "127.0.0.1:6061 or [::1]:6061",
			     spec);
	hl = colon - spec;
	if (hl >= 2 && spec[0] == '[' && spec[hl - 1] == ']') {
		host++;
		hl -= 2;
	}
	memset(ss, 0, sizeof(*ss));
	if (hl && hl < sizeof(buf)) {
		memcpy(buf, host, hl);
		buf[hl] = '\0';
		if (inet_pton(AF_INET, buf, &in4->sin_addr) == 1) {
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			*v6 = false;
			return 0;
		}
		if (inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*v6 = true;
			return 0;
		}
	}
	return error("invalid value '%s' for --listen: the address must be a numeric IPv4 or "
		     "[IPv6] address",
		     spec);
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	const struct server *s = cls;

	if (s->o->verbose) {
		fputs("srvscope: serve: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

/* Until the recorder installs its own (after its start: with -a, seconds of snapshots), a
 * stop signal tells it to end as soon as it runs, instead of killing the agent. */
static void on_early_stop(int sig)
{
	record__stop();
}

/* The components of on-CPU samples, as 'srvscope cpu' attributes self time: the sampled
 * (innermost) kernel function's component in the built-in table. */
struct components {
	struct comp_table *table;
	struct ksyms *ksyms;
	const char **names;
	size_t nr;
};

static int classify_stack(void *arg, const uint64_t *ips, unsigned int nr)
{
	const struct components *c = arg;
	const char *name;

	if (!nr || !c->ksyms)
		return -1;
	name = ksyms__resolve(c->ksyms, ips[0], NULL, NULL);
	return name ? comp_table__classify(c->table, name, true) : -1;
}

static void components_init(struct components *c, struct serve_agg *agg, unsigned int hz)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!hz)
		return;
	c->ksyms = ksyms__load();
	if (!c->ksyms) {
		warning("cannot read /proc/kallsyms: no on-CPU time by component in /metrics");
		return;
	}
	c->table = comp_table__new();
	c->nr = comp_table__nr(c->table);
	c->names = xcalloc(c->nr ? c->nr : 1, sizeof(*c->names));
	for (i = 0; i < c->nr; i++)
		c->names[i] = comp_table__name(c->table, (int)i);
	serve_agg__set_components(agg, classify_stack, c, c->names, c->nr, 1.0 / hz);
}

static void components_free(struct components *c)
{
	free(c->names);
	comp_table__delete(c->table);
	ksyms__delete(c->ksyms);
}

int serve__run(const struct serve_opts *o)
{
	struct sigaction sa = {.sa_handler = on_early_stop};
	struct record_opts ro = {0};
	struct trace_sink sink = {sink_event, sink_stack, sink_name, sink_lost, NULL};
	struct sockaddr_storage ss;
	struct server s = {.o = o};
	struct components comps = {0};
	bool v6 = false;
	int status = -1, err;

	size_t i;

	if (parse_listen(o->listen, &ss, &v6))
		return -EINVAL;
	/* Before the listener says "serving": the recorder would only refuse them later. */
	for (i = 0; i < o->nr_pids; i++)
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			error("no such process %d: check the pid (ps -e, pgrep)", (int)o->pids[i]);
			return -ESRCH;
		}
	/* A thread per connection: without this, a burst of scrapes leaves glibc an arena per
	 * thread, megabytes that stay. Two arenas serve an agent that mostly waits. */
	mallopt(M_ARENA_MAX, 2);
	s.agg = serve_agg__new(&o->limits);
	components_init(&comps, s.agg, o->on_cpu_hz);
	s.start_realtime_ns = now_realtime_ns();
	pthread_mutex_init(&s.sym_lock, NULL);
	sink.ctx = s.agg;
	s.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
				       MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0),
			       0, NULL, NULL, handle, &s, MHD_OPTION_SOCK_ADDR,
			       (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
			       (unsigned int)o->max_connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			       (size_t)CONN_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT,
			       (unsigned int)CONN_TIMEOUT, MHD_OPTION_THREAD_STACK_SIZE,
			       (size_t)THREAD_STACK, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, &s,
			       MHD_OPTION_END);
	if (!s.d) {
		err = errno ? -errno : -EADDRINUSE;
		error("cannot listen on %s: %s (is another server on that port?)", o->listen,
		      strerror(-err));
		goto out;
	}
	notice("serving http://%s/ (metrics, pprof, stacks)", o->listen);
	ro.pids = o->pids;
	ro.nr_pids = o->nr_pids;
	ro.all = o->all;
	ro.output = "(serve)";
	ro.buffer_size = o->buffer_size;
	ro.on_cpu_hz = o->on_cpu_hz;
	ro.stack_refresh_ms = 1000;
	ro.ustack_dump_bytes = o->ustack_dump_bytes;
	ro.progress = 0;
	ro.verbose = o->verbose;
	ro.cmdline = "srvscope serve";
	ro.sink = &sink;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	err = record__run(&ro, &status);
	s.stopping = 1;
	MHD_stop_daemon(s.d);
	if (!err)
		notice("serve stopped");
out:
	pthread_mutex_destroy(&s.sym_lock);
	serve_agg__delete(s.agg);
	components_free(&comps);
	return err;
}
