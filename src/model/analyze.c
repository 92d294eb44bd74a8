/* One trace into the model's facts: per thread its waits, stacks and connection work; per
 * connection who accepted it and who did its I/O. Connections are followed by (process, fd)
 * from the accept that made them to the close that ends them, into processes forked while
 * they are open (fork-per-connection servers hand them over that way). Two passes over the
 * events: the first finds connections and the threads that serve them, the second sums
 * those threads' syscalls (the profile), replaying the same fd bookkeeping. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "analysis/blocking.h"
#include "model/files.h"
#include "model/model.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "util/util.h"

/* x86-64 syscall numbers (the recorder's). */
enum {
	NR_READ = 0,
	NR_WRITE = 1,
	NR_OPEN = 2,
	NR_CLOSE = 3,
	NR_POLL = 7,
	NR_PREAD = 17,
	NR_PWRITE = 18,
	NR_READV = 19,
	NR_WRITEV = 20,
	NR_SELECT = 23,
	NR_DUP = 32,
	NR_DUP2 = 33,
	NR_NANOSLEEP = 35,
	NR_SENDFILE = 40,
	NR_SOCKET = 41,
	NR_ACCEPT = 43,
	NR_SENDTO = 44,
	NR_RECVFROM = 45,
	NR_SENDMSG = 46,
	NR_RECVMSG = 47,
	NR_FCNTL = 72,
	NR_FUTEX = 202,
	NR_EPOLL_CREATE = 213,
	NR_EPOLL_WAIT = 232,
	NR_EPOLL_CTL = 233,
	NR_CLOCK_NANOSLEEP = 230,
	NR_PSELECT6 = 270,
	NR_PPOLL = 271,
	NR_EPOLL_PWAIT = 281,
	NR_SIGNALFD = 282,
	NR_TIMERFD_CREATE = 283,
	NR_EVENTFD = 284,
	NR_ACCEPT4 = 288,
	NR_SIGNALFD4 = 289,
	NR_EVENTFD2 = 290,
	NR_EPOLL_CREATE1 = 291,
	NR_DUP3 = 292,
	NR_PREADV = 295,
	NR_PWRITEV = 296,
	NR_RECVMMSG = 299,
	NR_SENDMMSG = 307,
	NR_IO_URING_ENTER = 426,
	NR_OPENAT2 = 437,
	NR_EPOLL_PWAIT2 = 441,
	NR_OPENAT = 257,
	NR_CLOSE_RANGE = 436,
};

static const char *const fd_kind_names[FDK_KINDS] = {
	[FDK_OTHER] = "other",	     [FDK_TCP] = "tcp",	    [FDK_UDP] = "udp",
	[FDK_UNIX] = "unix",	     [FDK_FILE] = "file",   [FDK_PIPE] = "pipe",
	[FDK_EVENTFD] = "eventfd",   [FDK_EPOLL] = "epoll", [FDK_TIMERFD] = "timerfd",
	[FDK_SIGNALFD] = "signalfd",
};

const char *model__fd_kind_name(enum fd_kind k)
{
	return k < FDK_KINDS ? fd_kind_names[k] : "other";
}

/* A kind of wait by its commonest syscall (the JSON's clusters[].wait.syscall). */
static const char *const wait_names[WK_KINDS] = {
	[WK_EPOLL] = "epoll_wait",     [WK_POLL] = "poll",	 [WK_SELECT] = "select",
	[WK_URING] = "io_uring_enter", [WK_READ] = "read",	 [WK_ACCEPT] = "accept",
	[WK_FUTEX] = "futex",	       [WK_SLEEP] = "nanosleep", [WK_OTHER] = "other",
};

const char *model__wait_name(enum wait_kind k)
{
	return k < WK_KINDS ? wait_names[k] : "other";
}

static bool is_read(int nr)
{
	return nr == NR_READ || nr == NR_RECVFROM || nr == NR_RECVMSG || nr == NR_READV ||
	       nr == NR_RECVMMSG;
}

static bool is_write(int nr)
{
	return nr == NR_WRITE || nr == NR_SENDTO || nr == NR_SENDMSG || nr == NR_WRITEV ||
	       nr == NR_SENDMMSG || nr == NR_SENDFILE;
}

static enum wait_kind wait_of(int nr)
{
	switch (nr) {
	case NR_EPOLL_WAIT:
	case NR_EPOLL_PWAIT:
	case NR_EPOLL_PWAIT2:
		return WK_EPOLL;
	case NR_POLL:
	case NR_PPOLL:
		return WK_POLL;
	case NR_SELECT:
	case NR_PSELECT6:
		return WK_SELECT;
	case NR_IO_URING_ENTER:
		return WK_URING;
	case NR_ACCEPT:
	case NR_ACCEPT4:
		return WK_ACCEPT;
	case NR_FUTEX:
		return WK_FUTEX;
	case NR_NANOSLEEP:
	case NR_CLOCK_NANOSLEEP:
		return WK_SLEEP;
	default:
		return is_read(nr) ? WK_READ : WK_OTHER;
	}
}

enum wait_kind model__wait_kind(int nr)
{
	return wait_of(nr);
}

static uint64_t fdkey(uint32_t pid, int64_t fd)
{
	return (uint64_t)pid << 32 | (uint32_t)fd;
}

/* The walk's bookkeeping, rebuilt identically by each pass. */
struct walk {
	struct model_run *run;
	struct u64map fds;    /* (pid, fd) -> conn index + 1 */
	struct u64map kinds;  /* (pid, fd) -> enum fd_kind */
	struct u64map lsn;    /* (pid, fd) -> 1: a listening socket (accept was called on it) */
	struct u64map served; /* (tid, conn) -> 1: the thread did I/O on the connection */
	struct u64map open_by_thr; /* tid -> connections it serves now */
	struct u64map ever;	   /* (pid, fd) -> 1: was a connection at some time */
	struct u64map holders;	   /* conn index -> fd table entries that hold it */
	uint64_t next_conn;
	const struct trace *t;
	struct u64map pending; /* tid -> index + 1 of its last REC_SYSCALL_ARGS */
	struct u64map phase;   /* profile pass: conn index + 1 -> 1 after a read, 2 after a write */
	struct model_cycle *seqs; /* profile pass: per connection, its cycle under way */
	bool profile;
	uint32_t open_conns;
	struct u64map epid;	      /* (pid, fd) -> its epoll instance's identity */
	uint64_t next_epoll;	      /* epoll instances created in the trace */
	struct u64map lsock;	      /* (pid, fd) -> a listener's identity: its socket inode */
	struct u64map born;	      /* (pid, fd) -> when the syscall that gave it out returned */
	struct u64map born_tid;	      /* (pid, fd) -> the thread that made that syscall */
	struct model_file_walk files; /* profile pass: the network threads' file use */
	/* The syscall being handled is a REC_SYSCALL_FD: made between the windows of a
	 * sampled recording, it keeps the fd tables right but counts in no profile. */
	bool unsampled;
};

static struct model_thread *thread_of(struct model_run *run, uint32_t tid, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map__slot(&run->thr_idx, tid, &created);
	struct model_thread *th;

	if (!created)
		return &run->thr[*slot - 1];
	xgrow((void **)&run->thr, &run->cap_thr, run->nr_thr + 1, sizeof(*run->thr));
	th = &run->thr[run->nr_thr++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->pid = pid;
	th->cluster = -1;
	*u64map__slot(&run->thr_idx, tid, NULL) = run->nr_thr;
	return th;
}

static struct model_thread *find_thread(struct model_run *run, uint32_t tid)
{
	uint64_t v;

	return u64map__get(&run->thr_idx, tid, &v) ? &run->thr[v - 1] : NULL;
}

static struct model_conn *conn_at(struct walk *w, uint32_t pid, int64_t fd)
{
	uint64_t v;

	if (fd < 0 || fd > 0x7fffffff || !u64map__get(&w->fds, fdkey(pid, fd), &v) || !v)
		return NULL;
	return &w->run->conn[v - 1];
}

static enum fd_kind kind_at(struct walk *w, uint32_t pid, int64_t fd)
{
	uint64_t v;

	if (conn_at(w, pid, fd))
		return FDK_TCP;
	if (fd < 0 || fd > 0x7fffffff || !u64map__get(&w->kinds, fdkey(pid, fd), &v))
		return FDK_OTHER;
	return (enum fd_kind)v;
}

/* The epoll instance behind (pid, fd): the one the snapshot or an epoll_create named, else
 * one of its own for this fd of this process (its threads share the fd table). */
static uint64_t epoll_of(struct walk *w, uint32_t pid, int64_t fd)
{
	uint64_t v;

	if (fd < 0 || fd > 0x7fffffff)
		return 0;
	if (u64map__get(&w->epid, fdkey(pid, fd), &v) && v)
		return v;
	v = 1ull << 63 | fdkey(pid, fd);
	u64map__put(&w->epid, fdkey(pid, fd), v);
	return v;
}

/* A listening socket's identity: its inode when the snapshot knows it, else its fd number
 * (the processes a server forks inherit their listeners under the same numbers). */
static uint64_t listener_of(struct walk *w, uint32_t pid, int64_t fd)
{
	uint64_t v;

	if (u64map__get(&w->lsock, fdkey(pid, fd), &v) && v)
		return v;
	return 1ull << 62 | (uint32_t)fd;
}

/* The fds open as the run started: their kinds, listeners and epoll instances. */
static void seed_fds(struct walk *w)
{
	const struct model_fds *f = &w->run->fds;
	size_t i;

	for (i = 0; i < f->nr; i++) {
		const struct model_fd *e = &f->fd[i];
		uint64_t key = fdkey(e->pid, e->fd);

		if (e->kind != FDK_OTHER)
			u64map__put(&w->kinds, key, e->kind);
		if (e->epoll)
			u64map__put(&w->epid, key, e->epoll);
		if (e->listening && e->inode)
			u64map__put(&w->lsock, key, e->inode);
	}
}

static enum fd_kind socket_kind(uint64_t family, uint64_t type)
{
	type &= 0xf; /* SOCK_NONBLOCK and SOCK_CLOEXEC set higher bits */
	if (family == AF_UNIX)
		return FDK_UNIX;
	if (family == AF_INET || family == AF_INET6)
		return type == SOCK_DGRAM ? FDK_UDP : FDK_TCP;
	return FDK_OTHER;
}

static void conn_closed(struct walk *w, struct model_conn *c, uint64_t ts)
{
	uint64_t *n;

	if (c->close_ns)
		return;
	c->close_ns = ts;
	if (w->open_conns)
		w->open_conns--;
	if (c->io_tid) {
		n = u64map__slot(&w->open_by_thr, c->io_tid, NULL);
		if (*n)
			(*n)--;
	}
}

/* close(fd) in pid: its table entry goes; the connection ends when no process holds it. */
static void fd_closed(struct walk *w, uint32_t pid, int64_t fd, uint64_t ts)
{
	struct model_conn *c = conn_at(w, pid, fd);
	uint64_t *held;

	if (fd < 0 || fd > 0x7fffffff)
		return;
	u64map__put(&w->fds, fdkey(pid, fd), 0);
	u64map__put(&w->kinds, fdkey(pid, fd), FDK_OTHER);
	u64map__put(&w->epid, fdkey(pid, fd), 0);
	u64map__put(&w->lsock, fdkey(pid, fd), 0);
	if (w->profile)
		files__close(&w->files, w->run, pid, (int32_t)fd, !w->unsampled);
	if (!c)
		return;
	held = u64map__slot(&w->holders, (uint64_t)(c - w->run->conn), NULL);
	if (*held && --*held)
		return;
	conn_closed(w, c, ts);
}

/* A process is gone: so are its fds (closed without a close). */
static void proc_gone(struct walk *w, uint32_t pid, uint64_t ts)
{
	uint64_t k, v, *fds = NULL;
	size_t i, n = 0, cap = 0;

	for (i = 0; u64map__next(&w->fds, &i, &k, &v);)
		if (v && k >> 32 == pid) {
			xgrow((void **)&fds, &cap, n + 1, sizeof(*fds));
			fds[n++] = (uint32_t)k;
		}
	for (i = 0; i < n; i++)
		fd_closed(w, pid, (int64_t)fds[i], ts);
	free(fds);
}

/* Copies the entries of parent in m to child. */
static void copy_entries(struct u64map *m, uint32_t child, uint32_t parent)
{
	uint64_t k, v, *kv = NULL;
	size_t i, n = 0, cap = 0;

	for (i = 0; u64map__next(m, &i, &k, &v);) {
		if (!v || k >> 32 != parent)
			continue;
		xgrow((void **)&kv, &cap, n + 2, sizeof(*kv));
		kv[n++] = (uint64_t)child << 32 | (uint32_t)k;
		kv[n++] = v;
	}
	for (i = 0; i < n; i += 2)
		u64map__put(m, kv[i], kv[i + 1]);
	free(kv);
}

/* A new process gets a copy of its parent's connections and listeners. */
static void forked(struct walk *w, uint32_t child, uint32_t parent)
{
	uint64_t k, v;
	size_t i;

	for (i = 0; u64map__next(&w->fds, &i, &k, &v);)
		if (v && k >> 32 == parent)
			(*u64map__slot(&w->holders, v - 1, NULL))++;
	copy_entries(&w->fds, child, parent);
	copy_entries(&w->lsn, child, parent);
	copy_entries(&w->kinds, child, parent);
	copy_entries(&w->ever, child, parent);
	copy_entries(&w->epid, child, parent);
	copy_entries(&w->lsock, child, parent);
}

static unsigned bucket(uint64_t bytes)
{
	unsigned b = 0;

	while (b < MODEL_SIZE_BUCKETS - 1 && (1ull << b) < bytes)
		b++;
	return b;
}

void model_sizes__add(struct model_sizes *s, uint64_t bytes)
{
	s->hist[bucket(bytes)]++;
	s->n++;
	s->sum += bytes;
	if (bytes > s->max)
		s->max = bytes;
}

static void profile_call(struct walk *w, const struct rec *e, int nr, enum fd_kind kind)
{
	struct model_sc_stat *s;
	uint64_t size = e->sc.args[2], *slot;
	bool sock = kind == FDK_TCP || kind == FDK_UDP || kind == FDK_UNIX;
	char buf[32];

	if (nr < 0 || nr >= MODEL_MAX_SYSCALL ||
	    !strncmp(syscall__name(nr, buf, sizeof(buf)), "syscall_", 8)) {
		w->run->unknown_syscalls++;
		return;
	}
	s = &w->run->sc[nr];
	s->count++;
	s->ns += e->h.ts - e->sc.enter_ts;
	if (e->sc.ret == -EAGAIN)
		s->eagain++;
	else if (e->sc.ret < 0 && e->sc.ret > -4096)
		s->err++;
	else
		s->ok++;
	if (syscall__has_fd(nr))
		s->fd_kind[kind]++;
	if (is_read(nr) || is_write(nr) || nr == NR_PREAD || nr == NR_PWRITE) {
		if (nr == NR_READV || nr == NR_WRITEV || nr == NR_RECVMSG || nr == NR_SENDMSG ||
		    nr == NR_RECVMMSG || nr == NR_SENDMMSG)
			size = e->sc.ret > 0 ? (uint64_t)e->sc.ret
					     : 0; /* the iovec is not recorded */
		if (nr == NR_SENDFILE)
			size = e->sc.ret > 0 ? (uint64_t)e->sc.ret : 0;
		if (sock) {
			s->sock_hist[bucket(size)]++;
			s->sock_n++;
			s->sock_sum += size;
			if (size > s->sock_max)
				s->sock_max = size;
		} else {
			s->file_hist[bucket(size)]++;
			s->file_n++;
			s->file_sum += size;
			if (size > s->file_max)
				s->file_max = size;
		}
	}
	/* The argument that tells how the call is used. */
	if (nr == NR_EPOLL_WAIT || nr == NR_EPOLL_PWAIT || nr == NR_EPOLL_PWAIT2 ||
	    nr == NR_EPOLL_CTL || nr == NR_FCNTL || nr == NR_POLL) {
		slot = u64map__slot(
			&s->arg_vals,
			nr == NR_EPOLL_CTL || nr == NR_FCNTL ? e->sc.args[1] : e->sc.args[2], NULL);
		(*slot)++;
	}
}

/* The REC_SYSCALL_ARGS written for this syscall, or NULL. */
static const struct rec *args_of(struct walk *w, const struct rec *e)
{
	const struct rec *a;
	uint64_t v;

	if (!u64map__get(&w->pending, e->h.tid, &v) || !v)
		return NULL;
	a = w->t->ev[v - 1];
	u64map__put(&w->pending, e->h.tid, 0);
	return a->h.aux == e->h.aux && a->h.ts == e->sc.enter_ts ? a : NULL;
}

static void profile_args(struct model_sc_stat *s, int nr, const struct rec *a)
{
	unsigned i, j, n;

	switch (nr) {
	case NR_EPOLL_WAIT:
	case NR_EPOLL_PWAIT:
		(*u64map__slot(&s->timeouts, (uint32_t)a->sa.arg3, NULL))++;
		break;
	case NR_ACCEPT4:
	case NR_SENDTO:
	case NR_RECVFROM:
		(*u64map__slot(&s->flags, (uint32_t)a->sa.arg3, NULL))++;
		break;
	case NR_EPOLL_CTL:
		if (a->sa.nr_vals)
			(*u64map__slot(&s->flags, a->sa.vals[0], NULL))++;
		break;
	case NR_PREAD:
	case NR_PWRITE:
		if (!s->off_n || a->sa.arg3 < s->off_min)
			s->off_min = a->sa.arg3;
		if (a->sa.arg3 > s->off_max)
			s->off_max = a->sa.arg3;
		s->off_n++;
		s->off_aligned += !(a->sa.arg3 % 4096);
		break;
	case NR_READV:
	case NR_WRITEV:
	case NR_PREADV:
	case NR_PWRITEV:
	case NR_SENDMSG:
	case NR_RECVMSG:
		s->iov_n++;
		n = a->sa.nr_vals < 7 ? a->sa.nr_vals : 7;
		for (i = 0; i < ARRAY_SIZE(s->iov); i++) {
			if (!s->iov[i].count) {
				s->iov[i].n = a->sa.nr_vals;
				memcpy(s->iov[i].len, a->sa.vals, n * sizeof(a->sa.vals[0]));
			}
			if (s->iov[i].n != a->sa.nr_vals)
				continue;
			for (j = 0; j < n && s->iov[i].len[j] == a->sa.vals[j]; j++)
				;
			if (j == n) {
				s->iov[i].count++;
				return;
			}
		}
		s->iov_other++;
		break;
	default:
		break;
	}
}

static bool is_wait(int nr)
{
	enum wait_kind k = wait_of(nr);

	return k == WK_EPOLL || k == WK_POLL || k == WK_SELECT || k == WK_URING;
}

/* A connection's cycle is over: counted among the distinct sequences. */
static void end_seq(struct model_run *run, struct model_cycle *c)
{
	uint64_t h = FNV1A_INIT, *slot;
	bool created;
	unsigned i;

	if (!c->len)
		return;
	for (i = 0; i < c->len; i++) {
		h = fnv1a(&c->steps[i].nr, sizeof(c->steps[i].nr), h);
		h = fnv1a(&c->steps[i].kind, 2, h); /* kind and ret */
	}
	run->seqs_seen++;
	slot = u64map__slot(&run->seq_idx, h, &created);
	if (created) {
		xgrow((void **)&run->seqs, &run->cap_seqs, run->nr_seqs + 1, sizeof(*run->seqs));
		run->seqs[run->nr_seqs] = *c;
		run->seqs[run->nr_seqs].count = 0;
		*slot = ++run->nr_seqs;
	}
	run->seqs[*slot - 1].count++;
	c->len = 0;
}

static void thread_drop_seq(struct model_thread *th, uint32_t idx1)
{
	unsigned i;

	for (i = 0; i < th->nr_open_seq; i++)
		if (th->open_seq[i] == idx1) {
			memmove(&th->open_seq[i], &th->open_seq[i + 1],
				(th->nr_open_seq - i - 1) * sizeof(th->open_seq[0]));
			th->nr_open_seq--;
			return;
		}
}

/* idx1 (a connection's index + 1) becomes the thread's first open sequence. */
static void thread_touch_seq(struct walk *w, struct model_thread *th, uint32_t idx1)
{
	thread_drop_seq(th, idx1);
	if (th->nr_open_seq == ARRAY_SIZE(th->open_seq)) /* the oldest ends */
		end_seq(w->run, &w->seqs[th->open_seq[--th->nr_open_seq] - 1]);
	memmove(&th->open_seq[1], &th->open_seq[0], th->nr_open_seq * sizeof(th->open_seq[0]));
	th->open_seq[0] = idx1;
	th->nr_open_seq++;
}

static void append_step(struct walk *w, struct model_thread *th, uint32_t idx1,
			const struct model_step *st)
{
	struct model_cycle *c = &w->seqs[idx1 - 1];

	c->steps[c->len++] = *st;
	if (c->len == MODEL_CYCLE_MAX) {
		end_seq(w->run, c);
		thread_drop_seq(th, idx1);
	}
}

/* Profile pass: a request's cycle is the syscalls of a network thread on its connection,
 * from the read that starts the request, to the thread's next wait (which ends every
 * cycle under way in it: an event loop serves several connections between waits).
 * Syscalls on no connection go to the cycle the thread touched last. */
static void track_seq(struct walk *w, struct model_thread *th, const struct rec *e,
		      const struct rec *a, enum fd_kind kind)
{
	int nr = (int)e->h.aux;
	struct model_conn *c = conn_at(w, e->h.pid, (int64_t)e->sc.args[0]);
	uint32_t idx1 = c ? (uint32_t)(c - w->run->conn) + 1 : 0;
	struct model_step st = {0};
	bool started = false;
	unsigned i;

	if (c && (is_read(nr) || is_write(nr)) && e->sc.ret > 0) {
		uint64_t *ph = u64map__slot(&w->phase, idx1, NULL);

		if (is_read(nr) && *ph != 1) { /* a new request */
			end_seq(w->run, &w->seqs[idx1 - 1]);
			thread_touch_seq(w, th, idx1);
			started = true;
		}
		*ph = is_read(nr) ? 1 : 2;
	}
	st.nr = (int16_t)nr;
	st.kind = syscall__has_fd(nr) ? (uint8_t)kind : FDK_OTHER;
	st.ret = e->sc.ret == -EAGAIN ? 1 : e->sc.ret < 0 && e->sc.ret > -4096 ? 2 : 0;
	if (is_read(nr) && nr != NR_READV && nr != NR_RECVMSG)
		st.bytes = (uint32_t)e->sc.args[2]; /* asked for */
	else if ((is_read(nr) || is_write(nr)) && e->sc.ret > 0)
		st.bytes = (uint32_t)e->sc.ret;
	st.maxevents = st.timeout_ms = -2;
	if (wait_of(nr) == WK_EPOLL) {
		st.maxevents = (int32_t)e->sc.args[2];
		if (a)
			st.timeout_ms = (int32_t)a->sa.arg3;
	} else if (nr == NR_POLL) {
		st.timeout_ms = (int32_t)e->sc.args[2];
	}
	if (a && (nr == NR_READV || nr == NR_WRITEV || nr == NR_SENDMSG || nr == NR_RECVMSG)) {
		st.iov_n = a->sa.nr_vals;
		for (i = 0; i < 4 && i < a->sa.nr_vals; i++)
			st.iov[i] = a->sa.vals[i];
	}
	if (is_wait(nr)) {
		for (i = 0; i < th->nr_open_seq; i++) {
			struct model_cycle *sc = &w->seqs[th->open_seq[i] - 1];

			if (sc->len < MODEL_CYCLE_MAX)
				sc->steps[sc->len++] = st;
			end_seq(w->run, sc);
		}
		th->nr_open_seq = 0;
		return;
	}
	if (c && (started || w->seqs[idx1 - 1].len)) {
		append_step(w, th, idx1, &st);
		return;
	}
	if (!c && th->nr_open_seq)
		append_step(w, th, th->open_seq[0], &st);
}

/* Syscalls that act on a file through an fd, their first argument (sendfile: its source,
 * the second; newfstatat and statx: a directory, or the file itself with an empty path). */
static bool file_syscall(int nr)
{
	switch (nr) {
	case NR_READ:
	case NR_WRITE:
	case NR_CLOSE:
	case 5:	 /* fstat */
	case 8:	 /* lseek */
	case 16: /* ioctl */
	case NR_PREAD:
	case NR_PWRITE:
	case NR_READV:
	case NR_WRITEV:
	case NR_SENDFILE:
	case NR_FCNTL:
	case 73:  /* flock */
	case 74:  /* fsync */
	case 75:  /* fdatasync */
	case 77:  /* ftruncate */
	case 217: /* getdents64 */
	case 221: /* fadvise64 */
	case 262: /* newfstatat */
	case 285: /* fallocate */
	case NR_PREADV:
	case NR_PWRITEV:
	case 327: /* preadv2 */
	case 328: /* pwritev2 */
	case 332: /* statx */
		return true;
	default:
		return false;
	}
}

/* Profile pass: a network thread's syscall on a file. */
static void file_call(struct walk *w, const struct rec *e, const struct rec *a, int nr,
		      enum fd_kind kind)
{
	int64_t fd = (int64_t)e->sc.args[0];
	struct model_file_call c = {.nr = nr, .ret = e->sc.ret, .ts = e->h.ts};

	if (nr == NR_SENDFILE) {
		fd = (int64_t)e->sc.args[1];
		kind = kind_at(w, e->h.pid, fd);
	}
	if (kind != FDK_FILE || !file_syscall(nr) || fd < 0 || fd > 0x7fffffff)
		return;
	c.read = is_read(nr) || nr == NR_PREAD || nr == NR_PREADV || nr == 327 || nr == NR_SENDFILE;
	c.write = (is_write(nr) && nr != NR_SENDFILE) || nr == NR_PWRITE || nr == NR_PWRITEV ||
		  nr == 328;
	c.positional = nr == NR_PREAD || nr == NR_PWRITE || nr == NR_PREADV || nr == NR_PWRITEV ||
		       nr == 327 || nr == 328;
	if (a && (nr == NR_PREAD || nr == NR_PWRITE)) {
		c.off = a->sa.arg3;
		c.off_known = true;
	}
	files__call(&w->files, w->run, e->h.pid, (int32_t)fd, &c);
}

/* Syscalls that return a new fd. */
static bool creates_fd(int nr)
{
	switch (nr) {
	case NR_ACCEPT:
	case NR_ACCEPT4:
	case NR_SOCKET:
	case NR_OPEN:
	case NR_OPENAT:
	case NR_OPENAT2:
	case NR_EPOLL_CREATE:
	case NR_EPOLL_CREATE1:
	case NR_EVENTFD:
	case NR_EVENTFD2:
	case NR_TIMERFD_CREATE:
	case NR_SIGNALFD:
	case NR_SIGNALFD4:
	case NR_DUP:
	case NR_DUP2:
	case NR_DUP3:
		return true;
	default:
		return false;
	}
}

static void syscall_event(struct walk *w, const struct rec *e)
{
	struct model_run *run = w->run;
	int nr = (int)e->h.aux;
	int64_t ret = e->sc.ret, fd = (int64_t)e->sc.args[0];
	struct model_thread *th = thread_of(run, e->h.tid, e->h.pid);
	struct model_conn *c;
	enum fd_kind kind = kind_at(w, e->h.pid, fd);
	const struct rec *a = args_of(w, e);
	uint64_t v;

	w->unsampled = e->h.type == REC_SYSCALL_FD;
	if (w->unsampled) {
		/* Only the fd bookkeeping below: the profile and the counts hold the
		 * windows' syscalls alone. */
	} else if (!w->profile) {
		th->syscalls++;
		if (wait_of(nr) == WK_EPOLL)
			(*u64map__slot(&th->epolls, epoll_of(w, e->h.pid, fd), NULL))++;
	} else if (th->network) {
		profile_call(w, e, nr, kind);
		if (a && nr >= 0 && nr < MODEL_MAX_SYSCALL)
			profile_args(&run->sc[nr], nr, a);
		track_seq(w, th, e, a, kind);
		file_call(w, e, a, nr, kind);
	} else {
		(*u64map__slot(&th->sc_n, (uint64_t)nr, NULL))++;
		if ((is_read(nr) || is_write(nr) || nr == NR_PREAD || nr == NR_PWRITE) && ret > 0)
			*u64map__slot(&th->sc_bytes, (uint64_t)nr, NULL) += (uint64_t)ret;
	}
	if (a && nr == NR_EPOLL_CTL && a->sa.nr_vals && (a->sa.vals[0] & (1u << 28)) &&
	    u64map__get(&w->lsn, fdkey(e->h.pid, e->sc.args[2]), NULL))
		run->epoll_exclusive = true; /* EPOLLEXCLUSIVE on a listener */

	if (ret >= 0 && ret <= 0x7fffffff && creates_fd(nr)) {
		u64map__put(&w->born, fdkey(e->h.pid, ret), e->h.ts);
		u64map__put(&w->born_tid, fdkey(e->h.pid, ret), e->h.tid);
	}
	switch (nr) {
	case NR_ACCEPT:
	case NR_ACCEPT4:
		if (!w->profile) {
			u64map__put(&w->lsn, fdkey(e->h.pid, fd), 1);
			th->listener = listener_of(w, e->h.pid, fd);
		}
		if (ret < 0)
			break;
		if (!w->profile) {
			th->accepts++;
			xgrow((void **)&run->conn, &run->cap_conn, run->nr_conn + 1,
			      sizeof(*run->conn));
			c = &run->conn[run->nr_conn++];
			memset(c, 0, sizeof(*c));
			c->pid = e->h.pid;
			c->fd = (int32_t)ret;
			c->accept_tid = e->h.tid;
			c->accept_ns = e->h.ts;
			c->nonblocking = nr == NR_ACCEPT4 && a && (a->sa.arg3 & SOCK_NONBLOCK);
			if (++w->open_conns > run->peak_conns)
				run->peak_conns = w->open_conns;
		}
		/* Connections are numbered in the order they are accepted, in both passes. */
		if (conn_at(w, e->h.pid, ret)) /* its close was not seen (close_range, exec) */
			fd_closed(w, e->h.pid, ret, e->h.ts);
		u64map__put(&w->fds, fdkey(e->h.pid, ret), ++w->next_conn);
		u64map__put(&w->holders, w->next_conn - 1, 1);
		u64map__put(&w->ever, fdkey(e->h.pid, ret), 1);
		break;
	case NR_CLOSE:
		/* Records come at a syscall's exit: a close that entered before the fd's
		 * number was given out again by another thread (an accept that returned it
		 * while the close was still returning) closed the one before. */
		if (ret == 0 &&
		    !(u64map__get(&w->born, fdkey(e->h.pid, fd), &v) && v > e->sc.enter_ts &&
		      u64map__get(&w->born_tid, fdkey(e->h.pid, fd), &v) && v != e->h.tid))
			fd_closed(w, e->h.pid, fd, e->h.ts);
		break;
	case NR_SOCKET:
		if (ret >= 0)
			u64map__put(&w->kinds, fdkey(e->h.pid, ret),
				    socket_kind(e->sc.args[0], e->sc.args[1]));
		break;
	case NR_OPEN:
	case NR_OPENAT:
	case NR_OPENAT2:
		if (ret < 0)
			break;
		u64map__put(&w->kinds, fdkey(e->h.pid, ret), FDK_FILE);
		if (w->profile && th->network)
			files__open(&w->files, run, e->h.pid, (int32_t)ret, nr,
				    (nr == NR_OPEN ? e->sc.args[1] : e->sc.args[2]) & O_APPEND &&
					    nr != NR_OPENAT2,
				    !w->unsampled);
		break;
	case NR_EPOLL_CREATE:
	case NR_EPOLL_CREATE1:
		if (ret >= 0) {
			u64map__put(&w->kinds, fdkey(e->h.pid, ret), FDK_EPOLL);
			u64map__put(&w->epid, fdkey(e->h.pid, ret), 1ull << 61 | ++w->next_epoll);
		}
		break;
	case NR_EVENTFD:
	case NR_EVENTFD2:
		if (ret >= 0)
			u64map__put(&w->kinds, fdkey(e->h.pid, ret), FDK_EVENTFD);
		break;
	case NR_TIMERFD_CREATE:
		if (ret >= 0)
			u64map__put(&w->kinds, fdkey(e->h.pid, ret), FDK_TIMERFD);
		break;
	case NR_SIGNALFD:
	case NR_SIGNALFD4:
		if (ret >= 0)
			u64map__put(&w->kinds, fdkey(e->h.pid, ret), FDK_SIGNALFD);
		break;
	case NR_FCNTL:
		c = conn_at(w, e->h.pid, fd);
		if (c && e->sc.args[1] == F_SETFL && (e->sc.args[2] & O_NONBLOCK))
			c->nonblocking = true;
		break;
	default:
		break;
	}

	if (w->profile || !(is_read(nr) || is_write(nr)))
		return;
	c = conn_at(w, e->h.pid, fd);
	if (!c)
		return;
	th->conn_io++;
	if (ret == -EAGAIN) {
		th->eagain++;
		c->nonblocking = true;
	}
	{
		uint64_t key = (uint64_t)e->h.tid << 32 | (uint32_t)(c - run->conn);
		bool created;

		u64map__slot(&w->served, key, &created);
		if (created) {
			th->conns++;
			if (!c->io_tid) {
				uint64_t *n = u64map__slot(&w->open_by_thr, e->h.tid, NULL);

				c->io_tid = e->h.tid;
				if (!c->close_ns && ++*n > th->max_open_conns)
					th->max_open_conns = (uint32_t)*n;
			} else {
				c->other_tids++;
			}
			if (e->h.tid != c->accept_tid)
				c->handed = true;
		}
	}
	if (ret <= 0)
		return;
	/* A cycle: reads that return data (the request), then writes (the response). */
	if (is_read(nr)) {
		c->reads++;
		if (c->last == 2) {
			model_sizes__add(&run->resp_bytes, c->resp_acc);
			c->resp_acc = 0;
		}
		c->req_acc += (uint64_t)ret;
		c->last = 1;
	} else {
		c->writes++;
		if (c->last == 1) {
			c->cycles++;
			run->cycles++;
			model_sizes__add(&run->req_bytes, c->req_acc);
			c->req_acc = 0;
		}
		c->resp_acc += (uint64_t)ret;
		c->last = 2;
	}
}

static void walk_events(const struct trace *t, struct walk *w)
{
	size_t i;

	seed_fds(w);
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];

		switch (e->h.type) {
		case REC_SYSCALL_ARGS:
			u64map__put(&w->pending, e->h.tid, i + 1);
			w->run->have_args = true;
			break;
		case REC_SYSCALL:
		case REC_SYSCALL_FD:
			syscall_event(w, e);
			w->unsampled = false;
			break;
		case REC_EXIT:
			if (e->task.flags & 1) /* the whole process */
				proc_gone(w, e->h.pid, e->h.ts);
			break;
		case REC_FORK:
			if (e->h.tid == e->h.pid) { /* a new process */
				if (!w->profile)
					u64map__put(&w->run->procs, e->h.pid, e->task.parent_pid);
				forked(w, e->h.pid, e->task.parent_pid);
			}
			break;
		default:
			break;
		}
	}
}

static void add_stack(struct model_thread *th, uint64_t ustack, uint64_t kstack, uint64_t ns,
		      bool on_cpu)
{
	uint64_t key = (ustack * 0x9e3779b97f4a7c15ull) ^ kstack ^ on_cpu, *slot;
	bool created;

	slot = u64map__slot(&th->stack_idx, key, &created);
	if (created) {
		xgrow((void **)&th->stacks, &th->cap_stacks, th->nr_stacks + 1,
		      sizeof(*th->stacks));
		th->stacks[th->nr_stacks] = (struct model_stack){ustack, kstack, 0, on_cpu};
		*slot = ++th->nr_stacks;
	}
	th->stacks[*slot - 1].ns += ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The period of a thread that wakes on a clock: the median interval between the ends of
 * its waits of its commonest kind, when the middle half of the intervals lies within half
 * and twice that (a thread woken by requests, or by a backing-off timer, has none). */
static uint64_t period_of(uint64_t *ends, size_t n)
{
	uint64_t m, *iv;
	size_t i;

	if (n < 4)
		return 0;
	qsort(ends, n, sizeof(*ends), cmp_u64);
	iv = xcalloc(n - 1, sizeof(*iv));
	for (i = 1; i < n; i++)
		iv[i - 1] = ends[i] - ends[i - 1];
	n--;
	qsort(iv, n, sizeof(*iv), cmp_u64);
	m = iv[n / 2];
	if (!m || iv[n / 4] * 2 < m || iv[n * 3 / 4] > 2 * m)
		m = 0;
	free(iv);
	return m;
}

/* Each thread's wake-ups (its waits of its commonest kind, finished in the run) and their
 * period; wks: each episode's wait kind. */
static void periods(struct model_run *run, const struct block_report *rep, const uint8_t *wks)
{
	uint64_t **ends = xcalloc(run->nr_thr ? run->nr_thr : 1, sizeof(*ends));
	size_t *n = xcalloc(run->nr_thr ? run->nr_thr : 1, sizeof(*n)), i;
	uint8_t *main = xcalloc(run->nr_thr ? run->nr_thr : 1, 1);

	for (i = 0; i < run->nr_thr; i++) {
		const struct model_thread *th = &run->thr[i];
		int k, best = WK_KINDS;

		for (k = 0; k < WK_KINDS; k++)
			if (th->wait_ns[k] &&
			    (best == WK_KINDS || th->wait_ns[k] > th->wait_ns[best]))
				best = k;
		main[i] = (uint8_t)best;
		if (best < WK_KINDS)
			ends[i] = xcalloc(th->waits[best] + 1, sizeof(**ends));
	}
	for (i = 0; i < rep->nr; i++) {
		const struct block_episode *ep = &rep->eps[i];
		struct model_thread *th = ep->tid ? find_thread(run, ep->tid) : NULL;
		size_t t = th ? (size_t)(th - run->thr) : 0;

		if (!th || ep->unfinished || wks[i] != main[t] || n[t] > th->waits[main[t]])
			continue;
		ends[t][n[t]++] = ep->end_ns;
	}
	for (i = 0; i < run->nr_thr; i++) {
		run->thr[i].wakes = n[i];
		run->thr[i].period_ns = period_of(ends[i], n[i]);
		free(ends[i]);
	}
	free(ends);
	free(n);
	free(main);
}

/* A network thread's CPU time outside syscalls, from the switches' and the syscalls' times:
 * its time on CPU less the time each syscall took from entry to exit, less the times it was
 * off CPU meanwhile. The recorder's own work lands inside the syscalls and switches it
 * follows (kernel time), so what is left is the thread's user-space code, with the
 * interrupts it took while there. Needs every syscall: a sampled recording has none. */
#define USER_OFF_RING 16

struct user_time {
	uint64_t in_ts, out_ts, first_in;  /* on CPU since, off CPU since, first switched in */
	uint64_t on_wall, sys_on, pending; /* pending: the syscalls of the interval under way */
	uint64_t off_out[USER_OFF_RING], off_in[USER_OFF_RING];
	unsigned noff;
};

static struct user_time *user_of(struct model_run *run, struct user_time *u, uint32_t tid)
{
	struct model_thread *th = tid ? find_thread(run, tid) : NULL;

	return th && th->network ? &u[th - run->thr] : NULL;
}

static void user_times(const struct trace *t, struct model_run *run)
{
	struct user_time *u, *x;
	size_t i;
	unsigned k;

	if (run->sampled < 1.0 || !run->nr_thr)
		return;
	u = xcalloc(run->nr_thr, sizeof(*u));
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		uint64_t ts = e->h.ts, off = 0;

		if (e->h.type == REC_SWITCH) {
			if ((e->sw.flags & SWITCH_PREV_TARGET) && (x = user_of(run, u, e->h.tid)) &&
			    x->in_ts) {
				x->on_wall += ts - x->in_ts;
				x->sys_on += x->pending;
				x->pending = 0;
				x->in_ts = 0;
				x->out_ts = ts;
			}
			if ((e->sw.flags & SWITCH_NEXT_TARGET) &&
			    (x = user_of(run, u, e->sw.next_tid))) {
				if (x->out_ts) {
					x->off_out[x->noff % USER_OFF_RING] = x->out_ts;
					x->off_in[x->noff++ % USER_OFF_RING] = ts;
				}
				x->in_ts = ts;
				if (!x->first_in)
					x->first_in = ts;
			}
		} else if (e->h.type == REC_SYSCALL && (x = user_of(run, u, e->h.tid)) &&
			   x->in_ts && x->first_in && e->sc.enter_ts >= x->first_in &&
			   ts >= e->sc.enter_ts) {
			for (k = 0; k < USER_OFF_RING && k < x->noff; k++)
				if (x->off_out[k] >= e->sc.enter_ts && x->off_in[k] <= ts)
					off += x->off_in[k] - x->off_out[k];
			if (ts - e->sc.enter_ts > off)
				x->pending += ts - e->sc.enter_ts - off;
		}
	}
	for (i = 0; i < run->nr_thr; i++) {
		x = &u[i];
		if (!run->thr[i].network || !x->on_wall)
			continue;
		/* wall time on CPU against the runtime counter: a VM's stolen time is in the
		 * first, not the second */
		if (x->on_wall > x->sys_on)
			run->net_user_ns +=
				(uint64_t)((double)run->thr[i].on_ns *
					   (double)(x->on_wall - x->sys_on) / (double)x->on_wall);
		run->net_user = true;
	}
	free(u);
}

/* Switch windows (record_opts.switch_windows): a busy thread's switches are written in the
 * syscall windows alone, the first one after a gap flagged. Each thread's span (first to
 * last switch), the part of it in gaps (from its record before a flagged one to it), and
 * of the rest the time it ran (from a switch-in to its next record). */
static void switch_gaps(const struct trace *t, struct model_run *run)
{
	struct u64map first = {0}, last = {0};
	uint64_t k, v, f;
	size_t i;
	int side;

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		bool created;

		/* A thread's state at the start: its span begins there (a wait from the start is
		 * one of its waits, blocking.c), running when 'R' */
		if (e->h.type == REC_STATE && e->h.tid) {
			uint64_t *l = u64map__slot(&last, e->h.tid, &created);

			if (created) {
				u64map__put(&first, e->h.tid, e->h.ts);
				*l = e->h.ts << 1 | ((e->h.aux & 0xff) == 'R');
			}
			continue;
		}
		if (e->h.type != REC_SWITCH)
			continue;
		for (side = 0; side < 2; side++) {
			uint32_t tid = side ? e->sw.next_tid : e->h.tid;
			uint32_t target = side ? SWITCH_NEXT_TARGET : SWITCH_PREV_TARGET;
			uint32_t gap = side ? SWITCH_NEXT_GAP : SWITCH_PREV_GAP;
			struct model_thread *th;
			uint64_t *l, then;

			if (!tid || !(e->sw.flags & target))
				continue;
			th = thread_of(run, tid, side ? e->sw.next_pid : e->h.pid);
			/* the last record's time, and (low bit) whether it switched the thread in */
			l = u64map__slot(&last, tid, &created);
			then = *l >> 1;
			if (created)
				u64map__put(&first, tid, e->h.ts);
			else if ((e->sw.flags & gap) && e->h.ts > then)
				th->gap_ns += e->h.ts - then;
			else if ((*l & 1) && e->h.ts > then)
				th->ran_ns += e->h.ts - then;
			*l = e->h.ts << 1 | (uint64_t)side;
		}
	}
	for (i = 0; u64map__next(&last, &i, &k, &v);) {
		struct model_thread *th = find_thread(run, (uint32_t)k);

		f = 0;
		u64map__get(&first, k, &f);
		v >>= 1;
		if (th) /* not one seen only in the start's snapshot */
			th->span_ns = v > f ? v - f : 0;
	}
	u64map__free(&first);
	u64map__free(&last);
}

/* A thread with gaps: its time off CPU over its span is the span less its CPU time (exact:
 * the runtime counter), shared between its waits and its delays as the time outside gaps
 * it did not run was (not the waits scaled by the span's share outside gaps: a window's
 * edges fall in long intervals more often than in short ones, and a busy thread's runs are
 * longer than its waits, so its waits were overweighted). Its wake-ups are scaled up by the
 * span's share outside gaps. */
static void scale_to_span(struct model_thread *th)
{
	uint64_t seen, idle;
	double f;
	int k;

	if (!th->gap_ns || th->span_ns <= th->gap_ns)
		return;
	seen = th->span_ns - th->gap_ns;
	idle = seen > th->ran_ns ? seen - th->ran_ns : 0;
	f = idle ? (double)(th->span_ns > th->on_ns ? th->span_ns - th->on_ns : 0) / idle : 0;
	th->off_ns = (uint64_t)(th->off_ns * f);
	for (k = 0; k < WK_KINDS; k++)
		th->wait_ns[k] = (uint64_t)(th->wait_ns[k] * f);
	th->wakes = (uint64_t)(th->wakes * (double)th->span_ns / seen + 0.5);
}

/* Threads' names, CPU time (the kernel's runtime counter at each switch), on-CPU samples
 * (each weighing its thread's CPU time over its samples) and off-CPU episodes. */
static void times_and_stacks(const struct trace *t, struct model_run *run, struct walk *w)
{
	struct u64map first_rt = {0}, last_rt = {0}, nsamples = {0};
	struct block_report rep = {0};
	uint8_t *wks;
	uint64_t k, v;
	size_t i;

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];

		if (e->h.type == REC_SWITCH && (e->sw.flags & SWITCH_PREV_TARGET) &&
		    e->sw.runtime_ns && e->h.tid) {
			bool created;
			uint64_t *f = u64map__slot(&first_rt, e->h.tid, &created);

			thread_of(run, e->h.tid, e->h.pid);
			if (created)
				*f = e->sw.runtime_ns;
			u64map__put(&last_rt, e->h.tid, e->sw.runtime_ns);
		} else if (e->h.type == REC_SAMPLE && e->h.tid) {
			thread_of(run, e->h.tid, e->h.pid);
			(*u64map__slot(&nsamples, e->h.tid, NULL))++;
		}
	}
	for (i = 0; u64map__next(&last_rt, &i, &k, &v);) {
		uint64_t f = 0;

		u64map__get(&first_rt, k, &f);
		find_thread(run, (uint32_t)k)->on_ns = v - f;
	}
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct model_thread *th;
		uint64_t n = 0;

		if (e->h.type != REC_SAMPLE || !e->h.tid)
			continue;
		th = find_thread(run, e->h.tid);
		u64map__get(&nsamples, e->h.tid, &n);
		add_stack(th, e->sample.ustack, e->sample.kstack, n ? th->on_ns / n : 0, true);
	}
	switch_gaps(t, run);
	blocking__analyze_unsorted(t, NULL, &rep);
	wks = xcalloc(rep.nr ? rep.nr : 1, 1);
	for (i = 0; i < rep.nr; i++) {
		const struct block_episode *ep = &rep.eps[i];
		struct model_thread *th;
		uint64_t ns = ep->end_ns > ep->start_ns ? ep->end_ns - ep->start_ns : 0;
		enum wait_kind wk = wait_of(ep->syscall);
		uint64_t cv = 0;

		if (!ep->tid)
			continue;
		th = thread_of(run, ep->tid, ep->pid);
		/* A thread with gaps that blocked in a window and was not seen again: what it
		 * did after is not known (the recording's end is in a gap). */
		if (ep->unfinished && th->gap_ns)
			continue;
		/* A read that blocks is blocking I/O only on a connection. */
		if (wk == WK_READ) {
			if (ep->fd >= 0 && u64map__get(&w->ever, fdkey(ep->pid, ep->fd), &cv))
				th->conn_blocked++;
			else
				wk = WK_OTHER;
		}
		th->off_ns += ns;
		th->wait_ns[wk] += ns;
		th->waits[wk]++;
		wks[i] = (uint8_t)wk;
		add_stack(th, ep->ustack, ep->kstack, ns, false);
	}
	periods(run, &rep, wks);
	for (i = 0; i < run->nr_thr; i++)
		scale_to_span(&run->thr[i]);
	free(wks);
	block_report__free(&rep);
	for (i = 0; i < run->nr_thr; i++) {
		const struct trace_thread *tt = trace__thread(t, run->thr[i].tid);

		if (tt)
			snprintf(run->thr[i].comm, sizeof(run->thr[i].comm), "%.15s", tt->comm);
	}
	u64map__free(&first_rt);
	u64map__free(&last_rt);
	u64map__free(&nsamples);
}

static void walk_free(struct walk *w)
{
	u64map__free(&w->fds);
	u64map__free(&w->kinds);
	u64map__free(&w->lsn);
	u64map__free(&w->served);
	u64map__free(&w->open_by_thr);
	u64map__free(&w->ever);
	u64map__free(&w->holders);
	u64map__free(&w->pending);
	u64map__free(&w->phase);
	u64map__free(&w->epid);
	u64map__free(&w->lsock);
	u64map__free(&w->born);
	u64map__free(&w->born_tid);
	files__walk_free(&w->files);
	free(w->seqs);
}

static uint32_t first_target(const struct trace *t)
{
	const char *p = t->info, *end = t->info + t->info_len;

	/* The recorder's info section names its targets: "target_pid=1234" lines. */
	while (p && p < end) {
		const char *nl = memchr(p, '\n', end - p);

		if (!nl)
			nl = end;
		if (nl - p > 11 && !strncmp(p, "target_pid=", 11))
			return (uint32_t)strtoul(p + 11, NULL, 10);
		p = nl + 1;
	}
	return t->nr_ev ? t->ev[0]->h.pid : 0;
}

/* The listening sockets accepted on (by socket when the snapshot names them, else by fd
 * number: processes forked share them), how many share one port, and their SO_REUSEPORT. */
static void listeners(struct walk *w)
{
	struct model_run *run = w->run;
	struct u64map ids = {0}, per_port = {0};
	bool any_set = false, all_known = true;
	uint64_t k, v;
	size_t i;

	for (i = 0; u64map__next(&w->lsn, &i, &k, &v);) {
		const struct model_fd *e =
			model_fds__find(&run->fds, (uint32_t)(k >> 32), (int32_t)k);
		uint64_t id = listener_of(w, (uint32_t)(k >> 32), (int32_t)k);
		bool created;

		if (!v)
			continue;
		u64map__slot(&ids, id, &created);
		if (!created)
			continue;
		if (!e || !e->listening) {
			all_known = false;
			continue;
		}
		any_set |= e->reuseport == 1;
		all_known &= e->reuseport >= 0;
		if (++*u64map__slot(&per_port, e->port, NULL) > run->port_sockets)
			run->port_sockets = (uint32_t)*u64map__slot(&per_port, e->port, NULL);
	}
	run->listeners = (uint32_t)ids.nr;
	/* Two listeners on one port: the kernel allows it with SO_REUSEPORT alone. */
	run->reuseport = any_set || run->port_sockets > 1 ? 1 : all_known && ids.nr ? 0 : -1;
	u64map__free(&ids);
	u64map__free(&per_port);
}

/* Each thread's epoll instance (where it waits most), and the most network threads that
 * wait in one. */
static void shared_epoll(struct model_run *run)
{
	struct u64map n = {0};
	uint64_t k, v;
	size_t i, j;

	for (i = 0; i < run->nr_thr; i++) {
		struct model_thread *th = &run->thr[i];

		for (j = 0; u64map__next(&th->epolls, &j, &k, &v);)
			if (v > th->epoll_waits) {
				th->epoll_waits = v;
				th->epoll_id = k;
			}
		u64map__free(&th->epolls);
		if (th->network && th->epoll_id &&
		    ++*u64map__slot(&n, th->epoll_id, NULL) > run->shared_epoll)
			run->shared_epoll = (uint32_t)*u64map__slot(&n, th->epoll_id, NULL);
	}
	u64map__free(&n);
}

/* A sampled recording: the network threads' CPU time is set against the windows' cycles
 * by its share (their CPU over the windows, the requests being as even as the load); the
 * other threads' syscall counts and each thread's I/O calls, counted in the windows, are
 * scaled up to the whole run. */
static uint64_t scaled(uint64_t n, double share)
{
	return (uint64_t)llround((double)n / share);
}

static void unsample(struct model_run *run)
{
	size_t i, j;

	run->net_on_ns = (uint64_t)((double)run->net_on_ns * run->sampled);
	for (i = 0; i < run->nr_thr; i++) {
		struct model_thread *th = &run->thr[i];

		th->conn_io = scaled(th->conn_io, run->sampled);
		for (j = 0; j < th->sc_n.cap; j++)
			if (th->sc_n.used[j])
				th->sc_n.vals[j] = scaled(th->sc_n.vals[j], run->sampled);
		for (j = 0; j < th->sc_bytes.cap; j++)
			if (th->sc_bytes.used[j])
				th->sc_bytes.vals[j] = scaled(th->sc_bytes.vals[j], run->sampled);
	}
}

uint64_t model_run__requests(const struct model_run *run)
{
	return run->sampled > 0 && run->sampled < 1.0 ? scaled(run->cycles, run->sampled)
						      : run->cycles;
}

int model__analyze(const struct trace *t, uint32_t main_pid, struct model_run *run)
{
	struct walk w = {.run = run, .t = t};
	size_t i;

	if (!run->fds.nr && !run->fds.live)
		model_fds__from_trace(t, &run->fds);
	run->main_pid = main_pid ? main_pid : first_target(t);
	run->start_ns = t->first_ns;
	run->end_ns = t->end_ns;
	run->sc = xcalloc(MODEL_MAX_SYSCALL, sizeof(*run->sc));
	run->sampled = t->sc_out && t->sc_full
			       ? (double)t->sc_full / (double)(t->sc_full + t->sc_out)
			       : 1.0;
	walk_events(t, &w);
	/* Which threads serve connections. */
	for (i = 0; i < run->nr_conn; i++) {
		struct model_conn *c = &run->conn[i];
		struct model_thread *th;

		if (c->last == 2) /* the last response */
			model_sizes__add(&run->resp_bytes, c->resp_acc);

		if (!c->io_tid)
			continue;
		th = find_thread(run, c->io_tid);
		if (th && th->pid != c->pid)
			run->fork_per_conn = true;
	}
	for (i = 0; i < run->nr_thr; i++) {
		run->thr[i].network = run->thr[i].conn_io > 0;
		run->thr[i].acceptor = run->thr[i].accepts > 0;
	}
	listeners(&w);
	shared_epoll(run);
	times_and_stacks(t, run, &w);
	/* Second pass: the network threads' syscalls. */
	walk_free(&w);
	w = (struct walk){.run = run, .t = t, .profile = true};
	w.seqs = xcalloc(run->nr_conn ? run->nr_conn : 1, sizeof(*w.seqs));
	walk_events(t, &w);
	files__end(&w.files, run);
	walk_free(&w);
	for (i = 0; i < run->nr_thr; i++)
		if (run->thr[i].network)
			run->net_on_ns += run->thr[i].on_ns;
	user_times(t, run);
	if (run->sampled < 1.0)
		unsample(run);
	run->procs_seen = run->procs.nr;
	return 0;
}

void model_run__free(struct model_run *run)
{
	size_t i;

	if (!run)
		return;
	for (i = 0; i < run->nr_thr; i++) {
		free(run->thr[i].stacks);
		u64map__free(&run->thr[i].stack_idx);
		u64map__free(&run->thr[i].epolls);
		u64map__free(&run->thr[i].sc_n);
		u64map__free(&run->thr[i].sc_bytes);
	}
	for (i = 0; i < run->nr_files; i++)
		free(run->files[i].path);
	free(run->files);
	u64map__free(&run->file_idx);
	model_fds__free(&run->fds);
	free(run->thr);
	u64map__free(&run->thr_idx);
	free(run->conn);
	free(run->seqs);
	u64map__free(&run->seq_idx);
	if (run->sc)
		for (i = 0; i < MODEL_MAX_SYSCALL; i++) {
			u64map__free(&run->sc[i].arg_vals);
			u64map__free(&run->sc[i].timeouts);
			u64map__free(&run->sc[i].flags);
		}
	free(run->sc);
	u64map__free(&run->procs);
}
