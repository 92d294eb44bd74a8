/* The built-in open-loop load clients: URL parsing, the run (one or two client threads,
 * each an epoll loop over its share of the connections), and the result line. Requests
 * arrive on a schedule (uniform or Poisson spacing) whatever the server does; an arrival
 * takes an idle connection, or waits for one (at most one request is outstanding on a
 * connection), and its latency counts from its scheduled time, so a slow server shows as
 * latency instead of a lower request rate (no coordinated omission). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "load/hist.h"
#include "load/load.h"
#include "load/proto.h"
#include "util/util.h"

#define NS		   1000000000ull
#define CONNECT_TIMEOUT_NS (1 * NS)
#define RETRY_NS	   (100 * 1000000ull) /* a failed connect is tried again after this */
#define DRAIN_NS	   (500 * 1000000ull) /* replies still awaited when the schedule ends */
#define PREFILL_NS	   (300 * 1000000ull)
#define SCAN_NS		   (10 * 1000000ull) /* connects, retries and reconnects looked at */
#define IN_MIN		   16384
#define MAX_THREADS	   2

enum conn_state {
	C_CLOSED,     /* waits for retry_at to connect */
	C_CONNECTING, /* a nonblocking connect under way */
	C_IDLE,	      /* connected, nothing outstanding */
	C_BUSY,	      /* one request outstanding */
	C_CLOSING,    /* waits for the server's close (then the server holds the TIME_WAIT) */
};

struct conn {
	int fd;
	enum conn_state state;
	bool want_out;	       /* EPOLLOUT is asked for */
	uint32_t gen;	       /* bumped at each open: events of a socket closed since are stale */
	uint64_t deadline_ns;  /* C_CLOSED: when to connect; C_CONNECTING: when to give up */
	uint64_t reconnect_ns; /* when to close and open anew (0: never) */
	uint64_t sched_ns;     /* the outstanding request's scheduled time */
	char *out;
	size_t out_len, out_off;
	char *in;
	size_t in_len, in_cap;
};

struct run;

struct worker {
	struct run *run;
	unsigned int index;
	struct conn *conns;
	unsigned int nconns;
	int epfd;
	double rate;	   /* this worker's share */
	uint64_t arrivals; /* scheduled so far */
	uint64_t next_ns;  /* the next arrival */
	uint64_t phase_ns;
	uint64_t rng;
	unsigned int *idle; /* a stack of idle connections */
	unsigned int nidle, busy;
	uint64_t send_end_ns;
	struct load_hist hist;
	uint64_t sent, completed, errors, connects, connect_errors, missed;
	uint64_t
		error_replies; /* of the errors, replies that said so (the rest: malformed, lost) */
	int last_errno, last_status;
};

struct run {
	const struct load_spec *spec;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char *value;
	size_t value_len;
	unsigned int keys;
	uint64_t t0_ns, end_ns, hard_ns;
	const volatile int *stop;
};

int load__parse_url(const char *url, struct load_target *t)
{
	static const struct {
		const char *scheme;
		enum load_proto proto;
	} schemes[] = {
		{"memcached://", LOAD_MEMCACHED},
		{"redis://", LOAD_REDIS},
		{"http://", LOAD_HTTP},
	};
	const char *p = NULL, *host, *hend, *colon, *slash;
	unsigned long port;
	size_t i, hl;
	char *end;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < ARRAY_SIZE(schemes); i++)
		if (!strncmp(url, schemes[i].scheme, strlen(schemes[i].scheme))) {
			p = url + strlen(schemes[i].scheme);
			t->proto = schemes[i].proto;
			break;
		}
	if (!p)
		return -EINVAL;
	slash = strchr(p, '/');
	hend = slash ? slash : p + strlen(p);
	if (*p == '[') { /* [IPv6]:PORT */
		host = p + 1;
		colon = memchr(p, ']', hend - p);
		if (!colon || colon[1] != ':')
			return -EINVAL;
		hl = colon - host;
		colon++;
	} else {
		host = p;
		colon = memchr(p, ':', hend - p);
		if (!colon)
			return -EINVAL;
		hl = colon - host;
	}
	if (!hl || hl >= sizeof(t->host))
		return -EINVAL;
	memcpy(t->host, host, hl);
	if (!(colon[1] >= '0' && colon[1] <= '9'))
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end != hend || !port || port > 65535)
		return -EINVAL;
	t->port = port;
	if (slash && t->proto != LOAD_HTTP && strcmp(slash, "/"))
		return -EINVAL;
	if (t->proto == LOAD_HTTP) {
		const char *path = slash ? slash : "/";

		if (strlen(path) >= sizeof(t->path))
			return -EINVAL;
		for (i = 0; path[i]; i++) /* one request line: no spaces or controls */
			if ((unsigned char)path[i] <= ' ' || path[i] == 0x7f)
				return -EINVAL;
		strcpy(t->path, path);
	}
	return 0;
}

static const char *proto_name(enum load_proto p)
{
	return p == LOAD_MEMCACHED ? "memcached" : p == LOAD_REDIS ? "redis" : "HTTP";
}

/* xorshift64*: cheap and good enough for keys and the set/get draw. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static double rnd01(uint64_t *s)
{
	return (rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t ev_data(const struct worker *w, const struct conn *c)
{
	return (uint64_t)c->gen << 32 | (uint32_t)(c - w->conns);
}

static void arm(struct worker *w, struct conn *c, bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0),
				 .data.u64 = ev_data(w, c)};

	if (c->want_out != out) {
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		c->want_out = out;
	}
}

/* Closes c; it connects again at retry (0: never). */
static void conn_close(struct worker *w, struct conn *c, uint64_t retry)
{
	unsigned int i;

	if (c->state == C_IDLE) /* take it off the idle stack */
		for (i = 0; i < w->nidle; i++)
			if (w->idle[i] == (unsigned int)(c - w->conns)) {
				w->idle[i] = w->idle[--w->nidle];
				break;
			}
	if (c->state == C_BUSY)
		w->busy--;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->state = C_CLOSED;
	c->deadline_ns = retry;
	c->in_len = 0;
	c->want_out = false;
}

/* Closes c, and when the schedule goes on, opens it again at once. */
static void conn_reopen(struct worker *w, struct conn *c, uint64_t now);

static void connect_failed(struct worker *w, struct conn *c, int err, uint64_t now)
{
	w->connect_errors++;
	w->last_errno = err;
	conn_close(w, c, now + RETRY_NS);
}

static void conn_ready(struct worker *w, struct conn *c, uint64_t now)
{
	const struct load_spec *s = w->run->spec;

	w->connects++;
	arm(w, c, false);
	c->state = C_IDLE;
	if (s->reconnect_s > 0 && !c->reconnect_ns) /* the first period staggered */
		c->reconnect_ns =
			now + (uint64_t)(s->reconnect_s * NS * ((c - w->conns) + 1.0) / w->nconns);
	else if (s->reconnect_s > 0)
		c->reconnect_ns = now + (uint64_t)(s->reconnect_s * NS);
	w->idle[w->nidle++] = c - w->conns;
}

static void conn_open(struct worker *w, struct conn *c, uint64_t now)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT};
	int one = 1;

	c->gen++;
	ev.data.u64 = ev_data(w, c);
	c->fd = socket(w->run->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		connect_failed(w, c, errno, now);
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->in_len = 0;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		connect_failed(w, c, errno, now);
		return;
	}
	c->want_out = true;
	if (connect(c->fd, (struct sockaddr *)&w->run->addr, w->run->addrlen) < 0 &&
	    errno != EINPROGRESS) {
		connect_failed(w, c, errno, now);
		return;
	}
	c->state = C_CONNECTING;
	c->deadline_ns = now + CONNECT_TIMEOUT_NS;
}

/* Whether requests are still to be sent: the schedule runs, or arrivals it made before its
 * end still wait for a connection (they are sent in the drain, so that a stall at the end
 * does not lose them). */
static bool sending(const struct worker *w, uint64_t now)
{
	return now < w->send_end_ns || (w->rate > 0 && w->next_ns < w->send_end_ns);
}

static void conn_reopen(struct worker *w, struct conn *c, uint64_t now)
{
	conn_close(w, c, 0);
	if (sending(w, now))
		conn_open(w, c, now);
}

/* Writes what is left of c's request; false when the connection failed. */
static bool flush(struct worker *w, struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			arm(w, c, true);
			return true;
		}
		if (n <= 0)
			return false;
		c->out_off += n;
	}
	arm(w, c, false);
	return true;
}

/* A request that got no reply: its connection is closed and opened again. */
static void request_failed(struct worker *w, struct conn *c, uint64_t now)
{
	w->errors++;
	conn_reopen(w, c, now);
}

static void dispatch(struct worker *w, uint64_t sched, uint64_t now)
{
	struct run *r = w->run;
	const struct load_spec *s = r->spec;
	struct conn *c = &w->conns[w->idle[--w->nidle]];
	bool set = false;
	unsigned int key = 0;

	if (s->target.proto != LOAD_HTTP) {
		set = s->set_share > 0 && rnd01(&w->rng) < s->set_share;
		key = rnd(&w->rng) % r->keys;
	}
	c->out_len = load_proto__request(&s->target, set, key, r->value, r->value_len, s->keepalive,
					 c->out);
	c->out_off = 0;
	c->sched_ns = sched;
	c->state = C_BUSY;
	w->busy++;
	w->sent++;
	if (!flush(w, c))
		request_failed(w, c, now);
}

static void next_arrival(struct worker *w)
{
	w->arrivals++;
	if (w->run->spec->poisson)
		w->next_ns += (uint64_t)(-log(1.0 - rnd01(&w->rng)) / w->rate * NS);
	else
		w->next_ns = w->run->t0_ns + w->phase_ns + (uint64_t)(w->arrivals * (NS / w->rate));
}

/* After a reply: the connection serves the next request, or is opened anew. */
static void conn_done(struct worker *w, struct conn *c, const struct load_reply *rep, uint64_t now)
{
	const struct load_spec *s = w->run->spec;

	w->busy--;
	c->state = C_IDLE;
	if (rep->closes || (s->target.proto == LOAD_HTTP && !s->keepalive)) {
		/* the server closes: wait for it, so its side keeps the TIME_WAIT */
		c->state = C_CLOSING;
		c->deadline_ns = now + CONNECT_TIMEOUT_NS;
		return;
	}
	if (c->reconnect_ns && now >= c->reconnect_ns && sending(w, now)) {
		c->state = C_CLOSED; /* not on the idle stack */
		conn_reopen(w, c, now);
		return;
	}
	w->idle[w->nidle++] = c - w->conns;
}

static void conn_input(struct worker *w, struct conn *c, uint64_t now)
{
	enum load_proto p = w->run->spec->target.proto;
	bool eof = false;

	for (;;) {
		ssize_t n;

		if (c->in_len == c->in_cap) {
			c->in_cap *= 2;
			c->in = xrealloc(c->in, c->in_cap);
		}
		n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
		if (n > 0) {
			c->in_len += n;
			if (c->in_len < c->in_cap)
				break; /* the socket is most likely empty: parse first */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		eof = true; /* closed or reset */
		break;
	}
	while (c->state == C_BUSY && (c->in_len || eof)) {
		struct load_reply rep;
		ssize_t n = load_proto__reply(p, c->in, c->in_len, eof, &rep);

		if (!n)
			break;
		if (n < 0) {
			request_failed(w, c, now);
			return;
		}
		if (rep.failed) {
			w->errors++;
			w->error_replies++;
			w->last_status = rep.status;
		} else {
			w->completed++;
			load_hist__record(&w->hist, now - c->sched_ns);
		}
		memmove(c->in, c->in + n, c->in_len - n);
		c->in_len -= n;
		conn_done(w, c, &rep, now);
	}
	if (c->state == C_BUSY && eof) {
		request_failed(w, c, now);
		return;
	}
	if (c->state == C_IDLE && c->in_len) { /* bytes nobody asked for */
		w->errors++;
		conn_reopen(w, c, now);
		return;
	}
	if (eof || (c->state == C_CLOSING && c->in_len))
		conn_reopen(w, c, now);
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events, uint64_t now)
{
	if (c->state == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err || (events & (EPOLLERR | EPOLLHUP))) {
			connect_failed(w, c, err ? err : ECONNREFUSED, now);
			return;
		}
		conn_ready(w, c, now);
		return;
	}
	if ((events & EPOLLOUT) && c->state == C_BUSY && !flush(w, c)) {
		request_failed(w, c, now);
		return;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		conn_input(w, c, now);
}

/* Every SCAN_NS: connects due, connects that take too long, idle connections due for
 * their reconnect, closing connections the server never closed. */
static void scan(struct worker *w, uint64_t now)
{
	bool send = sending(w, now);
	unsigned int i;

	for (i = 0; i < w->nconns; i++) {
		struct conn *c = &w->conns[i];

		switch (c->state) {
		case C_CLOSED:
			if (send && c->deadline_ns && now >= c->deadline_ns)
				conn_open(w, c, now);
			break;
		case C_CONNECTING:
			if (now >= c->deadline_ns)
				connect_failed(w, c, ETIMEDOUT, now);
			break;
		case C_IDLE:
			if (send && c->reconnect_ns && now >= c->reconnect_ns)
				conn_reopen(w, c, now);
			break;
		case C_CLOSING:
			if (now >= c->deadline_ns)
				conn_reopen(w, c, now);
			break;
		case C_BUSY:
			break;
		}
	}
}

/* The arrivals scheduled before the end that never found a connection. */
static void count_missed(struct worker *w)
{
	double left;

	if (w->rate <= 0 || w->next_ns >= w->send_end_ns)
		return;
	left = (double)(w->send_end_ns - w->next_ns) * w->rate / NS;
	w->missed += 1 + (uint64_t)left;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	struct epoll_event evs[64];
	uint64_t now = now_ns(), next_scan = 0;
	unsigned int i;

	/* wake-ups at the scheduled times, not up to 50 us after */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	w->send_end_ns = r->end_ns;
	w->next_ns = r->t0_ns + w->phase_ns;
	for (i = 0; i < w->nconns; i++)
		conn_open(w, &w->conns[i], now);
	for (;;) {
		uint64_t wake;
		struct timespec ts;
		int n, k;

		now = now_ns();
		if (now < w->send_end_ns && r->stop && *r->stop)
			w->send_end_ns = now;
		if (!sending(w, now) && (!w->busy || now >= r->hard_ns))
			break;
		if (now >= next_scan) {
			scan(w, now);
			next_scan = now + SCAN_NS;
		}
		if (sending(w, now) && now < r->hard_ns) {
			if (w->rate > 0) {
				while (w->nidle && w->next_ns <= now &&
				       w->next_ns < w->send_end_ns) {
					dispatch(w, w->next_ns, now);
					next_arrival(w);
				}
			} else {
				while (w->nidle)
					dispatch(w, now, now);
			}
		}
		wake = next_scan;
		if (now < w->send_end_ns && w->send_end_ns < wake)
			wake = w->send_end_ns;
		if (sending(w, now) && w->rate > 0 && w->nidle && w->next_ns < wake)
			wake = w->next_ns;
		if (r->hard_ns < wake)
			wake = r->hard_ns;
		wake = wake > now ? wake - now : 0;
		ts.tv_sec = wake / NS;
		ts.tv_nsec = wake % NS;
		n = epoll_pwait2(w->epfd, evs, ARRAY_SIZE(evs), &ts, NULL);
		if (n < 0 && errno != EINTR)
			break;
		now = now_ns();
		for (k = 0; k < n; k++) {
			struct conn *c = &w->conns[(uint32_t)evs[k].data.u64];

			/* a connection closed and opened again by an earlier event of the batch */
			if (c->fd >= 0 && c->gen == evs[k].data.u64 >> 32)
				conn_event(w, c, evs[k].events, now);
		}
	}
	count_missed(w);
	w->errors += w->busy; /* no reply within the drain */
	for (i = 0; i < w->nconns; i++)
		if (w->conns[i].fd >= 0)
			close(w->conns[i].fd);
	return NULL;
}

/* A blocking connect of at most timeout_ns; returns the socket or -errno. */
static int connect_once(const struct run *r, uint64_t timeout_ns)
{
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t len = sizeof(err);

	fd = socket(r->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&r->addr, r->addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			goto out_close;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, timeout_ns / 1000000) <= 0) {
			err = ETIMEDOUT;
			goto out_close;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err)
			goto out_close;
	}
	return fd;
out_close:
	close(fd);
	return -err;
}

/* After n = send() or recv() on the nonblocking fd returned no bytes: whether to try again
 * (it would have blocked, and there is time left), after waiting up to 10 ms for it. */
static bool can_wait(int fd, short events, ssize_t n, uint64_t until)
{
	struct pollfd pfd = {.fd = fd, .events = events};

	return n < 0 && (errno == EAGAIN || errno == EINTR) && now_ns() < until &&
	       poll(&pfd, 1, 10) >= 0;
}

/* Stores every key once before the run, pipelined on fd, so gets find values as on a warm
 * server; bounded by PREFILL_NS. Returns the keys stored. */
static uint64_t prefill(const struct run *r, int fd)
{
	const struct load_spec *s = r->spec;
	size_t cap = 64 * (LOAD_REQ_HEAD_MAX + r->value_len), len, got = 0, incap = 65536;
	uint64_t until = now_ns() + PREFILL_NS, done = 0;
	char *out = xmalloc(cap), *in = xmalloc(incap);
	unsigned int k = 0;

	while (k < r->keys && now_ns() < until) {
		unsigned int batch = 0, replies = 0;
		size_t off = 0;

		for (len = 0; batch < 64 && k < r->keys; batch++, k++)
			len += load_proto__request(&s->target, true, k, r->value, r->value_len,
						   true, out + len);
		while (off < len) {
			ssize_t n = send(fd, out + off, len - off, MSG_NOSIGNAL);

			if (n > 0)
				off += n;
			else if (!can_wait(fd, POLLOUT, n, until))
				goto out;
		}
		while (replies < batch) {
			struct load_reply rep;
			ssize_t n = load_proto__reply(s->target.proto, in, got, false, &rep);

			if (n < 0)
				goto out;
			if (n > 0) {
				memmove(in, in + n, got - n);
				got -= n;
				replies++;
				done += !rep.failed;
				continue;
			}
			if (got == incap)
				in = xrealloc(in, incap *= 2);
			n = recv(fd, in + got, incap - got, 0);
			if (n > 0)
				got += n;
			else if (!can_wait(fd, POLLIN, n, until))
				goto out;
		}
	}
out:
	free(out);
	free(in);
	return done;
}

/* HOST as an IPv4 or IPv6 address, or localhost: no name service, which a static binary
 * cannot load. */
static int resolve(struct run *r, struct load_result *res)
{
	const struct load_target *t = &r->spec->target;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&r->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&r->addr;
	const char *host = strcmp(t->host, "localhost") ? t->host : "127.0.0.1";

	memset(&r->addr, 0, sizeof(r->addr));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(t->port);
		r->addrlen = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(t->port);
		r->addrlen = sizeof(*in6);
		return 0;
	}
	snprintf(res->error, sizeof(res->error),
		 "'%.100s' is not an IP address (give one, such as 127.0.0.1 or [::1])", t->host);
	return -EINVAL;
}

static void collect(struct worker *ws, unsigned int nw, struct load_result *res,
		    struct load_hist *h)
{
	unsigned int i;

	for (i = 0; i < nw; i++) {
		res->sent += ws[i].sent;
		res->completed += ws[i].completed;
		res->errors += ws[i].errors;
		res->missed += ws[i].missed;
		res->connects += ws[i].connects;
		res->connect_errors += ws[i].connect_errors;
		load_hist__merge(h, &ws[i].hist);
	}
	res->p50_us = load_hist__quantile(h, 0.50) / 1e3;
	res->p90_us = load_hist__quantile(h, 0.90) / 1e3;
	res->p99_us = load_hist__quantile(h, 0.99) / 1e3;
	res->p999_us = load_hist__quantile(h, 0.999) / 1e3;
	res->max_us = h->max / 1e3;
	res->mean_us = h->count ? (double)h->sum / h->count / 1e3 : 0;
}

static int last_status(const struct worker *ws, unsigned int nw)
{
	int status = 0;
	unsigned int i;

	for (i = 0; i < nw; i++)
		if (ws[i].last_status)
			status = ws[i].last_status;
	return status;
}

/* Whether every request that failed was answered with an error: 1 for HTTP statuses, -1
 * for the error replies of memcached and redis, 0 otherwise. */
static int replies_failed(const struct worker *ws, unsigned int nw)
{
	uint64_t errors = 0, replies = 0;
	unsigned int i;

	for (i = 0; i < nw; i++) {
		errors += ws[i].errors;
		replies += ws[i].error_replies;
	}
	if (!replies || replies < errors)
		return 0;
	return last_status(ws, nw) ? 1 : -1;
}

/* Room for conns sockets besides what srvscope has open (the soft limit is often 1024). */
static void raise_fd_limit(unsigned int conns)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= conns + 256ull)
		return;
	rl.rlim_cur = rl.rlim_max < conns + 256ull ? rl.rlim_max : conns + 256ull;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static unsigned int threads_for(const struct load_spec *s)
{
	unsigned int n = s->threads;

	if (!n) /* a second thread only where one cannot keep up; the server needs CPU too */
		n = s->rate == 0 || s->rate > 40000 ? 2 : 1;
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	return n > s->conns ? s->conns : n;
}

int load__run(const struct load_spec *spec, struct load_result *res, const volatile int *stop)
{
	struct run r = {.spec = spec, .stop = stop};
	struct worker ws[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	struct load_hist *h;
	unsigned int nw, i, j, given = 0;
	uint64_t start = now_ns(), elapsed;
	int fd, err = 0;

	memset(res, 0, sizeof(*res));
	memset(ws, 0, sizeof(ws));
	for (i = 0; i < MAX_THREADS; i++)
		ws[i].epfd = -1;
	if (!spec->conns || spec->rate < 0 || !(spec->duration_s > 0) || spec->reconnect_s < 0 ||
	    spec->set_share < 0 || spec->set_share > 1 || spec->duration_s > 1e6 ||
	    (spec->target.proto != LOAD_MEMCACHED && spec->target.proto != LOAD_REDIS &&
	     spec->target.proto != LOAD_HTTP)) {
		snprintf(res->error, sizeof(res->error),
			 "invalid load: conns, duration and rate must be positive");
		return -EINVAL;
	}
	err = resolve(&r, res);
	if (err)
		return err;
	/* nothing can connect: say so at once instead of a run of refused connects */
	fd = connect_once(&r, CONNECT_TIMEOUT_NS);
	if (fd < 0) {
		snprintf(res->error, sizeof(res->error),
			 "cannot connect to %.100s:%u: %s (is the %s server running and listening "
			 "there?)",
			 spec->target.host, spec->target.port, strerror(-fd),
			 proto_name(spec->target.proto));
		return fd;
	}
	res->connects++;
	r.value_len = spec->value_size;
	r.value = xmalloc(r.value_len + 1);
	memset(r.value, 'x', r.value_len);
	r.keys = spec->keys ? spec->keys : 1;
	if (spec->target.proto != LOAD_HTTP && spec->set_share < 1 && !spec->no_prefill)
		res->prefilled = prefill(&r, fd);
	close(fd);

	raise_fd_limit(spec->conns);
	nw = threads_for(spec);
	r.t0_ns = now_ns();
	r.end_ns = r.t0_ns + (uint64_t)(spec->duration_s * NS);
	r.hard_ns = r.end_ns + DRAIN_NS;
	if (r.hard_ns > start + (uint64_t)(spec->duration_s * NS) + NS - NS / 20)
		r.hard_ns = start + (uint64_t)(spec->duration_s * NS) + NS - NS / 20;
	for (i = 0; i < nw; i++) {
		struct worker *w = &ws[i];

		w->run = &r;
		w->index = i;
		w->nconns = spec->conns / nw + (i < spec->conns % nw);
		w->conns = xcalloc(w->nconns, sizeof(*w->conns));
		w->idle = xcalloc(w->nconns, sizeof(*w->idle));
		for (j = 0; j < w->nconns; j++) {
			w->conns[j].fd = -1;
			w->conns[j].out = xmalloc(LOAD_REQ_HEAD_MAX + r.value_len);
			w->conns[j].in_cap = IN_MIN;
			w->conns[j].in = xmalloc(IN_MIN);
		}
		w->rate = spec->rate * w->nconns / spec->conns;
		/* the threads' uniform schedules interleave */
		w->phase_ns = spec->rate > 0 ? (uint64_t)(given * (NS / spec->rate)) : 0;
		given += w->nconns ? 1 : 0;
		w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0)
			err = -errno;
	}
	for (i = 0; i < nw && !err; i++)
		if (pthread_create(&tids[i], NULL, worker_main, &ws[i]))
			break;
	nw = i; /* the threads that run */
	for (i = 0; i < nw; i++)
		pthread_join(tids[i], NULL);

	h = xcalloc(1, sizeof(*h));
	collect(ws, nw, res, h);
	elapsed = 0;
	for (i = 0; i < nw; i++)
		if (ws[i].send_end_ns - r.t0_ns > elapsed)
			elapsed = ws[i].send_end_ns - r.t0_ns;
	res->elapsed_s = elapsed / 1e9;
	res->throughput_rps = res->elapsed_s > 0 ? res->completed / res->elapsed_s : 0;
	if (!nw && !err)
		err = -EAGAIN;
	if (err)
		snprintf(res->error, sizeof(res->error), "cannot start the load's threads: %s",
			 strerror(-err));
	else if (!res->completed && res->sent && !(stop && *stop) && replies_failed(ws, nw)) {
		err = -EPROTO;
		if (replies_failed(ws, nw) > 0)
			snprintf(res->error, sizeof(res->error),
				 "%" PRIu64
				 " requests, every reply an error (last: HTTP %d): check the path",
				 res->sent, last_status(ws, nw));
		else
			snprintf(res->error, sizeof(res->error),
				 "%" PRIu64
				 " requests, every reply an error reply: see the server's log",
				 res->sent);
	} else if (!res->completed && res->sent && !(stop && *stop)) {
		err = -EPROTO;
		snprintf(res->error, sizeof(res->error),
			 "%" PRIu64 " requests, no good reply: is %.100s:%u a %s server?",
			 res->sent, spec->target.host, spec->target.port,
			 proto_name(spec->target.proto));
	} else if (!res->sent && !(stop && *stop)) {
		int e = 0;

		for (i = 0; i < nw; i++)
			if (ws[i].last_errno)
				e = ws[i].last_errno;
		err = e ? -e : -ECONNREFUSED;
		snprintf(res->error, sizeof(res->error),
			 "no connection to %.100s:%u took a request: %s", spec->target.host,
			 spec->target.port, strerror(-err));
	}
	free(h);
	for (i = 0; i < MAX_THREADS; i++) {
		for (j = 0; ws[i].conns && j < ws[i].nconns; j++) {
			free(ws[i].conns[j].out);
			free(ws[i].conns[j].in);
		}
		free(ws[i].conns);
		free(ws[i].idle);
		if (ws[i].epfd >= 0)
			close(ws[i].epfd);
	}
	free(r.value);
	return err;
}

void load__print_result(const struct load_result *res, FILE *f)
{
	fprintf(f,
		"%" PRIu64 " req in %.2f s, %.0f req/s, p50 %.0f p90 %.0f p99 %.0f p99.9 %.0f max "
		"%.0f us, %" PRIu64 " errors",
		res->completed, res->elapsed_s, res->throughput_rps, res->p50_us, res->p90_us,
		res->p99_us, res->p999_us, res->max_us, res->errors);
	if (res->missed)
		fprintf(f, ", %" PRIu64 " never sent (every connection busy)", res->missed);
	if (res->connect_errors)
		fprintf(f, ", %" PRIu64 " failed connects", res->connect_errors);
	fputc('\n', f);
}
