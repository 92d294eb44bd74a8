/* Small helpers shared by every part of srvscope: error reporting in the git style,
 * checked allocation, number parsing with range checks, and clocks. */
#ifndef SRVSCOPE_UTIL_H
#define SRVSCOPE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Prints "srvscope: <message>" to stderr and returns -1, so callers can write
 * `return error("cannot open '%s'", path);`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "srvscope: warning: <message>" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a notice to stderr unless quiet mode is set. */
void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool util_quiet;
/* From now on the first error or warning goes into buf (size bytes, without the
 * "srvscope: " prefix) instead of stderr, and the others nowhere, until called with NULL:
 * for a caller that knows better what a failure means (a process that exited) and says
 * so itself. */
void util_hold_errors(char *buf, size_t size);

/* Allocation that never returns NULL: running out of memory ends srvscope with a
 * message (the target is never affected: the kernel detaches it). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Grows *arr (of *cap elements of size elem) so that it holds at least need elements. */
void xgrow(void **arr, size_t *cap, size_t need, size_t elem);

/* The exit statuses of every command (docs/srvscope.1, EXIT STATUS). */
#define EXIT_USAGE 2 /* a bad option, value or argument: nothing was done */

/* After getopt_long() returned '?' (an unknown option) or ':' (an option without its
 * value; the optstring starts with ':', so getopt itself prints nothing): prints the one
 * line "srvscope: CMD: unknown option '--foo' (see 'srvscope CMD --help')" and returns
 * EXIT_USAGE. */
int option_error(const char *cmd, int c, char **argv);
/* "srvscope: CMD: <message> (see 'srvscope CMD --help')"; returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a whole string as a number within [min, max]. On failure prints
 * "srvscope: invalid value '<s>' for <option>: ..." and returns -1. */
int parse_long(const char *option, const char *s, long min, long max, long *out);
int parse_double(const char *option, const char *s, double min, double max, double *out);
/* "-p PID[,PID...]": appends each to *pids (grown with xrealloc; *nr counts them). An
 * empty list or a bad PID prints one line and returns -1. */
int parse_pid_list(const char *s, pid_t **pids, size_t *nr);

/* FNV-1a over bytes, continuing from h (FNV1A_INIT to start): the hash of the project's
 * string-keyed tables. */
#define FNV1A_INIT 0xcbf29ce484222325ull
static inline uint64_t fnv1a(const void *data, size_t len, uint64_t h)
{
	const unsigned char *c = data;

	while (len--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/* FNV-1a of a NUL-terminated string. */
static inline uint64_t fnv1a_str(const char *s, uint64_t h)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* A pidfd of process pid (pidfd_open, close-on-exec), or -1 with errno (ESRCH: gone;
 * ENOSYS: Linux before 5.3). */
int pidfd_of(pid_t pid);
uint64_t now_ns(void);		/* CLOCK_MONOTONIC */
uint64_t now_realtime_ns(void); /* CLOCK_REALTIME */
uint64_t thread_cpu_ns(void);	/* CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time */

/* Reads a whole small file (such as one under /proc) into buf, NUL-terminated.
 * Returns the length read or -errno. */
ssize_t read_file(const char *path, char *buf, size_t size);

#endif
