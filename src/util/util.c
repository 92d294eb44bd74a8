/* Error reporting, checked allocation, number parsing and clocks. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

bool util_quiet;
static char *held;
static size_t held_size;

void util_hold_errors(char *buf, size_t size)
{
	held = buf;
	held_size = size;
	if (buf && size)
		buf[0] = '\0';
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (held) {
		if (held_size && !held[0]) /* the first one says why */
			snprintf(held, held_size, "%s", buf);
		return;
	}
	fprintf(stderr, "srvscope: %s%s\n", prefix, buf);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void notice(const char *fmt, ...)
{
	va_list ap;

	if (util_quiet)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

static void oom(size_t n)
{
	fprintf(stderr, "srvscope: out of memory allocating %zu bytes\n", n);
	_exit(3);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);

	if (!p)
		oom(nmemb * n);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		oom(strlen(s));
	return d;
}

void xgrow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	*arr = xrealloc(*arr, ncap * elem);
	*cap = ncap;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "srvscope: %s: %s (see 'srvscope %s --help')\n", cmd, buf, cmd);
	return EXIT_USAGE;
}

int option_error(const char *cmd, int c, char **argv)
{
	const char *opt = argv[optind - 1];
	char shortopt[3] = {'-', (char)optopt, 0};
	int len;

	/* An unknown short option may sit in a cluster ("-kx"): name it alone. */
	if (optopt && !(opt[0] == '-' && opt[1] == '-'))
		opt = shortopt;
	len = strcspn(opt, "=");
	if (c == ':')
		return usage_error(cmd, "option '%.*s' needs a value", len, opt);
	return usage_error(cmd, "unknown option '%.*s'", len, opt);
}

int parse_long(const char *option, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || (errno && errno != ERANGE))
		return error("invalid value '%s' for %s: expected a whole number from %ld to %ld",
			     s, option, min, max);
	if (errno == ERANGE || v < min || v > max)
		return error("invalid value '%s' for %s: must be between %ld and %ld", s, option,
			     min, max);
	*out = v;
	return 0;
}

int parse_pid_list(const char *s, pid_t **pids, size_t *nr)
{
	char *copy = xstrdup(s), *tok, *save = NULL;
	size_t before = *nr;
	long v;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_long("-p", tok, 1, 4194304, &v)) {
			free(copy);
			return -1;
		}
		*pids = xrealloc(*pids, (*nr + 1) * sizeof(**pids));
		(*pids)[(*nr)++] = (pid_t)v;
	}
	free(copy);
	if (*nr == before)
		return error("invalid value '%s' for -p: expected PID[,PID...]", s);
	return 0;
}

int parse_double(const char *option, const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || (errno && errno != ERANGE) || isnan(v))
		return error("invalid value '%s' for %s: expected a number from %g to %g", s,
			     option, min, max);
	if (errno == ERANGE || v < min || v > max)
		return error("invalid value '%s' for %s: must be between %g and %g", s, option, min,
			     max);
	*out = v;
	return 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}
