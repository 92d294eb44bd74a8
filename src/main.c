/* srvscope: the command table. Everything else lives in src/cmd/ and the library. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

#define SRVSCOPE_VERSION "0.1.0"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"stacks", cmd_stacks, "stacks of every thread, grouped (poor man's profiler)"},
	{"top", cmd_top, "live, continuously updated view of the threads' stacks"},
	{"record", cmd_record, "record scheduler and syscall events into a trace file"},
	{"blocking", cmd_blocking, "per-thread blocking episodes from a trace file"},
	{"sched", cmd_sched, "scheduling latency per thread from a trace file"},
	{"flame", cmd_flame, "off-CPU, wake-up and on-CPU flame graphs from a trace file"},
	{"timeline", cmd_timeline,
	 "each thread's running, runnable and blocked time, for Perfetto"},
	{"load", cmd_load, "open-loop load on a memcached, redis or HTTP server, with latencies"},
	{"model", cmd_model, "what a server is: thread roles, network model, syscalls per request"},
	{"critical", cmd_critical, "the critical path of a thread, across threads and hosts"},
	{"report", cmd_report, "one self-contained HTML report (flame graphs, tables) of traces"},
	{"clone", cmd_clone, "run a synthetic server built from a srvscope model"},
	{"cpu", cmd_cpu, "where CPU time goes: functions, components, threads, cores"},
	{"topology", cmd_topology, "the machine's cores, caches and NUMA nodes; where threads ran"},
	{"serve", cmd_serve, "agent: Prometheus metrics and pprof profiles over HTTP"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: srvscope <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'srvscope <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("srvscope %s\n", SRVSCOPE_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "srvscope: unknown command '%s'; 'srvscope --help' lists them\n", argv[1]);
	return 2;
}
