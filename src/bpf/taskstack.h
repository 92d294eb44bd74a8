/* Records the taskstack BPF iterator writes to its seq_file, one per thread of the target:
 * a fixed header (state, saved user registers, kernel stack) followed by stack_len bytes
 * copied from the top of the thread's user stack. Shared by taskstack.bpf.c and nostop.c. */
#ifndef SRVSCOPE_BPF_TASKSTACK_H
#define SRVSCOPE_BPF_TASKSTACK_H

#define TASKSTACK_MAGIC 0x6b617473u /* "stak" */
#define TASKSTACK_PAGE	4096
/* Largest user stack copy: a record must fit the iterator's 32 KiB seq_file buffer. */
#define TASKSTACK_MAX_STACK (28 * 1024)
#define TASKSTACK_MAX_KIPS  64
#define TASKSTACK_NR_REGS   21 /* struct pt_regs on x86-64: the head of user_regs_struct */

enum taskstack_flags {
	TASKSTACK_ON_CPU = 1 << 0,	/* on a CPU right now: saved registers are stale */
	TASKSTACK_NO_REGS = 1 << 1,	/* bpf_task_pt_regs gave nothing usable */
	TASKSTACK_EXITING = 1 << 2,	/* exit_state set: a zombie or dying thread */
	TASKSTACK_STACK_FAULT = 1 << 3, /* the copy stopped at a page that faults */
	TASKSTACK_KSTACK_ERR = 1 << 4,	/* bpf_get_task_stack failed */
};

struct taskstack_rec {
	__u32 magic;
	__u32 tid;
	__u32 state;	  /* task->__state */
	__u32 exit_state; /* task->exit_state */
	__u32 flags;	  /* enum taskstack_flags */
	__u32 stack_len;  /* bytes of user stack following this header */
	__u32 nr_kips;
	__u32 pad;
	__s64 syscall; /* pt_regs->orig_ax: the syscall the thread is in, negative if none */
	char comm[16];
	__u64 regs[TASKSTACK_NR_REGS];
	__u64 fs_base, gs_base;
	__u64 kips[TASKSTACK_MAX_KIPS]; /* kernel stack, innermost first */
	/* In restart_syscall (219): the kernel function that resumes the interrupted wait
	 * (task->restart_block.fn), which tells which wait it was; else 0. */
	__u64 restart_fn;
};

#endif
