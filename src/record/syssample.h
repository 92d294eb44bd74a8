/* Syscall sampling for 'srvscope record' (syssample.c): on a busy server, every syscall
 * written costs it (two programs, a record), so the recorder writes them all only in
 * windows, a share of each period sized to a budget of full records a second; between
 * windows only the syscalls that give out, change or take back fds are written
 * (REC_SYSCALL_FD), and the counts of both go into the trace (SEC_SYSCALL_SAMPLE). A
 * thread of its own opens and closes the windows: the recorder's loop wakes tens of
 * milliseconds apart, a window at a high rate lasts a few.
 * Split (from the first window's close, where the kernel has each syscall's own
 * tracepoints): the fd syscalls are written at their exits by a program on their own exit
 * tracepoints, and the program on every syscall's exit is attached only while a window is
 * open. Between windows, the other syscalls of every process on the machine then pay for
 * one program, the entry's, which counts the targets' (the share sampled stays a count, not
 * an estimate: the server runs slower in a window than between). */
#ifndef SRVSCOPE_RECORD_SYSSAMPLE_H
#define SRVSCOPE_RECORD_SYSSAMPLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

struct bpf_program;
struct bpf_link;

#define SYSSAMPLE_PERIOD_NS (500 * 1000 * 1000ull)
/* A period all window (the first, and those after one below the budget) is this short:
 * it only measures the rate. */
#define SYSSAMPLE_FIRST_NS (100 * 1000 * 1000ull)

/* The programs and globals of record.bpf.c that split sampling works with. */
struct syssample_progs {
	struct bpf_program *sys_exit; /* every syscall's exit: windows only */
	struct bpf_program *fd_exit;  /* the fd syscalls' own exit tracepoints */
	volatile uint32_t *split;     /* sys_split */
	volatile uint32_t *gen;	      /* sys_window_gen */
	volatile uint32_t *sw_period; /* sw_period: changed as each window opens */
};

struct syssample {
	uint64_t budget;	    /* full syscalls a second; 0: no sampling */
	int counts_fd;		    /* the BPF map sys_counts (per CPU) */
	int nr_cpus;		    /* possible CPUs: the values of a per-CPU map */
	volatile uint32_t *between; /* the BPF global sys_between_windows */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock; /* with cond: the thread's sleeps, cut short by a stop */
	pthread_cond_t cond;
	bool stop;
	struct syssample_progs progs; /* split: progs.split set */
	struct bpf_link *exit_link;   /* sys_exit's while a window is open */
	struct bpf_link **fd_links;
	int nr_fd_links;
	bool fd_tried; /* fd_exit's attach tried (at the first window's close) */
};

/* Starts the windows (the first one now); budget 0 leaves every syscall written and
 * starts nothing. With progs (NULL: not split), sys_exit must have been left unattached:
 * split sampling attaches it in windows, or, where the fd syscalls' own tracepoints cannot
 * be had, for good, and samples as without. Returns 0 or -errno (it reported why; then
 * every syscall is written). */
int syssample__start(struct syssample *s, uint64_t budget, int counts_fd, int nr_cpus,
		     volatile uint32_t *between, const struct syssample_progs *progs);
/* Ends the windows' thread, leaving every syscall written. Accepts a syssample never
 * started (zeroed). */
void syssample__stop(struct syssample *s);
/* The counts so far, for SEC_SYSCALL_SAMPLE. Returns 0 or -ENOENT (no sampling). */
int syssample__read(const struct syssample *s, struct trace_syscall_sample *out);

#endif
