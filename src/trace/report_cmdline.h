/* The command line the trace reports (blocking, sched, flame) share: the thread filters
 * --pid/--tid/--comm, a --format with two values, --help and unknown options, and the one
 * trace file they read. Every message and exit status here is part of their interface. */
#ifndef SRVSCOPE_TRACE_REPORT_CMDLINE_H
#define SRVSCOPE_TRACE_REPORT_CMDLINE_H

#include <getopt.h>

struct trace;

/* The getopt_long() entries of the options handled here, for a command's longopts (with
 * their letters in its short options): only the options a command lists are taken. (Left
 * unformatted: clang-format would spread each braced entry over three lines.) */
/* clang-format off */
#define REPORT_CMDLINE_OPT_FILTERS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "tid", required_argument, NULL, 't' }, \
	{ "comm", required_argument, NULL, 'c' }
#define REPORT_CMDLINE_OPT_FORMAT { "format", required_argument, NULL, 'f' }
#define REPORT_CMDLINE_OPT_HELP { "help", no_argument, NULL, 'h' }
/* clang-format on */

struct report_cmdline {
	const char *cmd;	/* "sched": starts the "sched needs ..." errors */
	const char *usage;	/* the usage text, for --help */
	const char *formats[4]; /* the values --format takes, the default first */
	size_t nr_formats;
	const char *format; /* the last other than the default that --format named, else it */
	long *pid, *tid;    /* where --pid and --tid go, see report_cmdline__filters() */
	const char **comm;  /* where --comm goes */
	int first;	    /* argv index of the first argument after the options */
	int status;	    /* the exit status when a call here returns an error */
	char **argv;	    /* what report_cmdline__next() parses, for its messages */
};

/* Before parsing: the default format and another (or NULL). The strings must outlive rc. */
void report_cmdline__init(struct report_cmdline *rc, const char *cmd, const char *usage,
			  const char *format, const char *alt_format);
/* One more value --format takes (at most four in all). */
void report_cmdline__add_format(struct report_cmdline *rc, const char *format);
/* Where the values of --pid, --tid and --comm go (left alone when they are not given);
 * required before parsing when the command lists REPORT_CMDLINE_OPT_FILTERS. */
void report_cmdline__filters(struct report_cmdline *rc, long *pid, long *tid, const char **comm);

/* getopt_long() over argv that takes the options above itself: --pid, --tid, --comm and
 * --format are stored, --help prints the usage to stdout, an unknown option or a
 * missing value is said in one line (option_error()). shortopts must not start with ':'
 * (one is added). Returns the next
 * option the command handles itself, as getopt_long() returns it (no longopts entry may set
 * a flag), 0 after the last option, or -1 when the command must return rc->status at once:
 * 0 after --help, 2 after a usage error. */
int report_cmdline__next(struct report_cmdline *rc, int argc, char **argv, const char *shortopts,
			 const struct option *longopts);

/* Prints "srvscope: <cmd>: needs <what> (see 'srvscope <cmd> --help')". Returns 2, the exit
 * status of a usage error. */
int report_cmdline__needs(const struct report_cmdline *rc, const char *what);

/* After the options: checks that exactly one argument, the trace file, follows them, and
 * opens it with trace__open_report(), which warns about a truncated file and lost events.
 * Returns the trace, or NULL with rc->status set: 2 when the arguments are wrong (reported
 * in one line), 1 when the file cannot be read (reported). */
struct trace *report_cmdline__open(struct report_cmdline *rc, int argc, char **argv);

#endif
