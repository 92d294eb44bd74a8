/* srvscope cpu: on-CPU sampling of the targets' user and kernel stacks, reported per
 * function, component, thread, process and core (docs/cpu.md): live, one snapshot per
 * interval, or one report after -d seconds. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cpu/cpu.h"
#include "proc/task.h"
#include "symbol/symbolizer.h"
#include "topology/topology.h"
#include "util/safefile.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope cpu [-p PID[,PID...] | -a] [options]\n"
	"       srvscope cpu [options] TRACE\n"
	"       srvscope cpu [options] --folded FILE\n"
	"\n"
	"Samples the user and kernel stacks of PID and its descendants (or of every process:\n"
	"-a) with a cpu-clock perf event on every CPU, counted in the kernel, and reports CPU\n"
	"time per function (self and total), per component (data copy, TCP/IP, netdevice,\n"
	"skb, memory, lock, scheduling, others: docs/cpu.md), per thread (user/system %,\n"
	"state, last CPU, switches), per process (RSS, its growth, page faults) and per core.\n"
	"With -d, one report at the end; without, a live view on a terminal (keys: f\n"
	"functions, Enter call paths, c components, i inclusive, t threads, p cores, q\n"
	"quit) or, piped, one snapshot per interval. With a TRACE made by 'record --on-cpu',\n"
	"its samples; with --folded, the folded stacks of FILE ('-': stdin; e.g. another\n"
	"profiler's), classified by the same component rules.\n"
	"\n"
	"  -p, --pid PID[,PID...]   processes to sample, with their descendants\n"
	"      --no-children        the PIDs alone, not their descendants\n"
	"  -a, --all                every process (not the idle tasks)\n"
	"  -F, --freq HZ            samples per second per CPU (default 999)\n"
	"  -d, --duration SECONDS   sample this long, then print one report\n"
	"  -i, --interval MS        milliseconds between snapshots (default 1000)\n"
	"  -n, --iterations N       exit after N snapshots\n"
	"  -f, --format FMT         text (default), json, folded, svg, speedscope, pprof\n"
	"      --inclusive          components by the innermost classified kernel frame\n"
	"                           of each stack, not by the function itself\n"
	"      --components FILE    rules added before the built-in ones: lines\n"
	"                           'PATTERN COMPONENT [kernel|user]', PATTERN a name or a\n"
	"                           prefix ending in '*', '#' comments\n"
	"      --top N              functions listed in text (default 30)\n"
	"      --min-unmatched PCT  unmatched kernel functions listed above PCT % of the\n"
	"                           kernel samples (default 0.1)\n"
	"      --folded FILE        report FILE's folded stacks ('a;b;c COUNT' lines, kernel\n"
	"                           frames suffixed _[k]) instead of sampling\n"
	"  -q, --quiet              no notices on stderr\n"
	"\n"
	"Exit status: 0; 1 when sampling or writing failed; 2 for a bad option or a bad\n"
	"components file.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct cpu_cmd {
	pid_t *pids;
	size_t nr_pids;
	bool all, no_children, inclusive;
	long hz, duration, interval_ms, iterations, top;
	double min_unmatched;
	const char *components, *trace, *folded;
	struct cpu_report_opts ro;
	bool fmt_given;
};

static int parse_format(const char *s, enum cpu_format *f)
{
	static const char *const names[] = {"text", "json", "folded", "svg", "speedscope", "pprof"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*f = i;
			return 0;
		}
	return usage_error("cpu",
			   "unknown format '%s': text, json, folded, svg, speedscope or pprof", s);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (!stop && nanosleep(&ts, &ts))
		;
}

/* One row of the stacked view over time: the kernel samples per component since the last
 * row, from the cumulative counts (prev holds the last ones). */
struct series {
	const struct comp_table *t;
	bool inclusive;
	uint64_t *prev;
	uint64_t next_ns, interval_ns; /* when the next row is due */
};

/* -d takes the samples out of the kernel more often than the rows (every DRAIN_MS): the
 * BPF stacks map is emptied of the stacks read at each read, and holds only the new ones
 * since (a stack is lost only when it is full). */
#define DRAIN_MS 200

static void add_series_row(struct cpu_profile *p, uint64_t end_ns, void *arg)
{
	struct series *se = arg;
	struct cpu_comp_share cs;
	size_t cols = comp_table__nr(se->t) + 1, k;
	uint64_t *row;

	/* a row per interval, and one for the end of the window */
	if (end_ns + 1000000 < se->next_ns && end_ns < p->end_ns)
		return;
	while (se->next_ns <= end_ns + 1000000)
		se->next_ns += se->interval_ns;

	cpu_profile__classify(p, se->t);
	cpu_profile__components(p, se->t, se->inclusive, NULL, NULL, &cs);
	p->series_cols = cols;
	p->comp_series = xrealloc(p->comp_series, (p->series_rows + 1) * cols * sizeof(uint64_t));
	row = p->comp_series + p->series_rows++ * cols;
	for (k = 0; k < cols; k++) {
		uint64_t v = k + 1 < cols ? cs.per_comp[k] : cs.unmatched;

		row[k] = v - se->prev[k];
		se->prev[k] = v;
	}
	cpu_comp_share__free(&cs);
}

static void start_figures(struct cpu_profile *p, struct cpu_session *s)
{
	size_t nr, i;
	const pid_t *t = cpu_session__targets(s, &nr);

	for (i = 0; i < nr; i++)
		cpu_proc__start(p, t[i]);
	cpu_cores__read(p, true);
}

/* -d: sample for the duration (reading every interval, which gives the component view
 * over time), then one report. */
static int run_duration(struct cpu_cmd *c, struct cpu_session *s, const struct comp_table *t)
{
	struct cpu_profile *p = cpu_profile__new(cpu_session__nr_cpus(s));
	/* from the attach: loading the topology after it took samples already */
	uint64_t t0 = cpu_session__start_ns(s), end = t0 + c->duration * 1000000000ull;
	int ret, alive = 1;

	start_figures(p, s);
	while (!stop && alive) {
		uint64_t now = now_ns();
		long ms = now < end ? (long)((end - now) / 1000000) : 0;

		bool last;

		sleep_ms(ms < DRAIN_MS ? ms : DRAIN_MS);
		last = stop || now_ns() + 1000000 >= end;
		alive = cpu_session__read(s, p, last);
		if (!alive && !last) { /* gone: read the rest and the figures as last seen */
			cpu_session__read(s, p, true);
			break;
		}
		if (last)
			break;
	}
	if (!alive)
		notice("the targets exited; the report has what was sampled until then");
	p->duration_ns = p->end_ns - t0;
	cpu_profile__classify(p, t);
	ret = cpu_report__write(stdout, p, t, &c->ro);
	if (fflush(stdout))
		ret = -1;
	cpu_profile__delete(p);
	return ret ? 1 : 0;
}

/* Piped: one snapshot of each interval's samples (its own figures), until the targets
 * exit, -n snapshots or a signal. */
static int run_snapshots(struct cpu_cmd *c, struct cpu_session *s, const struct comp_table *t)
{
	struct cpu_profile *p = cpu_profile__new(cpu_session__nr_cpus(s));
	long n = 0;
	int alive = 1, ret = 0;
	uint64_t t0 = cpu_session__start_ns(s);

	c->ro.compact = c->ro.fmt == CPU_JSON;
	start_figures(p, s);
	while (!stop && alive && (!c->iterations || n < c->iterations)) {
		uint64_t spent = (now_ns() - t0) / 1000000;

		/* the window is the interval, the time writing the last snapshot included */
		sleep_ms(c->interval_ms > (long)spent ? c->interval_ms - (long)spent : 1);
		alive = cpu_session__read(s, p, true);
		p->duration_ns = p->end_ns - t0;
		t0 = p->end_ns;
		cpu_profile__classify(p, t);
		ret = cpu_report__write(stdout, p, t, &c->ro);
		if (c->ro.fmt == CPU_TEXT)
			fputs("\n", stdout);
		cpu_profile__clear(p);
		cpu_proc__rebase(p);
		if (ret || fflush(stdout)) {
			ret = -1;
			break;
		}
		n++;
	}
	if (!alive)
		notice("the targets exited");
	cpu_profile__delete(p);
	return ret ? 1 : 0;
}

static int report_folded(struct cpu_cmd *c, const struct comp_table *t)
{
	const char *path = strcmp(c->folded, "-") ? c->folded : "/dev/stdin";
	struct cpu_profile *p;
	char *buf, err[512];
	size_t len;
	int ret = cpu_read_file(path, &buf, &len);

	if (ret)
		return error("cannot read '%s': %s", c->folded, safefile__strerror(ret)), 1;
	p = cpu_profile__new(1);
	ret = cpu_profile__parse_folded(p, c->folded, buf, len, err, sizeof(err));
	free(buf);
	if (ret) {
		error("%s", err);
		cpu_profile__delete(p);
		return 1;
	}
	cpu_profile__classify(p, t);
	ret = cpu_report__write(stdout, p, t, &c->ro);
	cpu_profile__delete(p);
	return ret || fflush(stdout) ? 1 : 0;
}

int cmd_cpu(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"no-children", no_argument, NULL, 'C'},
		{"all", no_argument, NULL, 'a'},
		{"freq", required_argument, NULL, 'F'},
		{"duration", required_argument, NULL, 'd'},
		{"interval", required_argument, NULL, 'i'},
		{"iterations", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'},
		{"inclusive", no_argument, NULL, 'I'},
		{"components", required_argument, NULL, 'K'},
		{"top", required_argument, NULL, 'T'},
		{"min-unmatched", required_argument, NULL, 'U'},
		{"folded", required_argument, NULL, 'L'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct cpu_cmd c = {.hz = 999, .interval_ms = 1000, .min_unmatched = 0.1};
	struct comp_table *t = NULL;
	struct cpu_session *s = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	struct series series = {0};
	struct topo *topo = NULL;
	char err[512];
	int opt, ret = 1;

	while ((opt = getopt_long(argc, argv, ":p:aF:d:i:n:f:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_pid_list(optarg, &c.pids, &c.nr_pids))
				goto usage;
			break;
		case 'C':
			c.no_children = true;
			break;
		case 'a':
			c.all = true;
			break;
		case 'F':
			if (parse_long("-F", optarg, 1, 100000, &c.hz))
				goto usage;
			break;
		case 'd':
			if (parse_long("-d", optarg, 1, 86400 * 365, &c.duration))
				goto usage;
			break;
		case 'i':
			if (parse_long("-i", optarg, 10, 3600 * 1000, &c.interval_ms))
				goto usage;
			break;
		case 'n':
			if (parse_long("-n", optarg, 1, 1L << 40, &c.iterations))
				goto usage;
			break;
		case 'f':
			if (parse_format(optarg, &c.ro.fmt))
				goto usage;
			if (c.ro.fmt == CPU_PPROF && isatty(STDOUT_FILENO))
				return usage_error(
					"cpu", "pprof is binary: redirect the output to a file");
			c.fmt_given = true;
			break;
		case 'I':
			c.inclusive = true;
			break;
		case 'K':
			c.components = optarg;
			break;
		case 'T':
			if (parse_long("--top", optarg, 1, 1000000, &c.top))
				goto usage;
			break;
		case 'U':
			if (parse_double("--min-unmatched", optarg, 0, 100, &c.min_unmatched))
				goto usage;
			break;
		case 'L':
			c.folded = optarg;
			break;
		case 'q':
			util_quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free(c.pids);
			return 0;
		default:
			free(c.pids);
			return option_error("cpu", opt, argv);
		}
	}
	if (optind < argc)
		c.trace = argv[optind++];
	if (optind < argc) {
		free(c.pids);
		return usage_error("cpu", "unexpected argument '%s'", argv[optind]);
	}
	if (!c.trace && !c.all && !c.nr_pids && !c.folded) {
		free(c.pids);
		return usage_error("cpu", "give -p PID, -a or a TRACE file");
	}
	if ((c.trace || c.folded) && (c.all || c.nr_pids || (c.trace && c.folded))) {
		free(c.pids);
		return usage_error("cpu", "a TRACE or --folded FILE is reported alone: no -p nor "
					  "-a with it");
	}
	if (c.all && c.nr_pids) {
		free(c.pids);
		return usage_error("cpu", "-p and -a exclude each other");
	}
	c.ro.inclusive = c.inclusive;
	c.ro.top = c.top;
	c.ro.min_unmatched = c.min_unmatched;

	t = comp_table__new();
	if (c.components && comp_table__load(t, c.components, err, sizeof(err))) {
		error("%s", err);
		ret = EXIT_USAGE;
		goto out;
	}
	if (c.trace) {
		ret = cpu_trace__report(c.trace, t, &c.ro);
		goto out;
	}
	if (c.folded) {
		ret = report_folded(&c, t);
		goto out;
	}
	if (c.nr_pids) {
		size_t i;

		for (i = 0; i < c.nr_pids; i++)
			if (proc__check_target(c.pids[i], NULL, true))
				goto out;
	}
	{
		struct cpu_opts o = {.pids = c.pids,
				     .nr_pids = c.nr_pids,
				     .all = c.all,
				     .children = !c.no_children,
				     .hz = c.hz,
				     .defer_symbols = c.duration > 0,
				     .on_interval = c.duration > 0 ? add_series_row : NULL,
				     .arg = &series};

		series.t = t;
		series.inclusive = c.inclusive;
		series.interval_ns = c.interval_ms * 1000000ull;
		series.next_ns = now_ns() + series.interval_ns;
		series.prev = xcalloc(comp_table__nr(t) + 1, sizeof(uint64_t));
		s = cpu_session__new(&o);
	}
	if (!s)
		goto out;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the cores' place in the machine, for the per-core view (none: -1) */
	topo = c.ro.fmt == CPU_TEXT || c.ro.fmt == CPU_JSON ? topo__load() : NULL;
	c.ro.topo = topo;
	if (c.duration)
		ret = run_duration(&c, s, t);
	else if (isatty(STDOUT_FILENO) && !c.fmt_given)
		ret = cpu_tui__run(s, t, c.interval_ms, c.iterations, c.inclusive, &stop);
	else
		ret = run_snapshots(&c, s, t);
out:
	cpu_session__delete(s);
	topo__delete(topo);
	free(series.prev);
	comp_table__delete(t);
	symbolizer__exit();
	free(c.pids);
	return ret;
usage:
	free(c.pids);
	return EXIT_USAGE;
}
