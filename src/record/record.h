/* The recorder behind 'srvscope record': loads the BPF program, follows the targets (pids,
 * a launched command and its children, or every task), drains the ring buffer into a trace
 * file and reports what was lost. */
#ifndef SRVSCOPE_RECORD_RECORD_H
#define SRVSCOPE_RECORD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ktext_copy;
struct trace_sink;

#define RECORD_DEFAULT_OUTPUT	 "srvscope.trace"
#define RECORD_DEFAULT_BUFFER	 (32u << 20)
#define RECORD_DEFAULT_DUMP_SIZE 32768u			  /* --call-graph=dwarf */
#define RECORD_DEFAULT_DUMP	 RECORD_DEFAULT_DUMP_SIZE /* 0: frame pointers by default */

struct record_opts {
	pid_t *pids; /* -p */
	size_t nr_pids;
	bool no_children; /* -p: the processes named only, not their existing descendants */
	bool all;		    /* -a */
	char **argv;		    /* -- COMMAND ARGS..., NULL-terminated; NULL when none */
	double duration;	    /* seconds, 0: until stopped */
	const char *output;	    /* trace file */
	bool force;		    /* --force: replace an existing output file */
	uint64_t buffer_size;	    /* ring buffer bytes: a power of two, at least a page */
	unsigned int read_timer_ms; /* drain on this period, never woken; 0: woken at 1/4 full */
	unsigned int on_cpu_hz;	    /* 0: no on-CPU samples */
	bool no_stacks;
	bool no_waker_stacks; /* stacks where tasks block, not where they are woken from */
	/* No wakings, wake-ups nor interrupt contexts: switches alone give the waits (ended at
	 * the switch-in, waker UNKNOWN); for srvscope model, which reads where threads wait,
	 * never who woke them. Ignored with net (critical follows wakers). */
	bool no_wakers;
	unsigned int ustack_dump_bytes; /* --call-graph=dwarf: user stack bytes; 0: fp */
	bool syscalls; /* trace every syscall of the targets (entry, exit, return value) */
	bool syscall_args; /* with syscalls: REC_SYSCALL_ARGS records too (4th argument, iovecs) */
	/* With syscalls: every syscall is written only in windows sized to this many a second
	 * (between them, those that make or close fds); 0: every one (syssample.h). */
	uint64_t syscall_budget;
	/* With syscall_budget: between the windows, the switches of a thread that switches
	 * more than RECORD_SWITCH_BUSY times a period are left out too (its next switch
	 * says so: SWITCH_*_GAP); one that switches less is written whole. */
	bool switch_windows;
	double stack_refresh_ms; /* reuse stacks taken at the same place for this long */
	int progress;		 /* -1: on a terminal only, 0: never, 1: always */
	bool verbose;		 /* libbpf's messages */
	bool cost;		 /* --cost: print what the recording cost */
	const char *cmdline;	 /* what was run, saved in the file */
	bool net;		 /* --net: TCP segments of this network namespace's devices */
	bool net_loopback;	 /* --net=all: the loopback device's too */
	bool ipi;		 /* --ipi (implied by --net): the IPIs sent, REC_IPI_SEND */
	int64_t skew_ns;	 /* --clock-skew (tests): timestamps shifted by this... */
	double skew_ppm;	 /* ...and stretched by this from the start */
	/* srvscope serve: no file (output unused), everything handed to this sink. */
	const struct trace_sink *sink;
	/* Called once events flow (after the attach and the start snapshot), from the
	 * recording's thread: a caller that drives the targets (srvscope model) starts then. */
	void (*started)(void *arg);
	void *started_arg;
	/* Ends the recording, as a signal does, when it becomes non-zero (set from another
	 * thread); NULL: only the usual ends. */
	const volatile int *stop;
	/* The kallsyms text read before (ktext.h: several recordings in a row); NULL: read
	 * during the recording, as usual. */
	const struct ktext_copy *kallsyms;
};

/* Records until the duration elapses, SIGINT/SIGTERM/SIGHUP arrives, the launched command
 * exits or every target process is gone. Errors are reported on stderr. Returns 0 or
 * -errno (-ENOEXEC when the command could not be run: no trace is left). *cmd_status: the
 * command's exit status as a shell gives it (128 + the signal that killed it) when its
 * exit ended the recording, -1 otherwise. */
int record__run(const struct record_opts *o, int *cmd_status);
/* switch_windows: a thread switching more than this often in a syscall sampling period
 * (500 ms) is busy: its switches are written in the windows alone. */
#define RECORD_SWITCH_BUSY 200
/* Ends a record__run running in another thread, as SIGTERM would. Async-signal-safe. */
void record__stop(void);
/* The signal (SIGINT, SIGTERM, SIGHUP) that ended a recording, 0 when none has: a caller
 * that records several times in a row stops then too. */
int record__signalled(void);

#endif
