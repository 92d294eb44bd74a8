/* Per-thread scheduling figures from a trace, as 'perf sched latency' gives them: time on
 * CPU, times switched out, and the delay between becoming runnable (woken, or preempted)
 * and running again. A pure function over the trace's events. */
#ifndef SRVSCOPE_ANALYSIS_SCHED_H
#define SRVSCOPE_ANALYSIS_SCHED_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/escape.h"

struct rec;
struct trace;

#define SCHED_HIST_BUCKETS 24 /* delay < 1 us, < 2 us, < 4 us, ... < 2^22 us, more */

/* Per thread: what the kernel had charged it at its last switch-out. */
struct sched_clock {
	uint64_t charged; /* sum_exec_runtime then; 0: not seen yet */
	bool born;	  /* created during the recording: it was charged nothing before */
};

struct sched_task {
	uint32_t tid, pid;
	char comm[COMM_ESCAPED_SIZE]; /* escaped */
	/* CPU time in the on-CPU intervals whose start was seen (or the thread's birth), as the
	 * kernel charged it (sum_exec_runtime at each switch-out; version 1 files: from
	 * switch-in to switch-out, which misses the time the kernel charges a thread woken
	 * onto an idle CPU before it is switched in). */
	uint64_t runtime_ns;
	uint64_t switches;    /* times switched out */
	uint64_t preemptions; /* of those, switched out runnable (involuntary: nivcsw's) */
	uint64_t delays, delay_sum_ns, max_delay_ns;
	uint64_t max_delay_at_ns; /* when the longest delay ended, absolute */
	uint64_t hist[SCHED_HIST_BUCKETS];
	/* analysis state */
	uint64_t on_since, ready_since;
	struct sched_clock clock;
};

struct sched_report {
	struct sched_task *tasks; /* sorted by average delay, then runtime, descending */
	size_t nr;
};

/* Fills r from t. Tasks are the recorded targets (every task but the idle ones with -a). */
void sched__analyze(const struct trace *t, struct sched_report *r);
void sched_report__free(struct sched_report *r);
/* A new task (REC_WAKEUP_NEW): the kernel has charged it nothing yet. Also forgets what a
 * task that had the same tid before was charged. */
static inline void sched_clock__born(struct sched_clock *c)
{
	c->charged = 0;
	c->born = true;
}
/* The CPU time of the on-CPU interval that switch-out e ends, which began at on_since (0:
 * not seen): the difference of the kernel's sum_exec_runtime since the thread's previous
 * switch-out (or since its birth), else (version 1, or no previous switch-out) the
 * interval's length on the clock. 0 when the interval's start was not seen. Updates c. The runtime
 * of 'sched' and the running slices of 'timeline' both come from here, so they agree. */
uint64_t sched__interval_runtime(struct sched_clock *c, const struct rec *e, uint64_t on_since);
/* Index of the histogram bucket for a delay. */
unsigned int sched__bucket(uint64_t delay_ns);

#endif
