/* Per-thread scheduling figures from a trace, as 'perf sched latency' gives them: time on
 * CPU, times switched out, and the delay between becoming runnable (woken, or preempted)
 * and running again. A pure function over the trace's events. */
#ifndef SRVSCOPE_ANALYSIS_SCHED_H
#define SRVSCOPE_ANALYSIS_SCHED_H

#include <stddef.h>
#include <stdint.h>

struct trace;

#define SCHED_HIST_BUCKETS 24 /* delay < 1 us, < 2 us, < 4 us, ... < 2^22 us, more */

struct sched_task {
	uint32_t tid, pid;
	char comm[16];
	uint64_t runtime_ns; /* sum of the on-CPU intervals whose start and end were seen */
	uint64_t switches;   /* times switched out */
	uint64_t delays, delay_sum_ns, max_delay_ns;
	uint64_t max_delay_at_ns; /* when the longest delay ended, absolute */
	uint64_t hist[SCHED_HIST_BUCKETS];
	/* analysis state */
	uint64_t on_since, ready_since;
};

struct sched_report {
	struct sched_task *tasks; /* sorted by average delay, then runtime, descending */
	size_t nr;
};

/* Fills r from t. Tasks are the recorded targets (every task but the idle ones with -a). */
void sched__analyze(const struct trace *t, struct sched_report *r);
void sched_report__free(struct sched_report *r);
/* Index of the histogram bucket for a delay. */
unsigned int sched__bucket(uint64_t delay_ns);

#endif
