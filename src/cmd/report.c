/* srvscope report: one self-contained HTML page from one or more trace files: summary,
 * per-thread table, flame graphs, delay histograms, timeline (src/report/). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "report/report.h"
#include "util/safefile.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope report TRACE... -o FILE.html [--force] [--model FILE.json]\n"
	"                       [--critical-path FILE.json] [--buckets N] [--max-threads N]\n"
	"\n"
	"One HTML file that opens in any browser with no network: for each trace, a summary,\n"
	"a table of the threads (CPU time, blocked time, scheduling delay; sort by clicking a\n"
	"column, filter by typing), off-CPU, wake-up and on-CPU flame graphs (click to zoom,\n"
	"search to highlight), scheduling-delay histograms and each thread's timeline. Only\n"
	"aggregates go into the file, so its size does not grow with the trace's. See\n"
	"docs/report.md.\n"
	"\n"
	"  -o, --output FILE       the page to write ('-': standard output)\n"
	"      --force             replace FILE if it exists (a regular file, or a symbolic\n"
	"                          link to one)\n"
	"      --model FILE        also show this model document (docs/model-json.md)\n"
	"      --critical-path FILE  also show this critical-path document (JSON)\n"
	"      --buckets N         columns of the timeline (default 400, 10 to 4000)\n"
	"      --max-threads N     threads in the table and timeline, the busiest first\n"
	"                          (default 1000)\n";

int cmd_report(int argc, char **argv)
{
	enum { OPT_FORCE = 256, OPT_MODEL, OPT_CRITICAL, OPT_BUCKETS, OPT_MAX_THREADS };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, OPT_FORCE},
		{"model", required_argument, NULL, OPT_MODEL},
		{"critical-path", required_argument, NULL, OPT_CRITICAL},
		{"buckets", required_argument, NULL, OPT_BUCKETS},
		{"max-threads", required_argument, NULL, OPT_MAX_THREADS},
		{"help", no_argument, NULL, 'h'},
		{0}};
	struct report_opts o = {.buckets = REPORT_BUCKETS_DEFAULT,
				.max_threads = REPORT_MAX_THREADS_DEFAULT};
	const char *output = NULL;
	bool force = false;
	FILE *f = stdout;
	long v;
	int c, fd, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_MODEL:
			o.model = optarg;
			break;
		case OPT_CRITICAL:
			o.critical = optarg;
			break;
		case OPT_BUCKETS:
			if (parse_long("--buckets", optarg, 10, 4000, &v))
				return EXIT_USAGE;
			o.buckets = v;
			break;
		case OPT_MAX_THREADS:
			if (parse_long("--max-threads", optarg, 1, 1000000, &v))
				return EXIT_USAGE;
			o.max_threads = v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return option_error("report", c, argv);
		}
	}
	if (optind >= argc)
		return usage_error("report", "needs at least one trace file (made by 'srvscope "
					     "record')");
	if (!output)
		return usage_error("report", "needs -o FILE.html (or -o - for standard output)");
	if (strcmp(output, "-")) {
		fd = safefile__create(output, SAFEFILE_MODE, force);
		if (fd < 0) {
			error("cannot create '%s': %s", output, safefile__strerror(fd));
			return 1;
		}
		f = fdopen(fd, "w");
		if (!f) {
			close(fd);
			error("cannot create '%s': %s", output, strerror(errno));
			return 1;
		}
	}
	err = report__write_html(f, argv + optind, argc - optind, &o);
	if (f != stdout && fclose(f) && !err)
		err = error("cannot write '%s': %s", output, strerror(errno));
	if (err && f != stdout)
		unlink(output); /* no half page left behind */
	return err ? 1 : 0;
}
