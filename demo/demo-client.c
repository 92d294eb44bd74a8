/* demo-client: load for demo-server. Each of CONNECTIONS threads ("client-N") sends a request
 * line and reads the reply line, in a loop, for SECONDS (or until SIGINT/SIGTERM); then the
 * total and the rate of requests are printed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEMO_NAME "demo-client"
#include "demo.h"

static struct sockaddr_in server = {.sin_family = AF_INET};
static volatile int stopping;
static unsigned long total_requests;
static int failures, live;

/* Reads up to and including the next '\n' (replies are short, one per request). */
static int read_line(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len < size) {
		n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = 0; /* closed by the server */
		if (n <= 0)
			return -1;
		len += n;
		if (buf[len - 1] == '\n')
			return 0;
	}
	return -1;
}

static void *client_main(void *arg)
{
	struct timeval timeout = {.tv_sec = 5};
	long id = (long)(intptr_t)arg;
	unsigned long done = 0;
	char name[16], req[64], reply[128];
	int fd, one = 1, n, failed = 1;

	snprintf(name, sizeof(name), "client-%ld", id);
	pthread_setname_np(pthread_self(), name);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&server, sizeof(server))) {
		fprintf(stderr, "demo-client: %s: cannot connect to 127.0.0.1:%d: %s\n", name,
			ntohs(server.sin_port), strerror(errno));
		goto out;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	while (!stopping) {
		n = snprintf(req, sizeof(req), "get key-%ld-%lu\n", id, done % 1000);
		if (demo_send_all(fd, req, n) || read_line(fd, reply, sizeof(reply))) {
			if (!stopping)
				fprintf(stderr, "demo-client: %s: connection lost: %s\n", name,
					errno ? strerror(errno) : "closed by the server");
			goto out;
		}
		done++;
	}
	failed = 0;
out:
	if (fd >= 0)
		close(fd);
	__atomic_fetch_add(&failures, failed, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total_requests, done, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* One connection first, so that a server that is not there gives one message, not N. */
static void probe_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&server, sizeof(server)))
		demo_die("cannot connect to 127.0.0.1:%d: %s (is demo-server running? see -p)",
			 ntohs(server.sin_port), strerror(errno));
	close(fd);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long port = 7878, nconns = 8, seconds = 5, i;
	double start, elapsed, left;
	struct timespec tick;
	pthread_t *threads;
	sigset_t sigs;
	int opt;

	while ((opt = getopt(argc, argv, "p:c:d:h")) != -1) {
		switch (opt) {
		case 'p':
			port = demo_parse_long(optarg, "-p", 1, 65535);
			break;
		case 'c':
			nconns = demo_parse_long(optarg, "-c", 1, 10000);
			break;
		case 'd':
			seconds = demo_parse_long(optarg, "-d", 1, 86400);
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: demo-client [-p PORT] [-c CONNECTIONS] [-d SECONDS]\n"
				"  defaults: port 7878, 8 connections, 5 seconds; SIGINT ends "
				"early\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	server.sin_port = htons(port);
	server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	demo_hold_stop_signals(&sigs);

	probe_server();
	threads = calloc(nconns, sizeof(*threads));
	if (!threads)
		demo_die("out of memory");
	live = nconns;
	start = now_s();
	for (i = 0; i < nconns; i++)
		if ((errno = pthread_create(&threads[i], NULL, client_main,
					    (void *)(intptr_t)(i + 1))))
			demo_die("pthread_create: %s", strerror(errno));
	/* Until the duration is over, a signal asks us to stop, or every connection is gone. */
	while (__atomic_load_n(&live, __ATOMIC_RELAXED)) {
		left = seconds - (now_s() - start);
		if (left <= 0)
			break;
		if (left > 0.1)
			left = 0.1;
		tick.tv_sec = 0;
		tick.tv_nsec = (long)(left * 1e9);
		if (sigtimedwait(&sigs, NULL, &tick) > 0)
			break;
	}
	stopping = 1;
	for (i = 0; i < nconns; i++)
		pthread_join(threads[i], NULL);
	elapsed = now_s() - start;
	printf("%lu requests in %.2f s over %ld connections: %.0f requests/s\n", total_requests,
	       elapsed, nconns, total_requests / elapsed);
	free(threads);
	return failures ? 1 : 0;
}
