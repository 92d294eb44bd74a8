/* srvscope serve: the long-running agent (src/serve/): options, then serve__run. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "record/record.h"
#include "serve/serve.h"
#include "util/safefile.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope serve (-p PID[,PID...] | -a) [--listen ADDR:PORT] [options]\n"
	"\n"
	"Records the processes (with their descendants) continuously and serves what it sees\n"
	"over HTTP until SIGTERM, SIGINT or SIGHUP (or until every process is gone):\n"
	"  /metrics                        Prometheus metrics: off-CPU seconds by syscall\n"
	"                                  and by wake kind, scheduling-delay histograms,\n"
	"                                  blocking episodes, lost events, the agent's own\n"
	"                                  CPU and memory\n"
	"  /debug/pprof/offcpu?seconds=N   off-CPU profile (pprof) of the next N seconds\n"
	"  /debug/pprof/profile?seconds=N  on-CPU profile (pprof; needs --on-cpu)\n"
	"  /stacks?pid=PID                 every thread's stack now (nostop, JSON)\n"
	"Read-only (GET); a pid outside the served set is refused. docs/serve.md.\n"
	"\n"
	"  -p, --pid PID[,PID]     processes to serve, with their descendants\n"
	"  -a, --all               every process\n"
	"  -l, --listen ADDR:PORT  address to listen on (default " SERVE_DEFAULT_LISTEN
	", loopback;\n"
	"                          [::1]:PORT for IPv6; 0.0.0.0:PORT opens it to the network)\n"
	"      --token TOKEN       require 'Authorization: Bearer TOKEN' on every request\n"
	"      --token-file FILE   the same, the token read from FILE (not shown by ps)\n"
	"      --on-cpu[=HZ]       sample on-CPU stacks HZ times a second for\n"
	"                          /debug/pprof/profile (default 49 when given; off without)\n"
	"      --max-seconds N     the longest profile a request may ask for (default 60)\n"
	"      --max-profiles N    profiles and /stacks answered at once (default 4; more: 429)\n"
	"      --max-connections N connections at once (default 128)\n"
	"      --buffer-mb N       the recorder's ring buffer in MiB (default 8)\n"
	"      --call-graph=fp|dwarf  user stacks by frame pointers (default: cheap, but\n"
	"                          code without them, such as libc's waits, ends the stack\n"
	"                          at [truncated]) or unwound with DWARF CFI as record does\n"
	"                          (complete, several times the CPU: docs/serve.md)\n"
	"      --max-series N      metric label sets kept (default 5000; then \"[other]\")\n"
	"      --max-stacks N      distinct stacks kept for the profiles (default 50000)\n"
	"  -v, --verbose           libbpf's and the HTTP library's messages\n";

/* The first line of FILE, without its newline; NULL after a message. A regular file or a
 * stream handed over (util/safefile.h): a FIFO planted at the path would hold the agent's
 * start for ever. */
static char *read_token(const char *path)
{
	char buf[4096];
	int fd = safefile__open_input(path, NULL);
	ssize_t n = fd < 0 ? fd : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0 && n < 0)
		n = -errno;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		return error("cannot read --token-file '%s': %s", path, safefile__strerror((int)n)),
		       NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[0])
		return error("--token-file '%s' holds no token", path), NULL;
	return xstrdup(buf);
}

int cmd_serve(int argc, char **argv)
{
	enum {
		OPT_TOKEN = 256,
		OPT_TOKEN_FILE,
		OPT_ON_CPU,
		OPT_MAX_SECONDS,
		OPT_MAX_PROFILES,
		OPT_MAX_CONN,
		OPT_BUFFER,
		OPT_MAX_SERIES,
		OPT_MAX_STACKS,
		OPT_CALL_GRAPH,
	};
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, 'a'},
		{"listen", required_argument, NULL, 'l'},
		{"token", required_argument, NULL, OPT_TOKEN},
		{"token-file", required_argument, NULL, OPT_TOKEN_FILE},
		{"on-cpu", optional_argument, NULL, OPT_ON_CPU},
		{"max-seconds", required_argument, NULL, OPT_MAX_SECONDS},
		{"max-profiles", required_argument, NULL, OPT_MAX_PROFILES},
		{"max-connections", required_argument, NULL, OPT_MAX_CONN},
		{"buffer-mb", required_argument, NULL, OPT_BUFFER},
		{"max-series", required_argument, NULL, OPT_MAX_SERIES},
		{"max-stacks", required_argument, NULL, OPT_MAX_STACKS},
		{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0}};
	struct serve_opts o = {
		.listen = SERVE_DEFAULT_LISTEN,
		.max_seconds = 60,
		.max_profiles = 4,
		.max_connections = 128,
		.buffer_size = 8u << 20,
		.limits = {.threads = 65536, .series = 5000, .stacks = 50000, .entries = 100000},
	};
	char *token = NULL;
	long v;
	int c, ret = EXIT_USAGE;

	while ((c = getopt_long(argc, argv, ":p:al:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid_list(optarg, &o.pids, &o.nr_pids))
				goto out;
			break;
		case 'a':
			o.all = true;
			break;
		case 'l':
			o.listen = optarg;
			break;
		case OPT_TOKEN:
			if (!optarg[0]) {
				usage_error("serve", "--token needs a non-empty token");
				goto out;
			}
			free(token);
			token = xstrdup(optarg);
			break;
		case OPT_TOKEN_FILE:
			free(token);
			token = read_token(optarg);
			if (!token)
				goto out;
			break;
		case OPT_ON_CPU:
			v = 49;
			if (optarg && parse_long("--on-cpu", optarg, 1, 1000, &v))
				goto out;
			o.on_cpu_hz = (unsigned int)v;
			break;
		case OPT_MAX_SECONDS:
			if (parse_long("--max-seconds", optarg, 1, 3600, &v))
				goto out;
			o.max_seconds = (unsigned int)v;
			break;
		case OPT_MAX_PROFILES:
			if (parse_long("--max-profiles", optarg, 1, 64, &v))
				goto out;
			o.max_profiles = (unsigned int)v;
			break;
		case OPT_MAX_CONN:
			if (parse_long("--max-connections", optarg, 1, 4096, &v))
				goto out;
			o.max_connections = (unsigned int)v;
			break;
		case OPT_BUFFER:
			/* The ring buffer's size is a power of two: rounded up. */
			if (parse_long("--buffer-mb", optarg, 1, 1024, &v))
				goto out;
			for (o.buffer_size = 1u << 20; o.buffer_size < (uint64_t)v << 20;)
				o.buffer_size <<= 1;
			break;
		case OPT_MAX_SERIES:
			if (parse_long("--max-series", optarg, 10, 10000000, &v))
				goto out;
			o.limits.series = (size_t)v;
			break;
		case OPT_MAX_STACKS:
			if (parse_long("--max-stacks", optarg, 100, 100000000, &v))
				goto out;
			o.limits.stacks = (size_t)v;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "dwarf")) {
				o.ustack_dump_bytes = RECORD_DEFAULT_DUMP_SIZE;
			} else if (!strcmp(optarg, "fp")) {
				o.ustack_dump_bytes = 0;
			} else {
				error("invalid value '%s' for --call-graph: expected fp or dwarf",
				      optarg);
				goto out;
			}
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = 0;
			goto out;
		default:
			ret = option_error("serve", c, argv);
			goto out;
		}
	}
	if (optind < argc) {
		usage_error("serve", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if ((o.nr_pids > 0) + o.all != 1) {
		usage_error("serve", "needs exactly one target: -p PID[,PID...] or -a");
		goto out;
	}
	o.token = token;
	ret = serve__run(&o) ? 1 : 0;
out:
	free(token);
	free(o.pids);
	return ret;
}
