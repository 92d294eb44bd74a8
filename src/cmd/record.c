/* srvscope record: scheduler, wake-up and syscall events of the target processes (or of
 * every task) into a trace file for 'blocking', 'sched' and 'flame'. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "bpf/record.h"
#include "record/record.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope record [-p PID[,PID...] | -a | -- COMMAND ARGS...] [options]\n"
	"\n"
	"Records scheduler switches, wake-ups (with what woke the thread: a hard irq, a softirq,\n"
	"a timer, an IPI or a task), blocking syscalls and stacks into a trace file. With\n"
	"-- COMMAND, exits with the command's status when its exit ends the recording (1 when\n"
	"it cannot be run: no trace is left).\n"
	"\n"
	"  -p, --pid PID[,PID]    processes to record, with their whole trees: the children\n"
	"                         they have (of any depth) and those they fork\n"
	"      --no-children      -p: only the processes named (their forks still followed)\n"
	"  -a, --all              every task on the system\n"
	"  -d, --duration SECS    stop SECS seconds after the trace's start (default: at\n"
	"                         Ctrl-C, SIGTERM or SIGHUP, or when the command or every\n"
	"                         target process has exited)\n"
	"  -o, --output FILE      trace file (default " RECORD_DEFAULT_OUTPUT "), created with\n"
	"                         mode 0600; never written through a symbolic link\n"
	"      --force            replace FILE if it exists and is a regular file or a\n"
	"                         symbolic link to one (by default an existing FILE is left\n"
	"                         alone and record stops; a device, FIFO or /dev/stdout never\n"
	"                         is)\n"
	"      --on-cpu[=HZ]      also sample on-CPU stacks, HZ times a second (cpu-clock,\n"
	"                         default 99)\n"
	"  -F, --freq HZ          the same as --on-cpu=HZ\n"
	"      --buffer-size SIZE ring buffers' size, all CPUs together, e.g. 64M (default 32M;\n"
	"                         rounded up to a power of two, at least 4K; one ring per CPU)\n"
	"      --read-timer MS    drain the ring buffer every MS ms instead of being woken when\n"
	"                         it is a quarter full: fewer wake-ups of srvscope, but events\n"
	"                         are lost if the buffer fills in between (default: woken)\n"
	"      --call-graph=fp|dwarf[,SIZE]\n"
	"                         how user stacks are taken: 'dwarf' copies the top SIZE\n"
	"                         bytes of the stack (default 32K, at most 64K) and unwinds\n"
	"                         them with the objects' DWARF CFI while recording, so code\n"
	"                         without frame pointers (most distributions' libc) unwinds;\n"
	"                         'fp' follows frame pointers in the kernel (cheaper; stops\n"
	"                         at the first function without one). Default: dwarf\n"
	"      --no-stacks        no kernel or user stacks (smaller, cheaper)\n"
	"      --no-waker-stacks  stacks where threads block, not where they are woken from\n"
	"                         (each waking then costs what a scheduler event does)\n"
	"      --syscalls         trace every syscall of the targets (number, arguments,\n"
	"                         return value); costs every process a little per syscall.\n"
	"                         Without it, a blocked thread's syscall and arguments are\n"
	"                         read as it blocks\n"
	"      --stack-refresh MS 0: take every stack afresh. Otherwise (default 100) stacks\n"
	"                         taken where a thread blocked at the same place (syscall and\n"
	"                         arguments, user registers) are reused while they are\n"
	"                         provably the same: a kernel stack while every return\n"
	"                         address of it is in place, a user stack while the stack\n"
	"                         words its unwind read are unchanged\n"
	"      --net[=all]        also record TCP segments sent and received by this\n"
	"                         network namespace's devices (addresses, ports, seq, ack,\n"
	"                         flags), for 'srvscope critical' across hosts; =all: the\n"
	"                         loopback device's too (left out by default: they never\n"
	"                         cross hosts, and cost as much as scheduler events).\n"
	"                         Implies --ipi\n"
	"      --ipi              also record the inter-processor interrupts sent (by whom,\n"
	"                         to which CPUs), so that 'srvscope critical' follows a\n"
	"                         wake-up from an IPI back to the thread that sent it\n"
	"      --progress, --no-progress\n"
	"                         the live status line (default: when stderr is a terminal)\n"
	"      --cost             at the end, print what the recording cost per second: each\n"
	"                         BPF program's runs and CPU time (the kernel's run-time\n"
	"                         statistics, on for the recording only) and srvscope's own\n"
	"  -v, --verbose          libbpf's messages (verifier log on load errors)\n";

/* --clock-skew=OFFSET_NS,PPM (undocumented in --help, for tests of 'critical' across
 * hosts): every timestamp written is shifted by OFFSET_NS and stretched by PPM parts per
 * million from the recording's start, as another machine's clock would be. */
static int parse_skew(const char *s, struct record_opts *o)
{
	char *end;

	errno = 0;
	o->skew_ns = strtoll(s, &end, 10);
	if (errno || end == s || *end != ',')
		return error("invalid value '%s' for --clock-skew: expected OFFSET_NS,PPM", s);
	s = end + 1;
	o->skew_ppm = strtod(s, &end);
	if (end == s || *end || o->skew_ppm < -1000 || o->skew_ppm > 1000)
		return error("invalid value '%s' for --clock-skew: expected OFFSET_NS,PPM with "
			     "|PPM| <= 1000",
			     s);
	return 0;
}

/* "4096", "64K", "32M", "1G" into bytes, rounded up to a power of two. */
static int parse_size(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t p = 4096;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return error("invalid value '%s' for %s: expected a size such as 4K or 64M", s,
			     opt);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v < 4096 || v > (1ull << 31))
		return error("invalid value '%s' for %s: expected a size from 4K to 2G", s, opt);
	while (p < v)
		p <<= 1;
	*out = p;
	return 0;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1, i;
	char *s;

	for (i = 0; i < (size_t)argc; i++)
		len += strlen(argv[i]) + 1;
	s = xcalloc(1, len);
	for (i = 0; i < (size_t)argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* "fp", "dwarf" or "dwarf,SIZE" (SIZE in bytes or K, 512 to 64K, unrounded). */
static int parse_call_graph(const char *s, unsigned int *dump_bytes)
{
	char *end;
	unsigned long v;

	if (!strcmp(s, "fp")) {
		*dump_bytes = 0;
		return 0;
	}
	if (!strcmp(s, "dwarf")) {
		*dump_bytes = RECORD_DEFAULT_DUMP_SIZE;
		return 0;
	}
	if (strncmp(s, "dwarf,", 6))
		return error("invalid value '%s' for --call-graph: expected fp, dwarf or "
			     "dwarf,SIZE",
			     s);
	errno = 0;
	v = strtoul(s + 6, &end, 10);
	if (end != s + 6 && (*end == 'k' || *end == 'K'))
		v <<= 10, end++;
	if (end == s + 6 || *end || errno || v < 512 || v > REC_DUMP_MAX)
		return error("invalid size in --call-graph '%s': expected 512 to 64K bytes", s);
	*dump_bytes = v;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	enum {
		OPT_BUFFER = 256,
		OPT_NO_STACKS,
		OPT_SYSCALLS,
		OPT_PROGRESS,
		OPT_NO_PROGRESS,
		OPT_ON_CPU,
		OPT_STACK_REFRESH,
		OPT_READ_TIMER,
		OPT_CALL_GRAPH,
		OPT_NO_CHILDREN,
		OPT_FORCE,
		OPT_NET,
		OPT_CLOCK_SKEW,
		OPT_COST,
		OPT_NO_WAKER_STACKS,
		OPT_IPI,
	};
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, 'a'},
		{"no-children", no_argument, NULL, OPT_NO_CHILDREN},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, OPT_FORCE},
		{"on-cpu", optional_argument, NULL, OPT_ON_CPU},
		{"freq", required_argument, NULL, 'F'},
		{"buffer-size", required_argument, NULL, OPT_BUFFER},
		{"read-timer", required_argument, NULL, OPT_READ_TIMER},
		{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
		{"no-stacks", no_argument, NULL, OPT_NO_STACKS},
		{"syscalls", no_argument, NULL, OPT_SYSCALLS},
		{"stack-refresh", required_argument, NULL, OPT_STACK_REFRESH},
		{"progress", no_argument, NULL, OPT_PROGRESS},
		{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"net", optional_argument, NULL, OPT_NET},
		{"ipi", no_argument, NULL, OPT_IPI},
		{"cost", no_argument, NULL, OPT_COST},
		{"no-waker-stacks", no_argument, NULL, OPT_NO_WAKER_STACKS},
		{"clock-skew", required_argument, NULL, OPT_CLOCK_SKEW}, /* tests only */
		{0}};
	struct record_opts o = {
		.output = RECORD_DEFAULT_OUTPUT,
		.buffer_size = RECORD_DEFAULT_BUFFER,
		.progress = -1,
		.stack_refresh_ms = 100,
		.ustack_dump_bytes = RECORD_DEFAULT_DUMP,
	};
	struct stat st;
	char *cmdline;
	long hz;
	int c, ret, status;

	while ((c = getopt_long(argc, argv, "+:p:ad:o:F:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid_list(optarg, &o.pids, &o.nr_pids))
				return 2;
			break;
		case 'a':
			o.all = true;
			break;
		case OPT_NO_CHILDREN:
			o.no_children = true;
			break;
		case 'd':
			if (parse_double("-d", optarg, 0.001, 31536000, &o.duration))
				return 2;
			break;
		case 'o':
			if (!*optarg)
				return error("invalid value '' for -o: expected a file name"), 2;
			if (!strcmp(optarg, "-"))
				return usage_error("record",
						   "-o -: a trace is written to a file (the "
						   "reports map it), not to standard output; "
						   "give a file name");
			o.output = optarg;
			break;
		case OPT_FORCE:
			o.force = true;
			break;
		case 'F':
		case OPT_ON_CPU:
			hz = 99;
			if (optarg &&
			    parse_long(c == 'F' ? "-F" : "--on-cpu", optarg, 1, 10000, &hz))
				return 2;
			o.on_cpu_hz = hz;
			break;
		case OPT_BUFFER:
			if (parse_size("--buffer-size", optarg, &o.buffer_size))
				return 2;
			break;
		case OPT_READ_TIMER:
			if (parse_long("--read-timer", optarg, 1, 10000, &hz))
				return 2;
			o.read_timer_ms = hz;
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(optarg, &o.ustack_dump_bytes))
				return 2;
			break;
		case OPT_NO_STACKS:
			o.no_stacks = true;
			break;
		case OPT_SYSCALLS:
			o.syscalls = true;
			o.syscall_args = true; /* what the model needs: accept4 flags, iovecs */
			break;
		case OPT_STACK_REFRESH:
			if (parse_double("--stack-refresh", optarg, 0, 3600000,
					 &o.stack_refresh_ms))
				return 2;
			break;
		case OPT_PROGRESS:
			o.progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o.progress = 0;
			break;
		case 'v':
			o.verbose = true;
			break;
		case OPT_COST:
			o.cost = true;
			break;
		case OPT_NO_WAKER_STACKS:
			o.no_waker_stacks = true;
			break;
		case OPT_NET:
			if (optarg && strcmp(optarg, "all"))
				return usage_error("record",
						   "invalid value '%s' for --net: expected "
						   "--net or --net=all",
						   optarg);
			o.net = true;
			o.net_loopback = optarg != NULL;
			o.ipi = true;
			break;
		case OPT_IPI:
			o.ipi = true;
			break;
		case OPT_CLOCK_SKEW:
			if (parse_skew(optarg, &o))
				return 2;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return option_error("record", c, argv);
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if ((o.nr_pids > 0) + o.all + (o.argv != NULL) != 1) {
		usage_error("record",
			    "needs exactly one target: -p PID, -a, or -- COMMAND ARGS...");
		free(o.pids);
		return EXIT_USAGE;
	}
	/* Said before loading anything; the creation itself (O_EXCL) is what keeps it safe. */
	if (!o.force && lstat(o.output, &st) == 0) {
		error("cannot create '%s': %s already exists (not replaced: add --force to "
		      "replace it, or choose another -o)",
		      o.output, S_ISLNK(st.st_mode) ? "a symbolic link by that name" : "it");
		free(o.pids);
		return 1;
	}
	cmdline = join_args(argc, argv);
	o.cmdline = cmdline;
	ret = record__run(&o, &status);
	free(cmdline);
	free(o.pids);
	if (ret)
		return 1;
	return status >= 0 ? status : 0; /* the command's, when its exit ended the recording */
}
