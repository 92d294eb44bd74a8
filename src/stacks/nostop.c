/* The "nostop" sampler: reads every thread's saved user registers and the top of its user
 * stack through a sleepable BPF task iterator (taskstack.bpf.c), so the target is never
 * stopped; threads on a CPU at that moment get their stack from a short perf_event sample. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/taskstack.h"
#include "taskstack.skel.h"

#include "snapshot/snapshot.h"
#include "stacks/stacks.h"
#include "util/util.h"

/* How long a running thread may take to yield a perf sample before we give up on it. */
#define RUNNING_DEADLINE_NS (5 * 1000 * 1000ull)
#define RUNNING_PERIOD_NS   100000 /* cpu-clock sampling period while we wait */
#define PERF_DATA_PAGES	    16	   /* a sample holds at most TASKSTACK_MAX_STACK of stack */
/* x86-64 perf user registers: AX..SS (0-11) and R8..R15 (16-23); DS..GS are refused. */
#define PERF_REGS_MASK 0xff0fffull

/* The iterator, loaded once per process and kept: loading costs tens of milliseconds
 * (libbpf reads and parses the kernel's BTF, the verifier runs), so the target and the
 * settings are written into its .bss before each run instead of being fixed at load. The
 * link, bound to one target, is kept until the target changes. */
static struct {
	struct taskstack_bpf *skel;
	struct bpf_link *link; /* iterates the threads of tgid */
	pid_t tgid;
} ns;
/* The read buffer for the iterator's output. */
static uint8_t *rbuf;
static size_t rbuf_cap;

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("SRVSCOPE_DEBUG_BPF"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* An iterator link over one process (tid == 0) or one thread. Kernels before 6.1 cannot
 * filter: then it visits every task and the program keeps the target's. */
static struct bpf_link *nostop__link(pid_t tgid, pid_t tid)
{
	union bpf_iter_link_info linfo;
	struct bpf_iter_attach_opts o;
	struct bpf_link *link;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.link_info = &linfo;
	o.link_info_len = sizeof(linfo);
	memset(&linfo, 0, sizeof(linfo));
	if (tid)
		linfo.task.tid = tid;
	else
		linfo.task.pid = tgid;
	link = bpf_program__attach_iter(ns.skel->progs.taskstack, &o);
	if (!link && errno == EINVAL && !tid)
		link = bpf_program__attach_iter(ns.skel->progs.taskstack, NULL);
	return link;
}

/* Loads the iterator if it is not yet. Returns 0 or -errno (nothing printed). */
static int nostop__load(void)
{
	struct taskstack_bpf *skel;
	int err, ncpus;

	if (ns.skel)
		return 0;
	libbpf_set_print(libbpf_quiet);
	skel = taskstack_bpf__open();
	if (!skel)
		return -errno;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		err = ncpus ? ncpus : -EINVAL;
		goto out_destroy;
	}
	err = bpf_map__set_max_entries(skel->maps.scratch, ncpus);
	if (err)
		goto out_destroy;
	err = taskstack_bpf__load(skel);
	if (err)
		goto out_destroy;
	ns.skel = skel;
	return 0;

out_destroy:
	taskstack_bpf__destroy(skel);
	return err < 0 ? err : -EINVAL;
}

/* Points the iterator at tgid with these settings. Returns 0 or -errno. */
static int nostop__target(pid_t tgid, size_t stack_size, bool kernel)
{
	int err = nostop__load();

	if (err)
		return err;
	ns.skel->bss->target_tgid = tgid;
	ns.skel->bss->stack_size = stack_size;
	ns.skel->bss->want_kernel = kernel;
	/* For tests: the fallback copy, page by page, otherwise rarely taken. */
	ns.skel->bss->page_copy_only = getenv("SRVSCOPE_NOSTOP_PAGE_COPY") != NULL;
	if (ns.link && ns.tgid == tgid)
		return 0;
	bpf_link__destroy(ns.link);
	ns.link = nostop__link(tgid, 0);
	if (!ns.link) {
		ns.tgid = 0;
		return -errno;
	}
	ns.tgid = tgid;
	return 0;
}

typedef void (*rec_fn)(const struct taskstack_rec *rec, const uint8_t *stack, void *arg);

/* Runs the iterator once and hands each record to fn. Returns the number of records or
 * -errno. */
static int nostop__iterate(struct bpf_link *link, rec_fn fn, void *arg)
{
	size_t have = 0, off, len;
	int fd, nr = 0, err = 0;
	ssize_t n;

	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	if (!rbuf) {
		/* Large enough for a few whole records, small enough to stay in cache. */
		rbuf_cap = 256 * 1024;
		rbuf = xmalloc(rbuf_cap);
	}
	for (;;) {
		n = read(fd, rbuf + have, rbuf_cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		have += n;
		off = 0;
		while (have - off >= sizeof(struct taskstack_rec)) {
			const struct taskstack_rec *rec = (const void *)(rbuf + off);

			if (rec->magic != TASKSTACK_MAGIC || rec->stack_len > TASKSTACK_MAX_STACK) {
				err = -EPROTO;
				goto out_close;
			}
			len = sizeof(*rec) + rec->stack_len;
			if (have - off < len)
				break;
			fn(rec, (const uint8_t *)(rec + 1), arg);
			nr++;
			off += len;
		}
		memmove(rbuf, rbuf + off, have - off);
		have -= off;
	}
	if (!err && have)
		err = -EPROTO;
out_close:
	close(fd);
	return err ? err : nr;
}

/* The letter /proc/PID/stat shows for a task state, as the kernel's task_state_index(). */
static char state_letter(uint32_t state, uint32_t exit_state)
{
	static const char letters[] = "RSDTtXZP";
	uint32_t s = (state | exit_state) & 0x7f;
	int i;

	if ((state & 0x402) == 0x402) /* TASK_IDLE = UNINTERRUPTIBLE | NOLOAD */
		return 'I';
	if (state == 0x1000) /* TASK_RTLOCK_WAIT */
		return 'D';
	for (i = 7; i >= 0; i--)
		if (s & (1u << i))
			return letters[i + 1];
	return 'R';
}

static void fill_regs(struct thread_sample *t, const struct taskstack_rec *rec)
{
	memcpy(&t->regs, rec->regs, sizeof(rec->regs));
	/* FRED keeps event data in the upper bits of the cs and ss slots. */
	t->regs.cs &= 0xffff;
	t->regs.ss &= 0xffff;
	t->regs.fs_base = rec->fs_base;
	t->regs.gs_base = rec->gs_base;
	t->flags |= THREAD_HAVE_REGS;
}

static void fill_stack(struct thread_sample *t, const uint8_t *stack, size_t len)
{
	free(t->stack_data);
	t->stack_data = NULL;
	t->stack_addr = t->regs.rsp;
	t->stack_len = len;
	if (len) {
		t->stack_data = xmalloc(len);
		memcpy(t->stack_data, stack, len);
	}
}

static void fill_kips(struct thread_sample *t, const struct taskstack_rec *rec)
{
	t->nr_kips = rec->nr_kips < SNAP_MAX_KFRAMES ? rec->nr_kips : SNAP_MAX_KFRAMES;
	memcpy(t->kips, rec->kips, t->nr_kips * sizeof(t->kips[0]));
}

struct capture_ctx {
	struct snapshot *snap;
	bool kernel;
	size_t *running; /* indexes of threads on a CPU */
	size_t nr_running, cap_running;
};

static void add_record(const struct taskstack_rec *rec, const uint8_t *stack, void *arg)
{
	struct capture_ctx *c = arg;
	struct snapshot *snap = c->snap;
	struct thread_sample *t;

	if (rec->flags & TASKSTACK_EXITING) {
		snap->exited++;
		return;
	}
	if ((pid_t)rec->tid == snap->pid)
		memcpy(snap->comm, rec->comm, sizeof(snap->comm));
	t = snapshot__add_thread(snap);
	t->tid = rec->tid;
	memcpy(t->name, rec->comm, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = '\0';
	t->state = state_letter(rec->state, rec->exit_state);
	t->syscall = rec->syscall >= 0 ? rec->syscall : -1;
	if (t->state == 'T')
		t->flags |= THREAD_STOPPED;
	if (rec->flags & TASKSTACK_NO_REGS) {
		t->flags |= THREAD_UNRESOLVED;
		return;
	}
	fill_regs(t, rec);
	if (rec->flags & TASKSTACK_ON_CPU) {
		/* Stale registers: resolve_running() takes a fresh look. */
		t->flags &= ~THREAD_HAVE_REGS;
		t->flags |= THREAD_RUNNING | THREAD_UNRESOLVED;
		t->state = 'R';
		xgrow((void **)&c->running, &c->cap_running, c->nr_running + 1,
		      sizeof(*c->running));
		c->running[c->nr_running++] = snap->nr_threads - 1;
		return;
	}
	fill_stack(t, stack, rec->stack_len);
	t->restart_fn = rec->restart_fn;
	if (c->kernel)
		fill_kips(t, rec);
}

/* A second look at one thread that was on a CPU: if it is off the CPU now, its saved
 * registers are good and its stack is taken as for any sleeping thread. */
static void retry_record(const struct taskstack_rec *rec, const uint8_t *stack, void *arg)
{
	struct thread_sample *t = arg;

	if ((pid_t)rec->tid != t->tid || rec->flags & (TASKSTACK_EXITING | TASKSTACK_NO_REGS) ||
	    rec->flags & TASKSTACK_ON_CPU)
		return;
	t->state = state_letter(rec->state, rec->exit_state);
	t->syscall = rec->syscall >= 0 ? rec->syscall : -1;
	fill_regs(t, rec);
	fill_stack(t, stack, rec->stack_len);
	t->restart_fn = rec->restart_fn;
	t->nr_kips = 0;
	if (ns.skel->bss->want_kernel)
		fill_kips(t, rec);
	t->flags &= ~(THREAD_RUNNING | THREAD_UNRESOLVED);
}

/* One perf_event per running thread: a cpu-clock sample with user registers and stack. */
struct perf_probe {
	size_t idx; /* in snap->threads */
	int fd;
	void *ring;
	size_t ring_len;
	bool done;
};

static int perf_probe__open(struct perf_probe *p, pid_t tid, size_t stack_size, bool kernel)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = RUNNING_PERIOD_NS;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (kernel)
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
	a.sample_regs_user = PERF_REGS_MASK;
	a.sample_stack_user = (stack_size + 7) & ~7ul;
	a.exclude_callchain_user = 1;
	a.exclude_hv = 1;
	a.wakeup_events = 1;
	p->fd = syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (p->fd < 0)
		return -errno;
	p->ring_len = (1 + PERF_DATA_PAGES) * page;
	p->ring = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->ring == MAP_FAILED) {
		int err = -errno;

		close(p->fd);
		p->fd = -1;
		p->ring = NULL;
		return err;
	}
	return 0;
}

static void perf_probe__close(struct perf_probe *p)
{
	if (p->ring)
		munmap(p->ring, p->ring_len);
	if (p->fd >= 0)
		close(p->fd);
	p->ring = NULL;
	p->fd = -1;
}

/* Fills t from one PERF_RECORD_SAMPLE body. Returns 0, or -EINVAL if it is unusable. */
static int perf_probe__parse(const uint8_t *p, const uint8_t *end, uint16_t misc, bool kernel,
			     struct thread_sample *t)
{
	/* In mask bit order: AX BX CX DX SI DI BP SP IP FLAGS CS SS, then R8..R15. */
	uint64_t v[20], abi, size, dyn, i;
	const uint8_t *stack;
	bool user = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;

#define TAKE(dst)                                                                                  \
	do {                                                                                       \
		if (end - p < 8)                                                                   \
			return -EINVAL;                                                            \
		memcpy(&(dst), p, 8);                                                              \
		p += 8;                                                                            \
	} while (0)
	TAKE(i); /* pid, tid */
	if (kernel) {
		uint64_t nr;

		TAKE(nr);
		if ((uint64_t)(end - p) / 8 < nr)
			return -EINVAL;
		t->nr_kips = 0;
		for (i = 0; i < nr; i++, p += 8) {
			uint64_t ip;

			memcpy(&ip, p, 8);
			if (ip >= (uint64_t)PERF_CONTEXT_MAX)
				continue; /* PERF_CONTEXT_KERNEL and friends */
			if (!user && t->nr_kips < SNAP_MAX_KFRAMES)
				t->kips[t->nr_kips++] = ip;
		}
	}
	TAKE(abi);
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		TAKE(v[i]);
	TAKE(size);
	if ((uint64_t)(end - p) < size + 8)
		return -EINVAL;
	stack = p;
	memcpy(&dyn, p + size, 8);
	if (dyn > size)
		return -EINVAL;
#undef TAKE

	memset(&t->regs, 0, offsetof(struct user_regs_struct, fs_base));
	t->regs.rax = v[0];
	t->regs.rbx = v[1];
	t->regs.rcx = v[2];
	t->regs.rdx = v[3];
	t->regs.rsi = v[4];
	t->regs.rdi = v[5];
	t->regs.rbp = v[6];
	t->regs.rsp = v[7];
	t->regs.rip = v[8];
	t->regs.eflags = v[9];
	t->regs.cs = v[10];
	t->regs.ss = v[11];
	t->regs.r8 = v[12];
	t->regs.r9 = v[13];
	t->regs.r10 = v[14];
	t->regs.r11 = v[15];
	t->regs.r12 = v[16];
	t->regs.r13 = v[17];
	t->regs.r14 = v[18];
	t->regs.r15 = v[19];
	t->regs.orig_rax = user ? (uint64_t)-1 : (uint64_t)t->syscall;
	if (user)
		t->syscall = -1;
	t->state = 'R';
	t->flags |= THREAD_HAVE_REGS;
	t->flags &= ~THREAD_UNRESOLVED;
	fill_stack(t, stack, dyn);
	return 0;
}

/* Takes the first sample out of the ring, if there is one. Returns true when done. */
static bool perf_probe__read(struct perf_probe *p, bool kernel, struct thread_sample *t)
{
	struct perf_event_mmap_page *meta = p->ring;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *data = (uint8_t *)p->ring + page;
	uint64_t size = PERF_DATA_PAGES * page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	static uint8_t rec[65536];

	while (tail < head) {
		struct perf_event_header h;
		uint64_t at = tail % size, first;

		memcpy(&h, data + at, sizeof(h)); /* headers are 8-aligned: never wrap */
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		first = size - at < h.size ? size - at : h.size;
		memcpy(rec, data + at, first);
		memcpy(rec + first, data, h.size - first);
		tail += h.size;
		if (h.type == PERF_RECORD_SAMPLE &&
		    !perf_probe__parse(rec + sizeof(h), rec + h.size, h.misc, kernel, t)) {
			__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
			return true;
		}
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return false;
}

/* A second iterator look at one thread; it resolves the thread if it is off the CPU. */
static void look_again(struct thread_sample *t)
{
	struct bpf_link *link = nostop__link(ns.tgid, t->tid);

	if (!link)
		return;
	nostop__iterate(link, retry_record, t);
	bpf_link__destroy(link);
}

/* Resolves the threads that were on a CPU. Most were only passing through (woken while we
 * looked): a second iterator look finds them asleep, their registers saved. Those still on
 * a CPU get a perf sample each, all waited for together for a few milliseconds; those that
 * gave none get a last look. What still runs then stays unresolved. */
static void resolve_running(struct capture_ctx *c, size_t stack_size)
{
	struct snapshot *snap = c->snap;
	struct perf_probe *probes;
	struct pollfd *pfds;
	uint64_t deadline;
	size_t i, left = 0;

	probes = xcalloc(c->nr_running, sizeof(*probes));
	pfds = xcalloc(c->nr_running, sizeof(*pfds));
	for (i = 0; i < c->nr_running; i++) {
		struct perf_probe *p = &probes[i];
		struct thread_sample *t = &snap->threads[c->running[i]];

		p->idx = c->running[i];
		p->fd = -1;
		p->done = true;
		look_again(t);
		if (!(t->flags & THREAD_UNRESOLVED))
			continue;
		if (perf_probe__open(p, t->tid, stack_size, c->kernel))
			continue;
		p->done = false;
		left++;
	}
	deadline = now_ns() + RUNNING_DEADLINE_NS;
	while (left) {
		uint64_t now = now_ns();
		size_t n = 0;

		for (i = 0; i < c->nr_running; i++) {
			struct perf_probe *p = &probes[i];

			if (p->done)
				continue;
			if (perf_probe__read(p, c->kernel, &snap->threads[p->idx])) {
				p->done = true;
				perf_probe__close(p);
				left--;
				continue;
			}
			pfds[n].fd = p->fd;
			pfds[n].events = POLLIN;
			n++;
		}
		if (!left || now >= deadline)
			break;
		poll(pfds, n, (int)((deadline - now + 999999) / 1000000));
	}
	for (i = 0; i < c->nr_running; i++) {
		struct thread_sample *t = &snap->threads[probes[i].idx];

		if (probes[i].done)
			continue;
		perf_probe__close(&probes[i]);
		if (t->flags & THREAD_UNRESOLVED)
			look_again(t);
	}
	free(pfds);
	free(probes);
}

/* Prints why the iterator cannot be used; returns -errno for the caller. */
static int load_error(int err)
{
	char why[160];

	if (!nostop__available(why, sizeof(why)))
		error("nostop mode is not available: this kernel lacks %s", why);
	else
		error("cannot load the nostop BPF iterator: %s", strerror(-err));
	return err;
}

/* Room for all the threads at once: growing the array of samples (3 KiB each) one
 * doubling at a time cost a twentieth of a 1000-thread capture in copies and faults. */
static size_t last_nr_threads; /* in the previous capture */

static void presize(struct snapshot *snap)
{
	size_t want = last_nr_threads;

	if (!want) {
		char path[64], buf[4096], *p;

		snprintf(path, sizeof(path), "/proc/%d/status", snap->pid);
		if (read_file(path, buf, sizeof(buf)) > 0 && (p = strstr(buf, "\nThreads:")))
			want = strtoul(p + 9, NULL, 10);
	}
	if (want)
		xgrow((void **)&snap->threads, &snap->cap_threads, want + want / 8 + 4,
		      sizeof(*snap->threads));
}

int nostop__capture(pid_t pid, const struct stacks_opts *opts, struct snapshot *snap)
{
	struct capture_ctx c = {.snap = snap, .kernel = opts->kernel};
	size_t stack_size = opts->stack_size ? opts->stack_size : STACKS_DEFAULT_STACK_SIZE;
	char path[64];
	int err, nr;

	if (stack_size > TASKSTACK_MAX_STACK) {
		static bool warned;

		if (!warned)
			warning("nostop mode copies at most %d KiB of each thread's stack",
				TASKSTACK_MAX_STACK / 1024);
		warned = true;
		stack_size = TASKSTACK_MAX_STACK;
	}
	snap->mode = "nostop";
	snap->start_ns = now_ns();
	err = nostop__target(pid, stack_size, opts->kernel);
	if (err == -ESRCH)
		return err; /* the process exited: the caller says so */
	if (err)
		return load_error(err);
	presize(snap);
	nr = nostop__iterate(ns.link, add_record, &c);
	if (nr < 0) {
		free(c.running);
		return error("cannot read the threads of %d: %s", pid, strerror(-nr)), nr;
	}
	if (!snap->nr_threads) {
		/* The process exited: the caller says so, knowing what it has shown. */
		free(c.running);
		return -ESRCH;
	}
	if (c.nr_running)
		resolve_running(&c, stack_size);
	free(c.running);
	if (!snap->comm[0]) {
		char buf[sizeof(snap->comm) + 1];

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (read_file(path, buf, sizeof(buf)) > 0) {
			buf[strcspn(buf, "\n")] = '\0';
			memcpy(snap->comm, buf, sizeof(snap->comm) - 1);
		}
	}
	last_nr_threads = snap->nr_threads;
	snap->capture_ns = now_ns() - snap->start_ns;
	return 0;
}

/* Loads the iterator for our own process and reads it back: the only sure test that the
 * kernel has BTF, lets us load BPF, and has sleepable task iterators with the helpers. */
static bool probe(char *why, size_t len)
{
	struct capture_ctx c = {0};
	struct snapshot *snap;
	int err, nr;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, len,
			 "BTF type information (/sys/kernel/btf/vmlinux; "
			 "build it with CONFIG_DEBUG_INFO_BTF=y)");
		return false;
	}
	err = nostop__target(getpid(), TASKSTACK_PAGE, false);
	if (err == -EPERM || err == -EACCES) {
		snprintf(why, len,
			 "permission to load BPF programs (run as root, or grant "
			 "CAP_BPF and CAP_PERFMON)");
		return false;
	}
	if (err) {
		snprintf(why, len,
			 "sleepable BPF task iterators with bpf_task_pt_regs and "
			 "bpf_copy_from_user_task (Linux 5.18 or later): %s",
			 strerror(-err));
		return false;
	}
	snap = snapshot__new(getpid());
	c.snap = snap;
	nr = nostop__iterate(ns.link, add_record, &c);
	free(c.running);
	snapshot__delete(snap);
	/* The loaded program stays for the captures to come; the link was for us only. */
	bpf_link__destroy(ns.link);
	ns.link = NULL;
	ns.tgid = 0;
	if (nr <= 0) {
		snprintf(why, len, "a working BPF task iterator (%s)",
			 nr < 0 ? strerror(-nr) : "it saw no thread");
		return false;
	}
	return true;
}

bool nostop__available(char *why, size_t len)
{
	static int state; /* 0 unknown, 1 available, -1 not */
	static char reason[200];

	if (!state)
		state = probe(reason, sizeof(reason)) ? 1 : -1;
	if (state < 0 && why && len)
		snprintf(why, len, "%s", reason);
	return state > 0;
}
