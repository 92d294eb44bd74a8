/* demo-server: a small line-based TCP server with the shapes srvscope is meant to explain: an
 * epoll "acceptor" thread, "worker-N" threads contending for one global mutex, and a "flusher"
 * thread fsyncing a log every 100 ms. Protocol: each request line gets one reply line. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEMO_NAME "demo-server"
#include "demo.h"

#define MAX_LINE   1024
#define TABLE_SIZE 256

/* One client connection. While idle it sits in the acceptor's epoll set (EPOLLONESHOT); when
 * readable it is queued, and exactly one worker owns it until it re-arms or closes it. */
struct conn {
	int fd;
	size_t len;
	char buf[MAX_LINE];
	struct conn *next_queued;
	struct conn *prev, *next; /* all live connections, for shutdown */
};

/* Connections ready to be read, handed from the acceptor to the workers. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	struct conn *head, *tail;
	int closed;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER, .nonempty = PTHREAD_COND_INITIALIZER};

/* The shared state every request updates: one global lock, on purpose. */
static struct {
	pthread_mutex_t lock;
	unsigned long hits[TABLE_SIZE];
	unsigned long requests;
	unsigned long checksum; /* of all slots, recomputed under the lock by every request */
} table = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct {
	pthread_mutex_t lock;
	struct conn *head;
	unsigned long accepted;
} conns = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int epoll_fd, listen_fd, stop_fd; /* stop_fd: eventfd that ends the acceptor */
static volatile int stopping;
static int log_fd;

static void queue_push(struct conn *c)
{
	pthread_mutex_lock(&queue.lock);
	c->next_queued = NULL;
	if (queue.tail)
		queue.tail->next_queued = c;
	else
		queue.head = c;
	queue.tail = c;
	pthread_cond_signal(&queue.nonempty);
	pthread_mutex_unlock(&queue.lock);
}

/* The next readable connection, or NULL once the queue is closed and drained. */
static struct conn *queue_pop(void)
{
	struct conn *c;

	pthread_mutex_lock(&queue.lock);
	while (!queue.head && !queue.closed)
		pthread_cond_wait(&queue.nonempty, &queue.lock);
	c = queue.head;
	if (c) {
		queue.head = c->next_queued;
		if (!queue.head)
			queue.tail = NULL;
	}
	pthread_mutex_unlock(&queue.lock);
	return c;
}

static void queue_close(void)
{
	pthread_mutex_lock(&queue.lock);
	queue.closed = 1;
	pthread_cond_broadcast(&queue.nonempty);
	pthread_mutex_unlock(&queue.lock);
}

static void conn_close(struct conn *c)
{
	pthread_mutex_lock(&conns.lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		conns.head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&conns.lock);
	close(c->fd); /* also removes it from the epoll set */
	free(c);
}

static void conn_add(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT};
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pthread_mutex_lock(&conns.lock);
	c->next = conns.head;
	if (conns.head)
		conns.head->prev = c;
	conns.head = c;
	conns.accepted++;
	pthread_mutex_unlock(&conns.lock);
	ev.data.ptr = c;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		conn_close(c);
}

/* Accepts everything pending on the non-blocking listening socket. */
__attribute__((noinline)) static void accept_pending(void)
{
	int fd;

	for (;;) {
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_add(fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			fprintf(stderr, "demo-server: accept: %s\n", strerror(errno));
		return;
	}
}

static void *acceptor_main(void *arg)
{
	struct epoll_event evs[64];
	int i, n;

	pthread_setname_np(pthread_self(), "acceptor");
	while (!stopping) {
		n = epoll_wait(epoll_fd, evs, 64, -1);
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == &listen_fd)
				accept_pending();
			else if (evs[i].data.ptr != &stop_fd)
				queue_push(evs[i].data.ptr);
		}
	}
	return NULL;
}

/* The CPU part of a request: an iterated FNV-1a digest of the line. */
__attribute__((noinline)) static uint64_t compute_digest(const char *line, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;
	int round;

	for (round = 0; round < 1024; round++) {
		for (i = 0; i < len; i++)
			h = (h ^ (unsigned char)line[i]) * 1099511628211ull;
		h ^= round;
	}
	return h;
}

/* Records a request in the shared table; the lock is held for a little work too, so that
 * workers visibly queue on it. */
__attribute__((noinline)) static unsigned long table_update(uint64_t digest)
{
	size_t slot = digest % TABLE_SIZE, i;
	unsigned long hits, sum = 0;

	pthread_mutex_lock(&table.lock);
	hits = ++table.hits[slot];
	table.requests++;
	for (i = 0; i < 32 * TABLE_SIZE; i++)
		sum = sum * 31 + table.hits[(slot + i) % TABLE_SIZE];
	table.checksum = sum;
	pthread_mutex_unlock(&table.lock);
	return hits;
}

__attribute__((noinline)) static int handle_request(struct conn *c, const char *line, size_t len)
{
	uint64_t digest = compute_digest(line, len);
	unsigned long hits = table_update(digest);
	char reply[64];
	int n;

	n = snprintf(reply, sizeof(reply), "%016llx %lu\n", (unsigned long long)digest, hits);
	return demo_send_all(c->fd, reply, n);
}

/* Reads what the client sent (a blocking read: the acceptor saw it readable), answers every
 * complete line, then gives the connection back to the epoll set. Closes it on EOF or error. */
__attribute__((noinline)) static void serve_conn(struct conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.ptr = c};
	char *nl;
	size_t used;
	ssize_t n;

	do
		n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		goto out_close;
	c->len += n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		used = nl - c->buf + 1;
		if (handle_request(c, c->buf, used - 1))
			goto out_close;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	if (c->len == sizeof(c->buf)) /* a line longer than MAX_LINE */
		goto out_close;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &ev))
		goto out_close;
	return;
out_close:
	conn_close(c);
}

static void *worker_main(void *arg)
{
	char name[16];
	struct conn *c;

	snprintf(name, sizeof(name), "worker-%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	while ((c = queue_pop()))
		serve_conn(c);
	return NULL;
}

/* Appends a status line to the log and makes it durable. */
__attribute__((noinline)) static void flush_log(void)
{
	char line[128];
	struct timespec now;
	unsigned long requests;
	int n;

	pthread_mutex_lock(&table.lock);
	requests = table.requests;
	pthread_mutex_unlock(&table.lock);
	clock_gettime(CLOCK_REALTIME, &now);
	n = snprintf(line, sizeof(line), "%lld.%03ld requests=%lu\n", (long long)now.tv_sec,
		     now.tv_nsec / 1000000, requests);
	if (write(log_fd, line, n) != n || fsync(log_fd))
		fprintf(stderr, "demo-server: log: %s\n", strerror(errno));
}

static void *flusher_main(void *arg)
{
	struct timespec next;

	pthread_setname_np(pthread_self(), "flusher");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stopping) {
		next.tv_nsec += 100 * 1000 * 1000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		flush_log();
	}
	return NULL;
}

static void listen_on(long port)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct epoll_event ev = {.events = EPOLLIN};
	socklen_t alen = sizeof(addr);
	int one = 1;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		demo_die("socket: %s", strerror(errno));
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)))
		demo_die("cannot listen on 127.0.0.1:%ld: %s (choose another port with -p)", port,
			 strerror(errno));
	if (listen(listen_fd, 128))
		demo_die("listen: %s", strerror(errno));
	getsockname(listen_fd, (struct sockaddr *)&addr, &alen);
	fprintf(stderr, "demo-server: listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));

	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	stop_fd = eventfd(0, EFD_CLOEXEC);
	if (epoll_fd < 0 || stop_fd < 0)
		demo_die("epoll/eventfd: %s", strerror(errno));
	ev.data.ptr = &listen_fd;
	epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
	ev.data.ptr = &stop_fd;
	epoll_ctl(epoll_fd, EPOLL_CTL_ADD, stop_fd, &ev);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: demo-server [-p PORT] [-w WORKERS] [-l LOGFILE]\n"
		   "  -p PORT     TCP port on 127.0.0.1 (default 7878; 0: any free port)\n"
		   "  -w WORKERS  worker threads (default 4)\n"
		   "  -l LOGFILE  file the flusher appends to (default /tmp/demo-server.PID.log,\n"
		   "              removed on exit)\n");
}

int main(int argc, char **argv)
{
	pthread_t acceptor, flusher, *workers;
	char default_log[64], *log_path = NULL;
	long port = 7878, nworkers = 4, i;
	uint64_t one = 1;
	struct conn *c;
	sigset_t sigs;
	int opt, sig;

	while ((opt = getopt(argc, argv, "p:w:l:h")) != -1) {
		switch (opt) {
		case 'p':
			port = demo_parse_long(optarg, "-p", 0, 65535);
			break;
		case 'w':
			nworkers = demo_parse_long(optarg, "-w", 1, 1024);
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!log_path) {
		snprintf(default_log, sizeof(default_log), "/tmp/demo-server.%d.log",
			 (int)getpid());
		log_path = default_log;
	}
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0)
		demo_die("cannot open log %s: %s", log_path, strerror(errno));

	/* Only the main thread takes these, with sigwait; every thread inherits the mask. */
	demo_hold_stop_signals(&sigs);

	listen_on(port);
	workers = calloc(nworkers, sizeof(*workers));
	if (!workers)
		demo_die("out of memory");
	for (i = 0; i < nworkers; i++)
		if ((errno = pthread_create(&workers[i], NULL, worker_main,
					    (void *)(intptr_t)(i + 1))))
			demo_die("pthread_create: %s", strerror(errno));
	if ((errno = pthread_create(&acceptor, NULL, acceptor_main, NULL)) ||
	    (errno = pthread_create(&flusher, NULL, flusher_main, NULL)))
		demo_die("pthread_create: %s", strerror(errno));
	printf("ready\n");
	fflush(stdout);

	while (sigwait(&sigs, &sig))
		;

	/* Stop accepting, wake workers blocked in read, drain the queue, stop the flusher. */
	stopping = 1;
	if (write(stop_fd, &one, sizeof(one)) != sizeof(one))
		demo_die("eventfd: %s", strerror(errno));
	pthread_join(acceptor, NULL);
	pthread_mutex_lock(&conns.lock);
	for (c = conns.head; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_unlock(&conns.lock);
	queue_close();
	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);
	pthread_join(flusher, NULL);
	while (conns.head)
		conn_close(conns.head);
	fprintf(stderr, "demo-server: %lu connections, %lu requests\n", conns.accepted,
		table.requests);
	close(log_fd);
	if (log_path == default_log)
		unlink(log_path);
	free(workers);
	return 0;
}
