/* The ptrace sampler: PTRACE_SEIZE + PTRACE_INTERRUPT (never SIGSTOP), take registers and
 * a copy of the top of the user stack, release at once. Unwinding and symbols come later,
 * with the target running. If srvscope dies at any moment, the kernel detaches seized
 * threads and they resume: nothing is left stopped or traced. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/ptrace.h"
#include "proc/task.h"
#include "snapshot/snapshot.h"
#include "stacks/stacks.h"
#include "util/util.h"

#define PAGE 4096ul
/* How long to wait for a thread in uninterruptible sleep to reach its stop, and for any
 * other thread: one that is runnable stops as soon as it gets a CPU, which on a machine
 * loaded many times over can take a while, and a thread given up on would stop later
 * and stay stopped until we come back. A thread that dies or enters uninterruptible
 * sleep meanwhile is seen within WAIT_CHECK_MS. */
#define D_STATE_WAIT_MS 50
#define STOP_WAIT_MS	3000
#define WAIT_CHECK_MS	5
/* How long to wait after a capture for threads that died while held to be reaped. */
#define SETTLE_MS 100
/* Non-blocking waitpid calls before sleeping in waitpid (about 0.3 us each). */
#define SPIN_POLLS 2000

volatile sig_atomic_t ptrace_interrupted;

/* What is copied of the stack of a thread that was not blocked where /proc showed it. */
#define RUNNING_STACK_SIZE (64 * 1024)

static void on_alarm(int sig)
{
}

/* Copies up to size bytes of user stack from sp, page by page so that a copy running
 * into the end of the stack mapping stops there instead of failing whole. */
static void copy_stack(pid_t tid, struct thread_sample *t, uint64_t sp, size_t size)
{
	struct iovec local, remote[64];
	uint64_t addr = sp, end = sp + size;
	unsigned int n = 0;
	ssize_t got;

	t->stack_data = xrealloc(t->stack_data, size);
	while (addr < end && n < ARRAY_SIZE(remote)) {
		uint64_t next = (addr & ~(PAGE - 1)) + PAGE;

		if (next > end)
			next = end;
		remote[n].iov_base = (void *)addr;
		remote[n].iov_len = next - addr;
		n++;
		addr = next;
	}
	local.iov_base = t->stack_data;
	local.iov_len = size;
	got = process_vm_readv(tid, &local, 1, remote, n, 0);
	t->stack_addr = sp;
	t->stack_len = got > 0 ? got : 0;
}

/* A thread blocked in a system call does not touch its user stack: copy it before
 * stopping the thread, from the stack pointer /proc/PID/task/TID/syscall shows, so the
 * stop itself only has to take the registers. take_regs checks that the thread is still
 * at that same place (pc, sp, syscall) and copies again if not. */
static void precopy_stack(pid_t pid, struct thread_sample *t, size_t size)
{
	char path[64], buf[256];
	unsigned long long v[9];
	long nr;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, t->tid);
	if (read_file(path, buf, sizeof(buf)) <= 0 || buf[0] == 'r')
		return;
	/* "nr arg1 ... arg6 sp pc"; "-1 sp pc" when blocked outside a system call. */
	if (sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
	    nr < 0)
		return;
	t->pre_sp = v[6];
	t->pre_pc = v[7];
	t->pre_nr = nr;
	copy_stack(t->tid, t, t->pre_sp, size);
}

static int tid_stat(pid_t tid, struct task_stat *st);

#define PF_EXITING 0x00000004

/* Whether tid is dying or dead: it will not stop (we ask for no exit event), so there is
 * no stop to wait for. Else *d_state tells whether it sleeps uninterruptibly. */
static bool dead_or_d(pid_t tid, bool *d_state)
{
	struct task_stat st;

	if (tid_stat(tid, &st) || st.state == 'Z' || st.state == 'X' || (st.flags & PF_EXITING))
		return true;
	*d_state = st.state == 'D';
	return false;
}

static bool dead(pid_t tid)
{
	bool d;

	return dead_or_d(tid, &d);
}

/* Waits for tid to report its stop, at most timeout_ms: nothing we wait for may hang us.
 * A thread in uninterruptible sleep stops late; and a dying process's leader is not
 * reported until every other thread is reaped, which for threads seized by us (zombies
 * until we reap them) would be never. Returns 1 when stopped (with *sig the signal to
 * pass back at detach, 0 for an interrupt or group stop), 0 when it exited (reaped),
 * -ESRCH when it died but is not reaped yet (the caller releases it, which hands it to
 * ptrace__settle), and -errno on error or timeout. */
static int wait_stop(pid_t tid, bool spin, unsigned int timeout_ms, int *sig)
{
	struct itimerval tick = {.it_interval = {.tv_usec = WAIT_CHECK_MS * 1000},
				 .it_value = {.tv_usec = WAIT_CHECK_MS * 1000}};
	struct itimerval off = {0};
	uint64_t start = now_ns(), end = start + timeout_ms * 1000000ull;
	int status, r, err = 0;
	bool d_state = false;

	*sig = 0;
	/* Poll first: a thread usually reaches its stop within microseconds, and sleeping in
	 * waitpid would add our own wake-up latency to the time the thread stays stopped. */
	for (r = 0; spin && r < SPIN_POLLS; r++) {
		if (waitpid(tid, &status, __WALL | WNOHANG) == tid)
			goto stopped;
	}
	/* Then sleep in waitpid, woken at the stop; SIGALRM (installed without SA_RESTART)
	 * cuts it every few ms to see whether the thread died or the time is up. */
	setitimer(ITIMER_REAL, &tick, NULL);
	for (;;) {
		r = waitpid(tid, &status, __WALL);
		if (r == tid)
			break;
		if (r >= 0 || errno != EINTR) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		if (dead_or_d(tid, &d_state)) {
			err = -ESRCH;
			break;
		}
		/* Gone to sleep uninterruptibly: it may stay there long. */
		if (d_state && now_ns() >= start + D_STATE_WAIT_MS * 1000000ull)
			end = 0;
		if (now_ns() >= end || ptrace_interrupted) {
			err = -ETIMEDOUT;
			break;
		}
	}
	setitimer(ITIMER_REAL, &off, NULL);
	if (err)
		return err;
stopped:
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return 0;
	if (!WIFSTOPPED(status))
		return -EIO;
	/* An interrupt stop, or the group stop of a stopped process: nothing to pass on. */
	if ((status >> 16) == PTRACE_EVENT_STOP)
		return 1;
	/* A signal-delivery stop: a signal raced with us; deliver it when detaching. */
	*sig = WSTOPSIG(status);
	return 1;
}

/* Releases a thread we hold. A thread that is not in its stop (SIGKILLed while held, or
 * interrupted but not stopped yet) cannot be detached: it is remembered and reaped by
 * ptrace__settle, so that no zombie stays under our ptrace. */
static void release(pid_t tid, int sig)
{
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) < 0)
		ptrace__remember_pending(tid);
}

static void take_regs(pid_t tid, struct thread_sample *t, size_t stack_size)
{
	if (ptrace(PTRACE_GETREGS, tid, NULL, &t->regs) == 0) {
		t->flags |= THREAD_HAVE_REGS;
		if ((long)t->regs.orig_rax >= 0)
			t->syscall = (long)t->regs.orig_rax;
		/* Not where it was when its stack was copied (or it was running): copy now.
		 * A running thread's stack beyond the copy would be read after it is
		 * released, when it has moved on (garbage frames): copy more of it while it
		 * is stopped; up to the end of its stack, which is usually much closer. */
		if (!t->stack_len || t->regs.rsp != t->pre_sp || t->regs.rip != t->pre_pc ||
		    (long)t->regs.orig_rax != t->pre_nr)
			copy_stack(tid, t, t->regs.rsp,
				   stack_size > RUNNING_STACK_SIZE ? stack_size
								   : RUNNING_STACK_SIZE);
	} else {
		t->flags |= THREAD_UNRESOLVED;
	}
}

/* The stat of a thread by its id alone (/proc/TID works for any thread id). */
static int tid_stat(pid_t tid, struct task_stat *st)
{
	char path[64], buf[512];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	n = read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return n ? (int)n : -EIO;
	return proc_task__parse_stat(buf, st);
}

int ptrace__seize(pid_t tid)
{
	int err;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) == 0)
		return 0;
	err = -errno;
	/* The kernel refuses to attach to a thread on its way out: that is an exit, not a
	 * permission problem. */
	if (err == -EPERM && dead(tid))
		return -ESRCH;
	return err;
}

static int seize_error(pid_t pid, int err)
{
	if (err == -EPERM)
		return error("cannot attach to %d: operation not permitted (run as root or grant "
			     "CAP_SYS_PTRACE, e.g. sudo setcap cap_sys_ptrace+ep srvscope; or use "
			     "--mode=nostop)",
			     pid),
		       err;
	if (err == -EBUSY)
		return error("cannot attach to %d: it is already traced by another tracer (quit "
			     "gdb/strace first, or use --mode=nostop)",
			     pid),
		       err;
	return error("cannot attach to %d: %s", pid, strerror(-err)), err;
}

/* Reads what /proc says about a thread before we touch it. Returns -ESRCH if gone. */
static int prepare_thread(pid_t pid, pid_t tid, const struct stacks_opts *opts,
			  struct thread_sample *t)
{
	struct task_stat st;
	int err = proc_task__stat(pid, tid, &st);

	if (err)
		return err;
	t->tid = tid;
	memcpy(t->name, st.comm, sizeof(t->name));
	t->state = st.state;
	if (st.state == 'Z' || st.state == 'X')
		return -ESRCH;
	if (st.state == 'T')
		t->flags |= THREAD_STOPPED;
	if (opts->kernel)
		t->ktext = proc_task__kstack(pid, tid);
	if (st.state == 'S' || st.state == 'D')
		precopy_stack(pid, t, opts->stack_size);
	return 0;
}

/* One thread, alone: seize, interrupt, registers + stack, detach. */
static int sample_one(pid_t pid, pid_t tid, const struct stacks_opts *opts, struct snapshot *snap)
{
	struct thread_sample *t = snapshot__add_thread(snap);
	uint64_t t0;
	int err, sig, r;

	err = prepare_thread(pid, tid, opts, t);
	if (err)
		goto out_drop;
	err = ptrace__seize(tid);
	if (err)
		goto out_drop;
	/* A group-stopped thread traps by itself once seized; others need the interrupt. */
	if (!(t->flags & THREAD_STOPPED) && ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		err = -errno;
		release(tid, 0);
		goto out_drop;
	}
	r = wait_stop(tid, t->state != 'D', t->state == 'D' ? D_STATE_WAIT_MS : STOP_WAIT_MS, &sig);
	/* The stop begins about now: wait_stop polls, so it sees the stop within a
	 * microsecond or so (the thread's way to its stop is not stopped time). */
	t0 = now_ns();
	if (r <= 0) {
		/* Exited (and reaped), dead but not reaped, or not stopped in time: the pending
		 * trap is dropped when we detach (now if it stopped meanwhile, else by
		 * ptrace__settle, which reaps the dead). */
		if (r < 0)
			release(tid, 0);
		err = r == 0 ? -ESRCH : r;
		if (r < 0 && r != -ESRCH) {
			t->flags |= THREAD_UNRESOLVED;
			return 0;
		}
		goto out_drop;
	}
	take_regs(tid, t, opts->stack_size);
	release(tid, sig);
	t->stall_ns = now_ns() - t0;
	/* The released thread is runnable until it is back in its syscall; on our CPU it
	 * would wait for us to be preempted (up to a scheduler slice, milliseconds: seen
	 * here as the rare long stalls). Let it go first; with nothing else runnable here
	 * this returns at once. */
	sched_yield();
	return 0;

out_drop:
	snap->nr_threads--;
	free(t->ktext);
	free(t->stack_data);
	return err;
}

static bool seen(const pid_t *done, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (done[mid] == tid)
			return true;
		if (done[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static void add_done(pid_t **done, size_t *n, size_t *cap, pid_t tid)
{
	xgrow((void **)done, cap, *n + 1, sizeof(**done));
	(*done)[(*n)++] = tid;
}

/* Repeats: list the threads, take the ones not yet taken; until a pass finds nothing new
 * (bounded, for processes that create threads faster than we can look). */
#define MAX_PASSES 8

static int capture_one_by_one(pid_t pid, const struct stacks_opts *opts, struct snapshot *snap)
{
	pid_t *tids = NULL, *done = NULL;
	size_t ndone = 0, cap = 0;
	int pass, n, i, err = 0, sampled = 0;

	for (pass = 0; pass < MAX_PASSES && !ptrace_interrupted; pass++) {
		int fresh = 0;

		n = proc_tasks__list(pid, &tids);
		if (n < 0) {
			/* Gone: the caller says so, knowing what it has shown. */
			if (n == -ENOENT || n == -ESRCH)
				err = sampled ? 0 : -ESRCH;
			else if (!sampled)
				err = error("cannot list threads of %d: %s", pid, strerror(-n));
			break;
		}
		for (i = 0; i < n && !ptrace_interrupted; i++) {
			int r;

			if (seen(done, ndone, tids[i]))
				continue;
			fresh++;
			r = sample_one(pid, tids[i], opts, snap);
			if (r == -ESRCH)
				snap->exited++;
			else if (r == -EPERM || r == -EBUSY) {
				if (!sampled) {
					err = seize_error(pid, r);
					break;
				}
				snap->failed++;
			} else if (r)
				snap->failed++;
			else
				sampled++;
		}
		for (i = 0; i < n; i++)
			if (!seen(done, ndone, tids[i]))
				add_done(&done, &ndone, &cap, tids[i]);
		if (ndone) /* none when the process is dying */
			qsort(done, ndone, sizeof(*done), cmp_pid);
		free(tids);
		tids = NULL;
		if (err || !fresh)
			break;
	}
	free(done);
	return err;
}

/* What --consistent keeps about each thread it holds. */
struct held {
	uint64_t t0; /* when its stop was seen */
	int sig;     /* a signal that raced with us, passed on at release */
	bool gone;   /* exited before it stopped */
};

/* --consistent: stop every thread, rescan until no new thread appears (a stopped thread
 * cannot create more), take everything, release everything. */
static int capture_consistent(pid_t pid, const struct stacks_opts *opts, struct snapshot *snap)
{
	pid_t *tids = NULL;
	size_t start = snap->nr_threads, i, j, heldcap = 0;
	struct held *held = NULL;
	uint64_t first = 0, last;
	int pass, n, k, err = 0;
	bool fresh = true;

	for (pass = 0; fresh && pass < 64 && !ptrace_interrupted; pass++) {
		fresh = false;
		n = proc_tasks__list(pid, &tids);
		if (n < 0) {
			if (n != -ENOENT && n != -ESRCH)
				err = error("cannot list threads of %d: %s", pid, strerror(-n));
			break;
		}
		for (k = 0; k < n; k++) {
			struct thread_sample *t;
			bool known = false;
			int r;

			for (i = start; i < snap->nr_threads && !known; i++)
				known = snap->threads[i].tid == tids[k];
			if (known)
				continue;
			t = snapshot__add_thread(snap);
			r = prepare_thread(pid, tids[k], opts, t);
			if (!r)
				r = ptrace__seize(tids[k]);
			if (r) {
				snap->nr_threads--;
				free(t->ktext);
				free(t->stack_data);
				if (r == -ESRCH) {
					snap->exited++;
					continue;
				}
				err = seize_error(pid, r);
				free(tids);
				tids = NULL;
				goto out_release;
			}
			xgrow((void **)&held, &heldcap, snap->nr_threads, sizeof(*held));
			held[snap->nr_threads - 1] = (struct held){0};
			if (!first)
				first = now_ns();
			if (!(t->flags & THREAD_STOPPED))
				ptrace(PTRACE_INTERRUPT, tids[k], NULL, NULL);
			fresh = true;
		}
		free(tids);
		tids = NULL;
	}
	for (i = start; i < snap->nr_threads; i++) {
		struct thread_sample *t = &snap->threads[i];
		int r = wait_stop(t->tid, t->state != 'D',
				  t->state == 'D' ? D_STATE_WAIT_MS : STOP_WAIT_MS, &held[i].sig);

		held[i].t0 = now_ns();
		if (r > 0)
			take_regs(t->tid, t, opts->stack_size);
		else if (r == 0)
			held[i].gone = true;
		else if (r == -ESRCH) {
			held[i].gone = true; /* dead, left for ptrace__settle to reap */
			ptrace__remember_pending(t->tid);
		} else
			t->flags |= THREAD_UNRESOLVED;
	}
out_release:
	last = now_ns();
	for (i = start; i < snap->nr_threads; i++) {
		struct thread_sample *t = &snap->threads[i];

		if (held[i].gone)
			continue;
		release(t->tid, held[i].sig);
		if (held[i].t0)
			t->stall_ns = now_ns() - held[i].t0;
	}
	if (first)
		snap->freeze_ns = last - first;
	/* Drop the threads that exited before they stopped. */
	for (i = start, j = start; i < snap->nr_threads; i++) {
		if (held[i].gone) {
			snap->exited++;
			free(snap->threads[i].ktext);
			free(snap->threads[i].stack_data);
			continue;
		}
		snap->threads[j++] = snap->threads[i];
	}
	snap->nr_threads = j;
	free(held);
	return err;
}

/* Threads we could not detach: not stopped in time (uninterruptible sleep), or dead
 * while seized (zombies until we reap them: a thread SIGKILLed in its stop). */
static pid_t *pending;
static size_t nr_pending, pending_cap;

void ptrace__remember_pending(pid_t tid)
{
	xgrow((void **)&pending, &pending_cap, nr_pending + 1, sizeof(*pending));
	pending[nr_pending++] = tid;
}

/* One pass over the pending threads: detach the stopped ones, reap the dead ones, and
 * interrupt the others (one seized without an interrupt would never stop). Returns how
 * many are left that are not in uninterruptible sleep. */
static size_t reap_pass(void)
{
	size_t i, keep = 0, busy = 0;

	for (i = 0; i < nr_pending; i++) {
		pid_t tid = pending[i], r;
		struct task_stat st;
		int status;

		r = waitpid(tid, &status, __WALL | WNOHANG);
		if (r == tid && WIFSTOPPED(status)) {
			int sig = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);

			if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) == 0)
				continue;
		} else if (r != 0) {
			continue; /* reaped, or no longer ours */
		}
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		pending[keep++] = tid;
		if (tid_stat(tid, &st) || st.state != 'D')
			busy++;
	}
	nr_pending = keep;
	return busy;
}

void ptrace__reap_pending(void)
{
	reap_pass();
}

/* After a capture: no thread of ours may stay stopped or a zombie under our ptrace. A
 * process SIGKILLed while we held its threads leaves them dead but seized, and its leader
 * is reported only once all of them are reaped: a few passes settle that. Threads in
 * uninterruptible sleep are left for later passes (the kernel detaches them if we exit). */
static void settle(void)
{
	uint64_t end = now_ns() + SETTLE_MS * 1000000ull;

	while (nr_pending && reap_pass() && now_ns() < end)
		usleep(500);
}

int ptrace__capture(pid_t pid, const struct stacks_opts *opts, struct snapshot *snap)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	uint64_t t0 = now_ns();
	int err;

	/* SIGALRM (no SA_RESTART) cuts a waitpid on a thread in uninterruptible sleep. */
	sigaction(SIGALRM, &sa, &old);
	ptrace__reap_pending();
	snap->mode = "ptrace";
	snap->start_ns = t0;
	if (opts->consistent)
		err = capture_consistent(pid, opts, snap);
	else
		err = capture_one_by_one(pid, opts, snap);
	snap->capture_ns = now_ns() - t0;
	settle();
	sigaction(SIGALRM, &old, NULL);
	return err;
}
