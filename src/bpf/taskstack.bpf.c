// SPDX-License-Identifier: GPL-2.0
/* The "nostop" sampler's kernel side: a sleepable task iterator that writes, for every
 * thread of one process, its state, saved user registers, kernel stack and a copy of the
 * top of its user stack, without ever stopping it. Record layout: taskstack.h. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "taskstack.h"

#define PF_KTHREAD 0x00200000

char LICENSE[] SEC("license") = "GPL";

/*
 * Settings, written by nostop.c before each run rather than fixed at load time (const
 * volatile): the program is loaded once per process and serves every target, since a load
 * costs tens of milliseconds of BTF parsing and verification. The iterator link also
 * filters on the target, so target_tgid only guards kernels whose links cannot.
 */
__u32 target_tgid;
__u32 stack_size;
bool want_kernel;
bool page_copy_only; /* tests: always take the page-by-page path */

/* One record under construction per CPU (sleepable iterators run with migration off).
 * The slack page lets the verifier prove a page copy at any offset below the maximum
 * stays inside the value. Too big for a per-CPU map, so an array indexed by CPU. */
struct scratch {
	struct taskstack_rec rec;
	__u8 stack[TASKSTACK_MAX_STACK + TASKSTACK_PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to the number of possible CPUs before load */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Kernels before 5.14 call task_struct's state field "state". */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/*
 * The iterator hands us a trusted task pointer, so its fields are read with plain loads
 * (still relocated by CO-RE through vmlinux.h's preserve_access_index) rather than
 * BPF_CORE_READ's helper call per field: with a dozen fields per thread and a thousand
 * threads, the helper calls were a tenth of the whole capture.
 */
static __always_inline __u32 task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return task->__state;
	return BPF_CORE_READ((struct task_struct___old *)task, state);
}

static __always_inline __u64 task_switches(struct task_struct *task)
{
	return task->nvcsw + task->nivcsw;
}

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	*(__u64 *)ctx = BPF_CORE_READ(vma, vm_end);
	return 0;
}

struct page_copy {
	struct scratch *s;
	struct task_struct *task;
	__u64 sp, want;
};

/* One page of the page-by-page copy; 1 stops the loop. The length so far lives in the map
 * value, not in a register, so the verifier checks this once rather than per iteration. */
static long copy_page(__u32 i, void *arg)
{
	struct page_copy *c = arg;
	struct scratch *s = c->s;
	__u64 off = s->rec.stack_len, n;

	if (off >= c->want || off >= TASKSTACK_MAX_STACK)
		return 1;
	n = TASKSTACK_PAGE - ((c->sp + off) & (TASKSTACK_PAGE - 1));
	if (n > c->want - off)
		n = c->want - off;
	if (n > TASKSTACK_PAGE)
		return 1;
	if (bpf_copy_from_user_task(s->stack + off, n, (void *)(c->sp + off), c->task, 0)) {
		s->rec.flags |= TASKSTACK_STACK_FAULT;
		return 1;
	}
	s->rec.stack_len = off + n;
	return 0;
}

/* Copies up to want bytes from the user stack at sp into s->stack and sets
 * s->rec.stack_len. A copy that crosses the end of the stack's mapping fails whole, so the
 * copy is cut at the end of the mapping, which takes one copy; when the mapping cannot be
 * looked up (its lock is busy) or the copy still fails, go page by page up to the first
 * page that faults. */
static __always_inline void copy_stack(struct scratch *s, struct task_struct *task, __u64 sp,
				       __u64 want)
{
	struct page_copy c = {.s = s, .task = task, .sp = sp};
	__u64 n, end = 0;

	s->rec.stack_len = 0;
	if (want > TASKSTACK_MAX_STACK)
		want = TASKSTACK_MAX_STACK;
	if (!page_copy_only && !bpf_find_vma(task, sp, vma_end_cb, &end, 0) && end > sp) {
		n = end - sp < want ? end - sp : want;
		if (n <= TASKSTACK_MAX_STACK &&
		    !bpf_copy_from_user_task(s->stack, n, (void *)sp, task, 0)) {
			s->rec.stack_len = n;
			return;
		}
	}
	c.want = want;
	bpf_loop(TASKSTACK_MAX_STACK / TASKSTACK_PAGE + 1, copy_page, &c, 0);
}

SEC("iter.s/task")
int taskstack(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct taskstack_rec *rec;
	struct pt_regs *regs;
	struct scratch *s;
	__u64 switches, len = 0;
	__u32 key;
	long n;

	if (!task || task->tgid != target_tgid || task->flags & PF_KTHREAD)
		return 0;
	key = bpf_get_smp_processor_id();
	s = bpf_map_lookup_elem(&scratch, &key);
	if (!s)
		return 0;
	rec = &s->rec;
	rec->magic = TASKSTACK_MAGIC;
	rec->tid = task->pid;
	rec->flags = 0;
	rec->nr_kips = 0;
	rec->stack_len = 0;
	rec->syscall = -1;
	rec->restart_fn = 0;
	BPF_CORE_READ_INTO(&rec->comm, task, comm);
	rec->fs_base = task->thread.fsbase;
	rec->gs_base = task->thread.gsbase;
	rec->exit_state = task->exit_state;
	switches = task_switches(task);
	rec->state = task_state(task);
	if (task->on_cpu)
		rec->flags |= TASKSTACK_ON_CPU;

	if (rec->exit_state || !task->mm) {
		rec->flags |= TASKSTACK_EXITING | TASKSTACK_NO_REGS;
		goto out_write;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || bpf_probe_read_kernel(rec->regs, sizeof(rec->regs), regs)) {
		rec->flags |= TASKSTACK_NO_REGS;
		goto out_write;
	}
	rec->syscall = (__s64)rec->regs[15]; /* orig_ax */
	if (rec->syscall == 219)	     /* restart_syscall */
		rec->restart_fn = (__u64)BPF_CORE_READ(task, restart_block.fn);
	copy_stack(s, task, rec->regs[19] /* sp */, stack_size);

	if (want_kernel) {
		n = bpf_get_task_stack(task, rec->kips, sizeof(rec->kips), 0);
		if (n < 0)
			rec->flags |= TASKSTACK_KSTACK_ERR;
		else
			rec->nr_kips = n / sizeof(__u64);
	}
	/* The thread ran while we copied: registers and stack may not match. */
	if (task->on_cpu || task_switches(task) != switches)
		rec->flags |= TASKSTACK_ON_CPU;

out_write:
	len = rec->stack_len;
	if (len > TASKSTACK_MAX_STACK)
		len = TASKSTACK_MAX_STACK;
	rec->stack_len = len;
	bpf_seq_write(seq, rec, sizeof(*rec) + len);
	return 0;
}
