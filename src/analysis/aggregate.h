/* Grouping identical stacks across threads and samples, as a poor man's profiler does.
 * Two stacks are identical when their frames name the same functions (module + symbol,
 * or module + offset for unknown frames), innermost first. Pure functions over snapshots. */
#ifndef SRVSCOPE_ANALYSIS_AGGREGATE_H
#define SRVSCOPE_ANALYSIS_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot/snapshot.h"
#include "util/escape.h"

struct group_thread {
	pid_t tid;
	pid_t pid; /* its process */
	char name[COMM_ESCAPED_SIZE]; /* escaped (util/escape.h): the target's choice */
	char state;		      /* from the latest sample of that thread */
	long syscall;		      /* -1 when none */
	unsigned int count;	      /* samples of this thread that fell into the group */
};

struct stack_group {
	unsigned int count;   /* thread-samples */
	struct frame *frames; /* innermost first; strings interned by the aggregate */
	unsigned int nr_frames;
	struct group_thread *threads;
	size_t nr_threads, cap_threads;
	uint64_t key;
};

struct stall_stats {
	uint64_t total_ns, max_ns;
	uint64_t nr; /* thread-samples that were stopped */
};

struct stack_agg {
	pid_t pid;
	char comm[COMM_ESCAPED_SIZE]; /* escaped, as the threads' names */
	char title[256]; /* the process's command line or the title it set; "" unknown */
	const char *mode;
	unsigned int samples;
	unsigned int threads;	/* largest thread count seen in one sample */
	unsigned int processes; /* largest process count seen in one sample */
	unsigned int exited, failed;
	uint64_t freeze_ns_max;
	struct stall_stats stall;
	bool kernel; /* include kernel frames in the grouping key and frames */

	struct stack_group *groups;
	size_t nr_groups, cap_groups;
	void *priv; /* hash index + string pool */
};

struct stack_agg *stack_agg__new(bool kernel);
/* Accepts NULL. */
void stack_agg__delete(struct stack_agg *agg);
/* Adds every thread of a symbolized snapshot. The snapshot may be freed afterwards. */
void stack_agg__add(struct stack_agg *agg, const struct snapshot *snap);
/* Sorts groups by count (descending), then by first frame name, for stable output. */
void stack_agg__sort(struct stack_agg *agg);

#endif
