/* 'srvscope record': loads record.bpf.c, marks the target processes, launches the command,
 * drains the ring buffer into the trace file (flushed every second, so a killed recording
 * stays readable), unwinds user stack dumps, has procs.c capture maps and fd descriptions
 * while the processes live, and reports lost events at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "proc/maps.h"
#include "proc/task.h"
#include "record/cost.h"
#include "record/ipi.h"
#include "record/kbtf.h"
#include "record/ktext.h"
#include "record/procinfo.h"
#include "record/procs.h"
#include "record/record.h"
#include "record/rings.h"
#include "record/softirq.h"
#include "record/startwatch.h"
#include "record/syssample.h"
#include "record/ustack.h"
#include "record.skel.h"
#include "record_compat.skel.h"
#include "snapshot/snapshot.h"
#include "stacks/stacks.h"
#include "symbol/symbolizer.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "unwind/unwind.h"
#include "util/safefile.h"
#include "util/util.h"

#define POLL_MS	 20
#define FLUSH_NS 1000000000ull /* a killed recording loses at most this much */
/* Or this many buffered events (128 KB): written while they are still in the cache, the
 * copy into the page cache costs half what it did with 4 MB batches (measured). */
#define FLUSH_EVENTS 2048
/* Records handled between two readings of the clock. */
#define CLOCK_EVERY 256
#define PROGRESS_NS 500000000ull

static volatile sig_atomic_t stop_signal;

int record__signalled(void)
{
	return stop_signal;
}

static void on_stop(int sig)
{
	stop_signal = sig;
}

void record__stop(void)
{
	stop_signal = SIGTERM;
}

struct recorder {
	bool no_wakers; /* record_opts.no_wakers taken: wakers_off() */
	const struct record_opts *o;
	struct record_cost cost;
	struct record_bpf *skel;
	struct startwatch watch; /* the targets, while the programs load */
	struct rec_rings rings;
	struct trace_writer *w;
	int nr_cpus;
	uint64_t start_ns;
	int err; /* first write error */
	uint64_t pending;
	uint64_t now;		/* the clock as records are handled: 0 to read it again */
	unsigned int clock_age; /* records handled since */

	struct u64map stacks_seen;
	struct ustacks ustacks; /* --call-graph=dwarf */
	int check_fd;		/* map ustack_checks, -1 without dumps */
	struct rec_procs procs;

	/* The target processes met: the trees at the start, then the children forked. */
	struct u64map target_set;
	pid_t *targets;
	size_t nr_targets, cap_targets;
	int *target_fds; /* a pidfd per target looked at (-1: none could be had) */
	size_t nr_target_fds, cap_target_fds;
	/* -d: when the recording ends (CLOCK_MONOTONIC ns), checked as records are drained
	 * too, since under load draining alone can outlast the duration. */
	uint64_t deadline;
	bool past_deadline;
	uint64_t last_ts; /* the latest event's time */

	pid_t child;
	int child_status;
	bool child_done;
	int exec_fd; /* the command's exec: EOF when it ran, its errno when it failed */
	int *perf_fds;
	struct bpf_link **perf_links;
	struct ksyms *ksyms; /* loaded when a thread is found in restart_syscall at the start */
	struct syssample syssample; /* --syscalls with a budget: windows of full recording */
	bool softirq_entry_off;	    /* detached: vectors from the wakers' stacks */
	struct record_ipi ipi;	    /* the system vectors tracked, IPI sends recorded */
	struct ktext_async ktext;   /* /proc/kallsyms, read by a thread at the start */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Sets the process's bit in the BPF program's target set (its .bss, mapped here) and
 * keeps it in the list of targets. */
static void track_target(struct recorder *r, pid_t pid)
{
	bool created;

	__atomic_fetch_or(
		&r->skel->bss->target_bits[(pid / 64) % ARRAY_SIZE(r->skel->bss->target_bits)],
		1ull << (pid % 64), __ATOMIC_SEQ_CST);
	u64map__slot(&r->target_set, (uint64_t)pid, &created);
	if (!created)
		return;
	xgrow((void **)&r->targets, &r->cap_targets, r->nr_targets + 1, sizeof(*r->targets));
	r->targets[r->nr_targets++] = pid;
}

/* ---- the ring buffer ---- */

/* The clock for what records trigger (maps and fd checks, good to a millisecond): read once
 * per CLOCK_EVERY records, not per record, where it cost a quarter of the draining. */
static uint64_t record_now(struct recorder *r)
{
	if (!r->now || ++r->clock_age >= CLOCK_EVERY) {
		r->now = now_ns();
		r->clock_age = 0;
	}
	return r->now;
}

/* flags: TRACE_STACK_*. */
static void write_stack(struct recorder *r, uint64_t id, uint32_t flags, const uint64_t *ips,
			uint32_t nr)
{
	bool created;

	u64map__slot(&r->stacks_seen, id, &created);
	if (created)
		trace_writer__add_stack(r->w, id, flags, ips, nr);
}

/* Unwinds dump d of process p and, when that gives frames, writes them as a stack which
 * the events naming the dump get instead. A frame in no known mapping means the process
 * mapped something since its maps were read (an exec, a dlopen): they are read again (at
 * most every 10 ms, unless retry) and the dump unwound again. Returns true when it is worth
 * another try later: a frame was unknown and the maps could not be read now. */
static bool unwind_dump(struct recorder *r, struct rec_proc *p, const struct rec_ustack_dump *d,
			size_t size, uint64_t now, bool retry)
{
	uint64_t ips[REC_MAX_FRAMES], id;
	struct unwinder *u = rec_procs__unwinder(p);
	struct rec_ustack_check check;
	unsigned int nr;
	bool unknown, cut, stale = false;

	if (!u)
		return false;
	nr = ustacks__unwind(&r->ustacks, u, d, size, ips, REC_MAX_FRAMES, &unknown, &cut);
	if (unknown) {
		struct proc_maps *before = p->maps;

		if (retry)
			p->forced_ns = 0; /* once per process and drain: retry_dumps */
		rec_procs__check_maps(&r->procs, p, now, true);
		if (p->maps && p->maps != before)
			nr = ustacks__unwind(&r->ustacks, u, d, size, ips, REC_MAX_FRAMES, &unknown,
					     &cut);
		else
			stale = !p->dead && p->forced_ns != now;
	}
	if (!nr)
		return stale;
	id = ustacks__stack_id(ips, nr, cut);
	ustacks__map(&r->ustacks, d->id, id, now);
	write_stack(r, id, TRACE_STACK_USER | (cut ? TRACE_STACK_TRUNCATED : 0), ips, nr);
	/* Now the BPF programs may reuse the dump's id where the thread blocks again, as
	 * long as what this unwind read is unchanged. */
	if (r->check_fd >= 0 && ustacks__check(&r->ustacks, d, &check))
		bpf_map_update_elem(r->check_fd, &d->id, &check, BPF_ANY);
	return stale;
}

/* A user stack dump: unwound now, while the process and its maps are there. When its
 * maps are stale and could not be read again yet (threads of a program that has just
 * exec'ed, blocking within 10 ms of the read that saw the old image: t47 under load lost
 * every thread's stack so), a copy is unwound again once every ring is drained. */
static void on_dump(struct recorder *r, const struct rec_ustack_dump *d, size_t size)
{
	uint64_t now = record_now(r);
	struct rec_proc *p = rec_procs__seen(&r->procs, d->pid, now);

	if (unwind_dump(r, p, d, size, now, false))
		ustacks__pend(&r->ustacks, d, size);
}

/* rec_rings' drained hook: the dumps kept by on_dump unwound again, the maps of each of
 * their processes read once (a few per drain at most: only a dump whose unwind met an
 * unknown frame within 10 ms of a read is kept), before the events naming them are
 * handed on. */
static void retry_dumps(void *ctx)
{
	struct recorder *r = ctx;
	struct ustack_pending *q;
	size_t nr, i, j;
	uint64_t now;

	if (!r->ustacks.nr_pending)
		return;
	q = ustacks__take_pending(&r->ustacks, &nr);
	now = now_ns();
	for (i = 0; i < nr; i++) {
		bool first = true;

		for (j = 0; j < i; j++)
			first = first && q[j].d->pid != q[i].d->pid;
		unwind_dump(r, rec_procs__seen(&r->procs, q[i].d->pid, now), q[i].d, q[i].size, now,
			    first);
		free(q[i].d);
	}
	free(q);
}

/* The frames of a frame-pointer walk are checked too: where a function without frame
 * pointers left something else in rbp, the walk goes on through garbage. The stack ends,
 * marked truncated, at the first address outside the process's executable mappings (read
 * again once, as in on_dump, in case it mapped something since). */
static bool in_exec_map(const struct proc_maps *maps, uint64_t ip)
{
	const struct map_entry *m = maps ? proc_maps__find(maps, ip) : NULL;

	return m && (m->prot & PROT_EXEC);
}

static void on_fp_stack(struct recorder *r, const struct rec_stack *s)
{
	uint64_t now = record_now(r);
	struct rec_proc *p = rec_procs__seen(&r->procs, s->pid, now);
	const uint64_t *ips = (const uint64_t *)s->ips;
	uint32_t nr = 0;

	while (nr < s->nr && in_exec_map(p->maps, ips[nr]))
		nr++;
	if (nr < s->nr) {
		struct proc_maps *before = p->maps;

		rec_procs__check_maps(&r->procs, p, now, true);
		if (p->maps != before)
			while (nr < s->nr && in_exec_map(p->maps, ips[nr]))
				nr++;
	}
	write_stack(r, s->id, TRACE_STACK_USER | (nr < s->nr ? TRACE_STACK_TRUNCATED : 0), ips, nr);
}

/* Where an event keeps the id of a user stack; NULL for events without one. */
static __u64 *ustack_of(struct rec *e)
{
	switch (e->h.type) {
	case REC_SWITCH:
		return &e->sw.ustack;
	case REC_WAKING:
		return &e->wk.ustack;
	case REC_SAMPLE:
		return &e->sample.ustack;
	}
	return NULL;
}

/* The event with its user stack id turned from a dump's into the id of the dump's frames.
 * Most events carry none: those are written as they came. */
static const struct rec *rewrite_ustack(struct recorder *r, const struct rec *e, struct rec *copy)
{
	const __u64 *u = ustack_of((struct rec *)e);

	if (!u || !*u)
		return e;
	*copy = *e;
	*ustack_of(copy) = ustacks__lookup(&r->ustacks, *u);
	return copy;
}

/* --clock-skew: the time another machine's clock would show (tests of 'critical'). */
static uint64_t skewed(const struct recorder *r, uint64_t ts)
{
	const struct record_opts *o = r->o;

	if (!o->skew_ns && !o->skew_ppm)
		return ts;
	return ts + o->skew_ns + (int64_t)((double)(int64_t)(ts - r->start_ns) * o->skew_ppm / 1e6);
}

static const struct rec *skew_event(const struct recorder *r, const struct rec *e, struct rec *copy)
{
	if (!r->o->skew_ns && !r->o->skew_ppm)
		return e;
	if (e != copy)
		*copy = *e;
	copy->h.ts = skewed(r, e->h.ts);
	if (e->h.type == REC_SYSCALL || e->h.type == REC_SYSCALL_FD)
		copy->sc.enter_ts = skewed(r, e->sc.enter_ts);
	if (e->h.type == REC_WAKING && (e->h.aux & 0xff) == WAKE_IPI)
		copy->wk.u.since = skewed(r, e->wk.u.since);
	return copy;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct rec *e = data;
	struct rec copy;
	uint64_t now;

	if (size >= REC_STACK_HDR && ((const struct rec_stack *)data)->type == REC_STACK) {
		const struct rec_stack *s = data;
		uint32_t nr = s->nr;

		if (nr > REC_MAX_FRAMES || REC_STACK_HDR + nr * 8ull > size)
			return 0;
		if (s->user)
			on_fp_stack(r, s);
		else
			write_stack(r, s->id, 0, (const uint64_t *)s->ips, nr);
		return 0;
	}
	if (size >= REC_STACK_HDR &&
	    ((const struct rec_ustack_dump *)data)->type == REC_USTACK_DUMP) {
		on_dump(r, data, size);
		return 0;
	}
	if (size < sizeof(*e))
		return 0;
	if (r->o->ustack_dump_bytes)
		e = rewrite_ustack(r, e, &copy);
	trace_writer__add_event(r->w, skew_event(r, e, &copy));
	r->pending++;
	if (e->h.ts > r->last_ts)
		r->last_ts = e->h.ts;

	switch (e->h.type) {
	case REC_SWITCH:
		if (!(e->sw.flags & SWITCH_PREV_TARGET))
			break;
		now = record_now(r);
		rec_procs__seen(&r->procs, e->h.pid, now);
		if (e->h.aux && e->sw.fd >= 0 &&
		    (syscall__has_fd(e->sw.syscall) || (e->sw.flags & SWITCH_POLLED_FD)))
			rec_procs__describe_fd(&r->procs, e->h.ts, e->h.pid, e->sw.fd, now);
		break;
	case REC_EXEC: {
		struct rec_proc *p;

		now = now_ns();
		r->now = now;
		p = rec_procs__seen(&r->procs, e->h.pid, now);
		p->born_ns = now;
		p->dead = false;
		p->next_check_ns = 0;
		rec_procs__check_maps(&r->procs, p, now, false);
		break;
	}
	case REC_FORK:
		/* A new process (not a thread): the kernel side made it a target already. */
		if (!r->o->all && e->h.pid && e->h.pid != e->task.parent_pid)
			track_target(r, e->h.pid);
		/* fall through */
	case REC_WAKING:
	case REC_SAMPLE:
		if (e->h.pid)
			rec_procs__seen(&r->procs, e->h.pid, record_now(r));
		break;
	}
	if (r->pending >= FLUSH_EVENTS) {
		int err = trace_writer__flush(r->w);

		if (err && !r->err)
			r->err = err;
		r->pending = 0;
	}
	/* Stop draining: the loop ends the recording. The record is written: it counts. */
	if (r->deadline && record_now(r) >= r->deadline) {
		r->past_deadline = true;
		return -ECANCELED;
	}
	return 0;
}

/* ---- the start of a recording ---- */

/* The softirq actions' addresses, from the text as the reading thread has it (ktext.h). */
static void softirq_scan(void *skel, const char *text, size_t len)
{
	record_softirq__vectors(skel, text, len);
}

/* From this long into the recording the kallsyms text is awaited (ktext__hurry): a
 * reader thread at the idle priority (nothing needs the text before the end) may never
 * run on CPUs the server keeps busy, and a recording killed (SIGKILL) before the section
 * is written shows kernel frames as addresses. */
#define KALLSYMS_HURRY_NS (500 * 1000 * 1000ull)

/* The kallsyms section, once the reader thread has the text (wait: until it has). The
 * read runs while the loop drains: the programs take a user stack copy at every wait
 * until the first one is unwound, and a fifth of a second undrained at the start filled
 * the rings with them (memcached: 3400 copies, 2000 waits left without a user stack). */
static void write_kallsyms(struct recorder *r, bool wait)
{
	size_t len;
	char *text;
	int err;

	if (r->ktext.taken)
		return;
	text = ktext__take(&r->ktext, wait, &len);
	if (!text) {
		if (r->ktext.taken)
			warning("cannot read /proc/kallsyms (%s): kernel frames will stay "
				"addresses",
				strerror(errno));
		return;
	}
	err = trace_writer__section_give(r->w, SEC_KALLSYMS, r->ktext.packed ? SECF_ZSTD : 0, text,
					 len);
	if (err && !r->err)
		r->err = err;
}

static uint32_t own_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}

/* Which host this is, for 'critical' over several traces: the boot (a machine) and the
 * network namespace (a host in the tests, and in containers). */
static size_t host_identity(char *buf, size_t size, bool net)
{
	char boot[64] = "";
	ssize_t len = read_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));

	while (len > 0 && (boot[len - 1] == '\n' || boot[len - 1] == 0))
		boot[--len] = 0;
	return snprintf(buf, size, "host_id=%s:%u\nnetns=%u\nnet=%d\n", boot, own_netns(),
			own_netns(), net);
}

static void prog_off(struct recorder *r, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(r->skel->obj, name);

	if (p)
		bpf_program__set_autoload(p, false);
}

static void progs_off(struct recorder *r, const char *list)
{
	char buf[512], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		prog_off(r, tok);
}

/* record_opts.no_wakers: the programs that run at every waking and wake-up of the machine,
 * and at every interrupt's entry and exit to know the wakers' contexts, left unloaded (a
 * loaded server's busiest tracepoints after the switch: two programs a wake-up). */
static void wakers_off(struct recorder *r)
{
	static const char *const progs[] = {
		"sched_waking", "sched_wakeup",	 "softirq_entry", "softirq_exit",
		"irq_entry",	"irq_exit",	 "hrtimer_entry", "hrtimer_entry2",
		"hrtimer_exit", "hrtimer_exit2", "timer_entry",	  "timer_exit",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(progs); i++)
		prog_off(r, progs[i]);
	record_ipi__contexts_off(r->skel, ~0u, &r->ipi);
}

static int write_info(struct recorder *r)
{
	const struct record_opts *o = r->o;
	char buf[4096];
	size_t n = 0, i;

	n += snprintf(buf + n, sizeof(buf) - n, "srvscope=record\n");
	if (o->cmdline)
		n += snprintf(buf + n, sizeof(buf) - n, "cmdline=%s\n", o->cmdline);
	if (o->all)
		n += snprintf(buf + n, sizeof(buf) - n, "targets=all\n");
	for (i = 0; i < o->nr_pids && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "target_pid=%d\n", o->pids[i]);
	if (r->child && n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, "command_pid=%d\n", r->child);
	if (n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n,
			      "buffer_size=%" PRIu64 "\nstack_refresh_ms=%g\nread_timer_ms=%u\n"
			      "call_graph=%s\nustack_dump_bytes=%u\n",
			      o->buffer_size, o->stack_refresh_ms, o->read_timer_ms,
			      o->ustack_dump_bytes ? "dwarf" : "fp", o->ustack_dump_bytes);
	if (n < sizeof(buf))
		n += host_identity(buf + n, sizeof(buf) - n, o->net);
	if (n < sizeof(buf))
		n += record_ipi__info(&r->ipi, buf + n, sizeof(buf) - n);
	if (r->no_wakers && n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, "wakers=0\n");
	/* The on-CPU period, for reports that give samples a duration (pprof's cpu/ns). */
	if (o->on_cpu_hz && n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, "on_cpu_hz=%u\n", o->on_cpu_hz);
	if (n > sizeof(buf))
		n = sizeof(buf);
	return trace_writer__section(r->w, SEC_INFO, buf, n);
}

static bool process_gone(pid_t pid)
{
	struct task_stat st;

	/* A zombie leader whose other threads run on (it called pthread_exit) is not gone. */
	return proc_task__stat(pid, pid, &st) ||
	       ((st.state == 'Z' || st.state == 'X') && proc__live_tid(pid) < 0);
}

/* Where the threads of pid are blocked as the recording starts, read by the BPF task
 * iterator (the target never stops); NULL when the kernel does not allow it. */
static struct snapshot *start_stacks(pid_t pid)
{
	/* Addresses only: the trace is symbolized when it is read. */
	struct stacks_opts so = {.mode = STACKS_MODE_NOSTOP, .kernel = true, .no_symbols = true};
	struct stacks_session *s;
	struct snapshot *snap;
	char why[256];

	if (!nostop__available(why, sizeof(why)))
		return NULL;
	/* The session's error would be out of context: held, and said below with what it
	 * means for the recording, or not at all when the process simply exited (its exit
	 * is in the trace). */
	util_hold_errors(why, sizeof(why));
	s = stacks_session__new(pid, &so);
	snap = s ? stacks_session__sample(s) : NULL;
	stacks_session__delete(s);
	util_hold_errors(NULL, 0);
	if (!snap && !process_gone(pid))
		warning("no stacks for the threads of %d already blocked as the recording "
			"starts (%s): their first wait has none; the recording goes on",
			pid, why);
	return snap;
}

/* The stacks of tid in snap, written out; their ids go into the state record. */
static void state_stacks(struct recorder *r, const struct snapshot *snap, pid_t tid,
			 struct rec_state *st)
{
	const struct thread_sample *t = NULL;
	unsigned int nr;
	size_t i;

	for (i = 0; snap && i < snap->nr_threads && !t; i++)
		if (snap->threads[i].tid == tid)
			t = &snap->threads[i];
	if (!t || (t->flags & (THREAD_RUNNING | THREAD_UNRESOLVED)))
		return;
	nr = t->nr_kips < REC_MAX_FRAMES ? t->nr_kips : REC_MAX_FRAMES;
	if (nr) {
		st->kstack = ustacks__hash(t->kips, nr, false);
		write_stack(r, st->kstack, false, t->kips, nr);
	}
	nr = t->nr_ips < REC_MAX_FRAMES ? t->nr_ips : REC_MAX_FRAMES;
	if (nr) {
		bool cut = (t->flags & THREAD_TRUNCATED) || nr < t->nr_ips;

		st->ustack = ustacks__stack_id(t->ips, nr, cut);
		write_stack(r, st->ustack, TRACE_STACK_USER | (cut ? TRACE_STACK_TRUNCATED : 0),
			    t->ips, nr);
	}
}

/* The syscall a thread in restart_syscall carries on, told by the function that resumes
 * its wait (as snap saw it); -1 when not known. */
static int restarted_syscall(struct recorder *r, const struct snapshot *snap, pid_t tid)
{
	const struct thread_sample *t = NULL;
	size_t j;

	for (j = 0; snap && j < snap->nr_threads && !t; j++)
		if (snap->threads[j].tid == tid)
			t = &snap->threads[j];
	if (!t || !t->restart_fn)
		return -1;
	if (!r->ksyms)
		r->ksyms = ksyms__load();
	return r->ksyms ? syscall__restarted_by(ksyms__resolve(r->ksyms, t->restart_fn, NULL, NULL))
			: -1;
}

/* Names and states of the threads of pid as the recording starts: a thread already
 * blocked then has its episode begin at the start of the trace, where snap (if any) says
 * it was blocked. */
static void snapshot_process(struct recorder *r, pid_t pid, uint64_t ts,
			     const struct snapshot *snap)
{
	pid_t *tids = NULL;
	int n = proc_tasks__list(pid, &tids), i;

	for (i = 0; i < n; i++) {
		struct task_stat st;
		struct rec e;
		unsigned long args[3];
		long nr = -1;

		if (proc_task__stat(pid, tids[i], &st))
			continue;
		trace_writer__add_name(r->w, tids[i], pid, st.comm);
		if (st.flags & 0x00200000) /* PF_KTHREAD */
			continue;
		memset(&e, 0, sizeof(e));
		e.h.ts = ts;
		e.h.type = REC_STATE;
		e.h.tid = tids[i];
		e.h.pid = pid;
		e.h.aux = (unsigned char)st.state;
		if (st.state != 'R' && !procinfo__syscall(pid, tids[i], &nr, args)) {
			bool more;
			int fd = procinfo__polled_fd(pid, nr, args, &more);

			e.state.syscall = nr;
			e.state.fd =
				syscall__has_fd(nr) && args[0] < 0x7fffffff ? (int)args[0] : -1;
			if (fd >= 0) {
				e.state.fd = fd;
				e.h.aux |= (SWITCH_POLLED_FD | (more ? SWITCH_MORE_FDS : 0)) << 8;
			}
			if (e.state.fd >= 0)
				rec_procs__describe_fd(&r->procs, ts, pid, e.state.fd, now_ns());
			state_stacks(r, snap, tids[i], &e.state);
			/* A wait interrupted (by a stop, a ptrace snapshot) before the recording
			 * goes on as restart_syscall: report the wait it resumes. */
			if (nr == __NR_restart_syscall) {
				int was = restarted_syscall(r, snap, tids[i]);

				if (was >= 0)
					e.state.syscall = was;
			}
		} else {
			e.state.syscall = -1;
			e.state.fd = -1;
		}
		memcpy(e.state.comm, st.comm, sizeof(e.state.comm));
		e.h.ts = skewed(r, e.h.ts);
		trace_writer__add_event(r->w, &e);
	}
	free(tids);
}

/* The targets' states at ts: the instant right after the attach, taken before the trees
 * are listed (tens of milliseconds among hundreds of processes). A thread with an event
 * before ts has its state from that event, and the one written here is passed over: a
 * sleeper that woke in between lost its first episode, begun before the recording. */
static void snapshot_targets(struct recorder *r, uint64_t ts)
{
	size_t i, n = r->nr_targets; /* not the children forked meanwhile: they start fresh */

	if (r->o->all) {
		DIR *d = opendir("/proc");
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
			    atoi(de->d_name) != getpid())
				snapshot_process(r, atoi(de->d_name), ts, NULL);
		if (d)
			closedir(d);
		return;
	}
	for (i = 0; i < n && !(r->deadline && now_ns() >= r->deadline); i++) {
		pid_t pid = r->targets[i];
		struct snapshot *snap;

		if (pid == r->child) /* not the command yet: it starts from its exec */
			continue;
		snap = r->o->no_stacks ? NULL : start_stacks(pid);
		snapshot_process(r, pid, ts, snap);
		snapshot__delete(snap);
		rec_procs__seen(&r->procs, pid, ts);
	}
}

/* -p: the processes named and, unless --no-children, every descendant they already have.
 * The kernel side follows forks from the moment a parent's bit is set, so the listing is
 * repeated until it finds nothing new: a child forked by a process before its bit was set
 * is found by the next listing. */
static void follow_trees(struct recorder *r)
{
	size_t before, i;
	pid_t *tree = NULL;
	int round, n;

	if (r->o->no_children || !r->o->nr_pids)
		return; /* -a has every process; a command has no child yet */
	for (round = 0; round < 8; round++) {
		before = r->nr_targets;
		n = proc__tree(r->targets, r->nr_targets, &tree);
		for (i = 0; n > 0 && i < (size_t)n; i++)
			track_target(r, tree[i]);
		free(tree);
		tree = NULL;
		if (n < 0 || r->nr_targets == before)
			break;
	}
}

static void fill_header(struct trace_file_header *h, const struct recorder *r)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, TRACE_MAGIC, 8);
	h->version = TRACE_VERSION;
	h->header_size = sizeof(*h);
	h->record_size = REC_SIZE;
	h->nr_cpus = r->nr_cpus;
	h->clock_id = CLOCK_MONOTONIC;
	h->flags = (r->o->all ? TRACE_F_SYSTEM_WIDE : 0) | (r->o->no_stacks ? 0 : TRACE_F_STACKS) |
		   (r->o->syscalls ? TRACE_F_SYSCALLS : 0) | (r->o->on_cpu_hz ? TRACE_F_ON_CPU : 0);
	h->start_ns = skewed(r, r->start_ns);
	h->start_realtime_ns = now_realtime_ns();
	if (!uname(&u)) {
		snprintf(h->host, sizeof(h->host), "%.63s", u.nodename);
		snprintf(h->kernel, sizeof(h->kernel), "%.63s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%.15s", u.machine);
	}
	h->recorder_pid = getpid();
}

/* Waits (a second at most) until the forked child sleeps in its read of the go pipe: the
 * trace then starts with it asleep there, and that wait (srvscope's, not the command's)
 * ends before the command's first event. On a loaded machine the child could otherwise
 * reach its read after the attach, and its 50 ms wait for the go showed in 'blocking' as
 * a read of the command's, woken by srvscope. */
static void wait_asleep(pid_t pid)
{
	struct task_stat st;
	int i;

	for (i = 0; i < 10000; i++) {
		if (proc_task__stat(pid, pid, &st) || st.state == 'S' || st.state == 'Z')
			return;
		usleep(100);
	}
}

/* The command starts stopped on a pipe: it becomes a target before its first instruction
 * and runs once the programs are attached. A second pipe, closed by a successful exec,
 * brings back the errno of a failed one. */
static int launch(struct recorder *r, int *go_fd)
{
	int p[2], x[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return error("cannot create a pipe: %s", strerror(errno));
	if (pipe2(x, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return error("cannot create a pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(x[0]);
		close(x[1]);
		return error("cannot fork: %s", strerror(errno));
	}
	if (!pid) {
		char c;
		int e;

		close(p[1]);
		close(x[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o->argv[0], r->o->argv);
		e = errno;
		if (write(x[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(p[0]);
	close(x[1]);
	r->child = pid;
	r->exec_fd = x[0];
	*go_fd = p[1];
	wait_asleep(pid);
	return 0;
}

/* Lets the command run; returns 0 once it has exec'ed, or -ENOEXEC after saying why
 * it could not. */
static int start_command(struct recorder *r, int go_fd)
{
	ssize_t n;
	int e = 0;

	if (write(go_fd, "g", 1) != 1)
		e = errno;
	else
		while ((n = read(r->exec_fd, &e, sizeof(e))) < 0 && errno == EINTR)
			;
	close(r->exec_fd);
	r->exec_fd = -1;
	if (!e)
		return 0;
	error("cannot run '%s': %s%s", r->o->argv[0], strerror(e),
	      e == ENOENT ? " (check its name, its path or $PATH)" : "");
	return -ENOEXEC;
}

static int open_samplers(struct recorder *r)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = r->o->on_cpu_hz,
	};
	int cpu;

	r->perf_fds = xcalloc(r->nr_cpus, sizeof(int));
	r->perf_links = xcalloc(r->nr_cpus, sizeof(*r->perf_links));
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		r->perf_fds[cpu] = fd;
		if (fd < 0) {
			if (errno == ENODEV) /* CPU offline */
				continue;
			return error("cannot open the cpu-clock event on CPU %d: %s", cpu,
				     strerror(errno));
		}
		r->perf_links[cpu] =
			bpf_program__attach_perf_event(r->skel->progs.on_cpu_sample, fd);
		if (!r->perf_links[cpu])
			return error("cannot attach the on-CPU sampler on CPU %d: %s", cpu,
				     strerror(errno));
	}
	return 0;
}

static void close_samplers(struct recorder *r)
{
	int cpu;

	for (cpu = 0; r->perf_fds && cpu < r->nr_cpus; cpu++) {
		bpf_link__destroy(r->perf_links[cpu]);
		if (r->perf_fds[cpu] >= 0)
			close(r->perf_fds[cpu]);
	}
	free(r->perf_fds);
	free(r->perf_links);
	r->perf_fds = NULL;
	r->perf_links = NULL;
}

/* ---- while recording ---- */

/* The runs the kernel skipped of the recorder's programs (each program's recursion_misses:
 * it fired while it ran on the same CPU, an interrupt's event in the middle of a task's),
 * but for ipi_send_cpu's and ipi_send_cpumask's, which their twins write (record.bpf.c). */
static uint64_t skipped_runs(struct recorder *r)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, r->skel->obj)
	{
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || prog == r->skel->progs.ipi_send_cpu ||
		    prog == r->skel->progs.ipi_send_cpumask)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

static void read_lost(struct recorder *r, uint64_t *lost)
{
	uint64_t *vals = xcalloc(r->nr_cpus, sizeof(uint64_t));
	uint32_t reason;
	int cpu;

	memset(lost, 0, sizeof(uint64_t) * r->nr_cpus * LOST_REASONS);
	for (reason = 0; reason < LOST_REASONS; reason++) {
		if (reason == LOST_SKIPPED ||
		    bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.lost), &reason, vals))
			continue;
		for (cpu = 0; cpu < r->nr_cpus; cpu++)
			lost[cpu * LOST_REASONS + reason] = vals[cpu];
	}
	lost[LOST_SKIPPED] = skipped_runs(r);
	free(vals);
}

static void write_lost(struct recorder *r, uint64_t *lost)
{
	size_t len = 8 + sizeof(uint64_t) * r->nr_cpus * LOST_REASONS;
	char *buf = xmalloc(len);
	uint32_t h[2] = {r->nr_cpus, LOST_REASONS};
	int err;

	read_lost(r, lost);
	memcpy(buf, h, 8);
	memcpy(buf + 8, lost, len - 8);
	err = trace_writer__section(r->w, SEC_LOST, buf, len);
	if (err && !r->err)
		r->err = err;
	free(buf);
}

/* Syscall sampling: how many syscalls the windows held, for the model to scale by. */
static void write_syscall_sample(struct recorder *r)
{
	struct trace_syscall_sample ss;
	int err;

	if (syssample__read(&r->syssample, &ss))
		return;
	err = trace_writer__section(r->w, SEC_SYSCALL_SAMPLE, &ss, sizeof(ss));
	if (err && !r->err)
		r->err = err;
}

static uint64_t lost_total(const struct recorder *r, const uint64_t *lost)
{
	uint64_t n = 0;
	int cpu;

	for (cpu = 0; cpu < r->nr_cpus; cpu++)
		n += lost[cpu * LOST_REASONS + LOST_RINGBUF] +
		     lost[cpu * LOST_REASONS + LOST_STACK_RINGBUF] +
		     lost[cpu * LOST_REASONS + LOST_SKIPPED];
	return n;
}

static void progress(struct recorder *r, uint64_t now, uint64_t *last_ns, uint64_t *last_events,
		     const uint64_t *lost)
{
	uint64_t ev = trace_writer__events(r->w);
	double dt = (now - *last_ns) / 1e9;

	fprintf(stderr, "\rsrvscope: recording %.1f s, %.0f events/s, %.1f MB, %" PRIu64 " lost   ",
		(now - r->start_ns) / 1e9, dt > 0 ? (ev - *last_events) / dt : 0.0,
		trace_writer__bytes(r->w) / 1e6, lost_total(r, lost));
	*last_ns = now;
	*last_events = ev;
}

#define TARGET_GONE (-2) /* target_fds: seen gone, its pidfd closed */

/* Whether target i has exited: its pidfd readable (opened at the first look; as for
 * process_gone, a zombie leader whose other threads run on has not), else /proc, where a
 * look costs an open, a read and a close every 50 ms. A target seen gone stays so, its
 * pidfd closed: a server that forks per connection makes thousands of targets, and only
 * those up to the first alive are looked at. */
static bool target_gone(struct recorder *r, size_t i)
{
	struct pollfd p = {.events = POLLIN};
	bool gone;

	while (r->nr_target_fds <= i) {
		xgrow((void **)&r->target_fds, &r->cap_target_fds, r->nr_target_fds + 1,
		      sizeof(*r->target_fds));
		r->target_fds[r->nr_target_fds] = pidfd_of(r->targets[r->nr_target_fds]);
		r->nr_target_fds++;
	}
	p.fd = r->target_fds[i];
	if (p.fd == TARGET_GONE)
		return true;
	gone = p.fd < 0 ? process_gone(r->targets[i]) : poll(&p, 1, 0) > 0;
	if (gone) {
		if (p.fd >= 0)
			close(p.fd);
		r->target_fds[i] = TARGET_GONE;
	}
	return gone;
}

static bool targets_alive(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nr_targets; i++)
		if (!target_gone(r, i))
			return true;
	return false;
}

/* The programs could not check a CPU's preempt count (record.bpf.c's pc_find): softirqs
 * are then followed by their exits, as on kernels whose BTF does not place the count. */
static void softirq_exits(struct recorder *r)
{
	struct bpf_link *l;

	/* softirq_entry, needed no more once every CPU's count is found (softirq.h) */
	if (!r->softirq_entry_off)
		r->softirq_entry_off = record_softirq__entry_off(r->skel);

	if (!r->skel->bss->pc_failed || r->skel->links.softirq_exit)
		return;
	l = bpf_program__attach(r->skel->progs.softirq_exit);
	if (!l) {
		r->err = -errno;
		error("cannot attach softirq_exit: %s", strerror(errno));
		return;
	}
	r->skel->links.softirq_exit = l;
	notice("this kernel's preempt count could not be read: softirqs are followed by their "
	       "exits");
}

static void loop(struct recorder *r, uint64_t *lost)
{
	const struct record_opts *o = r->o;
	bool show = o->progress > 0 || (o->progress < 0 && isatty(2));
	uint64_t end = r->deadline ? r->deadline : UINT64_MAX;
	uint64_t last_flush = r->start_ns, last_progress = r->start_ns, last_events = 0;
	uint64_t last_alive = r->start_ns;

	while (!stop_signal && !(o->stop && *o->stop) && !r->err && !r->procs.err) {
		uint64_t now;
		int err;

		r->now = 0; /* the poll may wait: the first record reads the clock */
		err = rec_rings__poll(&r->rings,
				      o->read_timer_ms ? (int)o->read_timer_ms : POLL_MS);
		if (err < 0 && err != -EINTR && !(err == -ECANCELED && r->past_deadline)) {
			r->err = err;
			break;
		}
		now = now_ns();
		if (o->cost)
			record_cost__tick(&r->cost, now);
		/* A recording killed later still has the kernel's symbols: on CPUs the
		 * server keeps busy, the idle thread may not have packed them yet. */
		if (now - r->start_ns >= KALLSYMS_HURRY_NS)
			ktext__hurry(&r->ktext);
		write_kallsyms(r, false);
		softirq_exits(r);
		rec_procs__check_all(&r->procs, now);
		if (now - last_flush >= FLUSH_NS) {
			err = trace_writer__flush(r->w);
			if (err && !r->err)
				r->err = err;
			r->pending = 0;
			write_lost(r, lost);
			last_flush = now;
		}
		if (show && now - last_progress >= PROGRESS_NS)
			progress(r, now, &last_progress, &last_events, lost);
		if (now >= end || r->past_deadline)
			break;
		if (r->child && waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
			r->child_done = true;
			break;
		}
		/* Every 50 ms: a target's death ends the recording well within a second. */
		if (o->nr_pids && now - last_alive >= 50000000ull) {
			last_alive = now;
			if (!targets_alive(r)) {
				notice("every target process has exited");
				break;
			}
		}
	}
	if (show)
		fprintf(stderr, "\r\033[K");
}

/* Whether the kernel has bpf_rdonly_cast (Linux 6.2): the recorder's kernel stack checks
 * load words in place with it; before, they read them with bpf_probe_read_kernel (the
 * programs built as record_compat.bpf.o). SRVSCOPE_BPF_COMPAT=1 takes those anywhere
 * (for tests). */
static int error_no_privilege(void)
{
	return error("cannot load the BPF programs: permission denied (run as root, or grant "
		     "CAP_BPF and CAP_PERFMON)");
}

static bool kernel_has_rdonly_cast(void)
{
	const char *force = getenv("SRVSCOPE_BPF_COMPAT");
	struct utsname u;
	int major, minor;

	if (force && !strcmp(force, "1"))
		return false;
	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 2);
}

/* record_bpf__open, with the programs suited to this kernel: both objects are built from
 * one source, with the same maps, programs and data, so one skeleton serves for both. */
static struct record_bpf *open_skel(void)
{
	struct record_bpf *obj;
	int err;

	if (kernel_has_rdonly_cast())
		return record_bpf__open();
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	err = record_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)record_compat_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		record_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

static int load(struct recorder *r)
{
	const struct record_opts *o = r->o;
	const char *nw;
	int err;

	libbpf_set_print(o->verbose ? libbpf_print : libbpf_silent);
	r->skel = open_skel();
	if (!r->skel)
		return error("cannot open the BPF programs: %s", strerror(errno));
	r->skel->rodata->filter_all = o->all;
	r->skel->rodata->want_stacks = !o->no_stacks;
	r->skel->rodata->want_waker_stacks = !o->no_waker_stacks;
	r->skel->rodata->stack_refresh_ns = o->stack_refresh_ms * 1e6;
	r->skel->rodata->ustack_dump_bytes = o->no_stacks ? 0 : o->ustack_dump_bytes;
	r->skel->rodata->ustack_keep_ns = ustacks__keep_ns(&r->ustacks);
	r->skel->rodata->self_tgid = getpid();
	r->skel->rodata->want_syscall_args = o->syscalls && o->syscall_args;
	r->skel->rodata->want_cost = o->cost;
	/* Whether a softirq runs is read from the kernel's preempt count where its place is
	 * known: softirq_exit is then loaded but attached only if that read fails. */
	r->skel->rodata->preempt_count_off = kbtf__preempt_count_off();
	r->skel->rodata->do_syscall_64_addr =
		o->kallsyms ? o->kallsyms->do_syscall_64 : ktext__lookup("do_syscall_64");
	if (getenv("SRVSCOPE_PREEMPT_COUNT_OFF")) /* tests: a wrong one, for the fallback */
		r->skel->rodata->preempt_count_off =
			strtoll(getenv("SRVSCOPE_PREEMPT_COUNT_OFF"), NULL, 0);
	if (r->skel->rodata->preempt_count_off)
		bpf_program__set_autoattach(r->skel->progs.softirq_exit, false);
	/* bench/record-overhead.sh: what the tracepoints cost bare (record.bpf.c floor_mode) */
	if (getenv("SRVSCOPE_RECORD_FLOOR"))
		r->skel->rodata->floor_mode = (__u32)atoi(getenv("SRVSCOPE_RECORD_FLOOR"));
	/* There softirq_entry would run all along (no preempt count is looked for, so it is
	 * never detached), where a recording detaches it within its first second. */
	if (r->skel->rodata->floor_mode)
		bpf_program__set_autoattach(r->skel->progs.softirq_entry, false);
	err = rec_rings__prepare(&r->rings, r->skel->maps.rings, o->buffer_size);
	if (err == -EPERM || err == -EACCES)
		return error_no_privilege();
	if (err)
		return error("cannot make the ring buffers: %s", strerror(-err));
	r->skel->rodata->wakeup_bytes = o->read_timer_ms ? UINT64_MAX : r->rings.size / 4;
	bpf_map__set_max_entries(r->skel->maps.dump_scratch,
				 o->ustack_dump_bytes && !o->no_stacks ? r->nr_cpus * 2 : 1);
	if (!o->on_cpu_hz)
		bpf_program__set_autoload(r->skel->progs.on_cpu_sample, false);
	/* --net: TCP segments of this namespace's devices only (a host, for 'critical'). */
	r->skel->rodata->net_ns = own_netns();
	r->skel->rodata->net_loopback = o->net_loopback;
	if (!o->net) {
		bpf_program__set_autoload(r->skel->progs.net_tx, false);
		bpf_program__set_autoload(r->skel->progs.net_rx, false);
	}
	record_ipi__select(r->skel, o->ipi, r->nr_cpus, &r->ipi);
	/* SRVSCOPE_RECORD_OFF=NAME,...: programs left unloaded, to tell what each tracepoint
	 * costs (benches only: a recording without some of them is missing what they give) */
	if ((nw = getenv("SRVSCOPE_RECORD_OFF")))
		progs_off(r, nw);
	/* SRVSCOPE_RECORD_NO_WAKERS: bench/record-overhead.sh's modes without them */
	nw = getenv("SRVSCOPE_RECORD_NO_WAKERS");
	r->no_wakers = (o->no_wakers || (nw && *nw && strcmp(nw, "0"))) && !o->net;
	if (r->no_wakers)
		wakers_off(r);
	/* Every syscall of every process would pay for these two: only when asked for. */
	if (!o->syscalls) {
		bpf_program__set_autoload(r->skel->progs.sys_enter, false);
		bpf_program__set_autoload(r->skel->progs.sys_exit, false);
	}
	/* Sampled: syssample attaches sys_exit in windows, fd_exit by the syscalls' names. */
	if (!o->syscalls || !o->syscall_budget) {
		bpf_program__set_autoload(r->skel->progs.fd_exit, false);
	} else {
		bpf_program__set_autoattach(r->skel->progs.sys_exit, false);
		if (o->switch_windows)
			r->skel->rodata->switch_windows = RECORD_SWITCH_BUSY;
	}
	kbtf__release();
	err = record_bpf__load(r->skel);
	if (err && r->watch.gone)
		return -ESRCH; /* interrupted: the targets are gone (record__run says so) */
	if (err == -EPERM || err == -EACCES)
		return error_no_privilege();
	if (err)
		return error("cannot load the BPF programs: %s (rerun with -v for the verifier's "
			     "log)",
			     strerror(-err));
	r->check_fd = o->ustack_dump_bytes && !o->no_stacks
			      ? bpf_map__fd(r->skel->maps.ustack_checks)
			      : -1;
	return 0;
}

static void print_summary(struct recorder *r, const uint64_t *lost, uint64_t events,
			  uint64_t end_ns)
{
	char buf[512];
	struct stat st;

	uint64_t pending = record_cost__pending(bpf_map__fd(r->skel->maps.cache_stats), r->nr_cpus);

	fprintf(stderr, "srvscope: recorded %" PRIu64 " event%s (%.1f MB) in %.1f s to %s; %s\n",
		events, events == 1 ? "" : "s", stat(r->o->output, &st) ? 0.0 : st.st_size / 1e6,
		(end_ns - r->start_ns) / 1e9, r->o->output,
		trace_lost__format(lost, r->nr_cpus, buf, sizeof(buf)));
	if (pending)
		notice("%" PRIu64 " waits recorded without their user stack (a ring was more than "
		       "half full while the first stack copy at their place was being unwound); "
		       "a larger --buffer-size keeps them",
		       pending);
}

/* A write that failed once the trace had begun (a full disk): what was written before it
 * stays, and the reports read it (they say where it was cut). */
static void write_error(const char *output, int err)
{
	struct stat st;

	if (!stat(output, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		error("cannot write '%s': %s; what was recorded until then is kept in it", output,
		      strerror(-err));
	else
		error("cannot write '%s': %s", output, strerror(-err));
}

/* Ends the recording at one instant: every BPF program returns at once from now on, so the
 * links can be destroyed one by one without leaving half of them running. Returns the
 * end of the trace: that instant, or the last event's time if one was stamped later
 * (a program already past its check). */
static uint64_t stop_sources(struct recorder *r)
{
	uint64_t end_ns;

	__atomic_store_n(&r->skel->bss->stopping, true, __ATOMIC_SEQ_CST);
	end_ns = now_ns();
	close_samplers(r);
	record_bpf__detach(r->skel);
	return end_ns;
}

int record__run(const struct record_opts *o, int *cmd_status)
{
	struct recorder r = {.o = o, .exec_fd = -1, .check_fd = -1};
	struct trace_file_header hdr;
	struct sigaction sa = {.sa_handler = on_stop};
	struct syssample_progs sys_progs;
	uint64_t *lost = NULL, end_ns, events, start_ts;
	int go_fd = -1, err = 0;
	size_t i;

	*cmd_status = -1;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return error("this kernel has no BTF type information (/sys/kernel/btf/vmlinux is "
			     "missing): recording needs a kernel built with "
			     "CONFIG_DEBUG_INFO_BTF=y"),
		       -ENOTSUP;
	for (i = 0; i < o->nr_pids; i++) {
		err = proc__check_target(o->pids[i], NULL, true);
		if (err)
			return err;
	}
	r.nr_cpus = libbpf_num_possible_cpus();
	if (r.nr_cpus <= 0)
		return error("cannot count the CPUs: %s", strerror(-r.nr_cpus)), r.nr_cpus;
	lost = xcalloc((size_t)r.nr_cpus * LOST_REASONS, sizeof(*lost));
	ustacks__init(&r.ustacks, (uint64_t)(o->stack_refresh_ms * 1e6), o->ustack_dump_bytes);

	startwatch__begin(&r.watch, o->pids, o->nr_pids);
	err = load(&r);
	if (startwatch__end(&r.watch)) {
		err = -ESRCH;
		error("every target process exited while the recording started: nothing was "
		      "recorded");
		goto out_destroy;
	}
	if (err) {
		err = -EPERM;
		goto out_destroy;
	}
	for (i = 0; i < o->nr_pids; i++)
		track_target(&r, o->pids[i]);
	/* Before the start: putting the rings in place waits for grace periods. */
	r.rings.drained = retry_dumps;
	/* Records are sent by batches of a CPU's where user space can have a CPU's batch sent
	 * when it drains the rings (a kernel that runs no program on a given CPU for it:
	 * one by one). */
	r.rings.flush_fd = bpf_program__fd(r.skel->progs.flush_batch);
	if (getenv("SRVSCOPE_RECORD_NO_BATCH") || /* tests: the path without */
	    !rec_rings__can_flush(r.rings.flush_fd, r.nr_cpus)) {
		r.skel->bss->no_batch = 1;
		r.rings.flush_fd = -1;
	}
	r.rings.batch_since = (const volatile uint64_t *)r.skel->bss->batch_since;
	r.rings.nr_since = REC_BATCH_CPUS;
	if ((err = rec_rings__open(&r.rings, r.skel->maps.rings, on_record, &r))) {
		error("cannot set up the ring buffers: %s", strerror(-err));
		goto out_destroy;
	}

	/* The trace's start, after loading (which can take a second on a loaded machine) and
	 * milliseconds before the attach: -d counts from here, so the trace spans it, reading
	 * the targets included. */
	r.start_ns = now_ns();
	if (o->duration > 0)
		r.deadline = r.start_ns + (uint64_t)(o->duration * 1e9);
	fill_header(&hdr, &r);
	r.w = o->sink ? trace_writer__open_sink(o->sink)
		      : trace_writer__open(o->output, o->force, &hdr);
	rec_procs__init(&r.procs, r.w, o->all);
	if (!r.w) {
		err = -errno;
		error("cannot create '%s': %s", o->output, safefile__strerror(errno));
		goto out_destroy;
	}
	if (o->argv) {
		if (launch(&r, &go_fd)) {
			err = -ECHILD;
			goto out_close;
		}
		track_target(&r, r.child);
	}
	if ((err = write_info(&r))) {
		error("cannot write '%s': %s", o->output, strerror(-err));
		goto out_close;
	}
	/* The programs are attached one by one (sched_switch before sched_waking): held
	 * until all are, so that events start at one instant too. Otherwise the switches of
	 * the first milliseconds have no wakings: their episodes' wakers were UNKNOWN. */
	r.skel->bss->stopping = true;
	err = record_bpf__attach(r.skel);
	if (err) {
		error("cannot attach to the scheduler tracepoints: %s", strerror(-err));
		goto out_close;
	}
	if (o->cost)
		record_cost__start(&r.cost, r.skel->obj);
	sys_progs = (struct syssample_progs){r.skel->progs.sys_exit, r.skel->progs.fd_exit,
					     &r.skel->bss->sys_split, &r.skel->bss->sys_window_gen,
					     &r.skel->bss->sw_period};
	syssample__start(&r.syssample, o->syscalls ? o->syscall_budget : 0,
			 bpf_map__fd(r.skel->maps.sys_counts), r.nr_cpus,
			 &r.skel->bss->sys_between_windows, &sys_progs);
	__atomic_store_n(&r.skel->bss->stopping, false, __ATOMIC_SEQ_CST);
	if (o->on_cpu_hz && open_samplers(&r)) {
		err = -ENODEV;
		goto out_close;
	}
	start_ts = now_ns();
	follow_trees(&r);
	snapshot_targets(&r, start_ts);
	/* Reading kallsyms takes a fifth of a second: done with events flowing (into the
	 * ring), not between the trace's start and the attach; by a thread, while the loop
	 * drains (write_kallsyms); on idle CPUs alone when nothing waits for it. Read before
	 * by a caller that records several times in a row (srvscope model): a copy, unless
	 * the text is scanned here (the softirq actions) or not packed (a sink). */
	if (o->kallsyms && !o->sink && !record_softirq__wants_text(r.skel))
		ktext__from_copy(&r.ktext, o->kallsyms);
	else
		ktext__read_async(&r.ktext, !record_softirq__wants_text(r.skel), softirq_scan,
				  r.skel, !o->sink);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL); /* a closed ssh session: end cleanly too */
	signal(SIGPIPE, SIG_IGN);     /* and stderr gone with it must not kill us */
	if (go_fd >= 0) {
		err = start_command(&r, go_fd);
		close(go_fd);
		go_fd = -1;
		if (err) {
			waitpid(r.child, &r.child_status, 0);
			r.child_done = true;
			goto out_close;
		}
	}
	if (o->cost)
		record_cost__running(&r.cost);
	if (o->started)
		o->started(o->started_arg);
	loop(&r, lost);

	/* Stop the sources, then take what they left in the ring. */
	end_ns = stop_sources(&r);
	if (o->cost)
		record_cost__report(&r.cost, bpf_map__fd(r.skel->maps.cache_stats), r.nr_cpus);
	r.now = 0;
	r.deadline = 0;
	err = rec_rings__drain(&r.rings);
	if (err < 0 && !r.err)
		r.err = err;
	if (r.last_ts > end_ns)
		end_ns = r.last_ts;
	rec_procs__check_all(&r.procs, UINT64_MAX - 1);
	write_kallsyms(&r, true);
	write_lost(&r, lost);
	write_syscall_sample(&r);
	events = trace_writer__events(r.w);
	err = trace_writer__close(r.w, skewed(&r, end_ns));
	r.w = NULL;
	if (!err)
		err = r.err ? r.err : r.procs.err;
	if (err)
		write_error(o->output, err);
	else if (!o->sink)
		print_summary(&r, lost, events, end_ns);
	if (!err && o->verbose && o->ustack_dump_bytes)
		notice("unwound %" PRIu64 " user stack copies (%" PRIu64 " gave no frame; %" PRIu64
		       " checkable for reuse, %" PRIu64 " not)",
		       r.ustacks.dumps, r.ustacks.failed, r.ustacks.checked, r.ustacks.unchecked);
	if (r.child_done)
		*cmd_status = WIFEXITED(r.child_status) ? WEXITSTATUS(r.child_status)
							: 128 + WTERMSIG(r.child_status);
out_close:
	if (go_fd >= 0)
		close(go_fd); /* the child sees EOF and exits without running the command */
	if (r.exec_fd >= 0)
		close(r.exec_fd);
	if (r.child && !r.child_done) {
		/* The recording ended first (-d, a signal, an error): so does the command. */
		kill(r.child, SIGTERM);
		waitpid(r.child, &r.child_status, 0);
	}
	if (r.w) {
		trace_writer__close(r.w, skewed(&r, now_ns()));
		/* Nothing was recorded: no trace is left to be taken for one. */
		if (err == -ENOEXEC)
			unlink(o->output);
	}
out_destroy:
	if (r.ktext.started || (r.ktext.done && !r.ktext.taken)) {
		size_t len;

		free(ktext__take(&r.ktext, true, &len));
	}
	syssample__stop(&r.syssample);
	close_samplers(&r);
	rec_rings__close(&r.rings);
	record_bpf__destroy(r.skel);
	rec_procs__free(&r.procs);
	u64map__free(&r.stacks_seen);
	ksyms__delete(r.ksyms);
	u64map__free(&r.target_set);
	free(r.targets);
	for (size_t i = 0; i < r.nr_target_fds; i++)
		if (r.target_fds[i] >= 0)
			close(r.target_fds[i]);
	free(r.target_fds);
	ustacks__free(&r.ustacks);
	free(lost);
	return err;
}
