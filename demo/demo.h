/* demo.h: what demo-server and demo-client share: die(), option numbers, sending a whole buffer,
 * and holding SIGINT/SIGTERM for one thread to wait on. Header only (static inline); define
 * DEMO_NAME, the program name that starts every message, before including it. */
#ifndef DEMO_H
#define DEMO_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifndef DEMO_NAME
#error "define DEMO_NAME (the program name for messages) before including demo.h"
#endif

/* Prints "DEMO_NAME: <message>" to stderr and exits with status 1. */
__attribute__((format(printf, 1, 2), noreturn)) static inline void demo_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* The value of option (e.g. "-p") given as s; exits with a message unless in [min, max]. */
static inline long demo_parse_long(const char *s, const char *option, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		demo_die("invalid value '%s' for %s: must be %ld..%ld", s, option, min, max);
	return v;
}

/* Sends all len bytes: 0, or -1 with errno set (0 if the peer took nothing more). */
static inline int demo_send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = 0;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * Blocks SIGINT and SIGTERM in the calling thread, and so in every thread it creates after, and
 * fills sigs with them: only the thread that waits on sigs (sigwait, sigtimedwait) takes them.
 */
static inline void demo_hold_stop_signals(sigset_t *sigs)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
}

#endif /* DEMO_H */
