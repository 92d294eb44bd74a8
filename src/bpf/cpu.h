/* What 'srvscope cpu' shares between its BPF program (cpu.bpf.c) and user space: the keys
 * of the in-kernel sample counts and the stacks they name. Plain types only. */
#ifndef SRVSCOPE_BPF_CPU_H
#define SRVSCOPE_BPF_CPU_H

#define CPU_MAX_DEPTH 127 /* frames of a stack (perf's default) */

/* A stack is named by a 64-bit hash of its frames, its frames kept in the stacks map under
 * that name. Two names are not hashes: */
#define CPU_STACK_NONE 0 /* no frames (a sample taken in user mode has no kernel stack) */
#define CPU_STACK_LOST 1 /* the stacks map was full: counted apart */

/* One (thread, kernel stack, user stack) triple. */
struct cpu_key {
	__u32 tgid, tid;
	__u64 kstack, ustack;
};

/* A stack: nr frames, innermost first. */
struct cpu_stack_ips {
	__u32 nr, pad;
	__u64 ips[CPU_MAX_DEPTH];
};

/* Samples of a thread on a CPU: where each thread ran. */
struct cpu_where {
	__u32 tid, cpu;
};

#endif
