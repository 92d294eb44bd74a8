/* Option and argument handling shared by the trace reports (blocking, sched, flame): the
 * thread filters, --format, --help, and the trace file. */
#include <stdio.h>
#include <string.h>

#include "trace/report_cmdline.h"
#include "trace/trace.h"
#include "util/escape.h"
#include "util/util.h"

void report_cmdline__init(struct report_cmdline *rc, const char *cmd, const char *usage,
			  const char *format, const char *alt_format)
{
	memset(rc, 0, sizeof(*rc));
	rc->cmd = cmd;
	rc->usage = usage;
	rc->formats[0] = format;
	rc->formats[1] = alt_format;
	rc->nr_formats = alt_format ? 2 : 1;
	rc->format = format;
}

void report_cmdline__add_format(struct report_cmdline *rc, const char *format)
{
	if (rc->nr_formats < ARRAY_SIZE(rc->formats))
		rc->formats[rc->nr_formats++] = format;
}

/* "a or b", "a, b or c" */
static const char *format_list(const struct report_cmdline *rc, char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < rc->nr_formats && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s",
			      !i ? "" : (i + 1 == rc->nr_formats ? " or " : ", "), rc->formats[i]);
	return buf;
}

void report_cmdline__filters(struct report_cmdline *rc, long *pid, long *tid, const char **comm)
{
	rc->pid = pid;
	rc->tid = tid;
	rc->comm = comm;
}

/* One option getopt_long() returned: 1 when taken, 0 when it is the command's, -1 on a usage
 * error (reported). */
static int take_option(struct report_cmdline *rc, int c, const char *arg)
{
	switch (c) {
	case 'p':
		return parse_long("--pid", arg, 1, 4194304, rc->pid) ? -1 : 1;
	case 't':
		return parse_long("--tid", arg, 1, 4194304, rc->tid) ? -1 : 1;
	case 'c':
		*rc->comm = arg;
		return 1;
	case 'f': {
		char buf[128];
		size_t i;

		/* As the commands always did: the default value does not undo another one
		 * given earlier ("--format=json --format=text" is json). */
		for (i = 0; i < rc->nr_formats && strcmp(arg, rc->formats[i]); i++)
			;
		if (i == rc->nr_formats)
			return error("invalid value '%s' for --format: expected %s", arg,
				     format_list(rc, buf, sizeof(buf)));
		if (i)
			rc->format = rc->formats[i];
		return 1;
	}
	case '?':
	case ':':
		option_error(rc->cmd, c, rc->argv);
		return -1;
	}
	return 0;
}

int report_cmdline__next(struct report_cmdline *rc, int argc, char **argv, const char *shortopts,
			 const struct option *longopts)
{
	char opts[64];
	int c, taken;

	/* A leading ':' so that getopt says nothing and tells a missing value (':') from an
	 * unknown option ('?'): option_error() says either in one line. */
	snprintf(opts, sizeof(opts), ":%s", shortopts);
	rc->argv = argv;
	while ((c = getopt_long(argc, argv, opts, longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(rc->usage, stdout);
			rc->status = 0;
			return -1;
		}
		taken = take_option(rc, c, optarg);
		if (taken < 0) {
			rc->status = 2;
			return -1;
		}
		if (!taken)
			return c;
	}
	rc->first = optind;
	return 0;
}

int report_cmdline__needs(const struct report_cmdline *rc, const char *what)
{
	return usage_error(rc->cmd, "needs %s", what);
}

struct trace *report_cmdline__open(struct report_cmdline *rc, int argc, char **argv)
{
	struct trace *t;
	size_t i;

	if (rc->first != argc - 1) {
		rc->status =
			report_cmdline__needs(rc, "one trace file (made by 'srvscope record')");
		return NULL;
	}
	t = trace__open_report(argv[rc->first]);
	if (!t) {
		rc->status = 1;
		return NULL;
	}
	/* Thread names are the recorded processes' to choose: escaped once, here, so that no
	 * report prints a control byte or splits a folded line with them. */
	for (i = 0; i < t->nr_threads; i++)
		name_escape_inplace(t->threads[i].comm, sizeof(t->threads[i].comm));
	return t;
}
