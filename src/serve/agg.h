/* What srvscope serve keeps of the recording, fed event by event from the recorder's sink:
 * cumulative counters for /metrics (off-CPU time by syscall and by wake kind, scheduling
 * delay histograms, blocking episodes, lost events) and, while a profile request is open,
 * its window's stacks. Pure and bounded (threads, series, stacks, window entries are
 * capped; what falls over a cap is counted). Every function takes the aggregate's lock, so
 * the recorder thread and the HTTP threads may call them at will. Private to src/serve
 * and its unit test. */
#ifndef SRVSCOPE_SERVE_AGG_H
#define SRVSCOPE_SERVE_AGG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rec;
struct serve_agg;

struct serve_limits {
	size_t threads; /* threads followed at once (their states are reset past it) */
	size_t series;	/* metric label sets (past it: thread="[other]") */
	size_t stacks;	/* distinct stacks kept for the profiles */
	size_t entries; /* distinct (thread, stack) entries in one profile window */
};

enum serve_window_kind { SERVE_WINDOW_OFF, SERVE_WINDOW_ON };

/* One (thread, stack) of a window: blocked nanoseconds (off) or samples (on). */
struct serve_entry {
	uint32_t tid, pid;
	uint64_t kstack, ustack;
	uint64_t value;
	char comm[16];
};

struct serve_window {
	enum serve_window_kind kind;
	struct serve_entry *e;
	size_t nr, cap;
	uint64_t dropped; /* values that found the window full */
	void *idx;
	struct serve_window *next;
};

struct serve_agg *serve_agg__new(const struct serve_limits *lim);
/* Accepts NULL. */
void serve_agg__delete(struct serve_agg *a);

/* The recorder's stream (struct trace_sink's callbacks). */
void serve_agg__event(struct serve_agg *a, const struct rec *r);
void serve_agg__stack(struct serve_agg *a, uint64_t id, uint32_t flags, const uint64_t *ips,
		      uint32_t nr);
void serve_agg__name(struct serve_agg *a, uint32_t tid, uint32_t pid, const char *comm);
void serve_agg__lost(struct serve_agg *a, const void *payload, size_t len);

/* On-CPU samples by component: classify(arg, ips, nr) gives the component of a kernel
 * stack (ips innermost first) as an index into names[0..nr_names), -1 for none of them
 * ("unmatched"); user-mode samples (no kernel stack) count as "user". Each sample stands for
 * sample_s seconds. Called once, before the events flow; classify runs under the
 * aggregate's lock, once per distinct kernel stack. */
typedef int (*serve_classify_fn)(void *arg, const uint64_t *ips, unsigned int nr);
void serve_agg__set_components(struct serve_agg *a, serve_classify_fn classify, void *arg,
			       const char *const *names, size_t nr_names, double sample_s);

/* The metrics in Prometheus' text exposition format (version 0.0.4). */
void serve_agg__metrics(struct serve_agg *a, FILE *f);

/* A window collects from now until it is closed; close returns it (the caller frees it
 * with serve_window__free). */
struct serve_window *serve_agg__window_open(struct serve_agg *a, enum serve_window_kind kind);
void serve_agg__window_close(struct serve_agg *a, struct serve_window *w);
void serve_window__free(struct serve_window *w);
/* Copies up to max frames of stack id (innermost first) into ips; returns how many, 0 when
 * the stack is not known. *user tells its kind, *truncated whether frames are missing. */
unsigned int serve_agg__stack_copy(struct serve_agg *a, uint64_t id, uint64_t *ips,
				   unsigned int max, int *user, int *truncated);

#endif
