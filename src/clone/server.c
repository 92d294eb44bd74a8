/* The clone server: the model's process tree (main thread, acceptors, network threads or
 * processes, background threads), its hand-off, and per request the modelled syscall
 * cycle with calibrated on-CPU work. It stops on SIGINT/SIGTERM from a signal handler
 * that only makes async-signal-safe calls: every forked process killed and reaped, the
 * scratch directory removed, then _exit. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clone/clone.h"
#include "util/util.h"

#define MAX_CHILDREN 4096

static const struct clone_model *M;
static struct clone_counts *C;
static struct clone_counts local_counts;
static int listen_fds[CLONE_MAX_POOL];
static unsigned nlisten;
static struct sockaddr_in bind_addr;

/* the scratch directory and its files, as the stop handler removes them */
static char scratch_dir[4096], scratch_req[4200], scratch_bg[4200];
static int req_fd = -1, bg_fd = -1;
static pid_t owner_pid; /* the process that removes them */
static _Atomic pid_t children[MAX_CHILDREN];
static volatile sig_atomic_t stopping;

/* calibrated on-CPU work: loop iterations per microsecond, and the spin per request in
 * nanoseconds that the network threads adjust to hit the modelled CPU per request */
static double loops_per_us;
static _Atomic int64_t spin_ns;

static void count(enum clone_sys s)
{
	__atomic_fetch_add(&C->sys[s], 1, __ATOMIC_RELAXED);
}

/* ---- stopping ---- */

/* The scratch files and their directory (async-signal-safe: the stop handler calls it). */
static void remove_scratch(void)
{
	if (scratch_req[0])
		unlink(scratch_req);
	if (scratch_bg[0])
		unlink(scratch_bg);
	if (scratch_dir[0])
		rmdir(scratch_dir);
}

static void kill_children(int sig)
{
	unsigned i;

	for (i = 0; i < MAX_CHILDREN; i++) {
		pid_t p = atomic_load(&children[i]);

		if (p > 0)
			kill(p, sig);
	}
}

static void on_stop(int sig)
{
	int status;
	unsigned i;

	if (stopping)
		return;
	stopping = 1;
	if (getpid() != owner_pid)
		_exit(0);
	kill_children(SIGTERM);
	for (i = 0; i < MAX_CHILDREN; i++) {
		pid_t p = atomic_load(&children[i]);

		if (p > 0 && waitpid(p, &status, 0) < 0 && errno != ECHILD && errno != EINTR)
			kill(p, SIGKILL);
	}
	while (waitpid(-1, &status, WNOHANG) > 0)
		;
	remove_scratch();
	_exit(0);
}

static void on_child(int sig)
{
	int saved = errno, status;
	unsigned i;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < MAX_CHILDREN; i++)
			if (atomic_load(&children[i]) == p) {
				atomic_store(&children[i], 0);
				break;
			}
	errno = saved;
}

static void add_child(pid_t p)
{
	unsigned i;

	for (i = 0; i < MAX_CHILDREN; i++) {
		pid_t zero = 0;

		if (atomic_compare_exchange_strong(&children[i], &zero, p))
			return;
	}
}

/* A forked process: dies with its parent (even a SIGKILLed one), default signals. */
static void in_child(const char *name)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != owner_pid)
		_exit(0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	prctl(PR_SET_NAME, name);
}

static pid_t fork_child(void)
{
	sigset_t all, old;
	pid_t p;

	/* no stop handler between fork and the child's own dispositions */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	p = fork();
	if (p > 0)
		add_child(p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p;
}

/* ---- calibrated work ---- */

static volatile uint64_t spin_sink;

static void spin_loops(uint64_t n)
{
	uint64_t x = spin_sink, i;

	for (i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	spin_sink = x;
}

static void spin_us(double us)
{
	if (us > 0)
		spin_loops((uint64_t)(us * loops_per_us));
}

/* Loops per microsecond of this thread's CPU time: the best of a few 2 ms rounds (a
 * round cut by preemption is slower, never faster). */
static void calibrate(void)
{
	uint64_t n = 20000, t0, t;
	double best = 0;
	int i;

	for (i = 0; i < 12; i++) {
		t0 = thread_cpu_ns();
		spin_loops(n);
		t = thread_cpu_ns() - t0;
		if (t < 1000000) {
			n *= 2;
			i--;
			continue;
		}
		if (n / (t / 1000.0) > best)
			best = n / (t / 1000.0);
	}
	loops_per_us = best > 0 ? best : 100;
}

/* Per network thread: every window of requests, the CPU they took against the modelled
 * CPU per request, and the shared spin moved by half the difference. A window is 64
 * requests at least (fewer catch too few wake-ups and aim low), and ends after 100 ms or
 * 1024 requests: at 1000 requests/s a thread then follows a change of load within half a
 * second (a window of 1024 requests took a second; after a peak run the spin stayed low for
 * the whole of the next 3 s run at the model's rate), and the one getrusage per window is
 * a few hundredths of a syscall per request at most.
 *
 * A server's CPU per request falls as the load rises (at 2000 req/s memcached's and redis's
 * threads wake, cold, for about every request, 23 us; at peak one wake-up serves several,
 * 7-10 us): the model measured it at its rate and at peak with the wake-ups per request
 * (cpu_unrecorded), and the clone aims at that line, w + k * (its own wake-ups per request
 * in the window, from getrusage), all the time. A model without it gives one figure: the
 * clone aims at it over its first CALIBRATION_ROUNDS windows (under the model's load) and
 * then keeps the spin.
 *
 * A model that ran the original beside its skeleton gives their ratio (cpu_ratio): at the
 * wake-ups per request of the model's fixed rate the clone aims at that many times its
 * own CPU per request less its spin (its structure as the machine runs it now), which
 * follows the machine where the line's microseconds do not; towards the peak's wake-ups it
 * goes over to the line. Not the ratio at peak: there a spin slows the server below its
 * client, whose CPU then idles, and each answer's wake-up of it costs the server more
 * (redis's clone at peak: 10.4 us a request spinning nothing, 14.5 beside a spin of 10.5),
 * which a ratio would spin again (2.6 times the skeleton for a ratio of 1.78).
 *
 * The aim is the whole process's CPU per request, not the network threads' alone: the
 * background threads add to C->bg_excess_ns what they took beyond the model's CPU per
 * wake-up (bg_work_cpu; memcached's LRU maintainer costs the clone 18-27 us a wake-up where
 * memcached's costs 12-16, with no spin left to give back), and each window takes off its
 * want that excess per request of the clone, both counted over the window (deltas of
 * C->bg_excess_ns and C->requests, every network thread's requests): the spin is shared, so
 * every request carries its share, whichever thread serves it. Never below no spin; a
 * background thread cheaper than the model adds to the want. */
#define CALIBRATION_ROUNDS 12
static _Atomic int calibrations;

struct cpu_ctl {
	uint64_t t0, k0, w0; /* the window's start: CPU, wake-ups, monotonic clock */
	uint64_t r0;	     /* and the clone's requests, */
	int64_t e0;	     /* and the background threads' excess */
	uint64_t spun;	     /* the spin of the window's requests, nanoseconds */
	unsigned n;
};

/* The thread's CPU nanoseconds (user + system: their sum is the scheduler's exact
 * runtime) and its voluntary switches, the times it blocked and was woken (preemptions
 * left out: a thread that spins longer is preempted more, which is no wake-up). */
static void ctl_read(uint64_t *ns, uint64_t *wakes)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*ns = thread_cpu_ns();
		*wakes = 0;
		return;
	}
	*ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	*wakes = (uint64_t)ru.ru_nvcsw;
}

static void request_work(struct cpu_ctl *ctl)
{
	int64_t s = atomic_load_explicit(&spin_ns, memory_order_relaxed);
	uint64_t ns, wakes;

	uint64_t t = 0;

	if (M->on_cpu_us_per_request <= 0 && !M->cpu_line && !(M->cpu_ratio > 0))
		return;
	/* Aimed at a ratio, the spin is what the window's CPU less the spin counts as the
	 * clone's own: timed, not taken for what it asked (the loop's speed moves with the
	 * machine: at peak, both CPUs busy, the spin alone had the clone of redis at 2.2 times
	 * its skeleton's CPU per request for a ratio of 1.54). The clock is the vDSO's. */
	if (M->cpu_ratio > 0 && s > 0)
		t = now_ns();
	spin_us(s / 1000.0);
	if (t)
		t = now_ns() - t;
	if (!M->cpu_line && !(M->cpu_ratio > 0) &&
	    atomic_load_explicit(&calibrations, memory_order_relaxed) >= CALIBRATION_ROUNDS)
		return;
	if (!ctl->n++) {
		ctl_read(&ctl->t0, &ctl->k0);
		ctl->w0 = now_ns();
		ctl->r0 = __atomic_load_n(&C->requests, __ATOMIC_RELAXED);
		ctl->e0 = __atomic_load_n(&C->bg_excess_ns, __ATOMIC_RELAXED);
		ctl->spun = 0;
		return;
	}
	ctl->spun += t;
	/* the clock read every 16 requests: a vDSO call, but a syscall where there is none */
	if (ctl->n <= 64 || (ctl->n <= 1024 && (ctl->n % 16 || now_ns() - ctl->w0 < 100000000)))
		return;
	{
		unsigned reqs = ctl->n - 1;
		uint64_t all = __atomic_load_n(&C->requests, __ATOMIC_RELAXED) - ctl->r0;
		int64_t excess = __atomic_load_n(&C->bg_excess_ns, __ATOMIC_RELAXED) - ctl->e0;
		double per, want, x;
		int64_t next;

		ctl_read(&ns, &wakes);
		per = (double)(ns - ctl->t0) / reqs;
		x = (double)(wakes - ctl->k0) / reqs;
		want = M->on_cpu_us_per_request * 1000.0;
		if (M->cpu_line)
			want = (M->cpu_w_us + M->cpu_k_us * x) * 1000.0;
		if (M->cpu_ratio > 0) { /* a multiple of its own structure's, as it is now */
			double r = M->cpu_ratio * (per - (double)ctl->spun / reqs), f = 1;

			if (M->cpu_line)
				f = (x - M->cpu_x_peak) / (M->cpu_x_rate - M->cpu_x_peak);
			f = f < 0 ? 0 : f > 1 ? 1 : f;
			want = f * r + (1 - f) * want;
		}
		if (all)
			want -= (double)excess / all;
		if (want < 0)
			want = 0;
		next = s + (int64_t)((want - per) / 2);
		if (next < 0)
			next = 0;
		if (next > want)
			next = want;
		atomic_store_explicit(&spin_ns, next, memory_order_relaxed);
		atomic_fetch_add_explicit(&calibrations, 1, memory_order_relaxed);
		ctl->n = 0;
	}
}

/* A background thread's CPU per wake-up, aimed at the model's figure, which is all of the
 * thread's CPU time over its wake-ups: the sleep and the wake-up cost CPU of their own (12 us
 * a nanosleep in a VM, most of the 17 us memcached's LRU maintainer takes a wake-up), so the
 * spin is what is left. When the model measured what a wake-up alone cost a bare sleeper
 * beside the original (floor_us), the spin is the figure less that, as it is: a wake-up's
 * own cost moves with the machine (12 to 30 us a nanosleep in this VM as its CPUs are
 * busy or idle), for the original as for the clone, and aiming at the model's total put
 * the clone's maintainer at 24 to 29 us where memcached's took 14. Otherwise each window
 * moves the spin by half the difference, as request_work does.
 *
 * Either way each window of 100 ms (4 wake-ups at least) measures the thread's CPU against
 * the model's over its wake-ups (want_us each, as the pace had it at each) and adds the
 * difference to C->bg_excess_ns, which request_work takes off the network threads' spin:
 * what a wake-up costs the clone beyond the model's, which no spin of this thread can give
 * back, the clone's requests give back. */
struct bg_ctl {
	uint64_t t0, w0; /* the window's start: CPU, monotonic clock */
	unsigned n;
	double spin_us, want_ns; /* the spin; the model's CPU over the window's wake-ups */
};

static void bg_work_cpu(struct bg_ctl *ctl, double want_us, double floor_us)
{
	uint64_t ns, wakes;
	double per;

	if (want_us <= 0)
		return;
	spin_us(floor_us > 0 ? want_us - floor_us : ctl->spin_us);
	if (!ctl->n++) {
		ctl_read(&ctl->t0, &wakes);
		ctl->w0 = now_ns();
		ctl->want_ns = 0;
		return;
	}
	ctl->want_ns += want_us * 1e3;
	if (ctl->n <= 4 || now_ns() - ctl->w0 < 100000000)
		return;
	ctl_read(&ns, &wakes);
	__atomic_fetch_add(&C->bg_excess_ns, (int64_t)((double)(ns - ctl->t0) - ctl->want_ns),
			   __ATOMIC_RELAXED);
	if (floor_us <= 0) {
		per = (double)(ns - ctl->t0) / 1e3 / (ctl->n - 1);
		ctl->spin_us += (want_us - per) / 2;
		if (ctl->spin_us < 0)
			ctl->spin_us = 0;
		if (ctl->spin_us > want_us)
			ctl->spin_us = want_us;
	}
	/* this reading starts the next window: one getrusage per window */
	ctl->t0 = ns;
	ctl->w0 = now_ns();
	ctl->want_ns = 0;
	ctl->n = 1;
}

/* ---- scratch files ---- */

static int scratch_file(const char *name, char *path, size_t pathlen, uint64_t size)
{
	char buf[65536];
	uint64_t done = 0;
	int fd;

	snprintf(path, pathlen, "%s/%s", scratch_dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	memset(buf, 'x', sizeof(buf));
	while (done < size) {
		size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
		ssize_t w = write(fd, buf, n);

		if (w <= 0) {
			close(fd);
			return w < 0 ? -errno : -EIO;
		}
		done += w;
	}
	return fd;
}

static int make_scratch(void)
{
	const char *tmp = getenv("TMPDIR");
	uint64_t bgsize = 4096;
	unsigned i, k;

	if (!tmp || !*tmp || strlen(tmp) > 4000)
		tmp = "/tmp";
	snprintf(scratch_dir, sizeof(scratch_dir), "%s/srvscope-clone.XXXXXX", tmp);
	if (!mkdtemp(scratch_dir)) {
		int err = -errno;

		error("clone: cannot make a scratch directory under %s: %s (set TMPDIR)", tmp,
		      strerror(errno));
		scratch_dir[0] = 0;
		return err;
	}
	for (i = 0; i < M->nbg; i++)
		for (k = 0; k < M->bg[i].nwork; k++)
			if (M->bg[i].work[k].bytes > bgsize)
				bgsize = M->bg[i].work[k].bytes;
	req_fd = scratch_file("request-file", scratch_req, sizeof(scratch_req),
			      M->file_size ? M->file_size : 4096);
	bg_fd = req_fd < 0
			? req_fd
			: scratch_file("background-file", scratch_bg, sizeof(scratch_bg), bgsize);
	if (req_fd < 0 || bg_fd < 0) {
		error("clone: cannot write a scratch file in %s: %s", scratch_dir,
		      strerror(-(req_fd < 0 ? req_fd : bg_fd)));
		return req_fd < 0 ? req_fd : bg_fd;
	}
	return 0;
}

/* ---- connections ---- */

struct conn {
	int fd;
	size_t inlen, incap;
	char *in;
};

struct net {
	int epfd;     /* this thread's epoll, or the shared one */
	int wakefd;   /* queue hand-off: an eventfd the acceptor writes */
	bool oneshot; /* shared epoll: connections re-armed after each cycle */
	pthread_mutex_t lock;
	int *queue;
	size_t qlen, qcap;
	int listen_fd;	  /* event loops that accept: their listener, else -1 */
	unsigned accepts; /* connections it accepted */
	uint64_t seed;
	char *out;
	size_t outcap, outlen;
	int filefd; /* the per-request file opened by an open step, else -1 */
	struct cpu_ctl ctl;
	struct conn **conns; /* by fd */
	size_t nconns;
};

static struct net *nets;
static unsigned nnets;
static unsigned pool_net, pool_acc; /* this process's network threads and acceptors */

static void close_conn(struct net *n, struct conn *c)
{
	if ((size_t)c->fd < n->nconns)
		n->conns[c->fd] = NULL;
	close(c->fd);
	free(c->in);
	free(c);
}

static struct conn *new_conn(struct net *n, int fd)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->fd = fd;
	if ((size_t)fd >= n->nconns) {
		size_t cap = n->nconns;

		xgrow((void **)&n->conns, &cap, fd + 1, sizeof(*n->conns));
		memset(n->conns + n->nconns, 0, (cap - n->nconns) * sizeof(*n->conns));
		n->nconns = cap;
	}
	n->conns[fd] = c;
	return c;
}

static bool is_read(enum clone_sys s)
{
	return s >= CS_READ && s <= CS_READV;
}

static bool is_write(enum clone_sys s)
{
	return s >= CS_WRITE && s <= CS_SENDFILE;
}

/* One socket read step: appends to c->in. Returns bytes, 0 at EOF, -errno. */
static ssize_t do_read(struct conn *c, const struct clone_step *st)
{
	size_t want = st->bytes ? st->bytes : 16384, k, off;
	struct iovec iov[CLONE_MAX_IOV];
	struct msghdr mh = {0};
	ssize_t r;

	if (st->niov) {
		for (want = 0, k = 0; k < st->niov; k++)
			want += st->iov[k] ? st->iov[k] : 1;
	}
	if (c->inlen + want > c->incap) {
		xgrow((void **)&c->in, &c->incap, c->inlen + want, 1);
	}
	count(st->sys);
	switch (st->sys) {
	case CS_RECV:
		r = recv(c->fd, c->in + c->inlen, want, 0);
		break;
	case CS_RECVFROM:
		r = recvfrom(c->fd, c->in + c->inlen, want, 0, NULL, NULL);
		break;
	case CS_READV:
	case CS_RECVMSG:
		for (off = 0, k = 0; k < (st->niov ? st->niov : 1); k++) {
			iov[k].iov_base = c->in + c->inlen + off;
			iov[k].iov_len = st->niov ? (st->iov[k] ? st->iov[k] : 1) : want;
			off += iov[k].iov_len;
		}
		if (st->sys == CS_READV) {
			r = readv(c->fd, iov, k);
		} else {
			mh.msg_iov = iov;
			mh.msg_iovlen = k;
			r = recvmsg(c->fd, &mh, 0);
		}
		break;
	default:
		r = read(c->fd, c->in + c->inlen, want);
	}
	if (r < 0)
		return -errno;
	c->inlen += r;
	return r;
}

static size_t file_off(struct net *n, uint64_t bytes)
{
	uint64_t span;

	if (M->file_size <= bytes)
		return 0;
	span = (M->file_size - bytes) / 4096;
	n->seed = n->seed * 6364136223846793005ull + 1442695040888963407ull;
	return span ? ((n->seed >> 11) % (span + 1)) * 4096 : 0;
}

static int req_file(struct net *n)
{
	return n->filefd >= 0 ? n->filefd : req_fd;
}

/* One step of file work on the scratch file. */
static void do_file(struct net *n, const struct clone_step *st)
{
	struct stat sb;
	char buf[65536];
	uint64_t bytes = st->bytes > sizeof(buf) ? sizeof(buf) : st->bytes;

	count(st->sys);
	switch (st->sys) {
	case CS_STAT:
		syscall(SYS_stat, scratch_req, &sb);
		break;
	case CS_LSTAT:
		syscall(SYS_lstat, scratch_req, &sb);
		break;
	case CS_NEWFSTATAT:
		syscall(SYS_newfstatat, AT_FDCWD, scratch_req, &sb, 0);
		break;
	case CS_STATX: {
		struct statx sx;

		statx(AT_FDCWD, scratch_req, 0, STATX_BASIC_STATS, &sx);
		break;
	}
	case CS_OPEN:
	case CS_OPENAT:
		if (n->filefd >= 0)
			close(n->filefd);
		n->filefd = syscall(SYS_openat, AT_FDCWD, scratch_req,
				    O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		break;
	case CS_CLOSE:
		if (n->filefd >= 0)
			close(n->filefd);
		else
			close(dup(req_fd)); /* a close the original made: the same syscall */
		n->filefd = -1;
		break;
	case CS_FSTAT:
		fstat(req_file(n), &sb);
		break;
	case CS_READ: /* a file's read (clone_step.file, a file use): from where it is */
		if (read(req_file(n), buf, bytes ? bytes : 4096) < 0)
			break;
		break;
	case CS_PREAD:
		if (pread(req_file(n), buf, bytes ? bytes : 4096, file_off(n, bytes)) < 0)
			break;
		break;
	case CS_PWRITE:
		memset(buf, 'x', bytes);
		if (pwrite(bg_fd, buf, bytes, 0) < 0)
			break;
		break;
	case CS_LSEEK:
		lseek(req_file(n), 0, SEEK_SET);
		break;
	case CS_FSYNC:
		fsync(bg_fd);
		break;
	case CS_FDATASYNC:
		fdatasync(bg_fd);
		break;
	default:
		break;
	}
}

/* Writes out[off, off+len) with one write step: its call, its iov layout (iovecs filled
 * in order, the last one taking the rest). Returns the bytes sent or -errno. */
static ssize_t write_step(struct conn *c, const struct clone_step *st, const char *buf, size_t len,
			  bool last)
{
	struct iovec iov[CLONE_MAX_IOV];
	struct msghdr mh = {0};
	size_t k = 0, left = len;
	ssize_t r;
	off_t off = 0;

	if (st->sys == CS_SENDFILE) {
		count(st->sys);
		r = sendfile(c->fd, req_fd, &off, len);
		return r < 0 ? -errno : r;
	}
	if (st->sys == CS_WRITEV || st->sys == CS_SENDMSG) {
		unsigned n = st->niov ? st->niov : 1;

		for (k = 0; k < n && left; k++) {
			size_t l = (k == n - 1 || !st->iov[k]) ? left
				   : st->iov[k] < left	       ? st->iov[k]
							       : left;

			iov[k].iov_base = (char *)buf + (len - left);
			iov[k].iov_len = l;
			left -= l;
		}
		if (!k) {
			iov[0].iov_base = (char *)buf;
			iov[0].iov_len = 0;
			k = 1;
		}
	}
	count(st->sys);
	switch (st->sys) {
	case CS_WRITEV:
		r = writev(c->fd, iov, k);
		break;
	case CS_SENDMSG:
		mh.msg_iov = iov;
		mh.msg_iovlen = k;
		r = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		break;
	case CS_SEND:
		r = send(c->fd, buf, len, MSG_NOSIGNAL);
		break;
	case CS_SENDTO:
		r = sendto(c->fd, buf, len, MSG_NOSIGNAL, NULL, 0);
		break;
	default:
		r = write(c->fd, buf, len);
	}
	return r < 0 ? -errno : r;
}

/* Sends all of buf, waiting for room when the socket is full (answers bigger than the
 * socket buffer): the first attempt is the modelled call, the rest plain writes. */
static int send_all(struct conn *c, const struct clone_step *st, const char *buf, size_t len,
		    bool last)
{
	size_t done = 0;
	ssize_t r = write_step(c, st, buf, len, last);

	for (;;) {
		if (r == -EAGAIN) {
			struct pollfd p = {.fd = c->fd, .events = POLLOUT};

			if (poll(&p, 1, 5000) <= 0)
				return -ETIMEDOUT;
		} else if (r < 0 && r != -EINTR) {
			return (int)r;
		} else if (r > 0) {
			done += r;
		}
		if (done >= len)
			return 0;
		r = write(c->fd, buf + done, len - done);
		if (r < 0)
			r = -errno;
	}
}

/* Bytes the write step carries in the original (its iovecs' sum, or its count). */
static uint64_t step_bytes(const struct clone_step *st)
{
	uint64_t s = 0;
	unsigned k;

	for (k = 0; k < st->niov; k++)
		s += st->iov[k];
	return st->niov ? s : st->bytes;
}

/* One call on a connection's socket that asks or sets what the original did (TCP_NODELAY
 * set, SO_ERROR asked, its addresses, what epfd waits on it for, which stays EPOLLIN):
 * counted, its result unused. */
static void socket_call(enum clone_sys s, int fd, int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	int v = 1;

	if (s == CS_EPOLL_CTL && epfd < 0)
		return;
	count(s);
	switch (s) {
	case CS_EPOLL_CTL:
		epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
		break;
	case CS_SETSOCKOPT:
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
		break;
	case CS_GETSOCKOPT:
		len = sizeof(v);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &len);
		break;
	case CS_GETPEERNAME:
		getpeername(fd, (struct sockaddr *)&a, &len);
		break;
	case CS_GETSOCKNAME:
		getsockname(fd, (struct sockaddr *)&a, &len);
		break;
	default:
		break;
	}
}

static void other_step(struct net *n, struct conn *c, const struct clone_step *st)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = c->fd};
	struct timespec ts;

	switch (st->sys) {
	case CS_EPOLL_CTL:
		/* a shared epoll's re-arm after the cycle is this epoll_ctl */
		if (n->epfd >= 0 && !n->oneshot) {
			count(st->sys);
			if (n->oneshot)
				ev.events |= EPOLLONESHOT;
			epoll_ctl(n->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		}
		break;
	case CS_SETSOCKOPT:
	case CS_GETSOCKOPT:
	case CS_GETPEERNAME:
	case CS_GETSOCKNAME:
		socket_call(st->sys, c->fd, -1);
		break;
	case CS_GETPID:
		count(st->sys);
		syscall(SYS_getpid);
		break;
	case CS_TIMES:
		count(st->sys);
		syscall(SYS_times, NULL);
		break;
	case CS_GETTIMEOFDAY:
		count(st->sys);
		syscall(SYS_gettimeofday, &ts, NULL);
		break;
	case CS_CLOCK_GETTIME:
		count(st->sys);
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
		break;
	default:
		break;
	}
}

/* The answer to r, appended to n->out: its size drawn from the modelled responses, a get
 * drawn above a set's answer (a get answers a value). */
static void answer(struct net *n, const struct clone_req *r)
{
	uint64_t want = clone_dist__draw(&M->response, M->answer_bytes, &n->seed);
	unsigned i;

	for (i = 0; r->kind == CLONE_REQ_GET && i < 8 && want <= 16 && M->response.max > 16; i++)
		want = clone_dist__draw(&M->response, M->answer_bytes, &n->seed);
	if (want > CLONE_MAX_SIZE)
		want = CLONE_MAX_SIZE;
	if (n->outcap < n->outlen + want + 512)
		xgrow((void **)&n->out, &n->outcap, n->outlen + want + 512, 1);
	n->outlen +=
		clone_proto__answer(M->proto, r, want, n->out + n->outlen, n->outcap - n->outlen);
}

/* The steps of a request that neither read its socket nor write its answer (file work,
 * epoll_ctl, ...), those before the first write (before) or after it. */
static void side_steps(struct net *n, struct conn *c, unsigned first, bool before)
{
	bool written = false;
	unsigned i;

	for (i = first; i < M->nsteps; i++) {
		const struct clone_step *st = &M->steps[i];

		if (is_write(st->sys)) {
			written = true;
			continue;
		}
		if ((is_read(st->sys) && !st->file) || written == before)
			continue;
		if (st->file || (st->sys >= CS_STAT && st->sys <= CS_FDATASYNC))
			do_file(n, st);
		else
			other_step(n, c, st);
	}
}

/* Sends n->out with the cycle's write steps: each but the last carries what it carried
 * in the original, the last the rest (and plain writes what no step reached). */
static int send_answers(struct net *n, struct conn *c, unsigned first)
{
	size_t len = n->outlen, sent = 0;
	unsigned i, writes = 0, w = 0;
	int err;

	for (i = first; i < M->nsteps; i++)
		if (is_write(M->steps[i].sys))
			writes++;
	for (i = first; i < M->nsteps; i++) {
		const struct clone_step *st = &M->steps[i];
		size_t part = len - sent;

		if (!is_write(st->sys))
			continue;
		w++;
		if (w < writes && step_bytes(st) < part)
			part = step_bytes(st);
		if (!part && len)
			continue;
		if ((err = send_all(c, st, n->out + sent, part, w == writes)))
			return err;
		sent += part;
	}
	if (sent < len)
		return send_all(c, &(struct clone_step){.sys = CS_WRITE}, n->out + sent, len - sent,
				true);
	return 0;
}

/* The files used beside the requests (clone_model.file_use), as often a cycle: each
 * use's ops in order on the scratch file, the fractions carried from one cycle to the
 * next (per thread). */
static void file_uses(struct net *n)
{
	static __thread double carry[CLONE_MAX_FILE_USES];
	unsigned u, k;

	for (u = 0; u < M->nfile_uses && u < CLONE_MAX_FILE_USES; u++) {
		const struct clone_file_use *f = &M->file_use[u];

		for (carry[u] += f->per_request; carry[u] >= 1; carry[u] -= 1)
			for (k = 0; k < f->nops && k < CLONE_MAX_FILE_OPS; k++)
				do_file(n, &(struct clone_step){.sys = f->ops[k],
								.file = true,
								.bytes = f->read_bytes});
	}
}

/* Answers every whole request in c->in, their answers sent together (as memcached sends
 * the answers of pipelined requests in one sendmsg). Returns the number answered or <0
 * to close. */
static int serve_buffered(struct net *n, struct conn *c, unsigned first)
{
	struct clone_req r;
	int got, done = 0, k, err;
	bool close = false;
	uint64_t raw = 0;

	n->outlen = 0;
	while (!close) {
		if (M->proto == CLONE_RAW)
			raw = clone_dist__draw(&M->request, 0, &n->seed);
		got = clone_proto__parse(M->proto, c->in, c->inlen, raw, &r);
		if (got < 0)
			return got;
		if (!got)
			break;
		request_work(&n->ctl);
		__atomic_fetch_add(&C->requests, 1, __ATOMIC_RELAXED);
		side_steps(n, c, first, true);
		answer(n, &r);
		memmove(c->in, c->in + r.len, c->inlen - r.len);
		c->inlen -= r.len;
		close = r.close || r.kind == CLONE_REQ_QUIT;
		done++;
	}
	if (!done)
		return 0;
	if ((err = send_answers(n, c, first)))
		return err;
	for (k = 0; k < done; k++)
		side_steps(n, c, first, false);
	/* once a cycle, as the model counts its uses: requests read together (a client's
	 * pipelined keys, 1000 sets a run) are one cycle there */
	file_uses(n);
	return close ? -ECONNRESET : done;
}

/* The network thread's cycle on a readable connection: the reads before the first write,
 * every whole request answered, then the reads after it (the original's drain to EAGAIN),
 * again while they bring data. Returns <0 when the connection is to be closed. */
static int serve(struct net *n, struct conn *c, bool blocking)
{
	unsigned first = 0, i;
	ssize_t r;
	int got, rounds;

	while (first < M->nsteps && is_read(M->steps[first].sys) && !M->steps[first].file)
		first++;
	for (i = 0; i < first; i++) {
		if (blocking && M->steps[i].eagain)
			continue;
		r = do_read(c, &M->steps[i]);
		if (r == 0)
			return -ECONNRESET;
		if (r == -EAGAIN || r == -EINTR)
			break;
		if (r < 0)
			return (int)r;
	}
	got = serve_buffered(n, c, first);
	if (got < 0)
		return got;
	for (rounds = 0; rounds < 64; rounds++) {
		bool more = false;

		for (i = first; i < M->nsteps; i++) {
			if (!is_read(M->steps[i].sys) || M->steps[i].file)
				continue;
			if (blocking)
				break;
			r = do_read(c, &M->steps[i]);
			if (r == 0)
				return -ECONNRESET;
			if (r > 0)
				more = true;
			if (r < 0 && r != -EAGAIN && r != -EINTR)
				return (int)r;
			if (r < 0)
				break;
		}
		if (!more)
			break;
		got = serve_buffered(n, c, first);
		if (got < 0)
			return got;
	}
	return 0;
}

static void net_init(struct net *n, unsigned i)
{
	memset(n, 0, sizeof(*n));
	n->epfd = -1;
	n->wakefd = -1;
	n->listen_fd = -1;
	n->filefd = -1;
	n->seed = 0x9e3779b97f4a7c15ull * (i + 1) ^ (uint64_t)getpid();
	pthread_mutex_init(&n->lock, NULL);
}

static void set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* The calls the original made once a connection: M->per_accept[s] of each on average, the
 * fractions carried from one connection to the next (per thread). Made by the thread that
 * serves the connection as it takes it (accepted there, handed to it, or its own thread or
 * process), since the model counts them among the network threads' syscalls: made at the
 * accept, memcached's clone made its getpeername on the acceptor (-100 % in --check). A
 * shared epoll, where no thread takes a connection, has them made by the acceptor. */
static void accept_calls(int fd, int epfd)
{
	static __thread double carry[CS__COUNT];
	int s;

	for (s = CS_NONE + 1; s < CS__COUNT; s++) {
		if (M->per_accept[s] <= 0)
			continue;
		for (carry[s] += M->per_accept[s]; carry[s] >= 1; carry[s] -= 1)
			socket_call(s, fd, epfd);
	}
}

static int do_accept(int lfd)
{
	int fd, flags = SOCK_CLOEXEC | (M->nonblocking ? SOCK_NONBLOCK : 0);

	fd = accept4(lfd, NULL, NULL, flags);
	if (fd >= 0) {
		__atomic_fetch_add(&C->accepts, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&C->conns, 1, __ATOMIC_RELAXED);
	}
	return fd;
}

static void epoll_add(struct net *n, int fd, uint32_t extra)
{
	struct epoll_event ev = {.events = EPOLLIN | extra, .data.fd = fd};

	count(CS_EPOLL_CTL);
	epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* An epoll loop: the listener (event loops that accept), the hand-off's wake-up, and the
 * connections. single: a loop for one connection (its thread or process ends with it). */
/* The calling thread is a network thread: its id in C->net_tids (once), where the model
 * measuring its skeleton beside the original reads their CPU (clone__beside). */
static void net_register(void)
{
	static __thread bool done;
	uint32_t i;

	if (done)
		return;
	done = true;
	i = __atomic_fetch_add(&C->nr_net, 1, __ATOMIC_ACQ_REL);
	if (i < CLONE_COUNTS_TIDS)
		__atomic_store_n(&C->net_tids[i], (uint32_t)gettid(), __ATOMIC_RELEASE);
}

static void epoll_loop(struct net *n, bool single)
{
	int maxev = M->maxevents > 0 && M->maxevents <= 65536 ? M->maxevents : 32;
	struct epoll_event *ev = xcalloc(maxev, sizeof(*ev));
	int k, got;

	net_register();
	while (!stopping) {
		count(CS_EPOLL_WAIT);
		got = epoll_wait(n->epfd, ev, maxev, M->wait_timeout_ms);
		for (k = 0; k < got; k++) {
			int fd = ev[k].data.fd;
			struct conn *c;

			if (fd == n->listen_fd) {
				int cfd;

				/* the listener drained (M->accept_drain) or one a wake-up */
				while ((cfd = do_accept(fd)) >= 0) {
					new_conn(n, cfd);
					epoll_add(n, cfd, 0);
					accept_calls(cfd, n->epfd);
					/* nginx takes the exclusive listener out and adds it
					 * back every 16th accept of a worker (else the first
					 * worker that added it gets nearly every connection):
					 * its model has 160 epoll_ctl for 140 accepts, 10 of
					 * them removals */
					if (M->epoll_exclusive && n->accepts++ % 16 == 0) {
						count(CS_EPOLL_CTL);
						epoll_ctl(n->epfd, EPOLL_CTL_DEL, fd, NULL);
						epoll_add(n, fd, EPOLLEXCLUSIVE);
					}
					if (!M->accept_drain)
						break;
				}
				continue;
			}
			if (fd == n->wakefd) {
				uint64_t v;
				size_t q;

				if (read(fd, &v, sizeof(v)) < 0)
					continue;
				pthread_mutex_lock(&n->lock);
				for (q = 0; q < n->qlen; q++) {
					new_conn(n, n->queue[q]);
					epoll_add(n, n->queue[q], 0);
					accept_calls(n->queue[q], n->epfd);
				}
				n->qlen = 0;
				pthread_mutex_unlock(&n->lock);
				continue;
			}
			c = (size_t)fd < n->nconns ? n->conns[fd] : NULL;
			if (!c && n->oneshot) /* shared epoll: a connection another thread added */
				c = new_conn(n, fd);
			if (!c)
				continue;
			if (serve(n, c, false) < 0) {
				close_conn(n, c);
				if (single)
					goto out;
			} else if (n->oneshot) {
				struct epoll_event e = {.events = EPOLLIN | EPOLLONESHOT,
							.data.fd = c->fd};
				/* the connection may move to another thread next time */
				n->conns[c->fd] = NULL;
				free(c->in);
				free(c);
				count(CS_EPOLL_CTL);
				epoll_ctl(n->epfd, EPOLL_CTL_MOD, fd, &e);
			}
		}
	}
out:
	free(ev);
}

/* One connection, its own thread or process, waiting as the model says. */
static void conn_loop(int fd)
{
	struct net n;
	struct conn *c;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	fd_set rs;

	net_register();
	net_init(&n, (unsigned)fd);
	c = new_conn(&n, fd);
	if (M->network_io == CLONE_IO_EPOLL) {
		n.epfd = epoll_create1(EPOLL_CLOEXEC);
		epoll_add(&n, fd, 0);
		accept_calls(fd, n.epfd);
		epoll_loop(&n, true);
		close(n.epfd);
		goto out;
	}
	accept_calls(fd, -1);
	set_nonblock(fd, M->network_io != CLONE_IO_BLOCKING);
	while (!stopping) {
		if (M->network_io == CLONE_IO_POLL || M->network_io == CLONE_IO_NONBLOCKING) {
			count(CS_POLL);
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				break;
		} else if (M->network_io == CLONE_IO_SELECT && fd < FD_SETSIZE) {
			FD_ZERO(&rs);
			FD_SET(fd, &rs);
			count(CS_SELECT);
			if (select(fd + 1, &rs, NULL, NULL, NULL) < 0 && errno != EINTR)
				break;
		}
		if (serve(&n, c, M->network_io == CLONE_IO_BLOCKING) < 0)
			break;
	}
	close_conn(&n, c);
	c = NULL;
out:
	free(n.conns);
	free(n.out);
	if (n.filefd >= 0)
		close(n.filefd);
}

static void *conn_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;

	prctl(PR_SET_NAME, M->network);
	conn_loop(fd);
	return NULL;
}

/* A pool's thread name: "worker-3" for the third when the cluster's name is numbered
 * ("worker-1", the commonest name of threads named one by one), else the name itself. */
static void name_thread(const char *name, unsigned index)
{
	char buf[CLONE_NAME];
	size_t len = strlen(name), d = len;

	while (d && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	if (d == len || !d || name[d - 1] != '-') {
		prctl(PR_SET_NAME, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*s%u", (int)d, name, index + 1);
	prctl(PR_SET_NAME, buf);
}

static void *net_thread(void *arg)
{
	struct net *n = arg;

	name_thread(M->network, (unsigned)(n - nets));
	epoll_loop(n, false);
	return NULL;
}

/* ---- acceptors ---- */

static unsigned next_net;

static void dispatch(int fd)
{
	pthread_t t;
	pthread_attr_t a;
	struct net *n;
	uint64_t one = 1;

	switch (M->per_conn) {
	case CLONE_PER_CONN_PROCESS: {
		pid_t p = fork_child();

		if (p == 0) {
			unsigned i;

			in_child(M->network);
			for (i = 0; i < nlisten; i++)
				close(listen_fds[i]);
			conn_loop(fd);
			_exit(0);
		}
		close(fd);
		return;
	}
	case CLONE_PER_CONN_THREAD:
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 256 << 10);
		if (pthread_create(&t, &a, conn_thread, (void *)(intptr_t)fd))
			close(fd);
		pthread_attr_destroy(&a);
		return;
	default:
		break;
	}
	n = &nets[__atomic_fetch_add(&next_net, 1, __ATOMIC_RELAXED) % nnets];
	if (M->handoff == CLONE_HANDOFF_SHARED_EPOLL) {
		struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = fd};

		accept_calls(fd, -1);
		count(CS_EPOLL_CTL);
		epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev);
		return;
	}
	pthread_mutex_lock(&n->lock);
	if (n->qlen == n->qcap)
		xgrow((void **)&n->queue, &n->qcap, n->qlen + 1, sizeof(int));
	n->queue[n->qlen++] = fd;
	pthread_mutex_unlock(&n->lock);
	if (write(n->wakefd, &one, sizeof(one)) < 0)
		warning("clone: cannot wake a network thread: %s", strerror(errno));
}

static void *acceptor(void *arg)
{
	int lfd = listen_fds[(uintptr_t)arg % nlisten], ep = -1, fd;
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	fd_set rs;

	if ((uintptr_t)arg) /* acceptor 0 may be the main thread, named already */
		prctl(PR_SET_NAME, M->acceptor);
	if (M->accept_io == CLONE_IO_EPOLL) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (M->epoll_exclusive)
			ev.events |= EPOLLEXCLUSIVE;
		epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	}
	while (!stopping) {
		switch (M->accept_io) {
		case CLONE_IO_EPOLL:
			if (epoll_wait(ep, &ev, 1, M->accept_timeout_ms) <= 0)
				continue;
			break;
		case CLONE_IO_POLL:
		case CLONE_IO_NONBLOCKING:
			if (poll(&p, 1, M->accept_timeout_ms) <= 0)
				continue;
			break;
		case CLONE_IO_SELECT:
			FD_ZERO(&rs);
			FD_SET(lfd, &rs);
			if (lfd >= FD_SETSIZE || select(lfd + 1, &rs, NULL, NULL, NULL) <= 0)
				continue;
			break;
		default:
			break;
		}
		while ((fd = do_accept(lfd)) >= 0) {
			dispatch(fd);
			if (!M->accept_drain || M->accept_io == CLONE_IO_BLOCKING)
				break;
		}
		if (fd < 0 && (errno == EMFILE || errno == ENFILE))
			usleep(10000);
	}
	return NULL;
}

/* ---- background threads ---- */

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

/* A background thread's period and CPU per wake-up at the clone's request rate, taken
 * again every 100 ms (the rate over that window) when the model gives them per run: the
 * original's wake-ups followed its load (memcached's LRU maintainer: 5 a second idle, 56 at
 * 500 requests/s, 850 at 2000). */
struct bg_pace {
	uint64_t t0, req0;
	double period_ms, want_us;
};

static void bg_pace(const struct clone_bg *bg, struct bg_pace *p)
{
	uint64_t now = now_ns(), req = __atomic_load_n(&C->requests, __ATOMIC_RELAXED);

	if (!bg->nruns || (p->t0 && now - p->t0 < 100000000))
		return;
	if (p->t0)
		clone_bg__at(bg, (req - p->req0) / ((now - p->t0) / 1e9), &p->period_ms,
			     &p->want_us);
	p->t0 = now;
	p->req0 = req;
}

/* Waits toward the deadline (monotonic ns), the wait the original made; a second at most
 * when the pace follows the load (a clone whose load comes back finds its pace again).
 * True when the deadline is reached. */
static bool bg_wait(const struct clone_bg *bg, int ep, uint64_t deadline)
{
	uint64_t now = now_ns(), rel = deadline > now ? deadline - now : 0;
	struct timespec ts;

	if (bg->nruns && rel > 1000000000)
		rel = 1000000000;
	ts.tv_sec = (time_t)(rel / 1000000000);
	ts.tv_nsec = (long)(rel % 1000000000);
	if (ep >= 0)
		epoll_wait(ep, (struct epoll_event[1]){}, 1, (int)((rel + 500000) / 1000000));
	else if (bg->wait == CS_NANOSLEEP)
		nanosleep(&ts, NULL);
	else
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return now_ns() >= deadline;
}

/* The syscalls of a wake-up, as many per wake-up as the model says on average. */
static void bg_syscalls(const struct clone_bg *bg, double *acc, char *buf, size_t len)
{
	unsigned k;

	for (k = 0; k < bg->nwork; k++) {
		uint64_t b = bg->work[k].bytes > len ? len : bg->work[k].bytes;

		for (acc[k] += bg->work[k].per_wake; acc[k] >= 1; acc[k] -= 1) {
			switch (bg->work[k].sys) {
			case CS_FSYNC:
			case CS_FDATASYNC:
				/* dirty the observed size, then sync it */
				if (pwrite(bg_fd, buf, b ? b : 4096, 0) < 0)
					break;
				if (bg->work[k].sys == CS_FSYNC)
					fsync(bg_fd);
				else
					fdatasync(bg_fd);
				break;
			case CS_WRITE:
			case CS_PWRITE:
				if (pwrite(bg_fd, buf, b, 0) < 0)
					break;
				break;
			case CS_READ:
			case CS_PREAD:
				if (pread(bg_fd, buf, b, 0) < 0)
					break;
				break;
			default:
				break;
			}
		}
	}
}

static void *bg_thread(void *arg)
{
	const struct clone_bg *bg = arg;
	struct bg_ctl ctl = {.spin_us = bg->on_cpu_us / 2};
	struct bg_pace pace = {.period_ms = bg->period_ms, .want_us = bg->on_cpu_us};
	double acc[CLONE_MAX_WORK] = {0};
	char buf[65536];
	struct timespec ts;
	uint64_t last = now_ns(), now, p;
	int ep = -1;

	prctl(PR_SET_NAME, bg->name);
	memset(buf, 'x', sizeof(buf));
	if (bg->wait == CS_EPOLL_WAIT || bg->wait == CS_EPOLL_PWAIT)
		ep = epoll_create1(EPOLL_CLOEXEC);
	while (!stopping) {
		if (bg->period_ms <= 0 &&
		    !bg->nruns) { /* idle: waits, as the original did, for nothing */
			if (ep >= 0) {
				epoll_wait(ep, (struct epoll_event[1]){}, 1, -1);
			} else if (bg->wait == CS_NANOSLEEP || bg->wait == CS_CLOCK_NANOSLEEP) {
				ts.tv_sec = 1;
				ts.tv_nsec = 0;
				nanosleep(&ts, NULL);
			} else { /* futex, the commonest idle wait: a condition never signalled */
				pthread_mutex_lock(&idle_lock);
				pthread_cond_wait(&idle_cond, &idle_lock);
				pthread_mutex_unlock(&idle_lock);
			}
			continue;
		}
		bg_pace(bg, &pace);
		p = (uint64_t)(pace.period_ms * 1e6);
		if (!bg_wait(bg, ep, p ? last + p : UINT64_MAX))
			continue;
		/* the next deadline a period after this one: an oversleep is made up, not a
		 * longer lateness (a busy machine) */
		now = now_ns();
		last = last + 2 * p > now ? last + p : now;
		bg_work_cpu(&ctl, pace.want_us, bg->wake_floor_us);
		bg_syscalls(bg, acc, buf, sizeof(buf));
	}
	return NULL;
}

static int start_thread(void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_t t;
	int err;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 512 << 10);
	err = pthread_create(&t, &a, fn, arg);
	pthread_attr_destroy(&a);
	if (err)
		return error("clone: cannot start a thread: %s (the model asks for many; see "
			     "ulimit -u)",
			     strerror(err)),
		       -err;
	return 0;
}

/* ---- the process tree ---- */

static int make_listener(bool reuseport)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	/* drained, it must not wait for a connection that another thread took */
	if (M->accept_drain && M->accept_io != CLONE_IO_BLOCKING)
		set_nonblock(fd, true);
	if (bind(fd, (struct sockaddr *)&bind_addr, sizeof(bind_addr)) || listen(fd, 1024)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!bind_addr.sin_port) { /* port 0: the others reuse the one the kernel chose */
		socklen_t l = sizeof(bind_addr);

		getsockname(fd, (struct sockaddr *)&bind_addr, &l);
	}
	set_nonblock(fd, M->accept_io != CLONE_IO_BLOCKING || M->network_accepts);
	return fd;
}

/* Network threads that accept themselves: each with its epoll and the listener in it (the
 * process's own with SO_REUSEPORT, else the shared one, EPOLLEXCLUSIVE as modelled). The
 * main thread may be the first of them. */
/* caller: the calling thread becomes the first loop (else they are all new threads). */
static int run_event_loops(unsigned threads, unsigned first_index, bool caller)
{
	unsigned i;
	int err;

	nnets = threads;
	nets = xcalloc(threads, sizeof(*nets));
	for (i = 0; i < threads; i++) {
		struct net *n = &nets[i];

		net_init(n, first_index + i);
		n->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (n->epfd < 0)
			return error("clone: epoll_create1: %s", strerror(errno));
		/* SO_REUSEPORT: each its own listener, made before the fork (as nginx
		 * does), so none is bound late or left without a thread to accept */
		n->listen_fd = M->reuseport && first_index + i < nlisten
				       ? listen_fds[first_index + i]
				       : listen_fds[0];
	}
	if (M->reuseport) /* the other processes' listeners are theirs alone */
		for (i = 0; i < nlisten; i++)
			if (i < first_index || i >= first_index + threads)
				close(listen_fds[i]);
	for (i = 0; i < threads; i++) {
		struct net *n = &nets[i];

		epoll_add(n, n->listen_fd, M->epoll_exclusive ? EPOLLEXCLUSIVE : 0);
	}
	for (i = caller ? 1 : 0; i < threads; i++)
		if ((err = start_thread(net_thread, &nets[i])))
			return err;
	if (!caller)
		return 0;
	prctl(PR_SET_NAME, M->network);
	epoll_loop(&nets[0], false);
	return 0;
}

static int start_bg(void)
{
	unsigned i, k;
	int err;

	for (i = 0; i < M->nbg; i++)
		for (k = 0; k < M->bg[i].threads; k++)
			if ((err = start_thread(bg_thread, (void *)&M->bg[i])))
				return err;
	return 0;
}

/* A pool of network threads fed by acceptors (queue or shared epoll), or none at all when
 * each connection gets its own thread or process. */
static int start_network_pool(void)
{
	unsigned i;
	int shared = -1, err;

	if (M->per_conn != CLONE_PER_CONN_NONE)
		return 0;
	nnets = pool_net;
	nets = xcalloc(nnets, sizeof(*nets));
	if (M->handoff == CLONE_HANDOFF_SHARED_EPOLL)
		shared = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < nnets; i++) {
		struct net *n = &nets[i];

		net_init(n, i);
		if (shared >= 0) {
			n->epfd = shared;
			n->oneshot = true;
		} else {
			n->epfd = epoll_create1(EPOLL_CLOEXEC);
			n->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (n->epfd < 0 || n->wakefd < 0)
				return error("clone: cannot make a network thread's epoll: %s",
					     strerror(errno));
			epoll_add(n, n->wakefd, 0);
		}
	}
	for (i = 0; i < nnets; i++)
		if ((err = start_thread(net_thread, &nets[i])))
			return err;
	return 0;
}

static void wait_forever(void)
{
	sigset_t none;

	sigemptyset(&none);
	while (!stopping)
		sigsuspend(&none);
}

static int run_acceptors(bool main_accepts)
{
	unsigned i;
	int err;

	for (i = main_accepts ? 1 : 0; i < pool_acc; i++)
		if ((err = start_thread(acceptor, (void *)(uintptr_t)(i + 1))))
			return err;
	if (main_accepts)
		acceptor((void *)(uintptr_t)0);
	else
		wait_forever();
	return 0;
}

static int run_tree(void)
{
	unsigned i, per;
	int err;

	pool_net = M->network_pool;
	pool_acc = M->accept_pool;
	if (M->network_accepts && M->per_conn == CLONE_PER_CONN_NONE) {
		if (M->multi_process && M->processes > 1) {
			/* a master (main thread, background) and worker processes */
			unsigned first = 0;

			per = M->network_pool / M->processes;
			for (i = 0; i < M->processes; i++) {
				unsigned th = per + (i < M->network_pool % M->processes);
				pid_t p = fork_child();

				if (p < 0)
					return error("clone: fork: %s", strerror(errno));
				if (p == 0) {
					in_child(M->network);
					_exit(run_event_loops(th, first, true) ? 1 : 0);
				}
				first += th;
			}
			if (M->reuseport) /* the workers hold their listeners */
				for (i = 0; i < nlisten; i++)
					close(listen_fds[i]);
			if ((err = start_bg()))
				return err;
			wait_forever();
			return 0;
		}
		if ((err = start_bg()))
			return err;
		return run_event_loops(M->network_pool, 0, M->main_network);
	}
	if (M->multi_process && M->processes > 1 && M->per_conn == CLONE_PER_CONN_NONE) {
		/* child processes each with their share of acceptors and network threads fed
		 * by them (apache's event MPM: a listener thread and workers per child) */
		for (i = 0; i < M->processes; i++) {
			pid_t p = fork_child();

			if (p < 0)
				return error("clone: fork: %s", strerror(errno));
			if (p == 0) {
				in_child(M->comm);
				pool_net = M->network_pool / M->processes +
					   (i < M->network_pool % M->processes);
				pool_acc = M->accept_pool / M->processes +
					   (i < M->accept_pool % M->processes);
				if (!pool_acc)
					pool_acc = 1;
				_exit(start_network_pool() || run_acceptors(false) ? 1 : 0);
			}
		}
		if ((err = start_bg()))
			return err;
		wait_forever();
		return 0;
	}
	if ((err = start_network_pool()) || (err = start_bg()))
		return err;
	return run_acceptors(M->main_accepts);
}

static const char *io_name(enum clone_io io)
{
	static const char *const names[] = {"epoll",	"poll",	       "select",
					    "blocking", "nonblocking", "io_uring"};
	return names[io];
}

static bool follows_load(const struct clone_model *m)
{
	unsigned i;

	for (i = 0; i < m->nbg; i++)
		if (m->bg[i].nruns > 1) /* one point: the same pace at any rate */
			return true;
	return false;
}

int clone__run(const struct clone_model *m, const struct clone_opts *o, struct clone_counts *counts)
{
	struct sigaction sa = {0};
	const char *addr = o->listen_addr ? o->listen_addr : m->listen_addr;
	int port = o->port >= 0 ? o->port : m->listen_port, err;
	unsigned nl;

	M = m;
	/* shared with the processes it forks when a background thread paces itself on all of
	 * the clone's requests (else each process keeps its own: no cache line bounced
	 * between worker processes at every syscall) */
	if (!counts && follows_load(m) &&
	    (counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		counts = NULL;
	C = counts ? counts : &local_counts;
	owner_pid = getpid();
	memset(&bind_addr, 0, sizeof(bind_addr));
	bind_addr.sin_family = AF_INET;
	bind_addr.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &bind_addr.sin_addr) != 1)
		return error("clone: '%s' is not an IPv4 address (--listen)", addr), -EINVAL;

	sa.sa_handler = on_stop;
	sigfillset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, m->comm);

	calibrate();
	/* from no spin up: an overshoot while calibrating would slow the first requests
	 * and batch their wake-ups, which no profile of the original shows */
	atomic_store(&spin_ns, 0);
	if ((err = make_scratch()))
		goto out;
	/* the listeners, all made before anything answers: one, or with SO_REUSEPORT one per
	 * event loop that accepts (or per modelled listener for acceptor threads) */
	nl = 1;
	if (M->reuseport && M->network_accepts && M->per_conn == CLONE_PER_CONN_NONE)
		nl = M->network_pool;
	else if (M->reuseport && M->listeners > 1)
		nl = M->listeners;
	for (nlisten = 0; nlisten < nl; nlisten++) {
		int fd = make_listener(M->reuseport);

		if (fd < 0) {
			err = error("clone: cannot listen on %s:%d: %s (--port picks another)",
				    addr, port, strerror(-fd));
			goto out;
		}
		listen_fds[nlisten] = fd;
	}
	if (!o->quiet)
		fprintf(stderr,
			"srvscope: clone of '%s' listening on %s:%d: %s network I/O, %s%u %s "
			"thread(s)%s, %u acceptor(s), %u background thread group(s), %s\n",
			m->comm, addr, ntohs(bind_addr.sin_port), io_name(m->network_io),
			m->per_conn == CLONE_PER_CONN_THREAD	? "one thread per connection, "
			: m->per_conn == CLONE_PER_CONN_PROCESS ? "one process per connection, "
								: "",
			m->per_conn ? 0 : m->network_pool, m->network,
			m->multi_process ? " in worker processes" : "",
			m->network_accepts ? 0 : m->accept_pool, m->nbg,
			m->proto == CLONE_MEMCACHED ? "memcached protocol"
			: m->proto == CLONE_REDIS   ? "redis protocol"
			: m->proto == CLONE_HTTP    ? "HTTP/1.1"
			: m->proto == CLONE_LINE    ? "newline-framed requests"
						    : "raw request/response sizes");
	if (!o->quiet && m->cpu_ratio > 0)
		fprintf(stderr,
			"srvscope: clone: CPU per request aimed at %.2f times its own without its "
			"spin (the original's over its skeleton's, both loaded at once when the "
			"model was made)\n",
			m->cpu_ratio);
	else if (!o->quiet && m->cpu_line)
		fprintf(stderr,
			"srvscope: clone: CPU per request aimed at %.1f + %.1f us per wake-up per "
			"request (the model's, without its recorder)\n",
			m->cpu_w_us, m->cpu_k_us);
	else if (!o->quiet && m->on_cpu_us_per_request > 0)
		fprintf(stderr,
			"srvscope: clone: CPU per request aimed at %.1f us (the model's%s)\n",
			m->on_cpu_us_per_request,
			m->cpu_unrecorded ? ", without its recorder" : "");
	if (o->ready_fd >= 0) {
		dprintf(o->ready_fd, "%d\n", ntohs(bind_addr.sin_port));
		close(o->ready_fd);
	}
	err = run_tree();
	if (!err)
		wait_forever();
out:
	/* a failed start: the same cleanup as a stop, without the exit */
	kill_children(SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	remove_scratch();
	return err < 0 ? err : -EIO;
}
