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

const volatile bool filter_all = false;	   /* -a: every task is a target */
const volatile bool want_stacks = true;	   /* kernel and user stacks */
const volatile bool syscalls_all = false;  /* a record for every syscall (sys_enter/exit) */
/* Stacks taken where a thread blocked (or woke another) are reused while it blocks at the
 * same place (same syscall, same user ip, sp and bp) for this long: walking a kernel stack
 * costs microseconds, blocking at the same place thousands of times a second is common. */
const volatile __u64 stack_refresh_ns = 100 * 1000 * 1000ull;
const volatile __u64 wakeup_bytes = 1 << 20; /* wake user space past this much data */
const volatile __u32 self_tgid = 0;	   /* srvscope itself, never a target */

#define CTX_DEPTH 4
#define CTX_STALE_NS (50 * 1000 * 1000ull)
#define PF_KTHREAD 0x00200000
#define TASK_RUNNING 0

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* user space resizes it before loading */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

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

struct irq_level {
	__u64 ts;
	__u32 kind; /* enum wake_kind */
	__u32 detail;
	union {
		char name[REC_COMM_LEN];
		__u64 func;
	};
};

struct cpu_ctx {
	__u32 depth;
	__u32 pad;
	struct irq_level lvl[CTX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/* Stacks last taken at one place in a task, and where that was. */
struct stack_cache {
	__u64 ts, ip, sp, bp;
	__s64 nr;
	__u64 kstack, ustack;
};

struct task_state {
	struct stack_cache blocked; /* as the task blocked */
	struct stack_cache waking;  /* as it woke another */
	/* --syscalls: the syscall in progress, written out at its exit */
	__u64 enter_ts;
	__u64 args[3];
	__s32 nr;
	__u8 active;
	__u8 blocked_in;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

/* Kernel stacks of interrupt contexts (kind x detail), per CPU. */
#define IRQ_CACHE 64
struct irq_kstack_cache {
	__u64 ts, kstack;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IRQ_CACHE);
	__type(key, __u32);
	__type(value, struct irq_kstack_cache);
} irq_stacks SEC(".maps");

static __always_inline bool is_target(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	if (filter_all)
		return tgid != 0;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void count_lost(__u32 reason)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &reason);

	if (v)
		*v += 1;
}

static __always_inline __u64 rb_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

/* Takes the current kernel or user stack and returns its id, sending the frames to user
 * space the first time they are seen. 0 when no stack could be had. */
static __always_inline __u64 take_stack(void *ctx, bool user, __u32 slot)
{
	struct rec_stack *s = bpf_map_lookup_elem(&stack_scratch, &slot);
	__u64 h = 0xcbf29ce484222325ull;
	__u8 one = 1;
	long n;
	__u32 i, nr;

	if (!s)
		return 0;
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), user ? BPF_F_USER_STACK : 0);
	if (n <= 0) {
		count_lost(LOST_STACK_FAILED);
		return 0;
	}
	nr = (__u32)n / 8;
	if (nr > REC_MAX_FRAMES)
		nr = REC_MAX_FRAMES;
	for (i = 0; i < REC_MAX_FRAMES; i++) {
		if (i >= nr)
			break;
		h ^= s->ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= user ? 0x9e3779b97f4a7c15ull : 0;
	if (!h)
		h = 1;
	if (bpf_map_lookup_elem(&known_stacks, &h))
		return h;
	s->id = h;
	s->type = REC_STACK;
	s->user = user;
	s->nr = nr;
	if (bpf_ringbuf_output(&events, s, REC_STACK_HDR + (__u64)(nr & 127) * 8, rb_flags())) {
		count_lost(LOST_STACK_RINGBUF);
		return 0;
	}
	bpf_map_update_elem(&known_stacks, &h, &one, BPF_ANY);
	return h;
}

/* ts is taken when the program starts: stack walks come before the reservation and would
 * otherwise delay the timestamps of exactly the events that have stacks. */
static __always_inline struct rec *rec_reserve(__u64 ts, __u16 type, __u32 tid, __u32 pid)
{
	struct rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count_lost(LOST_RINGBUF);
		return NULL;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->h.ts = ts;
	r->h.type = type;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.tid = tid;
	r->h.pid = pid;
	return r;
}

static __always_inline void rec_submit(struct rec *r)
{
	bpf_ringbuf_submit(r, rb_flags());
}

static __always_inline bool is_user_task(struct task_struct *t)
{
	return !(BPF_CORE_READ(t, flags) & PF_KTHREAD);
}

/* Where a user task is: its registers as it entered the kernel, and the syscall it is in
 * (-1 when none: a task preempted or faulting in user mode). orig_ax alone cannot tell a
 * syscall from an exception's error code, so the instruction before ip must be 'syscall'. */
struct user_place {
	__u64 ip, sp, bp;
	__s64 nr;
	__u64 args[3];
};

static __always_inline void user_place(struct task_struct *t, struct user_place *u)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u16 insn = 0;

	u->nr = -1;
	if (!regs)
		return;
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	u->nr = (__s64)BPF_CORE_READ(regs, orig_ax);
	if (u->nr < 0)
		return;
	if (bpf_probe_read_user(&insn, sizeof(insn), (void *)(u->ip - 2)) || insn != 0x050f) {
		u->nr = -1;
		return;
	}
	u->args[0] = BPF_CORE_READ(regs, di);
	u->args[1] = BPF_CORE_READ(regs, si);
	u->args[2] = BPF_CORE_READ(regs, dx);
}

/* The current task's kernel and user stacks, from c when it was at the same place lately. */
static __always_inline void task_stacks(void *ctx, bool user, const struct user_place *u,
					struct stack_cache *c, __u64 ts, __u64 *kstack,
					__u64 *ustack)
{
	if (c && c->ts && ts - c->ts < stack_refresh_ns && c->ip == u->ip && c->sp == u->sp &&
	    c->bp == u->bp && c->nr == u->nr) {
		*kstack = c->kstack;
		*ustack = c->ustack;
		return;
	}
	*kstack = take_stack(ctx, false, 0);
	*ustack = user ? take_stack(ctx, true, 0) : 0;
	if (!c)
		return;
	c->ts = *kstack && (*ustack || !user) ? ts : 0;
	c->ip = u->ip;
	c->sp = u->sp;
	c->bp = u->bp;
	c->nr = u->nr;
	c->kstack = *kstack;
	c->ustack = *ustack;
}

/* An interrupt context's kernel stack, per CPU and context, refreshed like task stacks. */
static __always_inline __u64 irq_kstack(void *ctx, __u32 kind, __u32 detail, __u64 ts)
{
	__u32 key = (kind * 16 + (detail & 15)) & (IRQ_CACHE - 1);
	struct irq_kstack_cache *c = bpf_map_lookup_elem(&irq_stacks, &key);

	if (c && c->ts && ts - c->ts < stack_refresh_ns)
		return c->kstack;
	if (!c)
		return take_stack(ctx, false, 0);
	c->kstack = take_stack(ctx, false, 0);
	c->ts = c->kstack ? ts : 0;
	return c->kstack;
}

/* ---- interrupt, softirq and timer context, per CPU ---- */

static __always_inline struct cpu_ctx *ctx_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_ctxs, &zero);
}

static __always_inline struct irq_level *ctx_push(__u32 kind, __u32 detail)
{
	struct cpu_ctx *c = ctx_get();
	struct irq_level *l;
	__u64 now = bpf_ktime_get_ns();
	__u32 d;

	if (!c)
		return NULL;
	d = c->depth;
	/* An exit missed while attaching would leave a level behind: drop stale ones. */
	if (d > 0 && d <= CTX_DEPTH && now - c->lvl[(d - 1) & (CTX_DEPTH - 1)].ts > CTX_STALE_NS)
		d = 0;
	if (d >= CTX_DEPTH) {
		c->depth = d + 1;
		return NULL;
	}
	l = &c->lvl[d & (CTX_DEPTH - 1)];
	l->ts = now;
	l->kind = kind;
	l->detail = detail;
	l->func = 0;
	c->depth = d + 1;
	return l;
}

static __always_inline void ctx_pop(void)
{
	struct cpu_ctx *c = ctx_get();

	if (c && c->depth > 0)
		c->depth--;
}

/* Exits are defined before entries: programs attach in this order, so an entry is never
 * seen without its exit being watched too. */
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit, int irq, struct irqaction *action, int ret)
{
	ctx_pop();
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec)
{
	ctx_pop();
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_exit, struct hrtimer *t)
{
	ctx_pop();
	return 0;
}

SEC("tp_btf/timer_expire_exit")
int BPF_PROG(timer_exit, struct timer_list *t)
{
	ctx_pop();
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_entry, int irq, struct irqaction *action)
{
	struct irq_level *l = ctx_push(WAKE_HARDIRQ, irq);

	if (l)
		bpf_probe_read_kernel_str(l->name, sizeof(l->name), BPF_CORE_READ(action, name));
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry, unsigned int vec)
{
	ctx_push(WAKE_SOFTIRQ, vec);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_entry, struct hrtimer *t, ktime_t *now)
{
	struct irq_level *l = ctx_push(WAKE_HRTIMER, 0);

	if (l)
		l->func = (__u64)BPF_CORE_READ(t, function);
	return 0;
}

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(timer_entry, struct timer_list *t, unsigned long baseclk)
{
	struct irq_level *l = ctx_push(WAKE_TIMER, 0);

	if (l)
		l->func = (__u64)BPF_CORE_READ(t, function);
	return 0;
}

/* ---- scheduler ---- */

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid), next_tgid = BPF_CORE_READ(next, tgid);
	bool prev_t = is_target(prev_tgid), next_t = is_target(next_tgid);
	__u64 kstack = 0, ustack = 0, ts;
	struct user_place u = {};
	struct task_state *st;
	struct rec *r;
	__s32 fd = -1;

	if (!prev_t && !next_t)
		return 0;
	ts = bpf_ktime_get_ns();
	if (preempt)
		prev_state = TASK_RUNNING;
	/* Only blocking gets stacks: off-CPU graphs weigh blocked time; a preempted thread's
	 * wait shows in the scheduling delays. */
	if (prev_t && prev_state != TASK_RUNNING) {
		bool user = is_user_task(prev);

		st = bpf_task_storage_get(&task_states, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (user)
			user_place(prev, &u);
		else
			u.nr = -1;
		if (u.nr >= 0 && (__s64)u.args[0] >= -1 && (__s64)u.args[0] < 0x7fffffff)
			fd = (__s32)u.args[0];
		if (want_stacks)
			task_stacks(ctx, user, &u, st ? &st->blocked : NULL, ts, &kstack, &ustack);
		if (st && st->active)
			st->blocked_in = 1;
	} else {
		u.nr = -1;
	}
	r = rec_reserve(ts, REC_SWITCH, BPF_CORE_READ(prev, pid), prev_tgid);
	if (!r)
		return 0;
	r->h.aux = prev_state;
	r->sw.next_tid = BPF_CORE_READ(next, pid);
	r->sw.next_pid = next_tgid;
	r->sw.syscall = u.nr;
	r->sw.fd = fd;
	r->sw.kstack = kstack;
	r->sw.ustack = ustack;
	r->sw.prev_prio = BPF_CORE_READ(prev, prio);
	r->sw.flags = (preempt ? SWITCH_PREEMPT : 0) | (prev_t ? SWITCH_PREV_TARGET : 0) |
		      (next_t ? SWITCH_NEXT_TARGET : 0);
	rec_submit(r);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	__u64 ts;
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct task_struct *cur;
	struct irq_level *l = NULL;
	struct cpu_ctx *c;
	__u64 kstack = 0, ustack = 0;
	__u32 kind = WAKE_TASK, d;
	struct rec *r;

	if (!is_target(tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	c = ctx_get();
	if (c) {
		d = c->depth;
		if (d > 0 && d <= CTX_DEPTH) {
			l = &c->lvl[(d - 1) & (CTX_DEPTH - 1)];
			if (bpf_ktime_get_ns() - l->ts > CTX_STALE_NS) {
				c->depth = 0;
				l = NULL;
			}
		}
	}
	cur = bpf_get_current_task_btf();
	if (l)
		kind = l->kind;
	/* In an interrupt the kernel stack tells the path (say, tcp_v4_rcv); the user stack
	 * would be the interrupted task's, unrelated. */
	if (want_stacks && l) {
		kstack = irq_kstack(ctx, l->kind, l->detail, ts);
	} else if (want_stacks) {
		bool user = is_user_task(cur);
		struct user_place u = {};
		struct task_state *st;

		st = bpf_task_storage_get(&task_states, cur, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (user)
			user_place(cur, &u);
		task_stacks(ctx, user, &u, st ? &st->waking : NULL, ts, &kstack, &ustack);
	}
	r = rec_reserve(ts, REC_WAKING, BPF_CORE_READ(p, pid), tgid);
	if (!r)
		return 0;
	r->h.aux = kind;
	r->wk.waker_tid = BPF_CORE_READ(cur, pid);
	if (l) {
		r->wk.detail = l->detail;
		if (kind == WAKE_HARDIRQ)
			__builtin_memcpy(r->wk.u.irq, l->name, sizeof(r->wk.u.irq));
		else
			r->wk.u.func = l->func;
	} else {
		bpf_get_current_comm(r->wk.u.comm, sizeof(r->wk.u.comm));
	}
	r->wk.kstack = kstack;
	r->wk.ustack = ustack;
	rec_submit(r);
	return 0;
}

static __always_inline int emit_wakeup(struct task_struct *p, __u16 type)
{
	__u64 ts;
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct rec *r;

	if (!is_target(tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	r = rec_reserve(ts, type, BPF_CORE_READ(p, pid), tgid);
	if (!r)
		return 0;
	r->h.aux = BPF_CORE_READ(p, thread_info.cpu);
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
	__u8 one = 1;
	struct rec *r;

	if (!is_target(ptgid))
		return 0;
	if (!filter_all && ctgid != ptgid)
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
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

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_state *sc;

	if (!is_target(pid_tgid >> 32))
		return 0;
	sc = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sc)
		return 0;
	sc->enter_ts = bpf_ktime_get_ns();
	sc->nr = id;
	sc->args[0] = BPF_CORE_READ(regs, di);
	sc->args[1] = BPF_CORE_READ(regs, si);
	sc->args[2] = BPF_CORE_READ(regs, dx);
	sc->active = 1;
	sc->blocked_in = 0;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts;
	struct task_state *sc;
	struct rec *r;

	if (!is_target(pid_tgid >> 32))
		return 0;
	sc = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	if (!sc || !sc->active)
		return 0;
	sc->active = 0;
	if (!sc->blocked_in && !syscalls_all)
		return 0;
	ts = bpf_ktime_get_ns();
	r = rec_reserve(ts, REC_SYSCALL, (__u32)pid_tgid, pid_tgid >> 32);
	if (!r)
		return 0;
	r->h.aux = sc->nr;
	r->sc.ret = ret;
	r->sc.enter_ts = sc->enter_ts;
	r->sc.args[0] = sc->args[0];
	r->sc.args[1] = sc->args[1];
	r->sc.args[2] = sc->args[2];
	rec_submit(r);
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
		ustack = take_stack(ctx, true, 1);
	}
	r = rec_reserve(ts, REC_SAMPLE, (__u32)pid_tgid, pid_tgid >> 32);
	if (!r)
		return 0;
	r->sample.kstack = kstack;
	r->sample.ustack = ustack;
	rec_submit(r);
	return 0;
}
