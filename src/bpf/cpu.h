/* What 'srvscope cpu' shares between its BPF program (cpu.bpf.c) and user space: the keys
 * of the in-kernel sample counts. Plain types only. */
#ifndef SRVSCOPE_BPF_CPU_H
#define SRVSCOPE_BPF_CPU_H

#define CPU_MAX_DEPTH 127 /* frames of a stack map entry (perf's default) */

/* One (thread, kernel stack, user stack) triple; a negative stack id is none (-EFAULT:
 * the sample was taken in user mode, so there is no kernel stack; -EEXIST/-ENOMEM: the
 * stack map is full or collided, counted apart). */
struct cpu_key {
	__u32 tgid, tid;
	__s32 kstack, ustack;
};

/* Samples of a thread on a CPU: where each thread ran. */
struct cpu_where {
	__u32 tid, cpu;
};

#endif
