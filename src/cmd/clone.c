/* srvscope clone: runs a synthetic server built from a `srvscope model` file, or with
 * --check starts it, drives it with the model's load and compares it with the model. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "clone/clone.h"
#include "cmd/cmd.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope clone MODEL.json [--port P] [--listen ADDR] [--check [options]]\n"
	"\n"
	"Runs a server built from a model written by 'srvscope model': the original's\n"
	"threads and processes (named as its clusters), its network model (acceptors, epoll\n"
	"pool, thread or process per connection, hand-off), its background threads, and per\n"
	"request its syscall cycle (reads of the request size, the answer written with the\n"
	"same call and iovec layout, file work on a scratch file, calibrated on-CPU work),\n"
	"speaking the protocol its load used (memcached, redis, HTTP/1.1; else raw sizes).\n"
	"It runs until SIGINT or SIGTERM, then stops with every process it forked.\n"
	"See docs/clone.md for what is reproduced and what is not.\n"
	"\n"
	"  -P, --port P        TCP port to listen on (default: the model's; 0: any free one)\n"
	"  -l, --listen ADDR   IPv4 address to listen on (default: the model's, 127.0.0.1)\n"
	"  -q, --quiet         no line on stderr once it listens\n"
	"      --cpu-us US     on-CPU microseconds per request to reproduce at every load,\n"
	"                      instead of the model's (the original's over its skeleton's,\n"
	"                      both loaded at once, times the clone's own CPU per request\n"
	"                      less its spin; in a model without that figure, the line\n"
	"                      through the original's at its rate and at peak, followed by\n"
	"                      the clone's wake-ups per request)\n"
	"      --framing F     for a model whose load is not memcached, redis nor HTTP: how\n"
	"                      requests end: 'size' (the modelled request size, the default)\n"
	"                      or 'line' (a newline; answers end with one too)\n"
	"      --check         start the clone, drive it with the model's load, print it\n"
	"                      side by side with the model (network model, syscalls per\n"
	"                      request, throughput, latency), then stop it\n"
	"  -r, --rate R        --check: requests per second of the fixed-rate run (default:\n"
	"                      the model's last run's)\n"
	"  -c, --conns N       --check: connections (default: the model's last run's)\n"
	"  -d, --duration S    --check: seconds of each run (default 3)\n"
	"      --load CMD      --check: drive the clone with CMD (run by /bin/sh) instead of the\n"
	"                      built-in load, {port} {conns} {rate} {duration} {requests}\n"
	"                      replaced; throughput is then the clone's own count, no latency\n";

int cmd_clone(int argc, char **argv)
{
	static const struct option longopts[] = {{"port", required_argument, NULL, 'P'},
						 {"listen", required_argument, NULL, 'l'},
						 {"quiet", no_argument, NULL, 'q'},
						 {"check", no_argument, NULL, 'C'},
						 {"rate", required_argument, NULL, 'r'},
						 {"conns", required_argument, NULL, 'c'},
						 {"duration", required_argument, NULL, 'd'},
						 {"framing", required_argument, NULL, 'F'},
						 {"cpu-us", required_argument, NULL, 'U'},
						 {"load", required_argument, NULL, 'L'},
						 {"help", no_argument, NULL, 'h'},
						 {0}};
	struct clone_opts o = {.port = -1, .ready_fd = -1};
	struct clone_check_opts co = {.rate = -1, .conns = 0, .duration_s = 3};
	struct clone_model m;
	char err[512];
	bool check = false;
	const char *framing = NULL;
	double cpu_us = -1;
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":P:l:qr:c:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			if (parse_long("--port", optarg, 0, 65535, &v))
				return EXIT_USAGE;
			o.port = (int)v;
			break;
		case 'l':
			o.listen_addr = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'C':
			check = true;
			break;
		case 'r':
			if (parse_double("--rate", optarg, 1, 10e6, &co.rate))
				return EXIT_USAGE;
			break;
		case 'c':
			if (parse_long("--conns", optarg, 1, 10000, &v))
				return EXIT_USAGE;
			co.conns = (unsigned)v;
			break;
		case 'd':
			if (parse_double("--duration", optarg, 0.2, 3600, &co.duration_s))
				return EXIT_USAGE;
			break;
		case 'F':
			if (strcmp(optarg, "line") && strcmp(optarg, "size"))
				return usage_error(
					"clone", "--framing is 'line' or 'size', not '%s'", optarg);
			framing = optarg;
			break;
		case 'L':
			co.load = optarg;
			break;
		case 'U':
			if (parse_double("--cpu-us", optarg, 0, 10e6, &cpu_us))
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return option_error("clone", c, argv);
		}
	}
	if (optind != argc - 1)
		return usage_error("clone", optind == argc ? "which model? (MODEL.json)"
							   : "one model at a time");
	if (clone_model__load(argv[optind], &m, err, sizeof(err))) {
		error("clone: %s: %s", argv[optind], err);
		return 1;
	}
	if (framing && m.proto != CLONE_RAW)
		return usage_error("clone", "--framing is for a model whose load is not memcached, "
					    "redis nor HTTP (this one's is)");
	if (cpu_us >= 0) { /* one figure at every load */
		m.on_cpu_us_per_request = cpu_us;
		m.cpu_line = false;
		m.cpu_ratio = 0;
	}
	if (framing && !strcmp(framing, "line"))
		m.proto = CLONE_LINE;
	if (co.load && !check)
		return usage_error("clone", "--load goes with --check");
	if (check)
		return clone__check(argv[optind], &m, &o, &co) ? 1 : 0;
	return clone__run(&m, &o, NULL) ? 1 : 0;
}
