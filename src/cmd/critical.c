/* srvscope critical: the critical path of one thread over a window, across the threads
 * that woke it and, with one trace per host recorded with --net, across hosts. Text, JSON
 * (docs/critical.md) or a Perfetto timeline with the path as its own track. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "critical/critical.h"
#include "output/critical_chrome.h"
#include "output/json_writer.h"
#include "trace/report_cmdline.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope critical TRACE... --tid T [--from S --to E | --syscall-span[=N]]\n"
	"                         [--host H] [--format=text|json|chrome]\n"
	"\n"
	"The critical path of thread T: what it was doing, and for each of its waits, the\n"
	"chain of work that ended it (the timer, the disk, the thread that woke it and what\n"
	"that thread waited for in turn, the network and the host at the other end).\n"
	"Give one trace per host (each recorded with 'record --net'): their clocks are\n"
	"synchronised from the TCP packets they exchanged, and the path crosses hosts.\n"
	"\n"
	"  -t, --tid T          the thread to follow (required)\n"
	"      --host H         the trace (1, 2, ...) T is in; default: the first that has it\n"
	"      --from S         start of the window, seconds after the first trace's start\n"
	"      --to E           end of the window (default: the whole life of T)\n"
	"      --syscall-span[=N]  the window is a request of T: from a write or send on a\n"
	"                       socket to the end of the read that got its answer (needs\n"
	"                       'record --syscalls'); the Nth one, default the longest\n"
	"  -f, --format FMT     text (default), json, or chrome (a Perfetto timeline)\n";

enum { OPT_FROM = 256, OPT_TO, OPT_HOST, OPT_SPAN };

struct opts {
	long tid, host, span;
	bool has_from, has_to, has_span;
	double from, to;
	const char *format;
};

static const char *thread_name(const struct crit_graph *g, size_t host, uint32_t tid)
{
	const struct trace_thread *th = trace__thread(g->hosts[host].t, tid);

	return th && th->comm[0] ? th->comm : "?";
}

/* ---- summary ---- */

struct share {
	size_t host;
	uint32_t tid;
	uint64_t ns;
};

static void add_share(struct share **v, size_t *nr, size_t *cap, size_t host, uint32_t tid,
		      uint64_t ns)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		if ((*v)[i].host == host && (*v)[i].tid == tid) {
			(*v)[i].ns += ns;
			return;
		}
	xgrow((void **)v, cap, *nr + 1, sizeof(**v));
	(*v)[(*nr)++] = (struct share){host, tid, ns};
}

static int cmp_share(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

struct summary {
	uint64_t by_edge[CRIT_EDGES];
	struct share *threads, *hosts;
	size_t nr_threads, nr_hosts, cap_t, cap_h;
};

static void summarize(const struct crit_path *p, struct summary *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < p->nr; i++) {
		const struct crit_segment *seg = &p->segs[i];
		uint64_t ns = seg->end_ns - seg->start_ns;

		s->by_edge[seg->edge] += ns;
		add_share(&s->threads, &s->nr_threads, &s->cap_t, seg->host, seg->tid, ns);
		add_share(&s->hosts, &s->nr_hosts, &s->cap_h, seg->host, 0, ns);
	}
	if (s->nr_threads)
		qsort(s->threads, s->nr_threads, sizeof(*s->threads), cmp_share);
	if (s->nr_hosts)
		qsort(s->hosts, s->nr_hosts, sizeof(*s->hosts), cmp_share);
}

static void summary__free(struct summary *s)
{
	free(s->threads);
	free(s->hosts);
}

/* ---- text ---- */

static void print_text(const struct crit_graph *g, const struct crit_path *p, size_t host,
		       uint32_t tid)
{
	double total = (double)(p->end_ns - p->start_ns), base = (double)g->hosts[0].t->first_ns;
	struct summary s;
	size_t i;

	printf("Critical path of thread %s %u on %s, %.6f s to %.6f s (%.3f ms), %u hops\n",
	       thread_name(g, host, tid), tid, g->hosts[host].name, (p->start_ns - base) / 1e9,
	       (p->end_ns - base) / 1e9, total / 1e6, p->hops);
	if (g->nr > 1) {
		for (i = 0; i < g->nr; i++) {
			const struct crit_host *h = &g->hosts[i];

			if (h->parent < 0)
				printf("  host %zu %s: the reference clock\n", i + 1, h->name);
			else
				printf("  host %zu %s: clock %s from %u packets with host %d "
				       "(offset %+.6f s, drift %+.3f ppm, within %.1f us)\n",
				       i + 1, h->name, crit_sync__quality_name(h->sync),
				       h->exchanged, h->parent + 1, h->clock.offset / 1e9,
				       h->clock.drift * 1e6, h->accuracy_ns / 1e3);
		}
	}
	printf("\n%12s %13s  %-4s %-22s %-12s %s\n", "Start (ms)", "Duration (ms)", "Host",
	       "Thread", "State", "Waited for");
	for (i = 0; i < p->nr; i++) {
		const struct crit_segment *seg = &p->segs[i];
		char th[64], what[CRIT_WHAT_SIZE];

		snprintf(th, sizeof(th), "%s %u", thread_name(g, seg->host, seg->tid), seg->tid);
		/* Integer formatting: a path over a long trace has millions of lines, and %f
		 * costs most of the time printing them. */
		printf("%8" PRId64 ".%03d %9" PRId64 ".%03d  %-4u %-22s %-12s %s\n",
		       (seg->start_ns - p->start_ns) / 1000000,
		       (int)((seg->start_ns - p->start_ns) / 1000 % 1000),
		       (seg->end_ns - seg->start_ns) / 1000000,
		       (int)((seg->end_ns - seg->start_ns) / 1000 % 1000), seg->host + 1, th,
		       crit_edge__name(seg->edge), crit_segment__what(g, seg, what, sizeof(what)));
	}
	summarize(p, &s);
	printf("\nShare of the path by state:\n");
	for (i = 0; i < CRIT_EDGES; i++)
		if (s.by_edge[i])
			printf("  %-13s %10.3f ms %6.1f %%\n", crit_edge__name(i),
			       s.by_edge[i] / 1e6, 100.0 * s.by_edge[i] / total);
	printf("By thread:\n");
	for (i = 0; i < s.nr_threads; i++)
		printf("  %-13s %10.3f ms %6.1f %%  (host %zu)\n",
		       thread_name(g, s.threads[i].host, s.threads[i].tid), s.threads[i].ns / 1e6,
		       100.0 * s.threads[i].ns / total, s.threads[i].host + 1);
	if (g->nr > 1) {
		printf("By host:\n");
		for (i = 0; i < s.nr_hosts; i++)
			printf("  %-30s %10.3f ms %6.1f %%\n", g->hosts[s.hosts[i].host].name,
			       s.hosts[i].ns / 1e6, 100.0 * s.hosts[i].ns / total);
	}
	summary__free(&s);
}

/* ---- JSON (streamed: a path over a long trace has millions of segments) ---- */

static void host_json(struct json_writer *w, const struct crit_graph *g, size_t i)
{
	const struct crit_host *h = &g->hosts[i];

	json_writer__begin_object(w, true);
	json_writer__kv_int(w, "host", i + 1);
	json_writer__kv_string(w, "name", h->name);
	json_writer__kv_string(w, "id", h->id[0] ? h->id : NULL);
	json_writer__kv_uint(w, "start_ns", h->t->hdr.start_ns);
	json_writer__key(w, "clock");
	json_writer__begin_object(w, true);
	json_writer__kv_string(w, "quality",
			       h->parent < 0 ? "reference" : crit_sync__quality_name(h->sync));
	if (h->parent < 0)
		json_writer__kv_null(w, "parent");
	else
		json_writer__kv_int(w, "parent", h->parent + 1);
	json_writer__kv_int(w, "packets", h->exchanged);
	json_writer__kv_int(w, "offset_ns", h->clock.offset);
	json_writer__kv_int(w, "drift_ppb", llround(h->clock.drift * 1e9));
	json_writer__kv_uint(w, "origin_ns", h->clock.x0);
	json_writer__kv_int(w, "accuracy_ns", llround(h->accuracy_ns));
	json_writer__end_object(w);
	json_writer__end_object(w);
}

static void shares_json(struct json_writer *w, const struct crit_graph *g, const char *key,
			const struct share *v, size_t nr, bool threads)
{
	size_t i;

	json_writer__key(w, key);
	json_writer__begin_array(w, false);
	for (i = 0; i < nr; i++) {
		json_writer__begin_object(w, true);
		json_writer__kv_int(w, "host", v[i].host + 1);
		if (threads) {
			json_writer__kv_int(w, "tid", v[i].tid);
			json_writer__kv_string(w, "comm", thread_name(g, v[i].host, v[i].tid));
		}
		json_writer__kv_uint(w, "ns", v[i].ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

static int print_json(const struct crit_graph *g, const struct crit_path *p, size_t host,
		      uint32_t tid)
{
	struct json_writer *w = json_writer__new(stdout);
	struct summary s;
	size_t i, events = 0;
	char what[CRIT_WHAT_SIZE];

	if (!w)
		return -ENOMEM;
	json_writer__begin_object(w, false);
	json_writer__kv_int(w, "version", 1);
	json_writer__kv_int(w, "host", host + 1);
	json_writer__kv_int(w, "tid", tid);
	json_writer__kv_string(w, "comm", thread_name(g, host, tid));
	json_writer__kv_int(w, "start_ns", p->start_ns);
	json_writer__kv_int(w, "end_ns", p->end_ns);
	json_writer__kv_int(w, "hops", p->hops);
	for (i = 0; i < g->nr; i++)
		events += g->hosts[i].t->nr_ev;
	json_writer__kv_uint(w, "events", events);
	json_writer__key(w, "hosts");
	json_writer__begin_array(w, false);
	for (i = 0; i < g->nr; i++)
		host_json(w, g, i);
	json_writer__end_array(w);
	json_writer__key(w, "segments");
	json_writer__begin_array(w, false);
	for (i = 0; i < p->nr; i++) {
		const struct crit_segment *seg = &p->segs[i];

		json_writer__begin_object(w, true);
		json_writer__kv_int(w, "start_ns", seg->start_ns);
		json_writer__kv_int(w, "end_ns", seg->end_ns);
		json_writer__kv_int(w, "host", seg->host + 1);
		json_writer__kv_int(w, "tid", seg->tid);
		json_writer__kv_int(w, "pid", seg->pid);
		json_writer__kv_string(w, "comm", thread_name(g, seg->host, seg->tid));
		json_writer__kv_string(w, "state", crit_edge__name(seg->edge));
		json_writer__kv_string(w, "wake", crit_wake__name(seg->wake));
		crit_segment__what(g, seg, what, sizeof(what));
		json_writer__kv_string(w, "what", what[0] ? what : NULL);
		if (seg->pkt || seg->ipi) {
			json_writer__kv_int(w, "from_host", seg->from_host + 1);
			if (seg->from_tid)
				json_writer__kv_int(w, "from_tid", seg->from_tid);
			else
				json_writer__kv_null(w, "from_tid");
		}
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	summarize(p, &s);
	json_writer__key(w, "summary");
	json_writer__begin_object(w, false);
	json_writer__key(w, "by_state");
	json_writer__begin_object(w, true);
	for (i = 0; i < CRIT_EDGES; i++)
		if (s.by_edge[i])
			json_writer__kv_uint(w, crit_edge__name(i), s.by_edge[i]);
	json_writer__end_object(w);
	shares_json(w, g, "by_thread", s.threads, s.nr_threads, true);
	shares_json(w, g, "by_host", s.hosts, s.nr_hosts, false);
	json_writer__end_object(w);
	json_writer__end_object(w);
	summary__free(&s);
	putchar('\n');
	return json_writer__delete(w);
}

/* ---- --syscall-span ---- */

static bool is_send(int nr)
{
	return nr == 1 || nr == 44 || nr == 46 || nr == 20; /* write sendto sendmsg writev */
}

static bool is_recv(int nr)
{
	return nr == 0 || nr == 45 || nr == 47 || nr == 19; /* read recvfrom recvmsg readv */
}

/* The Nth (1-based; 0: the longest) request of tid: a send on a socket fd, to the end of
 * the first receive on the same fd that returned data. */
static int syscall_span(const struct trace *t, uint32_t tid, long nth, uint64_t *from, uint64_t *to)
{
	uint64_t start = 0, best = 0;
	int32_t fd = -1;
	long n = 0;
	size_t i;

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		int nr = (int)e->h.aux;

		if (e->h.type != REC_SYSCALL || e->h.tid != tid)
			continue;
		if (is_send(nr) && e->sc.ret > 0) {
			const char *d =
				trace__fd_desc(t, e->h.pid, (int32_t)e->sc.args[0], e->h.ts);

			if (!d || (strncmp(d, "tcp", 3) && strncmp(d, "udp", 3) &&
				   strncmp(d, "unix", 4) && strncmp(d, "socket", 6)))
				continue;
			if (fd < 0 || (int32_t)e->sc.args[0] != fd) {
				start = e->sc.enter_ts;
				fd = (int32_t)e->sc.args[0];
			}
		} else if (is_recv(nr) && fd >= 0 && (int32_t)e->sc.args[0] == fd &&
			   e->sc.ret > 0) {
			n++;
			if ((nth && n == nth) || (!nth && e->h.ts - start > best)) {
				best = e->h.ts - start;
				*from = start;
				*to = e->h.ts;
				if (nth)
					return 0;
			}
			fd = -1;
		}
	}
	return best ? 0 : -ENOENT;
}

/* ---- the command ---- */

/* -1 when the command goes on, else the exit status to return at once (0 after --help). */
static int parse(int argc, char **argv, struct report_cmdline *rc, struct opts *o)
{
	static const struct option longopts[] = {
		{"tid", required_argument, NULL, 't'},
		{"from", required_argument, NULL, OPT_FROM},
		{"to", required_argument, NULL, OPT_TO},
		{"host", required_argument, NULL, OPT_HOST},
		{"syscall-span", optional_argument, NULL, OPT_SPAN},
		REPORT_CMDLINE_OPT_FORMAT,
		REPORT_CMDLINE_OPT_HELP,
		{0}};
	long pid = 0;
	const char *comm = NULL;
	int c;

	report_cmdline__init(rc, "critical", usage_text, "text", "json");
	report_cmdline__add_format(rc, "chrome");
	report_cmdline__filters(rc, &pid, &o->tid, &comm);
	while ((c = report_cmdline__next(rc, argc, argv, "t:f:h", longopts)) > 0) {
		switch (c) {
		case OPT_FROM:
			if (parse_double("--from", optarg, 0, 1e9, &o->from))
				return 2;
			o->has_from = true;
			break;
		case OPT_TO:
			if (parse_double("--to", optarg, 0, 1e9, &o->to))
				return 2;
			o->has_to = true;
			break;
		case OPT_HOST:
			if (parse_long("--host", optarg, 1, 1024, &o->host))
				return 2;
			break;
		case OPT_SPAN:
			if (optarg && parse_long("--syscall-span", optarg, 1, 1L << 40, &o->span))
				return 2;
			o->has_span = true;
			break;
		}
	}
	if (c < 0)
		return rc->status;
	o->format = rc->format;
	if (!o->tid)
		return report_cmdline__needs(rc, "--tid T");
	if (rc->first >= argc)
		return report_cmdline__needs(rc, "a trace file");
	if (o->has_span && (o->has_from || o->has_to))
		return usage_error("critical", "--syscall-span and --from/--to choose the window "
					       "two ways: give one");
	if (o->has_from && o->has_to && o->to <= o->from)
		return usage_error("critical", "--to must be after --from");
	return -1;
}

int cmd_critical(int argc, char **argv)
{
	struct report_cmdline rc;
	struct opts o = {0};
	struct trace **traces;
	struct crit_graph g;
	struct crit_path p;
	size_t n, i, host;
	int64_t first = 0, last = 0, from, to, base;
	char err[512];
	int ret = 1, status;

	if ((status = parse(argc, argv, &rc, &o)) >= 0)
		return status;
	n = argc - rc.first;
	traces = xcalloc(n, sizeof(*traces));
	for (i = 0; i < n; i++)
		if (!(traces[i] = trace__open_report(argv[rc.first + i])))
			goto out_close;
	if (crit_graph__build(&g, traces, n, err, sizeof(err))) {
		error("critical: %s", err);
		goto out_close;
	}
	if (o.host > (long)n) {
		ret = usage_error("critical", "--host %ld: only %zu trace(s) given", o.host, n);
		goto out_graph;
	}
	for (host = o.host ? o.host - 1 : 0; host < n; host++)
		if (crit_graph__thread_span(&g, host, o.tid, &first, &last) || o.host)
			break;
	if (host >= n || !crit_graph__thread_span(&g, host, o.tid, &first, &last)) {
		error("critical: thread %ld is not in %s (the threads are listed by 'srvscope "
		      "sched FILE')",
		      o.tid, o.host || n == 1 ? "the trace" : "any of the traces");
		goto out_graph;
	}
	base = (int64_t)traces[0]->first_ns;
	from = o.has_from ? base + (int64_t)(o.from * 1e9) : first;
	to = o.has_to ? base + (int64_t)(o.to * 1e9) : last;
	if (o.has_span) {
		uint64_t f, t;

		if (syscall_span(traces[host], o.tid, o.span, &f, &t)) {
			error("critical: thread %ld has no%s request (a send on a socket, then a "
			      "read of its answer) in the trace: record it with 'record "
			      "--syscalls'",
			      o.tid, o.span ? " such" : "");
			goto out_graph;
		}
		from = crit_graph__to_ref(&g, host, f);
		to = crit_graph__to_ref(&g, host, t);
	}
	if (from < first)
		from = first;
	if (to > last)
		to = last;
	if (to <= from) {
		error("critical: the window %.6f-%.6f s is outside the life of thread %ld in the "
		      "trace (%.6f-%.6f s)",
		      o.has_from ? o.from : (from - base) / 1e9,
		      o.has_to ? o.to : (to - base) / 1e9, o.tid, (first - base) / 1e9,
		      (last - base) / 1e9);
		goto out_graph;
	}
	if (crit_graph__path(&g, host, o.tid, from, to, &p)) {
		error("critical: cannot compute the path");
		goto out_graph;
	}
	if (!strcmp(o.format, "json"))
		ret = print_json(&g, &p, host, o.tid) ? 1 : 0;
	else if (!strcmp(o.format, "chrome"))
		ret = critical_chrome__write(stdout, &g, &p) ? 1 : 0;
	else {
		print_text(&g, &p, host, o.tid);
		ret = 0;
	}
	if (fflush(stdout))
		ret = 1;
	crit_path__free(&p);
out_graph:
	crit_graph__free(&g);
out_close:
	for (i = 0; i < n; i++)
		trace__close(traces[i]);
	free(traces);
	return ret;
}
