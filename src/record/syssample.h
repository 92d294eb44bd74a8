/* Syscall sampling for 'srvscope record' (syssample.c): on a busy server, every syscall
 * written costs it (two programs, a record), so the recorder writes them all only in
 * windows, a share of each period sized to a budget of full records a second. Between
 * windows only the syscalls that give out, change or take back fds are written
 * (REC_SYSCALL_FD): where the kernel has syscall trace events, by programs of their own on
 * those syscalls' events, and sys_enter and sys_exit are detached (the other syscalls cost
 * nothing there); else sys_enter and sys_exit stay and return early. The time in and
 * between windows goes into the trace (SEC_SYSCALL_SAMPLE). */
#ifndef SRVSCOPE_RECORD_SYSSAMPLE_H
#define SRVSCOPE_RECORD_SYSSAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

struct bpf_object;
struct bpf_object_skeleton;
struct bpf_program;
struct bpf_link;

#define SYSSAMPLE_PERIOD_NS (500 * 1000 * 1000ull)
/* The first period, all window, is this short: it only measures the rate. */
#define SYSSAMPLE_FIRST_NS (100 * 1000 * 1000ull)

struct syssample {
	uint64_t budget;		 /* full syscalls a second; 0: no sampling */
	bool detach;			 /* sys_enter/sys_exit detached between windows */
	int counts_fd;			 /* the BPF map sys_counts (per CPU) */
	int nr_cpus;			 /* possible CPUs: the values of a per-CPU map */
	volatile uint32_t *between;	 /* the BPF global sys_between_windows */
	volatile uint64_t *window_start; /* the BPF global sys_window_start */
	struct bpf_program *progs[2];	 /* sys_enter, sys_exit */
	struct bpf_link **links[2];	 /* their links in the skeleton */
	uint64_t period_start, window_end, last_tick;
	uint64_t opened_at, full_then;	/* the window's opening, SYSCNT_FULL then */
	uint64_t window_ns, between_ns; /* time in and between windows so far */
	uint64_t rate;			/* syscalls a second in the last window measured */
	uint64_t since;			/* when the current state (window or not) began */
};

/* Before the BPF object is loaded: whether the syscalls' own trace events can take the fd
 * syscalls between windows (then their programs load, and the result is sys_fd_tps). */
bool syssample__prepare(struct bpf_object *obj, uint64_t budget);
/* Starts the first period (a window) at now; budget 0 leaves every syscall written. */
void syssample__start(struct syssample *s, uint64_t budget, bool detach, int counts_fd, int nr_cpus,
		      volatile uint32_t *between, volatile uint64_t *window_start,
		      struct bpf_program *enter, struct bpf_link **enter_link,
		      struct bpf_program *exit, struct bpf_link **exit_link, uint64_t now);
/* Opens or closes the window as time goes: called often (every poll of the ring buffer,
 * at most a few tens of milliseconds apart). */
void syssample__tick(struct syssample *s, uint64_t now);
/* What the sampling was up to now, for SEC_SYSCALL_SAMPLE. Returns 0, or -ENOENT when no
 * sampling was asked for. */
int syssample__read(const struct syssample *s, uint64_t now, struct trace_syscall_sample *out);

/* Detaches the fd syscalls' event programs of skel, in a thread of its own (each close of a
 * syscall event waits for RCU grace periods, one after the other: seconds in all). */
void syssample__detach_events(struct bpf_object_skeleton *skel);

#endif
