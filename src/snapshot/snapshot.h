/* One look at all the threads of a process: what each thread was doing (registers, a
 * copy of the top of its user stack, its kernel stack) as captured by a sampler (ptrace
 * or BPF), then the frames the unwinder and symbolizer turned that into. Samplers fill
 * the raw part; unwinding and symbolizing happen after the target has been released. */
#ifndef SRVSCOPE_SNAPSHOT_SNAPSHOT_H
#define SRVSCOPE_SNAPSHOT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define SNAP_MAX_FRAMES	 256
#define SNAP_MAX_KFRAMES 64

enum thread_flags {
	THREAD_HAVE_REGS = 1 << 0,  /* regs are valid */
	THREAD_RUNNING = 1 << 1,    /* was on a CPU: saved registers are stale (nostop) */
	THREAD_UNRESOLVED = 1 << 2, /* no user stack could be taken */
	THREAD_TRUNCATED = 1 << 3,  /* the unwind stopped short: SNAP_MAX_FRAMES, an error,
				     * a frame outside the executable mappings */
	THREAD_STOPPED = 1 << 4,    /* was in group-stop (SIGSTOP) before we came */
};

/* The symbol of the frame that ends a truncated stack in every output (folded, json, ...):
 * the frames above it were not found, and none of them is made up. */
#define FRAME_TRUNCATED "[truncated]"

struct frame {
	uint64_t addr;	    /* return address (caller frames) or pc (innermost) */
	const char *symbol; /* demangled, NULL when unknown; owned by the symbolizer */
	const char *module;
	uint64_t offset;
	bool kernel;
};

struct thread_sample {
	pid_t tid;
	pid_t pid; /* its process (a process tree's samples are merged) */
	char name[16];
	char state;   /* as in /proc/PID/task/TID/stat, before we touched the thread */
	long syscall; /* syscall number it is blocked in, -1 if none (running in user space) */
	uint64_t restart_fn; /* in restart_syscall: the kernel function resuming its wait */
	unsigned int flags;
	uint64_t stall_ns; /* how long the sampler kept this thread stopped */

	struct user_regs_struct regs;
	uint64_t stack_addr; /* user address of stack_data[0] (the stack pointer) */
	size_t stack_len;
	uint8_t *stack_data; /* malloc'ed copy of [stack_addr, stack_addr + stack_len) */
	/* ptrace: where the thread was blocked when its stack was copied before the stop */
	uint64_t pre_sp, pre_pc;
	long pre_nr;

	uint64_t kips[SNAP_MAX_KFRAMES]; /* kernel stack, innermost first */
	unsigned int nr_kips;
	char *ktext; /* or, in ptrace mode, /proc/PID/task/TID/stack text (names only) */

	/* Filled by unwinding: user return addresses, innermost first. */
	uint64_t ips[SNAP_MAX_FRAMES];
	unsigned int nr_ips;

	/* Filled by symbolizing: kernel frames (innermost first) then user frames. */
	struct frame *frames;
	unsigned int nr_frames;
};

struct snapshot {
	pid_t pid;
	char comm[16];
	const char *mode;    /* "ptrace" or "nostop" */
	uint64_t start_ns;   /* CLOCK_MONOTONIC when capture began */
	uint64_t capture_ns; /* wall time of the capture (target-touching part) */
	uint64_t freeze_ns;  /* --consistent: how long all threads were frozen together */
	unsigned int exited; /* threads that exited while being sampled, skipped */
	unsigned int failed; /* threads that could not be sampled for another reason */
	unsigned int procs;  /* processes whose threads are here (a process tree's) */

	struct thread_sample *threads;
	size_t nr_threads, cap_threads;
};

struct snapshot *snapshot__new(pid_t pid);
/* Accepts NULL. */
void snapshot__delete(struct snapshot *snap);
/* A zeroed slot for one more thread. */
struct thread_sample *snapshot__add_thread(struct snapshot *snap);
/* Drops the stack copies once the stacks have been unwound. */
void snapshot__drop_stacks(struct snapshot *snap);

#endif
