// SPDX-License-Identifier: GPL-2.0
/* Kernel side of 'srvscope record': scheduler, process and syscall tracepoints filtered to
 * the target processes, with the waker's context (hard irq, softirq, timer or task) tracked
 * per CPU, stacks deduplicated by hash, everything sent through one ring buffer. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "record.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool filter_all = false;	      /* -a: every task is a target */
const volatile bool want_stacks = true;	      /* kernel and user stacks */
const volatile bool want_waker_stacks = true; /* and the waker's at each waking */
/* Stacks taken where a thread blocked (or woke another) are reused while it blocks at the
 * same place for this long: walking a kernel stack costs microseconds, blocking at the
 * same place thousands of times a second is common. The same place: the same syscall and
 * arguments, user ip and sp, and (--call-graph=dwarf) the user stack words and registers
 * the unwinder read (see rec_ustack_check); --call-graph=fp walks the user stack every
 * time. */
const volatile __u64 stack_refresh_ns = 100 * 1000 * 1000ull;
const volatile __u64 wakeup_bytes = 1 << 20; /* wake user space past this much data */
const volatile __u32 self_tgid = 0;	     /* srvscope itself, never a target */
/* --call-graph=dwarf: bytes of user stack sent for user space to unwind (0: walk frame
 * pointers here). */
const volatile __u32 ustack_dump_bytes = 0;
/* User space forgets a dump's stack id once it has gone unused for a while (ustack.c's
 * generations, a second at least): a dump older than this is not reused but taken again,
 * or its events would have no user stack. Half of user space's time, for the delay in
 * reading events. */
const volatile __u64 ustack_keep_ns = 500 * 1000 * 1000ull;
const volatile bool want_syscall_args = false; /* --syscall-args: REC_SYSCALL_ARGS too */
const volatile bool want_cost = false;	       /* --cost: the cache_stats counters */
/* What the bare tracepoints cost, for bench/record-overhead.sh (SRVSCOPE_RECORD_FLOOR, never
 * set otherwise): 1, every program returns at once; 2, the scheduler programs write a bare
 * record (header only) for each switch, waking and wake-up of a target and do nothing else,
 * the context programs nothing. The verifier drops the branches of the other values. */
const volatile __u32 floor_mode = 0;
/* Switch windows (record_opts.switch_windows; syscall sampling only): between the syscall
 * windows, the switches of a target task that has switched more than this many times
 * since the last window opened (sw_period) are left out, and its next record says so
 * (SWITCH_*_GAP); a task that switches less is written whole. 0: every switch. */
const volatile __u32 switch_windows = 0;

#define PF_KTHREAD   0x00200000
#define TASK_RUNNING 0

/* One ring buffer per CPU: programs on two CPUs never write the same cache lines or take
 * the same lock (with one shared ring, a record cost twice as much on a busy machine).
 * User space creates the rings (its --buffer-size split among the CPUs), puts each at its
 * CPU's index, and merges their records by time. */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* user space sets the size of every CPU's ring */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* user space: one per possible CPU */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

/* This CPU's ring, NULL when user space has put none there. */
static __always_inline void *cpu_ring(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&rings, &cpu);
}

/* The target processes, one bit per tgid (PID_MAX_LIMIT is 4M): a test in the hot path
 * costs a load, not a hash lookup. User space sets bits through the mapped .bss. */
#define TARGET_WORDS (4194304 / 64)
__u64 target_bits[TARGET_WORDS];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOST_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Stacks already sent to user space, by id. Losing one to eviction only sends it again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u8);
} known_stacks SEC(".maps");

/* One stack being built per CPU; slot 1 for the sampling program, which can interrupt the
 * tracepoint programs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct rec_stack);
} stack_scratch SEC(".maps");

/* A user stack dump being built per CPU and slot (as in stack_scratch): entry cpu * 2 +
 * slot. Too big for a per-CPU map (values are limited to 32 KiB there), so an array that
 * user space sizes to twice the number of possible CPUs before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct rec_ustack_dump);
} dump_scratch SEC(".maps");

/* What this CPU is running besides tasks: for each kind of context, the order in which it
 * was entered (0 when not in it). The innermost, entered last, is the waker. Softirqs do
 * not nest, nor do hard irq handlers; a hard irq can interrupt a softirq or a timer
 * callback, an hrtimer callback runs in a hard irq or in the HRTIMER softirq. x86's system
 * vectors (irq_work, call-function, reschedule IPIs) are interrupts without an
 * irq_handler_entry: they interrupt tasks, softirqs and timer_list callbacks like a hard
 * irq, and nothing else (interrupts are off in them). */
struct cpu_ctx {
	__u64 seq;
	__u64 softirq_seq, irq_seq, hrtimer_seq, timer_seq, ipi_seq;
	__u32 vec, irq;
	__u64 action, hrtimer_func, timer_func;
	__u64 pc_addr; /* this CPU's preempt count, found at its first softirq; 0: not yet */
	__u64 ipi_ts;  /* when the system vector's handler was entered */
	__u32 ipi;     /* which one: enum ipi_vector */
	/* ipi_send_cpu and ipi_send_cpumask running on this CPU (interrupted, when another
	 * send comes): see ipi_send_cpu2 */
	__u32 ipi_sending_cpu, ipi_sending_mask;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/* What user space found the unwind of a dump to depend on, by dump id (the id in a
 * stack_cache entry); LRU: entries of dumps no task refers to any more go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rec_ustack_check);
} ustack_checks SEC(".maps");

/* A kernel stack is reused only where its return addresses are all still in place. The
 * kernel stack above a tracepoint's arguments holds the return address of every frame of
 * the path that led there, each at an offset from them that is the same each time the
 * same path is taken (the random offset of CONFIG_RANDOMIZE_KSTACK_OFFSET lies above them
 * all but the syscall entry's two frames, which are not checked). When a stack is taken,
 * the offsets of its return addresses are found once; a reuse reads those words again and
 * compares them: a cheap read where a walk costs half a microsecond, and exact where
 * arguments and user registers do not tell kernel paths apart (fsync waits for writeback,
 * then for the flush). On an interrupt stack, the path goes on on the task stack below
 * it (a softirq run as a sender's syscall enables them, an interrupt's entry): those
 * frames are found above the stack pointer the switch saved at the top of the interrupt
 * stack. */
#define KCHECK	   32	  /* return addresses kept per stack (a power of two) */
#define KSPAN	   4096	  /* bytes of each stack that are read, at most */
#define KOFF_BELOW 0x8000 /* koff: on the stack below the interrupt stack */

struct kcheck {
	__u32 kn;	    /* return addresses in koff/kret; 0: the stack cannot be checked */
	__u16 span[2];	    /* bytes of each stack (this one, the one below) that hold them */
	__u16 koff[KCHECK]; /* their offsets above the tracepoint's arguments, or KOFF_BELOW
			     * and their offset above the saved stack pointer */
	__u64 kret[KCHECK];
};

/* Kernel stack words read at once, per CPU: entry 0 above the tracepoint's arguments,
 * entry 1 the stack below an interrupt stack. */
struct kwords {
	__u64 w[KSPAN / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct kwords);
} kstack_words SEC(".maps");

/* A syscall's kernel stack ends in do_syscall_64 and the entry code, above the random
 * offset of the stack: those two frames move at every syscall and are not compared.
 * Its address comes from the recorder's own read of kallsyms (a __ksym extern would have
 * libbpf parse all of kallsyms again, slowly, before every recording). */
const volatile __u64 do_syscall_64_addr = 0;

/* The end of this CPU's interrupt stack, once found. Its top word holds the stack pointer
 * of the stack it was entered from (x86's call_on_irqstack saves it there). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} irq_stack_end SEC(".maps");

/* Stacks last taken at one place in a task, and where that was. */
struct stack_cache {
	__u64 ts, ip, sp;
	__s64 orig_ax, nr; /* as in the registers; as validated */
	/* The kernel path depends on the syscall's arguments (a read() on a pipe or on a
	 * socket). Not the kernel stack's depth: it moves at random with every syscall
	 * (CONFIG_RANDOMIZE_KSTACK_OFFSET). */
	__u64 args[3];
	__u64 kstack, ustack;
	struct kcheck kc; /* what makes kstack right here */
	/* What makes ustack right here, once user space has published it: a copy costs less
	 * to reach than the map's entry, at every check after the first. */
	__u64 uck_id; /* the dump it is for, 0: none */
	__u64 uts;    /* when ustack was last taken or reused */
	__u32 hits;   /* times the task came back to this place, halved at each miss */
	__u32 pad;
	struct rec_ustack_check uck;
};

/* Places kept per task and role: a server thread commonly blocks at several places in turn
 * (waiting for work, then for a lock or two), which one entry would miss every time, and
 * wakes others from fewer. Powers of two. */
#define BLOCKED_PLACES 4
#define WAKING_PLACES  2

struct task_state {
	struct stack_cache blocked[BLOCKED_PLACES]; /* as the task blocked */
	struct stack_cache waking[WAKING_PLACES];   /* as it woke another */
	/* --syscalls: the syscall in progress, written out at its exit */
	__u64 enter_ts;
	__u64 args[3];
	__u64 arg3; /* want_syscall_args */
	__s32 nr;
	__u8 active;
	__u8 out;	/* entered between syscall windows: written as REC_SYSCALL_FD */
	__u8 lifecycle; /* split sampling: an fd syscall, fd_exit writes it */
	__u32 gen;	/* sys_window_gen when entered */
	/* switch_windows: the task's switches since sw_period last changed, and whether
	 * some were left out since its last record */
	__u32 sw_period;
	__u16 sw_count;
	__u8 sw_gap;
	__u8 sw_pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

/* Syscall sampling (record_opts.syscall_budget): user space sets this between the windows
 * in which every syscall is written; meanwhile only the calls that give out, change or
 * take back fds are (as REC_SYSCALL_FD), so that connections and fd kinds are followed
 * whole, and the rest cost a bit test. */
__u32 sys_between_windows;
/* Changed by user space as each syscall window opens: switch_windows' counts start over. */
__u32 sw_period;

/* Kernel stacks of interrupt contexts (kind x detail), per CPU. A softirq wakes tasks
 * through several paths in turn (a segment queued or handled at once), entered from
 * several (a sender's syscall, an interrupt's exit): a few ways per context keep them. */
#define IRQ_CACHE 64
#define IRQ_WAYS  8
struct irq_kstack_cache {
	__u64 ts, kstack;
	struct kcheck kc;
	__u32 vec; /* a softirq's: its vector, from the action function on its stack */
	__u32 pad;
};

struct irq_kstack_set {
	struct irq_kstack_cache way[IRQ_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IRQ_CACHE);
	__type(key, __u32);
	__type(value, struct irq_kstack_set);
} irq_stacks SEC(".maps");

/* What the stack caches did, per CPU (enum cache_stat, record.h). */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CS_NR);
	__type(key, __u32);
	__type(value, __u64);
} cache_stats SEC(".maps");

static __always_inline void cs_count(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&cache_stats, &which);

	if (v)
		*v += n;
}

static __always_inline void cs_add(__u32 which, __u64 n)
{
	if (want_cost)
		cs_count(which, n);
}

/* Set by user space to start and end the recording at one instant: while it is set, every
 * program returns at once (through is_target and ctx_get). Set while the programs are
 * attached one by one, and before any is detached: detaching one by one, with an RCU grace
 * period each, left the context entries running without their exits for up to half a
 * second, and every wake-up then got a stale softirq or timer as its waker. */
bool stopping;

static __always_inline bool is_target(__u32 tgid)
{
	if (stopping || floor_mode == 1)
		return false;
	if (tgid == self_tgid)
		return false;
	if (filter_all)
		return tgid != 0;
	return (target_bits[(tgid / 64) % TARGET_WORDS] >> (tgid % 64)) & 1;
}

static __always_inline void count_lost(__u32 reason)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &reason);

	if (v)
		*v += 1;
}

static __always_inline __u64 rb_flags(void *ring)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									  : BPF_RB_NO_WAKEUP;
}

/* Takes the current kernel or user stack and returns its id, sending the frames to user
 * space the first time they are seen. 0 when no stack could be had. */
struct stack_hash {
	const struct rec_stack *s;
	__u64 h;
};

/* One frame into the stack's hash. A bpf_loop callback: the verifier checks it once,
 * where an open-coded loop of REC_MAX_FRAMES would be walked at every place a stack is
 * taken, and made loading take most of a second. */
static long hash_frame(__u32 i, void *arg)
{
	struct stack_hash *c = arg;

	if (i >= REC_MAX_FRAMES)
		return 1;
	c->h ^= c->s->ips[i];
	c->h *= 0x100000001b3ull;
	c->h ^= c->h >> 29;
	return 0;
}

static __always_inline __u64 take_stack(void *ctx, bool user, __u32 slot)
{
	struct rec_stack *s = bpf_map_lookup_elem(&stack_scratch, &slot);
	struct stack_hash c;
	void *ring;
	__u64 h;
	__u8 one = 1;
	long n;
	__u32 nr;

	if (!s)
		return 0;
	cs_add(user ? CS_UTAKEN : CS_KTAKEN, 1);
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), user ? BPF_F_USER_STACK : 0);
	if (n <= 0) {
		count_lost(LOST_STACK_FAILED);
		return 0;
	}
	nr = (__u32)n / 8;
	if (nr > REC_MAX_FRAMES)
		nr = REC_MAX_FRAMES;
	s->nr = nr; /* for keep_kernel_prefix, sent or not */
	c.s = s;
	c.h = 0xcbf29ce484222325ull;
	bpf_loop(nr, hash_frame, &c, 0);
	h = c.h;
	h ^= user ? 0x9e3779b97f4a7c15ull : 0;
	if (!h)
		h = 1;
	if (bpf_map_lookup_elem(&known_stacks, &h))
		return h;
	s->id = h;
	s->type = REC_STACK;
	s->user = user;
	s->pid = bpf_get_current_pid_tgid() >> 32;
	ring = cpu_ring();
	if (!ring ||
	    bpf_ringbuf_output(ring, s, REC_STACK_HDR + (__u64)(nr & 127) * 8, rb_flags(ring))) {
		count_lost(LOST_STACK_RINGBUF);
		return 0;
	}
	bpf_map_update_elem(&known_stacks, &h, &one, BPF_ANY);
	return h;
}

struct dump_copy {
	struct rec_ustack_dump *d;
	__u64 sp, want;
};

/* Zeros for the pages of a stack that cannot be read here. */
static const char zero_page[REC_DUMP_PAGE];

/* Pages in a row that may be missing before the copy stops: a function's large local
 * buffer leaves pages of the stack never touched, hence not present, and reads here
 * cannot fault them in; the saved registers and return addresses above them are. As many
 * as the copy can hold: a failed read costs little, and missing pages at the end of the
 * copy are not sent. */
#define DUMP_MAX_MISSING (REC_DUMP_MAX / REC_DUMP_PAGE)

/* One page of the user stack into the dump; 1 stops the loop. A read that crosses into an
 * unmapped (or not present) page fails whole, so page by page: a page that cannot be read
 * is zeros (unwinding that reads them stops), and after DUMP_MAX_MISSING of them in a row
 * the copy stops. The length so far lives in the map
 * value, so the verifier checks this once. */
static long dump_page(__u32 i, void *arg)
{
	struct dump_copy *c = arg;
	struct rec_ustack_dump *d = c->d;
	__u64 off = d->len, n;

	if (off >= c->want || off >= REC_DUMP_MAX)
		return 1;
	n = REC_DUMP_PAGE - ((c->sp + off) & (REC_DUMP_PAGE - 1));
	if (n > c->want - off)
		n = c->want - off;
	if (n > REC_DUMP_PAGE)
		return 1;
	if (bpf_probe_read_user(d->data + off, n, (void *)(c->sp + off))) {
		if (++d->missing > DUMP_MAX_MISSING)
			return 1;
		bpf_probe_read_kernel(d->data + off, n, zero_page);
	} else {
		d->missing = 0;
		d->good = off + n;
	}
	d->len = off + n;
	return 0;
}

/* The current task's user registers (as it entered the kernel) and the top of its user
 * stack, sent for user space to unwind; returns the dump's id, 0 when none was sent. */
static __always_inline __u64 take_ustack_dump(struct task_struct *t, __u32 slot)
{
	__u32 cpu = bpf_get_smp_processor_id(), key = cpu * 2 + slot;
	struct rec_ustack_dump *d = bpf_map_lookup_elem(&dump_scratch, &key);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct dump_copy c;
	void *ring;
	__u64 len;

	cs_add(CS_UTAKEN, 1);
	if (!d || !regs || bpf_probe_read_kernel(d->regs, sizeof(d->regs), regs)) {
		count_lost(LOST_STACK_FAILED);
		return 0;
	}
	d->id = 1ull << 63 | (__u64)(cpu & 8191) << 50 | (bpf_ktime_get_ns() & ((1ull << 50) - 1));
	d->type = REC_USTACK_DUMP;
	d->nr_regs = REC_DUMP_REGS;
	d->len = 0;
	d->tid = t->pid;
	d->pid = t->tgid;
	c.d = d;
	c.sp = d->regs[19];
	c.want = ustack_dump_bytes;
	d->good = 0;
	d->missing = 0;
	bpf_loop(REC_DUMP_MAX / REC_DUMP_PAGE + 1, dump_page, &c, 0);
	/* Missing pages at the end are not sent. */
	len = d->good;
	d->len = len;
	if (len > REC_DUMP_MAX)
		len = REC_DUMP_MAX;
	/* User space is woken at once: until it has unwound the dump and published its
	 * check, the task dumps its stack afresh at this place. */
	ring = cpu_ring();
	if (!ring || bpf_ringbuf_output(ring, d, REC_DUMP_HDR + len, BPF_RB_FORCE_WAKEUP)) {
		count_lost(LOST_STACK_RINGBUF);
		return 0;
	}
	return d->id;
}

/* The current task's user stack: walked by frame pointers here, or dumped for user space
 * to unwind. */
static __always_inline __u64 take_ustack(void *ctx, __u32 slot)
{
	if (ustack_dump_bytes)
		return take_ustack_dump(bpf_get_current_task_btf(), slot);
	return take_stack(ctx, true, slot);
}

/* Per CPU: the records made and not yet sent (struct rec_batch_hdr, then up to
 * REC_BATCH_RECS records). A program that comes while another one on this CPU is between
 * its rec_reserve and rec_submit (an interrupt's, in a task's syscall exit) writes its
 * record into its own slot (nest, by depth) and sends it alone. User space has the batch
 * sent (flush_batch) on each CPU every time it drains the rings, and at the end. */
#define NEST_SLOTS 4
__u32 no_batch; /* user space cannot have batches sent (no BPF_PROG_TEST_RUN on a CPU) */

struct cpu_batch {
	struct rec_batch_hdr h;
	struct rec recs[REC_BATCH_RECS];
	struct rec nest[NEST_SLOTS];
	__u32 depth; /* programs between rec_reserve and rec_submit on this CPU */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_batch);
} batches SEC(".maps");

/* When each CPU's batch got the first of the records it holds (their time), 0 while it
 * holds none: user space, which reads this in place, has a CPU send its batch (an
 * interrupt there, BPF_PROG_TEST_RUN) only when those records are getting old, not at
 * every drain: two such interrupts per drain were a twentieth of the recorder's time. */
__u64 batch_since[REC_BATCH_CPUS];

static __always_inline struct cpu_batch *cpu_batch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&batches, &zero);
}

/* Sends the batch's records; they are lost when the ring is full. */
static __always_inline void batch_send(struct cpu_batch *b)
{
	void *ring = cpu_ring();
	__u32 n = b->h.n;

	if (!n)
		return;
	if (n > REC_BATCH_RECS)
		n = REC_BATCH_RECS;
	b->h.type = REC_BATCH;
	b->h.zero = 0;
	if (!ring ||
	    bpf_ringbuf_output(ring, b, sizeof(b->h) + n * sizeof(struct rec), rb_flags(ring))) {
		__u32 i;

		for (i = 0; i < REC_BATCH_RECS; i++)
			if (i < n)
				count_lost(LOST_RINGBUF);
	}
	b->h.n = 0;
	batch_since[bpf_get_smp_processor_id() & (REC_BATCH_CPUS - 1)] = 0;
}

/* A record's header filled, the rest zeroed: r. */
static __always_inline struct rec *rec_init(struct rec *r, __u64 ts, __u16 type, __u32 tid,
					    __u32 pid)
{
	__builtin_memset(r, 0, sizeof(*r));
	r->h.ts = ts;
	r->h.type = type;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.tid = tid;
	r->h.pid = pid;
	return r;
}

/* ts is taken when the program starts: stack walks come before the reservation and would
 * otherwise delay the timestamps of exactly the events that have stacks. Every
 * rec_reserve that returns a record is followed by its rec_submit. */
static __always_inline struct rec *rec_reserve(__u64 ts, __u16 type, __u32 tid, __u32 pid)
{
	struct cpu_batch *b = cpu_batch();
	struct rec *r;
	__u32 d;

	if (!b) {
		count_lost(LOST_RINGBUF);
		return NULL;
	}
	d = b->depth++;
	/* The count read after the depth is written: flush_batch, run in an interrupt here,
	 * sends the batch only at depth 0 (a program with interrupts on, net_rx's in a
	 * softirq, can be interrupted anywhere). */
	barrier();
	/* A full batch waits for the next record to be sent: its last record, a waking, may
	 * take the wake-up that follows it (fold_wakeup). */
	if (d == 0 && b->h.n >= REC_BATCH_RECS && !no_batch)
		batch_send(b);
	if (d == 0 && b->h.n < REC_BATCH_RECS && !no_batch) {
		if (!b->h.n) /* before the record counts (rec_submit) */
			batch_since[bpf_get_smp_processor_id() & (REC_BATCH_CPUS - 1)] =
				ts ? ts : 1;
		r = &b->recs[b->h.n & (REC_BATCH_RECS - 1)];
	} else
		r = &b->nest[d & (NEST_SLOTS - 1)];
	return rec_init(r, ts, type, tid, pid);
}

static __always_inline void rec_submit(struct rec *r)
{
	struct cpu_batch *b = cpu_batch();
	void *ring;

	if (!b)
		return;
	if (b->depth == 1 && b->h.n < REC_BATCH_RECS && !no_batch) {
		/* the batch's next record (full, it is sent by the next rec_reserve or by
		 * flush_batch) */
		b->h.n++;
	} else {
		ring = cpu_ring();
		if (!ring || bpf_ringbuf_output(ring, r, sizeof(*r), ring ? rb_flags(ring) : 0))
			count_lost(LOST_RINGBUF);
	}
	barrier(); /* the record counted before the depth says so */
	if (b->depth)
		b->depth--;
}

/* A record sent alone, reserved in the ring: for the programs on syscall tracepoints,
 * which the kernel may run with preemption on (faultable tracepoints), where a program of
 * another task could come between another's rec_reserve and rec_submit on this CPU out of
 * turn; the batch's depth assumes that programs nest, as interrupts do. */
static __always_inline struct rec *rec_reserve_ring(__u64 ts, __u16 type, __u32 tid, __u32 pid)
{
	void *ring = cpu_ring();
	struct rec *r = ring ? bpf_ringbuf_reserve(ring, sizeof(*r), 0) : NULL;

	if (!r) {
		count_lost(LOST_RINGBUF);
		return NULL;
	}
	return rec_init(r, ts, type, tid, pid);
}

static __always_inline void rec_submit_ring(struct rec *r)
{
	void *ring = cpu_ring();

	bpf_ringbuf_submit(r, ring ? rb_flags(ring) : 0);
}

/* Run by user space on each CPU (BPF_PROG_TEST_RUN): sends what the batch holds, unless a
 * program on this CPU is writing it. On another CPU it runs in an interrupt there; on the
 * recorder's own CPU in its system call, interrupts on: it holds the depth while it sends,
 * or a program in an interrupt that came meanwhile would add its record to the batch being
 * sent (one counted in the header but not sent: user space drops the whole batch) or have
 * it wiped by the reset of the count after the send. */
SEC("raw_tp")
int flush_batch(void *ctx)
{
	struct cpu_batch *b = cpu_batch();
	__u32 d;

	if (!b)
		return 0;
	d = b->depth++;
	barrier();
	if (!d)
		batch_send(b);
	barrier();
	b->depth--;
	return 0;
}

/* floor_mode 2: a record of the event's type, its header alone */
static __always_inline int bare_record(__u16 type, __u32 tid, __u32 pid)
{
	struct rec *r = rec_reserve(bpf_ktime_get_ns(), type, tid, pid);

	if (r)
		rec_submit(r);
	return 0;
}

/* Where a user task is: its registers as it entered the kernel, and the syscall it is in
 * (-1 when none: a task preempted or faulting in user mode). orig_ax alone cannot tell a
 * syscall from an exception's error code, so the instruction before ip must be 'syscall';
 * that costs a read of user memory, saved when the task is where it was last time (c).
 * Hot path: task and register fields are read directly through their BTF types, cheaper
 * than BPF_CORE_READ's probe reads (tp_btf allows it; offsets are still relocated). */
struct user_place {
	__u64 ip, sp;
	__s64 orig_ax, nr;
	__u64 args[3];
	bool same; /* where the cache entry was taken: its user stack may be reused */
};

/* The same call site at the same stack depth. The arguments too (at_place): they pick,
 * of two entries, the one whose kernel path is likelier the same. Without them (near_place)
 * an entry is still used, its stacks reused only as their checks allow, both exact: a
 * thread that waits on one lock call site for many locks (a futex's address in each)
 * took a stack copy at each, a hundred a second of memcached's workers. */
static __always_inline bool near_place(const struct stack_cache *c, const struct user_place *u)
{
	return c->ts && stack_refresh_ns && c->ip == u->ip && c->sp == u->sp &&
	       c->orig_ax == u->orig_ax;
}

static __always_inline bool at_place(const struct stack_cache *c, const struct user_place *u)
{
	return near_place(c, u) && c->args[0] == u->args[0] && c->args[1] == u->args[1] &&
	       c->args[2] == u->args[2];
}

/* Whether entry a is to go before entry b: an empty one first, then the one the task came
 * back to fewer times (the older of two alike). */
static __always_inline bool evict_before(const struct stack_cache *a, const struct stack_cache *b)
{
	if (!a->ts || !b->ts)
		return !a->ts && b->ts;
	return a->hits < b->hits || (a->hits == b->hits && a->ts < b->ts);
}

/* Fills u for task t and returns the entry of cs (n of them, a power of two, or NULL) to
 * use: the one where t is now (u->same), else the one to refill. The place the task keeps
 * coming back to stays: a thread that waits for work at one place blocks on locks now and
 * then at others, and an eviction of the older entry took the work place out at every
 * second lock wait in a row (memcached's workers: an epoll_wait and two or three lock call
 * sites each). The entries kept are aged at each miss, so that a task that moved on gives
 * them up after a few. */
static __always_inline struct stack_cache *user_place(struct task_struct *t, struct stack_cache *cs,
						      const int n, __u64 ts, struct user_place *u)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct stack_cache *c = NULL;
	__u16 insn = 0;
	int i, at = -1, near = -1, victim = 0;

	u->nr = -1;
	u->same = false;
	if (!regs)
		return cs;
	u->ip = regs->ip;
	u->sp = regs->sp;
	u->orig_ax = (__s64)regs->orig_ax;
	u->nr = u->orig_ax;
	u->args[0] = regs->di;
	u->args[1] = regs->si;
	u->args[2] = regs->dx;
	if (cs) {
		for (i = 0; i < n; i++) {
			if (at < 0 && at_place(&cs[i], u))
				at = i;
			if (near < 0 && near_place(&cs[i], u))
				near = i;
		}
		if (at < 0)
			at = near;
		if (at >= 0) {
			c = &cs[at & (n - 1)];
			u->same = true;
			u->nr = c->nr;
			c->args[0] = u->args[0];
			c->args[1] = u->args[1];
			c->args[2] = u->args[2];
			if (c->hits < 0xffffffffu)
				c->hits++;
		} else {
			for (i = 1; i < n; i++)
				if (evict_before(&cs[i], &cs[victim & (n - 1)]))
					victim = i;
			for (i = 0; i < n; i++)
				if (i != victim)
					cs[i].hits >>= 1;
			c = &cs[victim & (n - 1)];
			c->hits = 0;
		}
	}
	if (!u->same && u->nr >= 0 &&
	    (bpf_probe_read_user(&insn, sizeof(insn), (void *)(u->ip - 2)) || insn != 0x050f))
		u->nr = -1;
	return c;
}

/* Checked words within this many bytes of sp are read in one go (into this CPU's dump
 * scratch, free outside take_ustack_dump): one read costs less than a read per word. */
#define CHECK_SPAN_MAX 4096

/* The hash of the checked words' values in order (unreadable is zero, as in a dump),
 * read word by word from the user stack at sp (copy NULL) or from copy, the span of stack
 * read at once. Folds as ustacks__hash does. */
#define CHECK_FOLD(h, v) ((h) = (((h) ^ (v)) * 0x100000001b3ull), (h) ^= (h) >> 29)

/* A global function: the verifier checks its loop once. With a copy, loads from it and no
 * helper call per word (a bpf_loop callback per word cost a fifth of the check); d NULL:
 * each word read alone from the stack at sp. */
__noinline __u64 uck_hash(const struct rec_ustack_dump *d, const struct rec_ustack_check *k,
			  __u64 sp)
{
	__u64 h = 0xcbf29ce484222325ull, v;
	__u32 i, off;

	if (!k)
		return 0;
	for (i = 0; i < REC_CHECK_WORDS; i++) {
		if (i >= k->nr)
			break;
		off = k->off[i];
		if (d)
			v = *(const __u64 *)(d->data + (off & (CHECK_SPAN_MAX - 1)));
		else if (bpf_probe_read_user(&v, sizeof(v), (void *)(sp + off)))
			v = 0;
		CHECK_FOLD(h, v);
	}
	return h;
}

/* Whether task t, at the place where c's user stack (a dump) was taken (same ip and sp),
 * would unwind as that dump did: 1 yes, 0 no, -1 not known yet (user space has not
 * unwound the dump, or could make no check of it). */
static __always_inline int ustack_unchanged(struct task_struct *t, struct stack_cache *c, __u64 sp)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	const struct rec_ustack_check *k = &c->uck;
	struct rec_ustack_dump *d = NULL;
	__u64 h;

	if (c->uck_id != c->ustack) {
		k = bpf_map_lookup_elem(&ustack_checks, &c->ustack);
		if (!k)
			return -1;
		__builtin_memcpy(&c->uck, k, sizeof(c->uck));
		c->uck_id = c->ustack;
		k = &c->uck;
	}
	if (!regs || k->nr > REC_CHECK_WORDS)
		return 0;
	if (((k->regs & 1) && regs->r15 != k->reg[0]) ||
	    ((k->regs & 2) && regs->r14 != k->reg[1]) ||
	    ((k->regs & 4) && regs->r13 != k->reg[2]) ||
	    ((k->regs & 8) && regs->r12 != k->reg[3]) ||
	    ((k->regs & 16) && regs->bp != k->reg[4]) || ((k->regs & 32) && regs->bx != k->reg[5]))
		return 0;
	if (k->span && k->span <= CHECK_SPAN_MAX) {
		__u32 key = bpf_get_smp_processor_id() * 2;

		d = bpf_map_lookup_elem(&dump_scratch, &key);
		/* A read that fails (a page not present) leaves the word by word reads. */
		if (d &&
		    bpf_probe_read_user(d->data, k->span & (2 * CHECK_SPAN_MAX - 1), (void *)sp))
			d = NULL;
	}
	h = uck_hash(d, k, sp);
	if (!h)
		h = 1;
	return h == k->hash;
}

/* Reads len bytes of kernel stack from addr up into this CPU's kstack_words entry which;
 * NULL when they cannot be read. */
static __always_inline const struct kwords *read_kwords(__u32 which, __u64 addr, __u64 len)
{
	struct kwords *k = bpf_map_lookup_elem(&kstack_words, &which);

	if (!k || !len || len > KSPAN)
		return NULL;
	/* Keeps the bound on the register passed (the test above may be made on a copy). */
	barrier_var(len);
	if (len > KSPAN)
		return NULL;
	if (bpf_probe_read_kernel(k->w, len, (const void *)addr))
		return NULL;
	return k;
}

/* A kernel word read in place: bpf_rdonly_cast costs nothing (the verifier turns it into
 * a move) and the load through it is a plain load the JIT guards against faults, where a
 * bpf_probe_read_kernel call costs tens of nanoseconds, and a copy of the span a fraction
 * of a nanosecond per byte. The type is any with a word at offset 0. */
#ifdef RECORD_NO_RDONLY_CAST
/* Kernels before 6.2 (record_compat.skel.h): a read each. */
static __always_inline __u64 kword(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (const void *)addr);
	return v;
}
#else
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

static __always_inline __u64 kword(__u64 addr)
{
	const struct rb_node *n =
		bpf_rdonly_cast((const void *)addr, bpf_core_type_id_kernel(struct rb_node));

	return n->__rb_parent_color;
}
#endif

/* The kernel stacks a tracepoint program's path lies on. Its context is the array of
 * arguments its caller (bpf_trace_runN) built in its own frame, on the kernel stack: the
 * frames above hold the return addresses of the path that led here. (Not the program's
 * own frame: a program with a deep stack runs on a private one.) */
struct kplace {
	__u64 at;    /* the context's address */
	__u64 room;  /* bytes from it to the end of its stack, at most KSPAN */
	__u64 below; /* on an interrupt stack: the stack pointer saved at its top, else 0 */
	__u64 room2; /* bytes from below to the end of its stack, at most KSPAN */
};

#define THREAD_BYTES 16384 /* THREAD_SIZE: task stacks are that big, and aligned to it */
#define PAGE_BYTES   4096

static __always_inline __u64 task_room(__u64 a)
{
	__u64 end = (a | (THREAD_BYTES - 1)) + 1;

	return end - a < KSPAN ? end - a : KSPAN;
}

/* The end of the interrupt stack at holds: found once per CPU as the first page above at
 * that cannot be read (the stack is mapped with a guard page after it; its start need not
 * be aligned to its size, so its end cannot be computed). 0 when not found. */
static __always_inline __u64 irq_stack_top(__u64 at)
{
	__u32 zero = 0;
	__u64 *end = bpf_map_lookup_elem(&irq_stack_end, &zero), page, v;
	int i;

	if (!end)
		return 0;
	if (*end && at < *end && *end - at < THREAD_BYTES)
		return *end;
	page = (at | (PAGE_BYTES - 1)) + 1;
	for (i = 0; i < THREAD_BYTES / PAGE_BYTES; i++) {
		if (bpf_probe_read_kernel(&v, sizeof(v), (const void *)page))
			break;
		page += PAGE_BYTES;
	}
	if (i == THREAD_BYTES / PAGE_BYTES)
		return 0;
	*end = page;
	return page;
}

/* A pointer's value as a number, through a map: arithmetic on a context pointer is
 * refused, and a bpf_probe_read_kernel of it costs tens of nanoseconds. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ptr_value SEC(".maps");

static __always_inline bool kplace_get(const void *ctx, struct kplace *k)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 stack = (__u64)t->stack, top, *v;
	__u32 zero = 0;

	k->below = k->room2 = 0;
	v = bpf_map_lookup_elem(&ptr_value, &zero);
	if (!v)
		return false;
	*(const void **)v = ctx;
	k->at = *(volatile __u64 *)v;
	if (k->at >= stack && k->at - stack < THREAD_BYTES) {
		k->room = task_room(k->at);
		return true;
	}
	/* Not on the task's stack: on this CPU's interrupt stack. */
	top = irq_stack_top(k->at);
	if (!top)
		return false;
	k->room = top - k->at < KSPAN ? top - k->at : KSPAN;
	k->below = kword(top - 8);
	if (k->below)
		k->room2 = task_room(k->below);
	return true;
}

/* A scan's position, in a map value: kept on the stack, the verifier would track its
 * exact values from step to step and never see two steps alike. */
struct kscan_pos {
	__u32 words; /* of the stack read to scan */
	__u32 pos;   /* the next word to look at */
	__u32 next;  /* the next frame of the stack taken to find */
	__u32 last;  /* frames to find: all but the syscall entry's */
	__u16 flag;  /* KOFF_BELOW while scanning the stack below */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kscan_pos);
} kscan_positions SEC(".maps");

struct kscan {
	struct kcheck *kc;
	const struct rec_stack *s;
	const struct kwords *k;
	struct kscan_pos *p;
};

#define KSCAN_BLOCK 8 /* words per bpf_loop step: a step costs more than a compare */

/* Looks for the next frames' return addresses in up to KSCAN_BLOCK words of a kernel
 * stack, from p->pos; a step ends at a frame found. Frames whose return address is not
 * above the tracepoint's arguments (this program's, its caller's) are passed over: a
 * word is compared with the next few frames. A bpf_loop callback. */
static long kscan_block(__u32 b, void *arg)
{
	struct kscan *c = arg;
	struct kscan_pos *p = c->p;
	struct kcheck *kc = c->kc;
	__u64 want[4];
	int k, j;

#pragma unroll
	for (j = 0; j < 4; j++) {
		__u64 f = p->next + j;

		want[j] = 0;
		if (f >= p->last)
			continue;
		/* Opaque to the compiler: the bound below is tested where the verifier
		 * needs it, not dropped for an earlier one. */
		barrier_var(f);
		if (f < REC_MAX_FRAMES)
			want[j] = c->s->ips[f];
	}
#pragma unroll
	for (k = 0; k < KSCAN_BLOCK; k++) {
		__u32 i = p->pos, n = kc->kn;
		__u64 w;

		if (i >= p->words || i >= KSPAN / 8 || p->next >= p->last || n >= KCHECK)
			return 1;
		/* The test above lets the compiler drop a mask the verifier needs. */
		barrier_var(i);
		w = c->k->w[i & (KSPAN / 8 - 1)];
		p->pos = i + 1;
		if (!w)
			continue;
#pragma unroll
		for (j = 0; j < 4; j++) {
			if (w != want[j])
				continue;
			barrier_var(n);
			kc->koff[n & (KCHECK - 1)] = p->flag | (i * 8);
			kc->kret[n & (KCHECK - 1)] = w;
			kc->kn = n + 1;
			kc->span[p->flag ? 1 : 0] = i * 8 + 8;
			p->next += j + 1;
			return 0;
		}
	}
	return 0;
}

/* Scans p->words words of c->k: a step per KSCAN_BLOCK words, and one more per frame
 * found (a step ends there). */
static __always_inline void kscan(struct kscan *c)
{
	c->p->pos = 0;
	cs_add(CS_KFILL_WORDS, c->p->words);
	bpf_loop(c->p->words / KSCAN_BLOCK + 1 + KCHECK, kscan_block, c, 0);
}

/* Finds where the return addresses of the kernel stack just taken (in slot 0 of
 * stack_scratch) are, for kernel_unchanged. kc->kn stays 0 when they cannot all be
 * found: that stack is then never reused. */
__noinline int kc_fill(const struct kplace *kpp, struct kcheck *kc, __u64 kstack)
{
	__u32 zero = 0;
	struct rec_stack *s = bpf_map_lookup_elem(&stack_scratch, &zero);
	struct kscan_pos *p = bpf_map_lookup_elem(&kscan_positions, &zero);
	struct kplace kp;
	struct kscan c;
	__u64 k2;

	if (!kc)
		return 0;
	kc->kn = 0;
	kc->span[0] = kc->span[1] = 0;
	if (!kpp || !s || !p || !kstack || s->nr < 3)
		return 0;
	kp = *kpp;
	c.k = read_kwords(0, kp.at, kp.room);
	if (!c.k)
		return 0;
	c.kc = kc;
	c.s = s;
	c.p = p;
	p->flag = 0;
	p->next = 0;
	/* Not a syscall's return into do_syscall_64 nor the entry code's frame: both lie
	 * above the random offset of the stack (they move with every syscall), and the
	 * context tells them anyway. Every frame of any other path is compared, an
	 * interrupt's entry too (a softirq run on the way out of a timer interrupt and of a
	 * network one is the same softirq, entered from two places). */
	p->last = s->nr;
	k2 = (__u64)s->nr - 2;
	barrier_var(k2);
	if (k2 < REC_MAX_FRAMES && do_syscall_64_addr && s->ips[k2] - do_syscall_64_addr < 0x800)
		p->last = s->nr - 2;
	p->words = kp.room / 8;
	kscan(&c);
	if (p->next < p->last && kp.below) {
		c.k = read_kwords(1, kp.below, kp.room2);
		if (c.k) {
			p->flag = KOFF_BELOW;
			p->words = kp.room2 / 8;
			kscan(&c);
		}
	}
	/* Frames left unfound (a path deeper than KSPAN, more than KCHECK frames): unknown. */
	if (p->next < p->last)
		kc->kn = 0;
	return 0;
}

/* kc_fill for the stack just taken at this program's context: a global function, checked
 * once by the verifier, called from the task and the interrupt caches. */
static __always_inline void kernel_check_fill(const void *ctx, struct kcheck *kc, __u64 kstack)
{
	struct kplace kp;

	if (!kplace_get(ctx, &kp)) {
		kc->kn = 0;
		return;
	}
	kc_fill(&kp, kc, kstack);
}

/* Whether the kernel stacks at kp hold the return addresses kc found. A global function:
 * the verifier checks it once, not at each call (the interrupt stacks' cache calls it for
 * each of its ways). */
__noinline bool kc_holds(const struct kplace *kp, const struct kcheck *kc)
{
	int i;

	if (!kp || !kc || !kc->kn || kc->kn > KCHECK || (kc->span[1] && !kp->below))
		return false;
#pragma unroll
	for (i = 0; i < KCHECK; i++) {
		__u16 off = kc->koff[i];
		__u64 base = off & KOFF_BELOW ? kp->below : kp->at;

		if (i >= kc->kn)
			break;
		if (kword(base + (off & ~KOFF_BELOW)) != kc->kret[i])
			return false;
	}
	return true;
}

/* Whether the kernel stacks now hold the return addresses kc found. */
static __always_inline bool kernel_unchanged(const void *ctx, const struct kcheck *kc)
{
	struct kplace kp;

	if (!kc->kn || !kplace_get(ctx, &kp))
		return false;
	cs_add(CS_KCHECK, 1);
	return kc_holds(&kp, kc);
}

/* Whether this CPU's ring is more than half full: a task whose dump at its place is still
 * on its way to user space (its check not yet published: the recorder may be loading the
 * unwind tables of the task's objects) then blocks there without a user stack, rather than
 * sending a dump of its own each time. A thread blocking 100 k times a second at a new
 * place sent 3 GB/s of 32 KB copies, and filled a 16 MB ring (every CPU's events lost, not
 * only stacks) in the time the first took to unwind. Below half, each still sends its own
 * and gets its stack. */
static __always_inline bool ring_half_full(void)
{
	void *ring = cpu_ring();

	return ring && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >
			       bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 2;
}

/* The current task's (t's) kernel and user stacks: those in c when it is where it was
 * (u->same), the kernel one while its return addresses are in place, the user one while it
 * unwinds the same (both checks are exact: they never expire); else taken now and kept in
 * c. */
static __always_inline void task_stacks(void *ctx, struct task_struct *t, bool user,
					const struct user_place *u, struct stack_cache *c, __u64 ts,
					__u64 *kstack, __u64 *ustack)
{
	bool here = c && u->same, kreuse = here, ureuse = here && !user;
	int same = 0;

	/* With frame pointers, the walk is the check: it is taken every time. */
	if (here && user && ustack_dump_bytes && ts - c->uts < ustack_keep_ns) {
		same = ustack_unchanged(t, c, u->sp);
		ureuse = same > 0;
	}
	if (kreuse)
		kreuse = kernel_unchanged(ctx, &c->kc);
	*kstack = kreuse ? c->kstack : take_stack(ctx, false, 0);
	/* Before the user stack is taken: a frame-pointer walk reuses the scratch. */
	if (c && !kreuse)
		kernel_check_fill(ctx, &c->kc, *kstack);
	if (ureuse)
		cs_add(CS_UREUSED, 1);
	if (kreuse)
		cs_add(CS_KREUSED, 1);
	if (!ureuse && same < 0 && ring_half_full()) {
		cs_count(CS_UPENDING, 1); /* always: the recorder says so at the end */
		user = false;		  /* no user stack this time */
	}
	*ustack = ureuse ? c->ustack : (user ? take_ustack(ctx, 0) : 0);
	if (!c)
		return;
	if (here) {
		/* ts: the entry's last use, for the choice of the one to replace. */
		if (*kstack) {
			c->kstack = *kstack;
			c->ts = ts;
		}
		/* A dump whose check has not come yet stays in c, to be checked when it
		 * has. */
		if (!ureuse && same >= 0 && *ustack) {
			c->ustack = *ustack;
			c->uts = ts;
		}
		if (ureuse)
			c->uts = ts;
		return;
	}
	c->ustack = *ustack;
	c->uts = ts;
	c->ts = *kstack && (*ustack || !user) ? ts : 0;
	c->ip = u->ip;
	c->sp = u->sp;
	c->orig_ax = u->orig_ax;
	c->nr = u->nr;
	c->args[0] = u->args[0];
	c->args[1] = u->args[1];
	c->args[2] = u->args[2];
	c->kstack = *kstack;
}

/* Where softirq_entry is left off once every CPU's preempt count is found (user space
 * detaches it: 125 thousand runs a second under a loopback load, for the vector alone),
 * a softirq waker's vector is the one whose action function (net_rx_action, rcu_core, ...,
 * each vector's start and end address from kallsyms) its kernel stack passes through. */
__u32 softirq_vec_from_stack; /* set by user space once softirq_fn is filled */
__u32 softirq_entry_off;      /* user space has detached softirq_entry: c->vec is stale */
__u64 softirq_fn[REC_SOFTIRQS];
__u64 softirq_fn_end[REC_SOFTIRQS];

struct vec_scan {
	const struct rec_stack *s;
	__u32 vec;
};

static long scan_vec(__u32 i, void *arg)
{
	struct vec_scan *c = arg;
	__u32 k = i;
	__u64 ip;
	int v;

	if (k >= c->s->nr)
		return 1;
	barrier_var(k); /* the bound below on the register the load uses */
	if (k >= REC_MAX_FRAMES)
		return 1;
	ip = c->s->ips[k];
	for (v = 0; v < REC_SOFTIRQS; v++)
		if (softirq_fn[v] && ip >= softirq_fn[v] && ip < softirq_fn_end[v]) {
			c->vec = v;
			return 1;
		}
	return 0;
}

/* The vector whose action the kernel stack just taken (stack_scratch slot 0) passes. */
static __always_inline __u32 stack_vec(void)
{
	__u32 slot = 0;
	struct vec_scan c = {.vec = REC_SOFTIRQ_UNKNOWN};

	c.s = bpf_map_lookup_elem(&stack_scratch, &slot);
	if (c.s)
		bpf_loop(REC_MAX_FRAMES, scan_vec, &c, 0);
	return c.vec;
}

/* The way of set whose return addresses are all in place at kp (when have_kp), as i; else
 * the way to refill (the least recently used), as IRQ_WAYS + i. A flag, not a NULL kp:
 * older verifiers may refuse a NULL for a global function's pointer argument. A global
 * function: the verifier checks it once, on its own. Inlined, the choice of the way to
 * refill (its index tracked exactly through eight unrolled steps) took the waking program
 * past 790 thousand instructions verified (of a million allowed): a second and a half of
 * the recorder's start, six on a loaded machine. */
__noinline int irq_way(const struct kplace *kp, __u32 have_kp, struct irq_kstack_set *set)
{
	__u64 oldest = ~0ull;
	int i, old = 0;

	if (!set || !kp)
		return IRQ_WAYS;
#pragma unroll
	for (i = 0; i < IRQ_WAYS; i++) {
		const struct irq_kstack_cache *c = &set->way[i];

		if (have_kp && c->ts && stack_refresh_ns) {
			cs_add(CS_KCHECK, 1);
			if (kc_holds(kp, &c->kc))
				return i;
		}
		if (c->ts < oldest) {
			oldest = c->ts;
			old = i;
		}
	}
	return IRQ_WAYS + old;
}

/* An interrupt context's kernel stack, per CPU and context: the way whose return
 * addresses are all in place (a check is exact: it does not expire), else walked into the
 * way least recently used. A softirq's vector, when it is taken from the stack, into *vec
 * (the cache then has one set of ways for every softirq). */
static __always_inline __u64 irq_kstack(void *ctx, __u32 kind, __u32 detail, __u64 ts, __u32 *vec)
{
	__u32 key = (kind * 16 + (detail & 15)) & (IRQ_CACHE - 1);
	struct irq_kstack_set *set = bpf_map_lookup_elem(&irq_stacks, &key);
	struct irq_kstack_cache *c;
	struct kplace kp = {};
	bool have_kp;
	int w;

	if (!set)
		return take_stack(ctx, false, 0);
	have_kp = kplace_get(ctx, &kp);
	w = irq_way(&kp, have_kp, set);
	if (w >= 0 && w < IRQ_WAYS) {
		c = &set->way[w & (IRQ_WAYS - 1)];
		cs_add(CS_KREUSED, 1);
		c->ts = ts;
		*vec = c->vec;
		return c->kstack;
	}
	c = &set->way[w & (IRQ_WAYS - 1)];
	c->kstack = take_stack(ctx, false, 0);
	c->ts = c->kstack ? ts : 0;
	c->vec = kind == WAKE_SOFTIRQ && softirq_vec_from_stack && c->kstack ? stack_vec()
									     : REC_SOFTIRQ_UNKNOWN;
	*vec = c->vec;
	kernel_check_fill(ctx, &c->kc, c->kstack);
	return c->kstack;
}

/* ---- interrupt, softirq and timer context, per CPU ---- */

static __always_inline struct cpu_ctx *ctx_get(void)
{
	__u32 zero = 0;

	if (stopping || floor_mode)
		return NULL;
	return bpf_map_lookup_elem(&cpu_ctxs, &zero);
}

/* Whether this CPU serves a softirq now. The kernel's preempt count says so (SOFTIRQ_OFFSET
 * is set while a softirq runs, in an interrupt's exit or in ksoftirqd), in one load: a
 * softirq_exit program, run at every softirq (60 k a second under a loopback load), cost
 * the traced server a point of its throughput by itself. The count is a per-CPU variable,
 * found from this CPU's run queue: user space reads their distance from the kernel's BTF
 * (preempt_count_off; 0 where it has none), softirq_entry checks the address once per CPU
 * (pc_addr) where the bit must be set, and pc_failed tells user space to attach
 * softirq_exit after all. Until then, or without the count, softirq_exit clears
 * softirq_seq. */
const volatile __s64 preempt_count_off = 0;
__u32 pc_failed;
__u32 pc_found_cpus; /* CPUs whose preempt count pc_find found and checked */

#define SOFTIRQ_OFFSET 0x100
#define PC_CONTEXT     0x00ffff00 /* the softirq, hard irq and NMI counts */

static __always_inline __u32 preempt_count_at(__u64 addr)
{
	return (__u32)kword(addr);
}

/* Called in a softirq (softirq_entry): finds and checks this CPU's preempt count. */
static __always_inline void pc_find(struct cpu_ctx *c)
{
	struct task_struct *cur;
	__u64 addr;

	if (c->pc_addr || !preempt_count_off)
		return;
	cur = bpf_get_current_task_btf();
	if (!bpf_core_field_exists(cur->se.cfs_rq))
		return;
	addr = (__u64)cur->se.cfs_rq->rq + preempt_count_off;
	if ((preempt_count_at(addr) & PC_CONTEXT) != SOFTIRQ_OFFSET) {
		c->pc_addr = 1; /* not the count: softirq_exit it is */
		pc_failed = 1;
		return;
	}
	c->pc_addr = addr;
	__sync_fetch_and_add(&pc_found_cpus, 1);
}

static __always_inline bool in_softirq_now(const struct cpu_ctx *c)
{
	if (c->pc_addr > 1)
		return preempt_count_at(c->pc_addr) & SOFTIRQ_OFFSET;
	return c->softirq_seq != 0;
}

/* Exits are defined, hence attached, before entries: every entry seen has its exit seen.
 * An exit without its entry (entered before the recording) clears what is clear. */
SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->softirq_seq = 0;
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit, int irq, struct irqaction *action, int ret)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->irq_seq = 0;
	return 0;
}

/* Each hrtimer tracepoint has two programs doing the same: the kernel skips a program
 * that fires while it is already running on the CPU, and a hard timer's interrupt can come
 * while this CPU runs the exit (or entry) program of a soft one (in a softirq, interrupts
 * on). One program would miss the hard timer's exit, and every wake-up after it on this
 * CPU would be put down to that timer; of two, the one not running sees it. */
static __always_inline void hrtimer_exit_seen(void)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->hrtimer_seq = 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_exit, struct hrtimer *t)
{
	hrtimer_exit_seen();
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_exit2, struct hrtimer *t)
{
	hrtimer_exit_seen();
	return 0;
}

SEC("tp_btf/timer_expire_exit")
int BPF_PROG(timer_exit, struct timer_list *t)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->timer_seq = 0;
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry, unsigned int vec)
{
	struct cpu_ctx *c = ctx_get();

	if (c) {
		c->softirq_seq = ++c->seq;
		c->vec = vec;
		pc_find(c);
	}
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_entry, int irq, struct irqaction *action)
{
	struct cpu_ctx *c = ctx_get();

	if (c) {
		c->irq_seq = ++c->seq;
		c->irq = irq;
		c->action = (__u64)action;
	}
	return 0;
}

static __always_inline void hrtimer_entry_seen(struct hrtimer *t)
{
	struct cpu_ctx *c = ctx_get();

	if (c) {
		c->hrtimer_seq = ++c->seq;
		c->hrtimer_func = (__u64)t->function;
	}
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_entry, struct hrtimer *t, ktime_t *now)
{
	hrtimer_entry_seen(t);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_entry2, struct hrtimer *t, ktime_t *now)
{
	hrtimer_entry_seen(t);
	return 0;
}

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(timer_entry, struct timer_list *t, unsigned long baseclk)
{
	struct cpu_ctx *c = ctx_get();

	if (c) {
		c->timer_seq = ++c->seq;
		c->timer_func = (__u64)t->function;
	}
	return 0;
}

/* x86's system vectors. Each is a hard interrupt with interrupts off, so no program here
 * can be entered again while it runs on this CPU (the kernel would skip it: see the
 * hrtimer programs above), and one program per tracepoint sees every entry and exit. A
 * kernel or an architecture without them (arm64's IPIs are hard irqs) has these programs
 * left unloaded (record/ipi.c), and wake-ups from them are put down to the task they
 * interrupted, as before. Each vector's exit is attached before its entry, as above. */
static __always_inline void ipi_exit_seen(void)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->ipi_seq = 0;
}

static __always_inline void ipi_entry_seen(__u32 vector)
{
	struct cpu_ctx *c = ctx_get();

	if (c) {
		c->ipi_seq = ++c->seq;
		c->ipi = vector;
		c->ipi_ts = bpf_ktime_get_ns();
	}
}

/* A vector's two programs, its exit's first (attached first). */
#define VECTOR_PROGS(name, vector)                                                                 \
	SEC("tp_btf/" #name "_exit")                                                               \
	int BPF_PROG(name##_exit, int v)                                                           \
	{                                                                                          \
		ipi_exit_seen();                                                                   \
		return 0;                                                                          \
	}                                                                                          \
	SEC("tp_btf/" #name "_entry")                                                              \
	int BPF_PROG(name##_entry, int v)                                                          \
	{                                                                                          \
		ipi_entry_seen(vector);                                                            \
		return 0;                                                                          \
	}

VECTOR_PROGS(irq_work, IPI_IRQ_WORK)
VECTOR_PROGS(call_function, IPI_CALL_FUNCTION)
VECTOR_PROGS(call_function_single, IPI_CALL_FUNCTION_SINGLE)
VECTOR_PROGS(reschedule, IPI_RESCHEDULE)
VECTOR_PROGS(x86_platform_ipi, IPI_PLATFORM)

/* The waker's context: a task (WAKE_TASK), or the innermost interrupt, softirq or timer
 * callback running on this CPU, with its detail (irq number, vector) or callback (*func;
 * for a system vector, the time its handler was entered). */
static __always_inline __u32 wake_context(struct cpu_ctx *c, __u32 *detail, __u64 *func)
{
	__u64 top;

	if (!c)
		return WAKE_TASK;
	top = in_softirq_now(c) ? c->softirq_seq : 0;
	if (c->irq_seq > top)
		top = c->irq_seq;
	if (c->hrtimer_seq > top)
		top = c->hrtimer_seq;
	if (c->timer_seq > top)
		top = c->timer_seq;
	if (c->ipi_seq > top)
		top = c->ipi_seq;
	if (!top)
		return WAKE_TASK;
	if (top == c->ipi_seq) {
		*detail = c->ipi;
		*func = c->ipi_ts;
		return WAKE_IPI;
	}
	if (top == c->irq_seq) {
		*detail = c->irq;
		return WAKE_HARDIRQ;
	}
	if (top == c->hrtimer_seq) {
		*func = c->hrtimer_func;
		return WAKE_HRTIMER;
	}
	if (top == c->timer_seq) {
		*func = c->timer_func;
		return WAKE_TIMER;
	}
	*detail = c->vec;
	return WAKE_SOFTIRQ;
}

/* ---- scheduler ---- */

/* poll, ppoll, select and pselect6 take no fd first, but many: the first one they wait on
 * costs one small read of the caller's memory (the pollfd array's first entry, the first
 * word of the read, else write, fd set). x86-64 syscall numbers, as the rest of the file. */
static __always_inline __s32 polled_fd(const struct user_place *u, __u32 *flags)
{
	__u64 set = 0, p;
	__s32 fd = -1;
	int i;

	if (u->nr == 7 || u->nr == 271) { /* poll, ppoll */
		if (!u->args[1] || bpf_probe_read_user(&fd, sizeof(fd), (void *)u->args[0]) ||
		    fd < 0)
			return -1;
		*flags |= SWITCH_POLLED_FD | (u->args[1] > 1 ? SWITCH_MORE_FDS : 0);
		return fd;
	}
	if (u->nr != 23 && u->nr != 270) /* select, pselect6 */
		return -1;
	p = u->args[1] ? u->args[1] : u->args[2];
	if (!p || bpf_probe_read_user(&set, sizeof(set), (void *)p) || !set)
		return -1;
	for (i = 0; i < 64; i++)
		if (set & (1ull << i))
			break;
	/* more: another bit in this word, fds beyond it, or both sets */
	if ((set & (set - 1)) || u->args[0] > 64 || (u->args[1] && u->args[2]))
		*flags |= SWITCH_MORE_FDS;
	*flags |= SWITCH_POLLED_FD;
	return i;
}

/* switch_windows: counts a switch of the task whose state st is (NULL: no target, or no
 * state) and tells whether it has switched more than switch_windows times this period. */
static __always_inline bool switch_busy(struct task_state *st)
{
	if (!st)
		return true;
	if (st->sw_period != sw_period) {
		st->sw_period = sw_period;
		st->sw_count = 0;
	}
	if (st->sw_count < 0xffff)
		st->sw_count++;
	return st->sw_count > switch_windows;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 prev_tgid = prev->tgid, next_tgid = next->tgid;
	bool prev_t = is_target(prev_tgid), next_t = is_target(next_tgid);
	__u64 kstack = 0, ustack = 0, ts;
	struct user_place u = {.nr = -1};
	struct task_state *st, *ps = NULL, *ns = NULL;
	struct rec *r;
	__s32 fd = -1;
	__u32 fd_flags = 0;
	bool busy;

	if (!prev_t && !next_t)
		return 0;
	if (floor_mode == 2)
		return bare_record(REC_SWITCH, prev->pid, prev_tgid);
	if (switch_windows) {
		ps = prev_t ? bpf_task_storage_get(&task_states, prev, 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE)
			    : NULL;
		ns = next_t ? bpf_task_storage_get(&task_states, next, 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE)
			    : NULL;
		busy = switch_busy(ps) & switch_busy(ns);
		/* A side that is no target (or has no state) counts as busy: the switch is
		 * written when one target side switches seldom. */
		if (busy && sys_between_windows) {
			if (ps)
				ps->sw_gap = 1;
			if (ns)
				ns->sw_gap = 1;
			cs_add(CS_SWLEFT, 1);
			return 0;
		}
		if (sys_between_windows)
			cs_add(CS_SWKEPT, 1);
	}
	ts = bpf_ktime_get_ns();
	if (preempt)
		prev_state = TASK_RUNNING;
	/* Only blocking gets stacks: off-CPU graphs weigh blocked time; a preempted thread's
	 * wait shows in the scheduling delays. */
	if (prev_t && prev_state != TASK_RUNNING) {
		bool user = !(prev->flags & PF_KTHREAD);

		struct stack_cache *c = NULL;

		st = ps ? ps
			: bpf_task_storage_get(&task_states, prev, 0,
					       BPF_LOCAL_STORAGE_GET_F_CREATE);
		/* Keeps the address computed after the NULL test, where the verifier wants it. */
		if (st) {
			barrier_var(st);
			c = st->blocked;
		}
		if (user)
			c = user_place(prev, c, BLOCKED_PLACES, ts, &u);
		if (u.nr >= 0 && (__s64)u.args[0] >= -1 && (__s64)u.args[0] < 0x7fffffff)
			fd = (__s32)u.args[0];
		if (u.nr >= 0 && user && (u.nr == 7 || u.nr == 271 || u.nr == 23 || u.nr == 270))
			fd = polled_fd(&u, &fd_flags);
		if (want_stacks)
			task_stacks(ctx, prev, user, &u, c, ts, &kstack, &ustack);
	}
	r = rec_reserve(ts, REC_SWITCH, prev->pid, prev_tgid);
	if (!r)
		return 0;
	r->h.aux = prev_state;
	r->sw.next_tid = next->pid;
	r->sw.next_pid = next_tgid;
	/* Syscall numbers above 32767 (x32's, bit 30 set) do not fit: unknown. */
	r->sw.syscall = u.nr >= -1 && u.nr <= 32767 ? u.nr : -1;
	r->sw.fd = fd;
	r->sw.kstack = kstack;
	r->sw.ustack = ustack;
	r->sw.prev_prio = prev->prio;
	r->sw.flags = (preempt ? SWITCH_PREEMPT : 0) | (prev_t ? SWITCH_PREV_TARGET : 0) |
		      (next_t ? SWITCH_NEXT_TARGET : 0) | fd_flags;
	if (ps && ps->sw_gap) {
		r->sw.flags |= SWITCH_PREV_GAP;
		ps->sw_gap = 0;
	}
	if (ns && ns->sw_gap) {
		r->sw.flags |= SWITCH_NEXT_GAP;
		ns->sw_gap = 0;
	}
	/* The kernel charged prev up to the start of __schedule (update_curr ran before this
	 * tracepoint), so this is its CPU time to the nanosecond, which timestamps are not: a
	 * task woken onto an idle CPU is charged from its enqueue, not from this switch. */
	r->sw.runtime_ns = prev->se.sum_exec_runtime;
	rec_submit(r);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	__u32 tgid = p->tgid, kind, detail = 0;
	struct task_struct *cur;
	struct cpu_ctx *c;
	__u64 kstack = 0, ustack = 0, ts, func = 0;
	struct rec *r;

	if (!is_target(tgid))
		return 0;
	if (floor_mode == 2)
		return bare_record(REC_WAKING, p->pid, tgid);
	ts = bpf_ktime_get_ns();
	c = ctx_get();
	kind = wake_context(c, &detail, &func);
	cur = bpf_get_current_task_btf();
	/* In an interrupt the kernel stack tells the path (say, tcp_v4_rcv); the user stack
	 * would be the interrupted task's, unrelated. */
	if (!want_stacks || !want_waker_stacks) {
		/* No stacks: the waking's context alone. */
	} else if (kind != WAKE_TASK) {
		bool from_stack = kind == WAKE_SOFTIRQ && softirq_vec_from_stack;
		__u32 vec = REC_SOFTIRQ_UNKNOWN;

		kstack = irq_kstack(ctx, kind, from_stack ? 0 : detail, ts, &vec);
		/* softirq_entry's vector while it is attached, where the stack names none */
		if (from_stack && (vec != REC_SOFTIRQ_UNKNOWN || softirq_entry_off))
			detail = vec;
	} else {
		bool user = !(cur->flags & PF_KTHREAD);
		struct user_place u = {.nr = -1};
		struct task_state *st;
		struct stack_cache *sc;

		st = bpf_task_storage_get(&task_states, cur, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		sc = NULL;
		if (st) {
			barrier_var(st);
			sc = st->waking;
		}
		if (user)
			sc = user_place(cur, sc, WAKING_PLACES, ts, &u);
		task_stacks(ctx, cur, user, &u, sc, ts, &kstack, &ustack);
	}
	r = rec_reserve(ts, REC_WAKING, p->pid, tgid);
	if (!r)
		return 0;
	r->h.aux = kind;
	r->wk.waker_tid = cur->pid;
	r->wk.detail = detail;
	if (kind == WAKE_TASK) {
		bpf_get_current_comm(r->wk.u.comm, sizeof(r->wk.u.comm));
	} else if (kind == WAKE_HARDIRQ) {
		struct irqaction *a = c ? (struct irqaction *)c->action : NULL;

		if (a)
			bpf_probe_read_kernel_str(r->wk.u.irq, sizeof(r->wk.u.irq),
						  BPF_CORE_READ(a, name));
	} else if (kind != WAKE_SOFTIRQ) {
		r->wk.u.func = func;
	}
	r->wk.kstack = kstack;
	r->wk.ustack = ustack;
	rec_submit(r);
	return 0;
}

/* A wake-up that comes right after its waking on this CPU (the same try_to_wake_up, as
 * most do) is written into the waking's record (REC_WAKING_FOLD) instead of a record of its
 * own: the wake-ups were a fifth of a loaded server's records, and the recorder's time goes
 * by records. The waking must still be in this CPU's batch, its last record, with no
 * program writing the batch (depth 0); the depth taken meanwhile keeps flush_batch, in an
 * interrupt, from sending the batch under the change. True when folded. */
static __always_inline bool fold_wakeup(struct task_struct *p, __u64 ts)
{
	struct cpu_batch *b = cpu_batch();
	bool folded = false;
	struct rec *w;
	__u32 d, n;
	__u64 units;

	if (!b || no_batch)
		return false;
	d = b->depth++;
	barrier();
	n = b->h.n;
	if (d == 0 && n > 0 && n <= REC_BATCH_RECS) {
		w = &b->recs[(n - 1) & (REC_BATCH_RECS - 1)];
		units = (ts - w->h.ts + REC_WAKING_FOLD_NS / 2) / REC_WAKING_FOLD_NS;
		if (w->h.type == REC_WAKING && w->h.tid == p->pid && ts >= w->h.ts &&
		    !(w->h.aux & ~0xffu) && units < REC_WAKING_FOLD_MAX) {
			w->h.aux |= (__u32)(units + 1) << 8 | (__u32)p->thread_info.cpu << 16;
			folded = true;
		}
	}
	barrier();
	b->depth--;
	return folded;
}

static __always_inline int emit_wakeup(struct task_struct *p, __u16 type)
{
	__u64 ts;
	__u32 tgid = p->tgid;
	struct rec *r;

	if (!is_target(tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	if (type == REC_WAKEUP && p->thread_info.cpu <= 0xffff && fold_wakeup(p, ts))
		return 0;
	r = rec_reserve(ts, type, p->pid, tgid);
	if (!r)
		return 0;
	r->h.aux = p->thread_info.cpu;
	if (type == REC_WAKEUP_NEW)
		BPF_CORE_READ_STR_INTO(&r->task.comm, p, comm);
	rec_submit(r);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	return emit_wakeup(p, REC_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	return emit_wakeup(p, REC_WAKEUP_NEW);
}

/* ---- processes ---- */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct rec *r;

	if (!is_target(ptgid))
		return 0;
	if (!filter_all && ctgid != ptgid)
		__sync_fetch_and_or(&target_bits[(ctgid / 64) % TARGET_WORDS],
				    1ull << (ctgid % 64));
	r = rec_reserve(ts, REC_FORK, BPF_CORE_READ(child, pid), ctgid);
	if (!r)
		return 0;
	r->h.aux = BPF_CORE_READ(parent, pid);
	r->task.parent_pid = ptgid;
	BPF_CORE_READ_STR_INTO(&r->task.comm, child, comm);
	rec_submit(r);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 tgid = BPF_CORE_READ(p, tgid);
	const char *fn;
	struct rec *r;
	int len;

	if (!is_target(tgid))
		return 0;
	r = rec_reserve(ts, REC_EXEC, BPF_CORE_READ(p, pid), tgid);
	if (!r)
		return 0;
	r->h.aux = old_pid;
	BPF_CORE_READ_STR_INTO(&r->task.comm, p, comm);
	fn = BPF_CORE_READ(bprm, filename);
	/* Keep the tail of the path: the name is what tells programs apart. */
	len = bpf_probe_read_kernel_str(r->task.file, sizeof(r->task.file), fn);
	if (len == sizeof(r->task.file)) {
		char buf[64];
		int n = bpf_probe_read_kernel_str(buf, sizeof(buf), fn);

		if (n > (int)sizeof(r->task.file) && n <= (int)sizeof(buf))
			bpf_probe_read_kernel(r->task.file, sizeof(r->task.file),
					      buf + ((n - (int)sizeof(r->task.file)) & 63));
		r->task.file[sizeof(r->task.file) - 1] = 0;
	}
	rec_submit(r);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p, bool group_dead)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct rec *r;

	if (!is_target(tgid))
		return 0;
	r = rec_reserve(ts, REC_EXIT, BPF_CORE_READ(p, pid), tgid);
	if (!r)
		return 0;
	r->h.aux = BPF_CORE_READ(p, exit_code);
	r->task.flags = group_dead;
	BPF_CORE_READ_STR_INTO(&r->task.comm, p, comm);
	rec_submit(r);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *p, const char *comm)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct rec *r;

	if (!is_target(tgid))
		return 0;
	r = rec_reserve(ts, REC_COMM, BPF_CORE_READ(p, pid), tgid);
	if (!r)
		return 0;
	bpf_probe_read_kernel_str(r->task.comm, sizeof(r->task.comm), comm);
	rec_submit(r);
	return 0;
}

/* ---- syscalls (--syscalls only: tracing every syscall costs): each written at its exit ---- */

/* Per CPU: the targets' syscalls written in full (SYSCNT_FULL) and left out between the
 * windows (SYSCNT_OUT, REC_SYSCALL_FD ones included): the share sampled, for user space. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SYSCNT_KINDS);
	__type(key, __u32);
	__type(value, __u64);
} sys_counts SEC(".maps");

/* x86-64 numbers of the syscalls written between windows: those that make, duplicate,
 * change the mode of, or close an fd (what the model's fd tables and connections follow). */
static __always_inline bool fd_lifecycle(long nr)
{
	switch (nr) {
	case 2:	  /* open */
	case 3:	  /* close */
	case 32:  /* dup */
	case 33:  /* dup2 */
	case 41:  /* socket */
	case 43:  /* accept */
	case 72:  /* fcntl */
	case 213: /* epoll_create */
	case 233: /* epoll_ctl */
	case 257: /* openat */
	case 282: /* signalfd */
	case 283: /* timerfd_create */
	case 284: /* eventfd */
	case 288: /* accept4 */
	case 289: /* signalfd4 */
	case 290: /* eventfd2 */
	case 291: /* epoll_create1 */
	case 292: /* dup3 */
	case 437: /* openat2 */
		return true;
	default:
		return false;
	}
}

static __always_inline void sys_count(__u32 kind)
{
	__u64 *n = bpf_map_lookup_elem(&sys_counts, &kind);

	if (n)
		(*n)++;
}

/* Split sampling (set by user space; record/syssample.h): the calls that give out, change
 * or take back fds are written at their exits by fd_exit, attached to each such syscall's
 * own exit tracepoint for the whole recording, and sys_exit, which every syscall of every
 * process on the machine pays for, only while a window is open (sys_enter, always there,
 * keeps the fd syscalls' arguments and counts the rest between windows). sys_window_gen changes at
 * each opening: a syscall entered before sys_exit was last detached is not written at an exit seen
 * after it is attached again. */
__u32 sys_split;
__u32 sys_window_gen;

/* A syscall entered: kept in the task's state for its exit. */
static __always_inline void syscall_entered(long id, __u64 a0, __u64 a1, __u64 a2, __u64 a3,
					    __u8 out, __u8 lifecycle)
{
	struct task_state *sc;

	sc = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sc)
		return;
	sc->enter_ts = bpf_ktime_get_ns();
	sc->nr = id;
	sc->out = out;
	sc->lifecycle = lifecycle;
	sc->gen = sys_window_gen;
	sc->args[0] = a0;
	sc->args[1] = a1;
	sc->args[2] = a2;
	if (want_syscall_args)
		sc->arg3 = a3;
	sc->active = 1;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u8 out = sys_between_windows;

	if (!is_target(pid_tgid >> 32))
		return 0;
	sys_count(out ? SYSCNT_OUT : SYSCNT_FULL);
	if (out && !fd_lifecycle(id))
		return 0;
	/* regs is a trusted BTF pointer: plain loads, not a helper call each. Split, an fd
	 * syscall's exit is fd_exit's, in windows and out. */
	syscall_entered(id, regs->di, regs->si, regs->dx, regs->r10, out,
			sys_split && fd_lifecycle(id));
	return 0;
}

/* What syscalls:sys_exit_NAME hands a program (its format file: __syscall_nr an int at
 * offset 8, ret in 8 bytes at 16). */
struct fd_sys_exit {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

/* The iovec lengths of an array at iov (cnt entries) into a: the entries kept in one read
 * of user memory (each read costs a fixed fraction of a microsecond, whatever its size). */
static __always_inline void read_iov_lens(struct rec_sysargs *a, __u64 iov, __u64 cnt)
{
	__u64 v[REC_SYSARGS_VALS * 2] = {}, n = cnt < REC_SYSARGS_VALS ? cnt : REC_SYSARGS_VALS;
	int i;

	a->nr_vals = cnt > 0xffffffffull ? 0xffffffffu : cnt;
	if (!n)
		return;
	barrier_var(n);
	if (n > REC_SYSARGS_VALS)
		return;
	/* A read that fails whole (the array ends on a page not mapped) leaves zeros. */
	bpf_probe_read_user(v, n * 16, (void *)iov);
	for (i = 0; i < REC_SYSARGS_VALS; i++) {
		if (i >= n)
			break;
		a->vals[i] = v[i * 2 + 1] > 0xffffffffull ? 0xffffffffu : v[i * 2 + 1];
	}
}

/* x86-64 numbers of the syscalls REC_SYSCALL_ARGS is written for. */
static __always_inline void write_sysargs(struct task_state *sc)
{
	__u64 a1 = sc->args[1], iov = 0, cnt = 0;
	struct rec *r;
	__u32 ev = 0;

	switch (sc->nr) {
	case 19:  /* readv */
	case 20:  /* writev */
	case 295: /* preadv */
	case 296: /* pwritev */
	case 46:  /* sendmsg */
	case 47:  /* recvmsg */
	case 233: /* epoll_ctl */
	case 288: /* accept4 */
	case 44:  /* sendto */
	case 45:  /* recvfrom */
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
	case 17:  /* pread64 */
	case 18:  /* pwrite64 */
		break;
	default:
		return;
	}
	r = rec_reserve_ring(sc->enter_ts, REC_SYSCALL_ARGS, (__u32)bpf_get_current_pid_tgid(),
			     bpf_get_current_pid_tgid() >> 32);
	if (!r)
		return;
	r->h.aux = sc->nr;
	__builtin_memset(&r->sa, 0, sizeof(r->sa));
	r->sa.arg3 = sc->arg3;
	if (sc->nr == 19 || sc->nr == 20 || sc->nr == 295 || sc->nr == 296) {
		read_iov_lens(&r->sa, a1, sc->args[2]);
	} else if (sc->nr == 46 || sc->nr == 47) {
		__u64 m[2] = {}; /* msg_iov, msg_iovlen: adjacent, one read */

		bpf_probe_read_user(m, sizeof(m), (void *)(a1 + 16));
		iov = m[0];
		cnt = m[1];
		read_iov_lens(&r->sa, iov, cnt);
	} else if (sc->nr == 233 && sc->arg3) {
		bpf_probe_read_user(&ev, sizeof(ev), (void *)sc->arg3);
		r->sa.nr_vals = 1;
		r->sa.vals[0] = ev;
	}
	rec_submit_ring(r);
}

/* The syscall in the task's state has returned ret: written out. */
static __always_inline void syscall_returned(struct task_state *sc, long ret, __u64 pid_tgid)
{
	struct rec *r;

	sc->active = 0;
	if (want_syscall_args)
		write_sysargs(sc);
	r = rec_reserve_ring(bpf_ktime_get_ns(), sc->out ? REC_SYSCALL_FD : REC_SYSCALL,
			     (__u32)pid_tgid, pid_tgid >> 32);
	if (!r)
		return;
	r->h.aux = sc->nr;
	r->sc.ret = ret;
	r->sc.enter_ts = sc->enter_ts;
	r->sc.args[0] = sc->args[0];
	r->sc.args[1] = sc->args[1];
	r->sc.args[2] = sc->args[2];
	rec_submit_ring(r);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_state *sc;

	if (!is_target(pid_tgid >> 32))
		return 0;
	sc = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	if (!sc || !sc->active || sc->lifecycle)
		return 0;
	if (sc->gen != sys_window_gen) { /* entered before sys_exit was last detached */
		sc->active = 0;
		return 0;
	}
	syscall_returned(sc, ret, pid_tgid);
	return 0;
}

SEC("tracepoint")
int fd_exit(struct fd_sys_exit *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_state *sc;

	if (!is_target(pid_tgid >> 32))
		return 0;
	sc = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	/* An fd syscall's exit is this program's once sampling splits: marked so at its entry,
	 * or entered before (sys_exit's then, but sys_exit has been detached since, or is
	 * about to be). Both may run for one exit at a window's close: the first writes it. */
	if (!sc || !sc->active || sc->nr != ctx->nr ||
	    !(sc->lifecycle || sys_between_windows || sc->gen != sys_window_gen))
		return 0;
	syscall_returned(sc, ctx->ret, pid_tgid);
	return 0;
}

/* ---- on-CPU samples (cpu-clock), attached by user space when asked for ---- */

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 kstack = 0, ustack = 0, ts;
	struct rec *r;

	if (!is_target(pid_tgid >> 32))
		return 0;
	ts = bpf_ktime_get_ns();
	if (want_stacks) {
		kstack = take_stack(ctx, false, 1);
		ustack = take_ustack(ctx, 1);
	}
	r = rec_reserve(ts, REC_SAMPLE, (__u32)pid_tgid, pid_tgid >> 32);
	if (!r)
		return 0;
	r->sample.kstack = kstack;
	r->sample.ustack = ustack;
	rec_submit(r);
	return 0;
}

/* ---- record --net: TCP segments as they leave and reach a device (srvscope critical) ---- */

/* The network namespace (inode number) whose devices are recorded: the recorder's own, so
 * that a host is a namespace; 0: every one. */
const volatile __u32 net_ns = 0;
/* --net=all: loopback too. By default its segments are left out: they never cross hosts,
 * and a loopback-heavy server makes as many of them as scheduler events. */
const volatile bool net_loopback = false;

#define ETH_P_IP_BE   0x0008 /* htons(ETH_P_IP) */
#define ETH_P_IPV6_BE 0xdd86 /* htons(ETH_P_IPV6) */

#ifndef RECORD_NO_RDONLY_CAST
/* The fields of the TCP header at t that a record keeps, into tcph. */
static __always_inline void net_tcp(const struct tcphdr *t, struct tcphdr *tcph)
{
	tcph->source = t->source;
	tcph->dest = t->dest;
	tcph->seq = t->seq;
	tcph->ack_seq = t->ack_seq;
	tcph->doff = t->doff;
	((__u8 *)tcph)[13] = ((const __u8 *)t)[13];
}
#endif

/* The IPv4 and TCP headers at ip into iph and tcph; non-zero when not TCP over IPv4. Loaded
 * in place where the kernel allows it (a header is a few words: a probe read costs more
 * than they do). */
static __always_inline int net_headers(void *ip, struct iphdr *iph, struct tcphdr *tcph)
{
#ifdef RECORD_NO_RDONLY_CAST
	/* One read for the common 20-byte IP header, a second one only with options. */
	struct {
		struct iphdr ip;
		struct tcphdr tcp;
	} h;

	if (bpf_probe_read_kernel(&h, sizeof(h), ip) || h.ip.version != 4 || h.ip.protocol != 6)
		return -1;
	*iph = h.ip;
	*tcph = h.tcp;
	if (h.ip.ihl * 4 != sizeof(h.ip) &&
	    bpf_probe_read_kernel(tcph, sizeof(*tcph), ip + h.ip.ihl * 4))
		return -1;
	return 0;
#else
	const struct iphdr *i = bpf_rdonly_cast(ip, bpf_core_type_id_kernel(struct iphdr));

	if (i->version != 4 || i->protocol != 6)
		return -1;
	iph->ihl = i->ihl;
	iph->saddr = i->saddr;
	iph->daddr = i->daddr;
	iph->tot_len = i->tot_len;
	net_tcp(bpf_rdonly_cast(ip + i->ihl * 4, bpf_core_type_id_kernel(struct tcphdr)), tcph);
	return 0;
#endif
}

/* The IPv6 and TCP headers at ip, as net_headers. A segment behind extension headers (the
 * next header not TCP) is not one: TCP over IPv6 rarely has any. */
static __always_inline int net6_headers(void *ip, struct ipv6hdr *ip6h, struct tcphdr *tcph)
{
#ifdef RECORD_NO_RDONLY_CAST
	struct {
		struct ipv6hdr ip6;
		struct tcphdr tcp;
	} h;

	if (bpf_probe_read_kernel(&h, sizeof(h), ip) || h.ip6.version != 6 ||
	    h.ip6.nexthdr != IPPROTO_TCP)
		return -1;
	*ip6h = h.ip6;
	*tcph = h.tcp;
	return 0;
#else
	const struct ipv6hdr *i = bpf_rdonly_cast(ip, bpf_core_type_id_kernel(struct ipv6hdr));

	if (i->version != 6 || i->nexthdr != IPPROTO_TCP)
		return -1;
	ip6h->payload_len = i->payload_len;
	ip6h->saddr = i->saddr;
	ip6h->daddr = i->daddr;
	net_tcp(bpf_rdonly_cast(ip + sizeof(*i), bpf_core_type_id_kernel(struct tcphdr)), tcph);
	return 0;
#endif
}

/* What an IPv6 address leaves in a record's 4-byte field (its REC_NET6 holds it whole). */
static __always_inline __u32 addr6_fold(const struct in6_addr *a)
{
	return a->in6_u.u6_addr32[0] ^ a->in6_u.u6_addr32[1] ^ a->in6_u.u6_addr32[2] ^
	       a->in6_u.u6_addr32[3];
}

/* The REC_NET6 of an IPv6 segment, written before its own record (same ts, same CPU). */
static __always_inline void net6_addrs(__u64 ts, __u64 id, const struct ipv6hdr *ip6h,
				       const struct tcphdr *tcph)
{
	struct rec *r = rec_reserve(ts, REC_NET6, (__u32)id, id >> 32);

	if (!r)
		return;
	__builtin_memcpy(r->net6.saddr, &ip6h->saddr, sizeof(r->net6.saddr));
	__builtin_memcpy(r->net6.daddr, &ip6h->daddr, sizeof(r->net6.daddr));
	r->net6.sport = tcph->source;
	r->net6.dport = tcph->dest;
	r->net6.seq = tcph->seq;
	rec_submit(r);
}

/* One TCP segment of skb over IPv4 or IPv6, whose IP header is at ip. The sender (a TX in a
 * task's context) or the interrupted task is the record's tid; softirq tells which softirq
 * run it happened in, so that a segment sent in answer to another (a SYN-ACK, an ACK) is
 * tied to it. */
static __always_inline int net_record(struct sk_buff *skb, void *ip, __u16 type)
{
	/* skb is a trusted BTF pointer here: its fields are plain loads, not helper calls. */
	struct net_device *dev = skb->dev;
	bool v6 = skb->protocol == ETH_P_IPV6_BE;
	struct {
		union {
			struct iphdr ip;
			struct ipv6hdr ip6;
		};
		struct tcphdr tcp;
	} h;
	struct cpu_ctx *c;
	__u32 ns, hl;
	__u64 id, ts;
	__u16 tot;
	struct rec *r;

	if (!dev || (skb->protocol != ETH_P_IP_BE && !v6))
		return 0;
	if (!net_loopback && (dev->flags & IFF_LOOPBACK))
		return 0;
	ns = dev->nd_net.net->ns.inum;
	if (net_ns && ns != net_ns)
		return 0;
	if (v6 ? net6_headers(ip, &h.ip6, &h.tcp) : net_headers(ip, &h.ip, &h.tcp))
		return 0;
	/* tot: the IP packet's bytes after hl (IPv6's payload length excludes its header) */
	hl = v6 ? 0 : h.ip.ihl * 4;
	tot = __builtin_bswap16(v6 ? h.ip6.payload_len : h.ip.tot_len);
	c = ctx_get();
	if (!c)
		return 0;
	ts = bpf_ktime_get_ns();
	id = bpf_get_current_pid_tgid();
	if (v6)
		net6_addrs(ts, id, &h.ip6, &h.tcp);
	r = rec_reserve(ts, type, (__u32)id, id >> 32);
	if (!r)
		return 0;
	r->h.aux = dev->ifindex;
	r->net.saddr = v6 ? addr6_fold(&h.ip6.saddr) : h.ip.saddr;
	r->net.daddr = v6 ? addr6_fold(&h.ip6.daddr) : h.ip.daddr;
	r->net.sport = h.tcp.source;
	r->net.dport = h.tcp.dest;
	r->net.seq = h.tcp.seq;
	r->net.ack = h.tcp.ack_seq;
	r->net.len = tot > hl + h.tcp.doff * 4 ? tot - hl - h.tcp.doff * 4 : 0;
	r->net.flags = ((__u8 *)&h.tcp)[13];
	r->net.family = v6 ? REC_NET_IPV6 : 0;
	r->net.netns = ns;
	r->net.softirq = in_softirq_now(c) ? c->softirq_seq : 0;
	rec_submit(r);
	return 0;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(net_tx, struct sk_buff *skb)
{
	/* On the way out the network header offset is set; data may point at a link header. */
	return net_record(skb, skb->head + skb->network_header, REC_NET_TX);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(net_rx, struct sk_buff *skb)
{
	/* On the way in the link header is pulled already: data is the IP header. */
	return net_record(skb, skb->data, REC_NET_RX);
}

/* ---- record --ipi: inter-processor interrupts sent (srvscope critical) ---- */

/* The possible CPUs (user space): words of a cpumask beyond them are not the mask's (an
 * off-stack mask is allocated that long). */
const volatile __u32 ipi_nr_cpus = 64;

/* Bit counts by arithmetic: clang's BPF backend has no lowering for popcount or ctz. */
static __always_inline __u32 bits_set(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (x * 0x0101010101010101ull) >> 56;
}

static __always_inline __u32 lowest_bit(__u64 x)
{
	return bits_set((x & -x) - 1);
}

/* One IPI sent to targets (cpus: the first two words of their mask, nr: how many in all),
 * by whatever runs on this CPU: the running task is the record's, the context (a task, an
 * interrupt, a timer) its aux. */
static __always_inline int ipi_record(const __u64 *cpus, __u32 nr, __u64 callsite, void *callback)
{
	struct task_struct *cur;
	struct cpu_ctx *c = ctx_get();
	__u32 kind, detail = 0;
	__u64 func = 0, ts;
	struct rec *r;

	if (!c || !nr)
		return 0;
	ts = bpf_ktime_get_ns();
	kind = wake_context(c, &detail, &func);
	cur = bpf_get_current_task_btf();
	r = rec_reserve(ts, REC_IPI_SEND, cur->pid, cur->tgid);
	if (!r)
		return 0;
	r->h.aux = kind | (detail & 0xffffff) << 8;
	r->ipi.callsite = callsite;
	r->ipi.callback = (__u64)callback;
	r->ipi.cpus[0] = cpus[0];
	r->ipi.cpus[1] = cpus[1];
	r->ipi.target = cpus[0] ? lowest_bit(cpus[0]) : 64 + lowest_bit(cpus[1]);
	r->ipi.nr_targets = nr;
	rec_submit(r);
	return 0;
}

static __always_inline int ipi_send_one(unsigned int cpu, unsigned long callsite, void *callback)
{
	__u64 cpus[2] = {};

	if (cpu < 64)
		cpus[0] = 1ull << cpu;
	else if (cpu < REC_IPI_CPUS)
		cpus[1] = 1ull << (cpu - 64);
	else
		return 0; /* no room to say which */
	return ipi_record(cpus, 1, callsite, callback);
}

/* Bits of a mask word below the possible CPUs' count, the word being the wordth. */
static __always_inline __u64 ipi_word(__u64 w, __u32 word)
{
	__u32 below = ipi_nr_cpus > word * 64 ? ipi_nr_cpus - word * 64 : 0;

	return below >= 64 ? w : w & ((1ull << below) - 1);
}

static __always_inline int ipi_send_mask(const struct cpumask *mask, unsigned long callsite,
					 void *callback)
{
	__u64 cpus[2] = {}, w;
	__u32 nr, i, words = (ipi_nr_cpus + 63) / 64;

	if (bpf_probe_read_kernel(cpus, words > 1 ? 16 : 8, mask->bits))
		return 0;
	cpus[0] = ipi_word(cpus[0], 0);
	cpus[1] = ipi_word(cpus[1], 1);
	nr = bits_set(cpus[0]) + bits_set(cpus[1]);
	/* Masks beyond 128 CPUs: counted (a broadcast is rare; it reads a word each). */
	for (i = 2; i < words && i < 128; i++) {
		if (bpf_probe_read_kernel(&w, sizeof(w), &mask->bits[i]))
			break;
		nr += bits_set(ipi_word(w, i));
	}
	if (!cpus[0] && !cpus[1])
		return 0; /* only CPUs above 127: no room to say which */
	return ipi_record(cpus, nr, callsite, callback);
}

/* Each send tracepoint has two programs. The kernel skips a program that fires while it is
 * already running on the CPU (it counts it only in the program's recursion_misses), and a
 * send comes while this CPU runs ipi_send_cpu in a task whenever an interrupt sends one:
 * bpftool showed 78 skipped in one 5 s recording of rec_whole, and a recorder of
 * t73-critical-hosts lacked a send its two peers had. The second program writes the send
 * only while the first is running below it on this CPU, that is when the kernel skipped the
 * first for it, in whichever order the two run. */
SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(ipi_send_cpu, unsigned int cpu, unsigned long callsite, void *callback)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->ipi_sending_cpu++;
	ipi_send_one(cpu, callsite, callback);
	if (c && c->ipi_sending_cpu)
		c->ipi_sending_cpu--;
	return 0;
}

SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(ipi_send_cpu2, unsigned int cpu, unsigned long callsite, void *callback)
{
	struct cpu_ctx *c = ctx_get();

	if (!c || !c->ipi_sending_cpu)
		return 0;
	return ipi_send_one(cpu, callsite, callback);
}

SEC("tp_btf/ipi_send_cpumask")
int BPF_PROG(ipi_send_cpumask, const struct cpumask *mask, unsigned long callsite, void *callback)
{
	struct cpu_ctx *c = ctx_get();

	if (c)
		c->ipi_sending_mask++;
	ipi_send_mask(mask, callsite, callback);
	if (c && c->ipi_sending_mask)
		c->ipi_sending_mask--;
	return 0;
}

SEC("tp_btf/ipi_send_cpumask")
int BPF_PROG(ipi_send_cpumask2, const struct cpumask *mask, unsigned long callsite, void *callback)
{
	struct cpu_ctx *c = ctx_get();

	if (!c || !c->ipi_sending_mask)
		return 0;
	return ipi_send_mask(mask, callsite, callback);
}
