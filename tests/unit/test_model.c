/* The model's analysis on small synthetic traces whose architecture is known: an acceptor
 * that hands connections to a worker (memcached's shape), one thread that does both
 * (redis), forked processes that each accept (nginx), a process forked per connection
 * (postgres), thread-per-connection, workers fed through one shared epoll, acceptors on
 * SO_REUSEPORT listeners of one port, files served per request, a close written after
 * the accept that reused its fd number, a recording whose syscalls were sampled, and one
 * whose busy threads' switches were left out between windows. */
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

/* A worker closes fd 10 while the acceptor's accept4 gets 10 back: the close's record
 * (at its exit) comes after the accept's; the new connection must live on. */
static void test_late_close(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i;

	tb_open(&b);
	sc(&b, ts, 100, 100, 43, 10, 5, 0, 0);
	for (i = 0; i < 3; i++)
		cycle(&b, ts + 1000 + i * 1000, 101, 100, 10, false);
	ts += 10000;
	sc(&b, ts, 100, 100, 43, 10, 5, 0, 0);	    /* the accept: entered after the close did */
	sc(&b, ts + 500, 101, 100, 3, 0, 10, 0, 0); /* the close: entered at ts - 500 */
	for (i = 0; i < 4; i++)
		cycle(&b, ts + 1000 + i * 1000, 102, 100, 10, false);
	t = tb_read(&b, ts + 10000);
	m = build(t, 100);
	ok(m != NULL, "late close: model built");
	is_int(m->runs[0].nr_conn, 2, "late close: 2 connections");
	ok(m->runs[0].conn[0].close_ns && !m->runs[0].conn[1].close_ns,
	   "late close: the close ends the first connection, not the second");
	is_int(m->runs[0].conn[1].cycles, 4, "late close: the second connection's 4 cycles");
	is_int(m->runs[0].sc[0].fd_kind[FDK_TCP], 7, "late close: every read on a connection");
	model__free(m);
	trace__close(t);
}

/* The acceptor 100 adds its connections to the epoll it created (fd 5); workers 101 and
 * 102 both wait in it and serve whatever it returns. */
static void test_shared_epoll(void)
{
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i, c;

	tb_open(&b);
	sc(&b, ts, 100, 100, 291, 5, 0, 0, 0); /* epoll_create1 */
	ts += 1000;
	for (c = 0; c < 4; c++, ts += 1000) {
		sc(&b, ts, 100, 100, 43, 10 + c, 4, 0, 0);
		sc(&b, ts + 100, 100, 100, 233, 0, 5, 1, 10 + c); /* EPOLL_CTL_ADD */
	}
	for (i = 0; i < 12; i++, ts += 1000) {
		uint32_t w = 101 + i % 2;

		sc(&b, ts, w, 100, 232, 1, 5, 0, 1); /* epoll_wait(5) */
		cycle(&b, ts + 100, w, 100, 10 + (i % 4), false);
	}
	t = tb_read(&b, ts + 1000);
	m = build(t, 100);
	ok(m != NULL, "shared epoll: model built");
	ok(m->net.shared_epoll, "shared epoll: the workers wait in one epoll instance");
	is_str(m->net.handoff, "shared-epoll", "shared epoll: the hand-off");
	model__free(m);
	trace__close(t);
}

/* Workers 301 and 302 (processes) accept on fds 6 and 7: two listening sockets of one
 * port, both with SO_REUSEPORT as the run's fd snapshot read them. */
static void test_reuseport(void)
{
	static const struct trace *traces[1];
	struct model m = {0};
	struct model_fd fds[4];
	struct tb b;
	struct trace *t;
	uint64_t ts = 10000;
	int i;

	tb_open(&b);
	for (i = 0; i < 8; i++, ts += 1000) {
		uint32_t w = 301 + i % 2;

		sc(&b, ts, w, w, 43, 9, 6 + i % 2, 0, 0);
		cycle(&b, ts + 300, w, w, 9, true);
		sc(&b, ts + 600, w, w, 3, 0, 9, 0, 0);
	}
	t = tb_read(&b, ts + 1000);
	memset(fds, 0, sizeof(fds));
	for (i = 0; i < 4; i++) { /* each worker holds both listeners */
		fds[i].pid = 301 + i / 2;
		fds[i].fd = 6 + i % 2;
		fds[i].kind = FDK_TCP;
		fds[i].listening = true;
		fds[i].reuseport = 1;
		fds[i].port = 8080;
		fds[i].inode = 1000 + i % 2;
	}
	m.runs = calloc(1, sizeof(*m.runs));
	m.nr_runs = 1;
	m.runs[0].fds.fd = calloc(4, sizeof(fds[0]));
	memcpy(m.runs[0].fds.fd, fds, sizeof(fds));
	m.runs[0].fds.nr = m.runs[0].fds.cap = 4;
	m.runs[0].fds.live = true;
	traces[0] = t;
	m.traces = traces;
	ok(!model__analyze(t, 300, &m.runs[0]) && !model__build(&m), "reuseport: model built");
	is_int(m.net.listeners, 2, "reuseport: 2 listening sockets");
	is_int(m.net.reuseport, 1, "reuseport: SO_REUSEPORT");
	is_str(m.net.handoff, "reuseport", "reuseport: the kernel spreads the connections");
	model__free(&m);
	trace__close(t);
}

/* The worker opens a 612-byte file per request (openat, fstat, sendfile to the connection,
 * close), and appends to a log held open from before the run (fd 4, in the snapshot). */
static void test_files(void)
{
	static const struct trace *traces[1];
	struct model m = {0};
	struct tb b;
	struct trace *t;
	uint64_t ts = 10000;
	const struct model_file *page = NULL, *log = NULL;
	size_t k;
	int i;

	tb_open(&b);
	sc(&b, ts, 200, 200, 43, 20, 6, 0, 0);
	for (i = 0; i < 5; i++, ts += 1000) {
		sc(&b, ts + 100, 200, 200, 0, 30, 20, 0, 2048);	 /* the request */
		sc(&b, ts + 200, 200, 200, 257, 30, -100, 0, 0); /* openat(AT_FDCWD, ...) */
		sc(&b, ts + 300, 200, 200, 5, 0, 30, 0, 0);	 /* fstat */
		sc(&b, ts + 400, 200, 200, 40, 612, 20, 30, 0);	 /* sendfile(20, 30) */
		sc(&b, ts + 500, 200, 200, 3, 0, 30, 0, 0);	 /* close */
		sc(&b, ts + 600, 200, 200, 1, 90, 4, 0, 90);	 /* the log line */
	}
	t = tb_read(&b, ts + 1000);
	m.runs = calloc(1, sizeof(*m.runs));
	m.nr_runs = 1;
	m.runs[0].fds.fd = calloc(1, sizeof(struct model_fd));
	m.runs[0].fds.fd[0] = (struct model_fd){.pid = 200,
						.fd = 4,
						.kind = FDK_FILE,
						.append = true,
						.regular = true,
						.size = 1000,
						.path = strdup("/var/log/x.log"),
						.reuseport = -1};
	m.runs[0].fds.nr = m.runs[0].fds.cap = 1;
	m.runs[0].fds.live = true;
	traces[0] = t;
	m.traces = traces;
	ok(!model__analyze(t, 200, &m.runs[0]) && !model__build(&m), "files: model built");
	is_int(m.runs[0].nr_files, 2, "files: 2 files");
	for (k = 0; k < m.runs[0].nr_files; k++)
		if (m.runs[0].files[k].path)
			log = &m.runs[0].files[k];
		else
			page = &m.runs[0].files[k];
	ok(page && page->opens == 5 && page->reads == 5 && page->per_use.max == 612 &&
		   page->nr_ops == 4 && page->ops[0] == 257 && page->ops[2] == 40 &&
		   page->ops[3] == 3,
	   "files: the page, opened per request: openat, fstat, sendfile (612 bytes), close");
	ok(log && !strcmp(log->path, "/var/log/x.log") && log->before && log->append &&
		   log->writes == 5 && log->written_bytes == 450,
	   "files: the log by its path, open before, 5 appends of 90 bytes");
	model__free(&m);
	trace__close(t);
}

/* A sampled recording (record_opts.syscall_budget): half the syscalls in windows. Between
 * them only fd calls, as REC_SYSCALL_FD: connections are followed whole, the profile and
 * the cycles hold the windows' calls, the run's requests are scaled up. */
static void sc_fd(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid, int nr, int64_t ret,
		  uint64_t a0)
{
	struct rec r;

	tb_rec(b, ts, REC_SYSCALL_FD, tid, pid, (uint32_t)nr, &r);
	r.sc.ret = ret;
	r.sc.enter_ts = ts - 1000;
	r.sc.args[0] = a0;
	trace_writer__add_event(b->w, &r);
}

static void test_sampled(void)
{
	struct trace_syscall_sample ss = {.full = 1000, .out = 3000, .budget = 50000};
	struct tb b;
	struct trace *t;
	struct model *m;
	uint64_t ts = 10000;
	int i, c;

	tb_open(&b);
	/* A window: main 100 accepts fds 10, 11, worker 101 serves 3 cycles on each. */
	for (c = 0; c < 2; c++, ts += 1000)
		sc(&b, ts, 100, 100, 43, 10 + c, 5, 0, 0);
	for (i = 0; i < 3; i++)
		for (c = 0; c < 2; c++, ts += 1000)
			cycle(&b, ts, 101, 100, 10 + c, false);
	/* Between windows: 12 and 13 accepted, a file opened and closed, 10 closed; their
	 * reads and writes are not written. */
	sc_fd(&b, ts, 100, 100, 43, 12, 5);
	sc_fd(&b, ts + 100, 100, 100, 43, 13, 5);
	sc_fd(&b, ts + 200, 101, 100, 257, 20, (uint64_t)-100);
	sc_fd(&b, ts + 300, 101, 100, 3, 0, 20);
	sc_fd(&b, ts + 400, 101, 100, 3, 0, 10);
	ts += 1000;
	/* The next window: 12 (accepted between windows) served by 101, 2 cycles. */
	for (i = 0; i < 2; i++, ts += 1000)
		cycle(&b, ts, 101, 100, 12, false);
	trace_writer__section(b.w, SEC_SYSCALL_SAMPLE, &ss, sizeof(ss));
	t = tb_read(&b, ts + 1000);
	m = build(t, 100);
	ok(m != NULL, "sampled: model built");
	is_int(m->runs[0].nr_conn, 4, "sampled: the 4 connections, 2 accepted between windows");
	is_int(m->runs[0].cycles, 8, "sampled: the windows' 8 request cycles");
	ok(m->runs[0].sampled == 0.25, "sampled: a quarter of the syscalls in full");
	is_int(model_run__requests(&m->runs[0]), 32, "sampled: 32 requests over the run");
	is_int(m->runs[0].sc[0].count, 8, "sampled: the profile holds the windows' reads");
	is_int(m->runs[0].sc[3].count + m->runs[0].sc[43].count + m->runs[0].sc[257].count, 0,
	       "sampled: calls between windows are not in the profile");
	is_int(m->runs[0].nr_files, 0, "sampled: a file used between windows is not counted");
	ok(m->net.network_dispatch && m->net.handoff_share == 1.0,
	   "sampled: every connection with I/O was handed over");
	is_int(m->net.accept_pool, 1, "sampled: 1 acceptor");
	model__free(m);
	trace__close(t);
}

static const struct model_thread *thread_in(const struct model_run *run, uint32_t tid)
{
	size_t i;

	for (i = 0; i < run->nr_thr; i++)
		if (run->thr[i].tid == tid)
			return &run->thr[i];
	return NULL;
}

/* Switch windows (record_opts.switch_windows): a busy thread's switches written in the
 * windows alone, the first after a gap flagged. Its time off CPU is its span less its CPU
 * time (the runtime counter, exact), shared among its waits as they were outside the gaps;
 * a thread without gaps is as recorded. */
static void test_switch_gaps(void)
{
	struct model_run run = {0};
	const struct model_thread *busy, *whole, *from_start;
	struct trace *t;
	struct rec r;
	struct tb b;

	tb_open(&b);
	/* 101: waits 1000-1400, runs 1400-2000; a gap; runs 9000-9500; a gap (it ran 1000
	 * in it); waits 12000-12300 in poll, runs 12300-12500 and waits to the end */
	tb_switch_flags(&b, 1000, 101, 100, 1, 102, 100, 232, 0, 10000);
	tb_switch_flags(&b, 1400, 102, 100, 1, 101, 100, 232, 0, 0);
	tb_switch_flags(&b, 2000, 101, 100, 1, 102, 100, 232, 0, 10600);
	tb_switch_flags(&b, 9000, 0, 0, 0, 101, 100, -1, SWITCH_NEXT_GAP, 0);
	tb_switch_flags(&b, 9500, 101, 100, 1, 0, 0, 232, 0, 11100);
	tb_switch_flags(&b, 12000, 101, 100, 1, 0, 0, 7, SWITCH_PREV_GAP, 12100);
	tb_switch_flags(&b, 12300, 0, 0, 0, 101, 100, -1, 0, 0);
	tb_switch_flags(&b, 12500, 101, 100, 1, 0, 0, 232, 0, 12300);
	/* 103: blocked in epoll_wait from the start (the snapshot at 500) to 1500, runs to
	 * 1800; a gap; runs 5000-5200 and waits to the end */
	tb_rec(&b, 500, REC_STATE, 103, 100, 'S', &r);
	r.state.syscall = 232;
	r.state.fd = -1;
	trace_writer__add_event(b.w, &r);
	tb_switch_flags(&b, 1500, 0, 0, 0, 103, 100, -1, 0, 0);
	tb_switch_flags(&b, 1800, 103, 100, 1, 0, 0, 232, 0, 300);
	tb_switch_flags(&b, 5000, 0, 0, 0, 103, 100, -1, SWITCH_NEXT_GAP, 0);
	tb_switch_flags(&b, 5200, 103, 100, 1, 0, 0, 232, 0, 700);
	t = tb_read(&b, 20000);
	ok(!model__analyze(t, 100, &run), "switch gaps: analysed");
	busy = thread_in(&run, 101);
	whole = thread_in(&run, 102);
	ok(busy && busy->span_ns == 11500 && busy->gap_ns == 9500 && busy->ran_ns == 1300,
	   "switch gaps: the busy thread's span, gaps and time run outside them");
	/* off CPU: 11500 - 2300 of CPU = 9200, all of it waits (700 ns of waits, no delay
	 * outside the gaps); the wait from 12500 to the end is not known to be one */
	is_int(busy ? busy->on_ns : 0, 2300, "switch gaps: its CPU time from its counter");
	is_int(busy ? busy->off_ns : 0, 9200, "switch gaps: its span less its CPU time off CPU");
	is_int(busy ? busy->wait_ns[WK_EPOLL] : 0, 5257, "switch gaps: by kind, in shares");
	is_int(busy ? busy->wait_ns[WK_POLL] : 0, 3942, "switch gaps: by kind, in shares (2)");
	/* 102: blocked 1400-2000 whole */
	ok(whole && whole->gap_ns == 0 && whole->off_ns == 600,
	   "switch gaps: a thread without gaps as recorded");
	/* 103's span from the snapshot: 4700, 3200 of it a gap, 500 run; its wait from the
	 * start (1000) is all of its time off CPU outside the gap: 4700 - 400 of CPU */
	from_start = thread_in(&run, 103);
	ok(from_start && from_start->span_ns == 4700 && from_start->gap_ns == 3200 &&
		   from_start->ran_ns == 500,
	   "switch gaps: a thread's span from the start's snapshot");
	is_int(from_start ? from_start->off_ns : 0, 4300,
	       "switch gaps: its wait from the start counts, its last one (to the end) not");
	model_run__free(&run);
	trace__close(t);
}

int main(void)
{
	test_switch_gaps();
	test_handoff();
	test_fd_reuse();
	test_single();
	test_forked_acceptors();
	test_fork_per_conn();
	test_late_close();
	test_shared_epoll();
	test_reuseport();
	test_files();
	test_sampled();
	return done_testing();
}
