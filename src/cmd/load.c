/* srvscope load: one run of a built-in open-loop load client (memcached, redis, HTTP) or
 * of an external load command, and its result: on its own, for tests and for benches. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "load/load.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope load URL [options]\n"
	"       srvscope load --load 'COMMAND' [options]\n"
	"\n"
	"Sends requests at a fixed rate (open loop) over CONNS connections for SECONDS and\n"
	"prints how many completed and their latency percentiles, counted from each request's\n"
	"scheduled time (a slow server shows as latency, not as fewer requests). At most one\n"
	"request is outstanding on a connection; the others wait for a free one.\n"
	"URL is one of\n"
	"  memcached://HOST:PORT    text protocol get and set\n"
	"  redis://HOST:PORT        RESP GET and SET\n"
	"  http://HOST:PORT[/PATH]  HTTP/1.1 GET (Content-Length or chunked replies)\n"
	"\n"
	"  -c, --conns N          connections open at once (default 8)\n"
	"  -r, --rate R           requests per second in all (default 1000); 0: as fast as\n"
	"                         the server answers (closed loop)\n"
	"  -d, --duration S       seconds of load (default 5); the run ends within S + 1 s\n"
	"      --reconnect S      close and reopen each connection every S seconds, so the\n"
	"                         server keeps accepting (default 0: never)\n"
	"      --poisson          exponential gaps between requests (default: even gaps)\n"
	"      --threads N        client threads, 1 or 2 (default: 2 for rate 0 or above\n"
	"                         40000/s, else 1)\n"
	"      --value-size N     memcached/redis: bytes of each value set (default 100)\n"
	"      --set-share F      memcached/redis: share of sets, 0 to 1 (default 0.1)\n"
	"      --keys N           memcached/redis: distinct keys (default 1000)\n"
	"      --no-prefill       memcached/redis: do not set every key once before the run\n"
	"      --no-keepalive     HTTP: one request per connection (Connection: close)\n"
	"      --load 'COMMAND'   run COMMAND with /bin/sh instead, its {conns} {rate}\n"
	"                         {duration} {requests} replaced by the load's numbers; it is\n"
	"                         stopped (its whole process group) 1 s after the duration\n"
	"  -f, --format FMT       text (default) or json\n"
	"\n"
	"Exit status: 0 when requests completed, 1 when the run could not take place (nothing\n"
	"could connect, no good reply), 2 for a bad option; with --load, the command's.\n";

static volatile int stop_flag;

static void on_signal(int sig)
{
	stop_flag = 1;
}

static int print_json(const struct load_spec *s, const struct load_result *r, int status,
		      const char *command)
{
	json_t *root = json_object();
	int err;

	json_object_set_new(root, "conns", json_integer(s->conns));
	json_object_set_new(root, "rate", json_real(s->rate));
	json_object_set_new(root, "duration_s", json_real(s->duration_s));
	if (command) {
		json_object_set_new(root, "command", json_string(command));
		json_object_set_new(root, "status", json_integer(status));
	} else {
		json_object_set_new(root, "sent", json_integer(r->sent));
		json_object_set_new(root, "completed", json_integer(r->completed));
		json_object_set_new(root, "errors", json_integer(r->errors));
		json_object_set_new(root, "missed", json_integer(r->missed));
		json_object_set_new(root, "connects", json_integer(r->connects));
		json_object_set_new(root, "connect_errors", json_integer(r->connect_errors));
		json_object_set_new(root, "prefilled", json_integer(r->prefilled));
		json_object_set_new(root, "elapsed_s", json_real(r->elapsed_s));
		json_object_set_new(root, "throughput_rps", json_real(r->throughput_rps));
		json_object_set_new(root, "mean_us", json_real(r->mean_us));
		json_object_set_new(root, "p50_us", json_real(r->p50_us));
		json_object_set_new(root, "p90_us", json_real(r->p90_us));
		json_object_set_new(root, "p99_us", json_real(r->p99_us));
		json_object_set_new(root, "p999_us", json_real(r->p999_us));
		json_object_set_new(root, "max_us", json_real(r->max_us));
		json_object_set_new(root, "error",
				    r->error[0] ? json_string(r->error) : json_null());
	}
	err = json_dumpf(root, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(root);
	return err;
}

int cmd_load(int argc, char **argv)
{
	enum {
		OPT_RECONNECT = 256,
		OPT_VALUE_SIZE,
		OPT_SET_SHARE,
		OPT_KEYS,
		OPT_NO_KEEPALIVE,
		OPT_LOAD,
		OPT_POISSON,
		OPT_THREADS,
		OPT_NO_PREFILL,
	};
	static const struct option longopts[] = {
		{"conns", required_argument, NULL, 'c'},
		{"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'},
		{"reconnect", required_argument, NULL, OPT_RECONNECT},
		{"value-size", required_argument, NULL, OPT_VALUE_SIZE},
		{"set-share", required_argument, NULL, OPT_SET_SHARE},
		{"keys", required_argument, NULL, OPT_KEYS},
		{"no-keepalive", no_argument, NULL, OPT_NO_KEEPALIVE},
		{"load", required_argument, NULL, OPT_LOAD},
		{"poisson", no_argument, NULL, OPT_POISSON},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"no-prefill", no_argument, NULL, OPT_NO_PREFILL},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct load_spec s = {
		.conns = 8,
		.rate = 1000,
		.duration_s = 5,
		.keepalive = true,
		.value_size = 100,
		.set_share = 0.1,
		.keys = 1000,
	};
	struct load_result r;
	struct sigaction sa = {.sa_handler = on_signal};
	const char *command = NULL, *format = "text";
	char expanded[8192];
	bool stopped;
	double d;
	long l;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":c:r:d:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_long("-c", optarg, 1, 100000, &l))
				return EXIT_USAGE;
			s.conns = l;
			break;
		case 'r':
			if (parse_double("-r", optarg, 0, 1e8, &s.rate))
				return EXIT_USAGE;
			break;
		case 'd':
			if (parse_double("-d", optarg, 0.001, 31536000, &s.duration_s))
				return EXIT_USAGE;
			break;
		case OPT_RECONNECT:
			if (parse_double("--reconnect", optarg, 0, 31536000, &s.reconnect_s))
				return EXIT_USAGE;
			break;
		case OPT_VALUE_SIZE:
			if (parse_long("--value-size", optarg, 0, 64 << 20, &l))
				return EXIT_USAGE;
			s.value_size = l;
			break;
		case OPT_SET_SHARE:
			if (parse_double("--set-share", optarg, 0, 1, &d))
				return EXIT_USAGE;
			s.set_share = d;
			break;
		case OPT_KEYS:
			if (parse_long("--keys", optarg, 1, 1L << 31, &l))
				return EXIT_USAGE;
			s.keys = l;
			break;
		case OPT_NO_KEEPALIVE:
			s.keepalive = false;
			break;
		case OPT_LOAD:
			command = optarg;
			break;
		case OPT_POISSON:
			s.poisson = true;
			break;
		case OPT_THREADS:
			if (parse_long("--threads", optarg, 1, 2, &l))
				return EXIT_USAGE;
			s.threads = l;
			break;
		case OPT_NO_PREFILL:
			s.no_prefill = true;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage_error("load", "unknown format '%s': text or json",
						   optarg);
			format = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return option_error("load", c, argv);
		}
	}
	if (command && optind < argc)
		return usage_error("load", "give a URL or --load, not both");
	if (!command && optind != argc - 1)
		return usage_error("load", optind < argc ? "one URL only"
							 : "give a URL or --load 'COMMAND'");
	if (!command && load__parse_url(argv[optind], &s.target))
		return usage_error("load",
				   "invalid URL '%s': memcached://HOST:PORT, redis://HOST:PORT or "
				   "http://HOST:PORT/PATH",
				   argv[optind]);

	sigemptyset(&sa.sa_mask);
	if (command) {
		ret = load__expand(command, &s, expanded, sizeof(expanded));
		if (ret == -EINVAL)
			return usage_error("load",
					   "--load: unknown placeholder in '%s' (known: {conns} "
					   "{rate} {duration} {requests})",
					   command);
		if (ret)
			return usage_error("load", "--load: the expanded command is too long");
		notice("load: running %s", expanded);
		ret = load__run_command(expanded, s.duration_s, 1, &stopped);
		if (ret < 0)
			return error("cannot run the load command: %s", strerror(-ret)), 1;
		if (stopped)
			notice("load: the command was still running 1 s after its %g s: stopped",
			       s.duration_s);
		if (!strcmp(format, "json"))
			print_json(&s, NULL, ret, expanded);
		else
			printf("load command exited with status %d\n", ret);
		return ret;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = load__run(&s, &r, &stop_flag);
	if (ret) {
		error("load: %s", r.error);
		return 1;
	}
	if (!strcmp(format, "json"))
		print_json(&s, &r, 0, NULL);
	else
		load__print_result(&r, stdout);
	return 0;
}
