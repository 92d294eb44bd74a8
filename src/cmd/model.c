/* srvscope model: what a server is (thread roles, network model, syscall profile per
 * request), from a few recorded load runs against a running server, or from traces
 * recorded earlier. Options here; the work in src/model/. */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clone/clone.h"
#include "cmd/cmd.h"
#include "load/load.h"
#include "model/collect.h"
#include "model/model.h"
#include "proc/task.h"
#include "record/record.h"
#include "trace/trace.h"
#include "util/safefile.h"
#include "util/escape.h"
#include "util/jsonfile.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope model -p PID (--client URL | --load COMMAND) [options]\n"
	"       srvscope model FILE.trace...\n"
	"\n"
	"Describes a server: its threads clustered by call-stack similarity, each cluster's\n"
	"role (main, acceptor, network, background, idle), the network model (where accept\n"
	"and connection I/O happen, epoll/poll/select/blocking, pool sizes, Ditto's\n"
	"network_model_characteristics) and its network threads' syscalls per measured\n"
	"request. The server's whole process tree is recorded (every syscall, on- and off-CPU\n"
	"stacks) during a few short load runs, one trace each; or traces recorded earlier\n"
	"with 'srvscope record --syscalls --on-cpu' are analysed, one run each.\n"
	"\n"
	"  -p, --pid PID          the server's main process\n"
	"      --client URL       built-in open-loop client: memcached://HOST:PORT,\n"
	"                         redis://HOST:PORT or http://HOST:PORT/PATH\n"
	"      --load COMMAND     run COMMAND (with /bin/sh) as the load instead; {conns},\n"
	"                         {rate}, {duration} and {requests} are replaced per run\n"
	"      --conns N[,N...]   connections of each run, one run per value (default 4,8,16)\n"
	"      --rate R           requests per second of each run (default 2000)\n"
	"      --duration SECS    seconds of load per run (default 2)\n"
	"      --reconnect SECS   built-in client: connections are reopened after SECS, so\n"
	"                         the server keeps accepting (default 0.5; 0: never)\n"
	"      --config FILE      the runs from a JSON file (docs/model.md): {\"runs\": "
	"[{\"conns\":\n"
	"                         8, \"rate\": 2000, \"duration_s\": 2}, ...]}\n"
	"      --call-graph=fp|dwarf\n"
	"                         how user stacks are taken (default dwarf: see 'record')\n"
	"      --keep-traces DIR  keep each run's trace in DIR (run-N.trace)\n"
	"      --no-skeleton      do not measure the server beside its skeleton (a clone of\n"
	"                         the model spinning nothing, started on a free loopback\n"
	"                         port for a few seconds, loaded at once with the server)\n"
	"  -o, --output FILE      write the model as JSON (docs/model-json.md): a new file,\n"
	"                         mode 0600; an existing one is never replaced\n"
	"\n"
	"The fds the server has open as each run starts are read from /proc (sockets and\n"
	"their ports, listeners' SO_REUSEPORT through a pidfd_getfd copy, epoll instances,\n"
	"file paths). SRVSCOPE_MODEL_RECORD (docs/model.md) leaves recorded items out, for\n"
	"bench/model.sh --parts to measure what each costs.\n"
	"\n"
	"A short summary goes to stdout, progress to stderr. Ctrl-C ends the run under way\n"
	"and the model (the runs done are described). Exit status 0, 1 when a run failed\n"
	"(the runs done before it are kept and described), 2 for a usage error.\n";

#define MAX_RUNS 64
#define BESIDE_SLICES 7 /* the original beside its skeleton: counted slices */

struct run_spec {
	unsigned conns;
	double rate, duration;
};

static int parse_conns(const char *s, struct run_spec *runs, size_t *nr, double rate,
		       double duration)
{
	char buf[256], *tok, *save;
	long v;

	if (strlen(s) >= sizeof(buf))
		return usage_error("model", "--conns: too long");
	strcpy(buf, s);
	*nr = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_long("--conns", tok, 1, 100000, &v))
			return EXIT_USAGE;
		if (*nr >= MAX_RUNS)
			return usage_error("model", "--conns: at most %d runs", MAX_RUNS);
		runs[(*nr)++] = (struct run_spec){(unsigned)v, rate, duration};
	}
	if (!*nr)
		return usage_error("model", "--conns: no value");
	return 0;
}

/* --config FILE: {"runs": [{"conns": N, "rate": R, "duration_s": S}, ...]}; a member left
 * out takes the command line's value. */
static int parse_config(const char *path, struct run_spec *runs, size_t *nr, double rate,
			double duration)
{
	json_error_t jerr;
	json_t *doc = jsonfile__load(path, 1 << 20, 0, &jerr), *a, *r;
	size_t i;

	if (!doc && jerr.line < 0) {
		error("cannot read the config '%s': %s", path, jerr.text);
		return 1;
	}
	if (!doc) {
		error("cannot read the config '%s': %s (line %d)", path, jerr.text, jerr.line);
		return 1;
	}
	a = json_object_get(doc, "runs");
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > MAX_RUNS) {
		error("config '%s': \"runs\" must be an array of 1 to %d objects", path, MAX_RUNS);
		json_decref(doc);
		return 1;
	}
	*nr = 0;
	json_array_foreach(a, i, r)
	{
		json_t *c = json_object_get(r, "conns"), *rt = json_object_get(r, "rate"),
		       *d = json_object_get(r, "duration_s");
		struct run_spec s = {4, rate, duration};

		if (!json_is_object(r) ||
		    (c && (!json_is_integer(c) || json_integer_value(c) < 1 ||
			   json_integer_value(c) > 100000)) ||
		    (rt && (!json_is_number(rt) || json_number_value(rt) < 0)) ||
		    (d && (!json_is_number(d) || json_number_value(d) <= 0 ||
			   json_number_value(d) > 3600))) {
			error("config '%s': run %zu: conns must be an integer from 1 to 100000, "
			      "rate a number >= 0, duration_s a number of seconds in (0, 3600]",
			      path, i);
			json_decref(doc);
			return 1;
		}
		if (c)
			s.conns = (unsigned)json_integer_value(c);
		if (rt)
			s.rate = json_number_value(rt);
		if (d)
			s.duration = json_number_value(d);
		runs[(*nr)++] = s;
	}
	json_decref(doc);
	return 0;
}

static void target_info(struct model *m, pid_t pid)
{
	char path[64];
	ssize_t n;

	m->pid = (uint32_t)pid;
	proc__check_target(pid, m->comm, true);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, m->exe, sizeof(m->exe) - 1);
	m->exe[n > 0 ? n : 0] = '\0';
	/* Escaped as a trace's titles are (trace__title): the process writes what it likes. */
	if (proc__title(pid, m->title, sizeof(m->title)) < 0)
		m->title[0] = '\0';
	name_escape_inplace(m->title, sizeof(m->title));
}

static bool alive(pid_t pid)
{
	return !(kill(pid, 0) && errno == ESRCH);
}

/* fds: the run's fd snapshot (moved into the run), or NULL. */
static int add_trace_run(struct model *m, const struct trace ***traces, struct trace *t,
			 const char *path, uint32_t pid, struct model_fds *fds)
{
	struct model_run *run;
	int err;

	m->runs = xrealloc(m->runs, (m->nr_runs + 1) * sizeof(*m->runs));
	*traces = xrealloc(*traces, (m->nr_runs + 1) * sizeof(**traces));
	run = &m->runs[m->nr_runs];
	memset(run, 0, sizeof(*run));
	run->index = (unsigned)m->nr_runs;
	run->reconnect_s = -1; /* a trace's: not known */
	run->trace_path = path;
	if (fds) {
		run->fds = *fds;
		memset(fds, 0, sizeof(*fds));
	}
	err = model__analyze(t, pid, run);
	if (err) {
		model_run__free(run);
		return err;
	}
	(*traces)[m->nr_runs++] = t;
	return 0;
}

/* The built-in load of one run. */
static struct load_spec load_of_run(const struct load_target *target, unsigned conns, double rate,
				    double duration, double reconnect)
{
	return (struct load_spec){
		.target = *target,
		.conns = conns,
		.rate = rate,
		.duration_s = duration,
		.reconnect_s = reconnect,
		.keepalive = true,
		.value_size = 100,
		.set_share = 0.1,
		.keys = 1000,
	};
}

/* The network threads' CPU per request without the recorder, at the last run's rate and
 * at peak (the recorded figure carries the probes' cost: 27.7 against 19.5 us per request
 * for memcached). Between the two a server's CPU per request moves with its wake-ups per
 * request (fewer at peak, where one wake-up serves many): a clone follows that line. */
/* The other threads of the last run (background work, such as memcached's LRU maintainer)
 * over the unrecorded run at its rate: their CPU per wake-up there, without the recorder's
 * probes at each wake-up (memcached's maintainer: 17 against 27 us recorded). when 0
 * notes where they stand, 1 what they did since, -1 (the run failed) forgets them. */
static void other_threads(struct model_run *last, int when, uint64_t *ns, uint64_t *wakes)
{
	size_t i;

	for (i = 0; i < last->nr_thr; i++) {
		struct model_thread *th = &last->thr[i];
		uint64_t v, w;

		if (when < 0 || th->network || proc_task__sched(th->tid, &v, &w)) {
			th->unrec = false;
			continue;
		}
		if (!when) {
			ns[i] = v;
			wakes[i] = w;
			th->unrec = true;
		} else if (th->unrec && v >= ns[i] && w >= wakes[i]) {
			th->unrec_on_ns = v - ns[i];
			th->unrec_wakes = w - wakes[i];
		} else {
			th->unrec = false;
		}
	}
}

/* The network threads of a run, into tids (nr_thr of them at most). Returns how many. */
static size_t network_tids(const struct model_run *run, uint32_t *tids)
{
	size_t i, n = 0;

	for (i = 0; i < run->nr_thr; i++)
		if (run->thr[i].network)
			tids[n++] = run->thr[i].tid;
	return n;
}

static void cpu_unrecorded(struct model *m, pid_t pid, const struct load_target *target)
{
	struct model_run *last = &m->runs[m->nr_runs - 1];
	struct collect_opts co = {.pid = pid};
	uint32_t *tids = xcalloc(last->nr_thr + 1, sizeof(*tids));
	uint64_t *ns = xcalloc(last->nr_thr + 1, sizeof(*ns));
	uint64_t *wakes = xcalloc(last->nr_thr + 1, sizeof(*wakes));
	static const unsigned slices[2] = {5, 3}; /* at the fixed rate, at peak */
	size_t i, n;
	int err = 0, k;

	n = network_tids(last, tids);
	for (i = 0; i < last->nr_thr; i++)
		if (!last->thr[i].network && last->thr[i].period_ns &&
		    (!m->wake_floor_period_ms ||
		     last->thr[i].period_ns / 1e6 < m->wake_floor_period_ms))
			m->wake_floor_period_ms = last->thr[i].period_ns / 1e6;
	for (k = 0; k < 2 && !err && !record__signalled(); k++) {
		struct wake_floor *floor = NULL;

		/* At the fixed rate five slices of a third of the run's duration (at most a
		 * second each), at peak a second in three: schedstat counts nanoseconds, but a
		 * 2-core VM's speed drifts over seconds (redis at 2000 req/s: 20.8 and 25.3 us
		 * per request in two one-second models minutes apart), and a clone burns what
		 * this says: a median of three was once thrown 50 % high by two dear slices
		 * (after a warm-up slice not counted, model__cpu_unrecorded).
		 * The connections are not reopened: a clone reproduces an accept's syscalls,
		 * not the server's own work per connection (nginx: 25.7 against 24.3 us per
		 * request with 16 connections reopened every 0.5 s or kept, at 2000 req/s),
		 * and the loads it is compared under keep theirs. */
		co.spec = load_of_run(target, last->conns, k ? 0 : last->rate,
				      k ? fmin(last->duration_s, 1)
					: fmin(last->duration_s, 3) * slices[k] / 3,
				      0);
		fprintf(stderr,
			"srvscope: model: CPU per request without recording: %u connection(s), "
			"%s, %g s\n",
			co.spec.conns, k ? "peak" : "the last run's rate", co.spec.duration_s);
		if (!k) {
			other_threads(last, 0, ns, wakes);
			floor = model__wake_floor_start(m->wake_floor_period_ms);
		}
		err = model__cpu_unrecorded(&co, tids, n, slices[k], &m->cpu_unrecorded[k]);
		if (!k) {
			other_threads(last, err ? -1 : 1, ns, wakes);
			m->wake_floor_us = model__wake_floor_stop(floor);
		}
		/* A peak no faster than twice the fixed rate is a machine busy with other work
		 * the whole second: once more, and the faster of the two. */
		if (!err && k &&
		    m->cpu_unrecorded[1].requests < 2 * last->rate * co.spec.duration_s &&
		    !record__signalled()) {
			struct model_cpu_run again;

			if (!model__cpu_unrecorded(&co, tids, n, slices[k], &again) &&
			    again.requests > m->cpu_unrecorded[1].requests)
				m->cpu_unrecorded[1] = again;
		}
		if (!err) {
			const struct model_cpu_run *c = &m->cpu_unrecorded[k];
			unsigned j;

			m->nr_cpu_unrecorded = k + 1;
			fprintf(stderr, "srvscope: model: slices of %.1f s:",
				co.spec.duration_s / c->nr_slices);
			for (j = 0; j < c->nr_slices; j++)
				fprintf(stderr, " %.1f", c->slice_cpu_us[j]);
			fprintf(stderr, " us per request\n");
		}
	}
	if (err)
		warning("CPU per request without recording not measured (%s): the model has the "
			"recorded figure only",
			err == -ESRCH ? "a network thread is gone" : strerror(-err));
	free(tids);
	free(ns);
	free(wakes);
}

/* The original beside its skeleton (clone__beside): the clone of the model just built,
 * spinning nothing, and the original loaded at once, at the last run's rate, in slices as
 * cpu_unrecorded's; a clone aims at their ratio (docs/clone.md). A model the clone cannot
 * run, or a slice that fails, leaves it out with a warning. */
static void beside_skeleton(struct model *m, const struct load_target *target)
{
	struct model_run *last = &m->runs[m->nr_runs - 1];
	struct clone_model *cm = xmalloc(sizeof(*cm));
	uint32_t *tids = xcalloc(last->nr_thr + 1, sizeof(*tids));
	struct load_spec spec;
	char *text = NULL, why[256];
	size_t len = 0, i, n = network_tids(last, tids);
	FILE *f = open_memstream(&text, &len);
	int err;

	err = f ? model__write_json(m, f) : -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	if (err) {
		snprintf(why, sizeof(why), "%s", strerror(-err));
	} else if ((err = clone_model__parse(text, len, cm, why, sizeof(why)))) {
		;
	} else {
		/* each slice as long as cpu_unrecorded's at the fixed rate */
		spec = load_of_run(target, last->conns, last->rate, fmin(last->duration_s, 3) / 3,
				   0);
		spec.no_prefill = true;
		/* arrivals at random: evenly spaced, both loads keep one phase against each
		 * other for a slice, and a slice's ratio moved with it (nginx: 0.63 to 1.93 in
		 * one model, 0.92 to 1.33 at random) */
		spec.poisson = true;
		fprintf(stderr,
			"srvscope: model: beside its skeleton (its clone spinning nothing), both "
			"loaded at once: %u connection(s), the last run's rate, %.1f s\n",
			spec.conns, spec.duration_s * (BESIDE_SLICES + 1));
		err = clone__beside(cm, &spec, tids, n, BESIDE_SLICES, record__signalled,
				    &m->beside);
		snprintf(why, sizeof(why), "%s",
			 err == -ESRCH	 ? "a network thread is gone"
			 : err == -EINTR ? "interrupted"
					 : strerror(-err));
	}
	if (err) {
		memset(&m->beside, 0, sizeof(m->beside));
		warning("could not run the server beside its skeleton (%s): the model is written "
			"without cpu_beside_skeleton, and its clone aims at the microseconds "
			"measured here (--no-skeleton skips this step)",
			why);
	} else {
		fprintf(stderr,
			"srvscope: model: CPU per request %.1f us beside the skeleton's %.1f "
			"(ratio %.2f; slices:",
			m->beside.original_us, m->beside.skeleton_us, m->beside.ratio);
		for (i = 0; i < m->beside.nr_slices; i++)
			fprintf(stderr, " %.2f", m->beside.slice_ratio[i]);
		fprintf(stderr, ")\n");
	}
	free(text);
	free(tids);
	free(cm);
}

static int finish(struct model *m, const struct trace **traces, const char *output,
		  const struct load_target *skeleton_load)
{
	FILE *f;
	int err;

	m->traces = traces;
	if ((err = model__build(m)))
		return error("cannot build the model: %s", strerror(-err)), 1;
	if (skeleton_load && m->nr_cpu_unrecorded && !record__signalled())
		beside_skeleton(m, skeleton_load);
	model__print_summary(m, stdout);
	if (!output)
		return 0;
	if (strcmp(output, "-")) {
		/* As root beside others' files: never through a symlink, never over a file,
		 * mode 0600 (util/safefile.h). */
		int fd = safefile__create(output, SAFEFILE_MODE, false);

		if (fd == -EEXIST)
			return error("cannot create '%s': it already exists (choose another -o)",
				     output),
			       1;
		if (fd < 0)
			return error("cannot create '%s': %s", output, safefile__strerror(fd)), 1;
		f = fdopen(fd, "w");
		if (!f) {
			close(fd);
			return error("cannot create '%s': %s", output, strerror(errno)), 1;
		}
	} else {
		f = stdout;
	}
	err = model__write_json(m, f);
	if (f != stdout && fclose(f) && !err)
		err = -errno;
	if (err)
		return error("cannot write '%s': %s", output, strerror(-err)), 1;
	return 0;
}

static int model_traces(char **files, int n, const char *output)
{
	struct model m = {0};
	const struct trace **traces = NULL;
	int i, ret = 0;

	m.protocol = NULL;
	for (i = 0; i < n; i++) {
		struct trace *t = trace__open_report(files[i]);

		if (!t) {
			ret = 1;
			break;
		}
		if (!(t->hdr.flags & TRACE_F_SYSCALLS))
			warning("'%s' was recorded without --syscalls: accepts and connection I/O "
				"cannot be seen",
				files[i]);
		if (add_trace_run(&m, &traces, t, files[i], 0, NULL)) {
			trace__close(t);
			ret = 1;
			break;
		}
		if (!i) {
			const struct trace_thread *tt = trace__thread(t, m.runs[0].main_pid);
			char title[512];

			m.pid = m.runs[0].main_pid;
			if (tt)
				snprintf(m.comm, sizeof(m.comm), "%.15s", tt->comm);
			if (trace__title(t, m.pid, title, sizeof(title)))
				snprintf(m.title, sizeof(m.title), "%s", title);
		}
	}
	if (m.nr_runs && finish(&m, traces, output, NULL))
		ret = 1;
	for (i = 0; i < (int)m.nr_runs; i++)
		trace__close((struct trace *)traces[i]);
	free(traces);
	model__free(&m);
	return ret;
}

int cmd_model(int argc, char **argv)
{
	enum {
		OPT_CLIENT = 256,
		OPT_LOAD,
		OPT_CONNS,
		OPT_RATE,
		OPT_DURATION,
		OPT_RECONNECT,
		OPT_CONFIG,
		OPT_CALL_GRAPH,
		OPT_KEEP,
		OPT_NO_SKELETON,
	};
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"client", required_argument, NULL, OPT_CLIENT},
		{"load", required_argument, NULL, OPT_LOAD},
		{"conns", required_argument, NULL, OPT_CONNS},
		{"rate", required_argument, NULL, OPT_RATE},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"reconnect", required_argument, NULL, OPT_RECONNECT},
		{"config", required_argument, NULL, OPT_CONFIG},
		{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
		{"keep-traces", required_argument, NULL, OPT_KEEP},
		{"no-skeleton", no_argument, NULL, OPT_NO_SKELETON},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct run_spec runs[MAX_RUNS];
	size_t nr_runs = 0, r;
	const char *client = NULL, *load_cmd = NULL, *conns = NULL, *config = NULL;
	const char *output = NULL, *keep = NULL;
	double rate = 2000, duration = 2, reconnect = 0.5;
	struct load_target target = {0};
	bool dwarf = true, skeleton = true;
	struct model m = {0};
	const struct trace **traces = NULL;
	struct ktext_copy *ksyms;
	char dir[PATH_MAX] = "";
	long pid = 0;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, ":p:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_long("--pid", optarg, 1, INT_MAX, &pid))
				return EXIT_USAGE;
			break;
		case OPT_CLIENT:
			client = optarg;
			break;
		case OPT_LOAD:
			load_cmd = optarg;
			break;
		case OPT_CONNS:
			conns = optarg;
			break;
		case OPT_RATE:
			if (parse_double("--rate", optarg, 0, 1e9, &rate))
				return EXIT_USAGE;
			break;
		case OPT_DURATION:
			if (parse_double("--duration", optarg, 0.1, 3600, &duration))
				return EXIT_USAGE;
			break;
		case OPT_RECONNECT:
			if (parse_double("--reconnect", optarg, 0, 3600, &reconnect))
				return EXIT_USAGE;
			break;
		case OPT_CONFIG:
			config = optarg;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "fp"))
				dwarf = false;
			else if (!strcmp(optarg, "dwarf"))
				dwarf = true;
			else
				return usage_error("model", "--call-graph: 'fp' or 'dwarf'");
			break;
		case OPT_KEEP:
			keep = optarg;
			break;
		case OPT_NO_SKELETON:
			skeleton = false;
			break;
		case 'o':
			output = optarg;
			/* Refused now, not after minutes of runs: model never replaces a file. */
			if (strcmp(output, "-") && !access(output, F_OK))
				return error("'%s' already exists: choose another -o (model does "
					     "not "
					     "replace files)",
					     output),
				       2;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return option_error("model", c, argv);
		}
	}
	if (optind < argc) {
		if (pid || client || load_cmd || config)
			return usage_error("model", "trace files or -p PID, not both");
		return model_traces(argv + optind, argc - optind, output);
	}
	if (!pid)
		return usage_error("model", "-p PID or trace files are needed");
	if (!client == !load_cmd)
		return usage_error("model", "one of --client URL and --load COMMAND is needed");
	if (client && load__parse_url(client, &target))
		return usage_error("model",
				   "--client '%s': expected memcached://HOST:PORT, "
				   "redis://HOST:PORT or http://HOST:PORT/PATH",
				   client);
	if (config && conns)
		return usage_error("model", "--config and --conns, not both");
	if (config ? parse_config(config, runs, &nr_runs, rate, duration)
		   : parse_conns(conns ? conns : "4,8,16", runs, &nr_runs, rate, duration))
		return config ? 1 : EXIT_USAGE;
	if (proc__check_target((pid_t)pid, NULL, true))
		return 1;

	if (keep) {
		if (mkdir(keep, 0700) && errno != EEXIST)
			return error("cannot create '%s': %s", keep, strerror(errno)), 1;
		snprintf(dir, sizeof(dir), "%s", keep);
	} else {
		snprintf(dir, sizeof(dir), "%s/srvscope-model.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir))
			return error("cannot create a directory for the traces: %s",
				     strerror(errno)),
			       1;
	}
	target_info(&m, (pid_t)pid);
	m.nr_listen = model__listeners((pid_t)pid, m.listen, ARRAY_SIZE(m.listen));
	if (client) {
		size_t i;

		for (i = 0; i < m.nr_listen && m.listen[i].port != target.port; i++)
			;
		if (i == m.nr_listen) {
			char name[COMM_ESCAPED_SIZE];

			error("pid %ld (%s) does not listen on TCP port %u (%s): nothing would "
			      "reach it",
			      pid, name_shown(m.comm, name, sizeof(name)), target.port,
			      m.nr_listen ? "see 'ss -ltnp'" : "it listens on no TCP port");
			ret = 1;
			goto out_dir;
		}
	}
	m.url = client;
	m.command = load_cmd;
	m.protocol = !client			      ? "command"
		     : target.proto == LOAD_MEMCACHED ? "memcached"
		     : target.proto == LOAD_REDIS     ? "redis"
						      : "http";

	ksyms = model__kallsyms_read();
	for (r = 0; r < nr_runs; r++) {
		struct model_fds fds = {0};
		struct collect_opts co = {
			.pid = (pid_t)pid, .dwarf = dwarf, .fds = &fds, .kallsyms = ksyms};
		struct load_result res;
		char path[PATH_MAX + 32], cmd[8192];
		struct model_run *run;
		struct trace *t;
		int err, lerr;

		co.spec = load_of_run(&target, runs[r].conns, runs[r].rate, runs[r].duration,
				      reconnect);
		if (load_cmd) {
			if ((err = load__expand(load_cmd, &co.spec, cmd, sizeof(cmd)))) {
				ret = usage_error("model", "--load: %s",
						  err == -EINVAL ? "unknown {placeholder}"
								 : "too long once expanded");
				break;
			}
			co.command = cmd;
		}
		snprintf(path, sizeof(path), "%s/run-%zu.trace", dir, r);
		co.trace_path = path;
		fprintf(stderr, "srvscope: model: run %zu/%zu: %u connection(s), %g req/s, %g s\n",
			r + 1, nr_runs, co.spec.conns, co.spec.rate, co.spec.duration_s);
		err = model__collect(&co, &res, &lerr);
		if (err) {
			model_fds__free(&fds);
			ret = 1;
			break;
		}
		if (!alive((pid_t)pid)) {
			model_fds__free(&fds);
			error("the server (pid %ld) exited during run %zu: the model describes the "
			      "runs before it",
			      pid, r + 1);
			ret = 1;
			break;
		}
		if (lerr) {
			model_fds__free(&fds);
			if (load_cmd)
				error("run %zu: the load command failed (%s %d): the model "
				      "describes "
				      "the runs before it",
				      r + 1, lerr < 0 ? "error" : "exit status",
				      lerr < 0 ? -lerr : lerr);
			else
				error("run %zu: %s: the model describes the runs before it", r + 1,
				      res.error[0] ? res.error : strerror(-lerr));
			ret = 1;
			break;
		}
		if (!load_cmd)
			load__print_result(&res, stderr);
		else if (res.command_stopped)
			notice("run %zu: the load command was still running %g s after the run's "
			       "%g s: stopped, and the run kept (a command given {duration} ends "
			       "on time)",
			       r + 1, MODEL_COMMAND_GRACE_S, co.spec.duration_s);
		t = trace__open_report(path);
		if (!t) {
			model_fds__free(&fds);
			ret = 1;
			break;
		}
		if (add_trace_run(&m, &traces, t, keep ? xstrdup(path) : NULL, (uint32_t)pid,
				  &fds)) {
			trace__close(t);
			ret = 1;
			break;
		}
		run = &m.runs[m.nr_runs - 1];
		run->conns = co.spec.conns;
		run->reconnect_s = load_cmd ? -1 : co.spec.reconnect_s;
		run->rate = co.spec.rate;
		run->duration_s = co.spec.duration_s;
		if (!load_cmd) {
			run->client_requests = res.completed;
			run->load_elapsed_s = res.elapsed_s;
			run->have_latency = res.completed > 0;
			run->p50_us = res.p50_us;
			run->p90_us = res.p90_us;
			run->p99_us = res.p99_us;
			run->max_us = res.max_us;
			run->errors = res.errors;
		}
		if (!run->cycles && !run->nr_conn)
			warning("run %zu: the server accepted no connection (is it listening where "
				"the load connects?)",
				r + 1);
		if (record__signalled() && r + 1 < nr_runs) {
			notice("interrupted: the model describes the %zu run(s) done", r + 1);
			break;
		}
	}
	model__kallsyms_free(ksyms);
	if (!ret && !load_cmd && m.nr_runs && !record__signalled())
		cpu_unrecorded(&m, (pid_t)pid, &target);
	if (m.nr_runs && finish(&m, traces, output, skeleton ? &target : NULL))
		ret = 1;
	for (r = 0; r < m.nr_runs; r++) {
		trace__close((struct trace *)traces[r]);
		if (keep)
			free((char *)m.runs[r].trace_path);
	}
	free(traces);
	model__free(&m);
out_dir:
	if (!keep) {
		char path[PATH_MAX + 32];

		for (r = 0; r < nr_runs; r++) {
			snprintf(path, sizeof(path), "%s/run-%zu.trace", dir, r);
			unlink(path);
		}
		rmdir(dir);
	}
	return ret;
}
