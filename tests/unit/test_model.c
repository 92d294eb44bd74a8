/* The model's analysis on small synthetic traces whose architecture is known: an acceptor
 * that hands connections to a worker (memcached's shape), one thread that does both
 * (redis), forked processes that each accept (nginx), a process forked per connection
 * (postgres), and thread-per-connection. */
#include <errno.h>
#include <sys/socket.h>

#include "model/model.h"
#include "rec_build.h"
#include "unit.h"

static void sc(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid, int nr, int64_t ret,
	       uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct rec r;

	tb_rec(b, ts, REC_SYSCALL, tid, pid, (uint32_t)nr, &r);
	r.sc.ret = ret;
	r.sc.enter_ts = ts - 1000;
	r.sc.args[0] = a0;
	r.sc.args[1] = a1;
	r.sc.args[2] = a2;
	trace_writer__add_event(b->w, &r);
}

static void sc_args(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid, int nr, uint64_t arg3)
{
	struct rec r;

	tb_rec(b, ts - 1000, REC_SYSCALL_ARGS, tid, pid, (uint32_t)nr, &r);
	r.sa.arg3 = arg3;
	trace_writer__add_event(b->w, &r);
}

static void fork_proc(struct tb *b, uint64_t ts, uint32_t child, uint32_t parent)
{
	struct rec r;

	tb_rec(b, ts, REC_FORK, child, child, parent, &r);
	r.task.parent_pid = parent;
	strcpy(r.task.comm, "srv");
	trace_writer__add_event(b->w, &r);
}

static void exit_proc(struct tb *b, uint64_t ts, uint32_t pid)
{
	struct rec r;

	tb_rec(b, ts, REC_EXIT, pid, pid, 0, &r);
	r.task.flags = 1;
	trace_writer__add_event(b->w, &r);
}

/* A request/response on fd by tid: read (data), read (EAGAIN when nb), write. */
static void cycle(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid, int fd, bool nb)
{
	sc(b, ts, tid, pid, 0, 30, fd, 0, 2048);
	if (nb)
		sc(b, ts + 100, tid, pid, 0, -EAGAIN, fd, 0, 2048);
	sc(b, ts + 200, tid, pid, 1, 100, fd, 0, 100);
}

static struct model *build(struct trace *t, uint32_t pid)
{
	static struct model m;
	static const struct trace *traces[1];

	memset(&m, 0, sizeof(m));
	m.runs = calloc(1, sizeof(*m.runs));
	m.nr_runs = 1;
	traces[0] = t;
	m.traces = traces;
	if (model__analyze(t, pid, &m.runs[0]) || model__build(&m))
		return NULL;
	return &m;
}

static void test_handoff(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i, c;

	tb_open(&b);
	/* main 100 accepts 4 connections (fd 10..13), fcntl O_NONBLOCK, workers 101/102
	 * serve two each, 5 cycles per connection. */
	for (c = 0; c < 4; c++) {
		sc(&b, ts, 100, 100, 43, 10 + c, 5, 0, 0);
		sc(&b, ts + 10, 100, 100, 72, 0, 10 + c, 4 /* F_SETFL */, 04000);
		ts += 1000;
	}
	for (i = 0; i < 5; i++)
		for (c = 0; c < 4; c++, ts += 1000)
			cycle(&b, ts, 101 + c % 2, 100, 10 + c, false);
	t = tb_read(&b, ts + 1000);
	m = build(t, 100);
	ok(m != NULL, "handoff: model built");
	is_int(m->runs[0].nr_conn, 4, "handoff: 4 connections");
	is_int(m->runs[0].cycles, 20, "handoff: 20 request cycles");
	ok(!m->net.accept_dispatch && m->net.network_dispatch,
	   "handoff: accept_dispatch false, network_dispatch true");
	is_int(m->net.accept_pool, 1, "handoff: 1 acceptor");
	is_int(m->net.network_pool, 2, "handoff: 2 network threads");
	ok(m->net.nonblocking, "handoff: O_NONBLOCK set with fcntl seen");
	ok(m->net.handoff_share == 1.0, "handoff: every connection handed over");
	is_str(m->net.handoff, "queue", "handoff: through a queue");
	model__free(m);
	trace__close(t);
}

static void test_single(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i;

	tb_open(&b);
	for (i = 0; i < 3; i++) {
		sc_args(&b, ts, 200, 200, 288, SOCK_NONBLOCK);
		sc(&b, ts, 200, 200, 288, 20 + i, 6, 0, 0);
		ts += 1000;
	}
	for (i = 0; i < 30; i++, ts += 1000)
		cycle(&b, ts, 200, 200, 20 + i % 3, false);
	sc(&b, ts, 200, 200, 3, 0, 20, 0, 0); /* close */
	t = tb_read(&b, ts + 1000);
	m = build(t, 200);
	ok(m != NULL, "single: model built");
	ok(!m->net.accept_dispatch && !m->net.network_dispatch, "single: false, false");
	is_int(m->net.accept_pool, 1, "single: pool 1");
	is_int(m->net.network_pool, 1, "single: network pool 1");
	ok(m->net.nonblocking, "single: accept4 SOCK_NONBLOCK seen");
	is_int(m->runs[0].cycles, 30, "single: 30 cycles");
	is_int(m->runs[0].sc[0].count, 30, "single: 30 reads profiled");
	is_int(m->runs[0].sc[0].fd_kind[FDK_TCP], 30, "single: the reads were on connections");
	model__free(m);
	trace__close(t);
}

static void test_forked_acceptors(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i;

	tb_open(&b);
	/* master 300 forks 301 and 302, which both accept on the inherited fd 6 */
	fork_proc(&b, ts, 301, 300);
	fork_proc(&b, ts + 10, 302, 300);
	ts += 1000;
	for (i = 0; i < 6; i++, ts += 1000) {
		uint32_t w = 301 + i % 2;

		sc(&b, ts, w, w, 43, 9, 6, 0, 0);
		cycle(&b, ts + 300, w, w, 9, true);
		sc(&b, ts + 600, w, w, 3, 0, 9, 0, 0);
	}
	t = tb_read(&b, ts + 1000);
	m = build(t, 300);
	ok(m != NULL, "forked: model built");
	ok(m->net.accept_dispatch && !m->net.network_dispatch, "forked: true, false");
	is_int(m->net.accept_pool, 2, "forked: 2 acceptors");
	is_int(m->net.network_pool, 2, "forked: 2 network");
	ok(m->net.multi_process, "forked: multi_process");
	is_int(m->net.listeners, 1, "forked: one listener shared");
	ok(m->net.nonblocking, "forked: EAGAIN seen: non-blocking");
	model__free(m);
	trace__close(t);
}

static void test_fork_per_conn(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i, j;

	tb_open(&b);
	/* postmaster 400 accepts fd 8, forks a backend, closes its copy; the backend serves */
	for (i = 0; i < 3; i++) {
		uint32_t be = 401 + i;

		sc(&b, ts, 400, 400, 43, 8, 5, 0, 0);
		fork_proc(&b, ts + 100, be, 400);
		sc(&b, ts + 200, 400, 400, 3, 0, 8, 0, 0);
		for (j = 0; j < 4; j++)
			cycle(&b, ts + 1000 + j * 1000, be, be, 8, false);
		exit_proc(&b, ts + 5000, be); /* no close: its fds go with it */
		ts += 500;
	}
	ts += 10000;
	t = tb_read(&b, ts);
	m = build(t, 400);
	ok(m != NULL, "fork-per-conn: model built");
	is_int(m->runs[0].cycles, 12, "fork-per-conn: 12 cycles followed into the backends");
	ok(m->net.network_dispatch, "fork-per-conn: handed over");
	is_str(m->net.handoff, "fork", "fork-per-conn: by fork");
	is_str(m->net.per_connection, "process", "fork-per-conn: a process per connection");
	ok(m->runs[0].conn[0].close_ns && m->runs[0].conn[2].close_ns,
	   "fork-per-conn: a connection ends with the last process that held it");
	is_int(m->runs[0].peak_conns, 3, "fork-per-conn: 3 connections open at once at most");
	model__free(m);
	trace__close(t);
}

/* A worker closes fd 10 while the acceptor's next accept takes number 10 as soon as it is
 * free: the accept's exit is recorded before the close's (another CPU). The close ends
 * the old connection only; the new one's cycles count (the clone's model lost a
 * connection's worth of requests to this now and then: 10-15 % too many syscalls each). */
static void test_fd_reuse(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i;

	tb_open(&b);
	sc(&b, ts, 100, 100, 43, 10, 5, 0, 0);
	for (i = 0; i < 3; i++, ts += 1000)
		cycle(&b, ts + 1000, 101, 100, 10, false);
	ts += 1000;
	sc(&b, ts + 300, 100, 100, 43, 10, 5, 0, 0); /* accept: exit at +300 */
	sc(&b, ts + 500, 101, 100, 3, 0, 10, 0, 0);  /* close: entered at -500, exit at +500 */
	for (i = 0; i < 3; i++, ts += 1000)
		cycle(&b, ts + 1000, 101, 100, 10, false);
	t = tb_read(&b, ts + 2000);
	m = build(t, 100);
	ok(m != NULL, "fd reuse: model built");
	is_int(m->runs[0].nr_conn, 2, "fd reuse: 2 connections");
	is_int(m->runs[0].cycles, 6, "fd reuse: the new connection's 3 cycles count too");
	ok(m->runs[0].conn[0].close_ns && !m->runs[0].conn[1].close_ns,
	   "fd reuse: the late close ends the old connection, not the new one");
	model__free(m);
	trace__close(t);
}

int main(void)
{
	test_handoff();
	test_fd_reuse();
	test_single();
	test_forked_acceptors();
	test_fork_per_conn();
	return done_testing();
}
