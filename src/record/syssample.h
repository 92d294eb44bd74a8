/* Syscall sampling for 'srvscope record' (syssample.c): on a busy server, every syscall
 * written costs it (two programs, a record), so the recorder writes them all only in
 * windows, a share of each period sized to a budget of full records a second; between
 * windows only the syscalls that give out, change or take back fds are written
 * (REC_SYSCALL_FD), and the counts of both go into the trace (SEC_SYSCALL_SAMPLE). */
#ifndef SRVSCOPE_RECORD_SYSSAMPLE_H
#define SRVSCOPE_RECORD_SYSSAMPLE_H

#include <stdint.h>

#include "trace/trace.h"

#define SYSSAMPLE_PERIOD_NS (500 * 1000 * 1000ull)
/* The first period, all window, is this short: it only measures the rate. */
#define SYSSAMPLE_FIRST_NS (100 * 1000 * 1000ull)

struct syssample {
	uint64_t budget;	    /* full syscalls a second; 0: no sampling */
	int counts_fd;		    /* the BPF map sys_counts (per CPU) */
	int nr_cpus;		    /* possible CPUs: the values of a per-CPU map */
	volatile uint32_t *between; /* the BPF global sys_between_windows */
	uint64_t period_start, window_end, last_tick;
	uint64_t total_then; /* the syscalls counted at counted_at */
	uint64_t counted_at;
};

/* Starts the first period (a window) at now; budget 0 leaves every syscall written. */
void syssample__start(struct syssample *s, uint64_t budget, int counts_fd, int nr_cpus,
		      volatile uint32_t *between, uint64_t now);
/* Opens or closes the window as time goes: called often (every poll of the ring buffer,
 * at most a few tens of milliseconds apart). */
void syssample__tick(struct syssample *s, uint64_t now);
/* The counts so far, for SEC_SYSCALL_SAMPLE. Returns 0 or -errno. */
int syssample__read(const struct syssample *s, struct trace_syscall_sample *out);

#endif
