/* Folded stacks ("thread;outer;...;inner weight") from a trace, for flame graphs: off-CPU
 * time by the blocked thread's stack, wake-up time by the waker's stack joined to the
 * wakee's (offwaketime style), or on-CPU samples. Frame names come from a caller-supplied
 * namer, so the grouping is tested without symbols. */
#ifndef SRVSCOPE_ANALYSIS_FLAME_H
#define SRVSCOPE_ANALYSIS_FLAME_H

#include <stddef.h>
#include <stdint.h>

struct block_report;
struct trace;

enum flame_kind {
	FLAME_OFF,  /* blocked time (us, until woken) by the blocked thread's stack */
	FLAME_WAKE, /* blocked time (us): wakee's stack, "--", waker's stack innermost first */
	FLAME_ON,   /* on-CPU samples */
};

struct flame_filter {
	long pid, tid;	  /* 0: any */
	const char *comm; /* NULL: any */
};

struct flame_namer {
	/* The name of a user address of process pid at time ts. */
	const char *(*user)(void *ctx, uint32_t pid, uint64_t ts, uint64_t addr);
	const char *(*kernel)(void *ctx, uint64_t addr);
	void *ctx;
};

struct flame_line {
	char *stack; /* frames joined by ';', root (thread name) first; kernel frames "_[k]" */
	uint64_t weight;
};

struct flame {
	struct flame_line *lines; /* sorted by stack */
	size_t nr;
	uint64_t total;
};

/* "off", "wake", "on"; -1 otherwise. */
int flame__parse_kind(const char *s, enum flame_kind *kind);
void flame__build(const struct trace *t, enum flame_kind kind, const struct flame_filter *f,
		  const struct flame_namer *n, struct flame *out);
/* The same for FLAME_OFF or FLAME_WAKE from episodes the caller already has (all of the
 * trace's, from blocking__analyze*), for a caller that uses them too: the trace's events
 * are not read again. */
void flame__build_episodes(const struct trace *t, enum flame_kind kind,
			   const struct block_report *eps, const struct flame_namer *n,
			   struct flame *out);
void flame__free(struct flame *fl);

#endif
