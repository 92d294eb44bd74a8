/* srvscope topology: the machine as hwloc sees it (lstopo's view), and with -p where a
 * process's threads ran during a window. */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cpu/cpu.h"
#include "proc/task.h"
#include "symbol/symbolizer.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope topology [-p PID [-d SECONDS]] [-f text|json]\n"
	"\n"
	"The machine as hwloc sees it: packages, NUMA nodes, caches, cores and hardware\n"
	"threads, printed as 'lstopo-no-graphics --no-io' prints them. With -p, where each\n"
	"thread of PID ran during the window (its share of on-CPU samples per CPU, core and\n"
	"NUMA node), its migrations, the CPUs it may run on, and the process's memory per NUMA\n"
	"node; threads sharing a core's hardware threads or running on several NUMA nodes are\n"
	"flagged.\n"
	"\n"
	"  -p, --pid PID            process whose threads are placed\n"
	"  -d, --duration SECONDS   length of the window (default 2)\n"
	"  -F, --freq HZ            samples per second per CPU (default 999)\n"
	"  -f, --format FMT         text (default) or json\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Samples pid's threads for duration seconds: the placement as JSON, or NULL. */
static json_t *place(pid_t pid, long duration, long hz, const struct topo *topo)
{
	struct cpu_opts o = {.pids = &pid, .nr_pids = 1, .hz = hz};
	struct cpu_session *s;
	struct cpu_profile *p;
	struct placement pl = {0};
	uint64_t t0, end;
	json_t *j;

	s = cpu_session__new(&o);
	if (!s)
		return NULL;
	p = cpu_profile__new(cpu_session__nr_cpus(s));
	cpu_proc__start(p, pid);
	placement__start(&pl, p);
	t0 = now_ns();
	end = t0 + duration * 1000000000ull;
	while (!stop && now_ns() < end) {
		struct timespec ts = {0, 50 * 1000000L};

		nanosleep(&ts, NULL);
		if (!cpu_pid_alive(pid))
			break;
	}
	cpu_session__read(s, p, true);
	p->duration_ns = p->end_ns - t0;
	j = placement__json(&pl, p, topo, pid);
	placement__free(&pl);
	cpu_profile__delete(p);
	cpu_session__delete(s);
	return j;
}

int cmd_topology(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},	{"duration", required_argument, NULL, 'd'},
		{"freq", required_argument, NULL, 'F'}, {"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},	{},
	};
	long pid = 0, duration = 2, hz = 999;
	bool json = false;
	struct topo *topo;
	struct sigaction sa = {.sa_handler = on_signal};
	json_t *placed = NULL;
	int opt, ret = 1;

	while ((opt = getopt_long(argc, argv, ":p:d:F:f:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_long("-p", optarg, 1, 4194304, &pid))
				return EXIT_USAGE;
			break;
		case 'd':
			if (parse_long("-d", optarg, 1, 86400, &duration))
				return EXIT_USAGE;
			break;
		case 'F':
			if (parse_long("-F", optarg, 1, 100000, &hz))
				return EXIT_USAGE;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage_error("topology", "unknown format '%s': text or json",
						   optarg);
			json = !strcmp(optarg, "json");
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return option_error("topology", opt, argv);
		}
	}
	if (optind < argc)
		return usage_error("topology", "unexpected argument '%s'", argv[optind]);
	topo = topo__load();
	if (!topo)
		return 1;
	if (pid) {
		if (proc__check_target(pid, NULL, true))
			goto out;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		placed = place(pid, duration, hz, topo);
		if (!placed)
			goto out;
	}
	if (json) {
		json_t *doc = topo__json(topo);

		if (placed)
			json_object_set(doc, "process", placed);
		ret = json_dumpf(doc, stdout, JSON_INDENT(2)) ? 1 : 0;
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		ret = topo__write_text(stdout, topo) ? 1 : 0;
		if (placed && placement__write_text(stdout, placed))
			ret = 1;
	}
	if (fflush(stdout))
		ret = 1;
out:
	json_decref(placed);
	topo__delete(topo);
	symbolizer__exit();
	return ret;
}
