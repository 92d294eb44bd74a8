/* Each thread's time as slices of one state: running, runnable (after a preemption, or
 * after a wake-up until it ran), blocked (with its blocking episode: syscall, fd, waker).
 * A pure function over the trace's events, for timeline viewers (Perfetto, chrome://tracing). */
#ifndef SRVSCOPE_ANALYSIS_TIMELINE_H
#define SRVSCOPE_ANALYSIS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/blocking.h"

struct trace;

enum tl_kind {
	TL_RUNNING,   /* switched in to switched out */
	TL_PREEMPTED, /* switched out runnable to switched in */
	TL_BLOCKED,   /* switched out asleep to woken (or switched in, if no wake-up was seen) */
	TL_WOKEN,     /* woken to switched in */
};

struct tl_slice {
	uint32_t tid, pid;
	uint8_t kind;		   /* enum tl_kind */
	bool open;		   /* cut by the start or the end of the recording */
	uint64_t start_ns, end_ns; /* absolute */
	size_t ep;		   /* TL_BLOCKED, TL_WOKEN: index of its episode in blocks.eps */
	uint64_t cpu_ns;	   /* TL_RUNNING: the CPU time the kernel charged (as 'sched') */
};

struct timeline {
	struct tl_slice *slices; /* by tid, then start */
	size_t nr;
	struct block_report blocks;
};

/* Fills tl from t, for the threads f lets through (NULL: all; min_ns is ignored). */
void timeline__build(const struct trace *t, const struct block_filter *f, struct timeline *tl);
void timeline__free(struct timeline *tl);
/* The same slices for every thread, handed to fn one at a time as they are found (in no
 * order), none kept: for callers that only add them up (the HTML report's time buckets),
 * at no memory per event. blocks: the trace's episodes (blocking__analyze*), which give the
 * blocked and woken slices (ep: the index in blocks). */
void timeline__each(const struct trace *t, const struct block_report *blocks,
		    void (*fn)(void *ctx, const struct tl_slice *s), void *ctx);
const char *timeline__kind_name(enum tl_kind kind); /* "running", "runnable", ... */

#endif
