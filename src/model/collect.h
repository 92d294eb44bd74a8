/* One recorded load run of 'srvscope model' (collect.c). */
#ifndef SRVSCOPE_MODEL_COLLECT_H
#define SRVSCOPE_MODEL_COLLECT_H

#include <stdbool.h>
#include <sys/types.h>

#include "load/load.h"
#include "model/fdsnap.h"

struct collect_opts {
	pid_t pid;		/* the server: its whole process tree is recorded */
	struct load_spec spec;	/* the load (duration_s also bounds a load command) */
	const char *command;	/* --load COMMAND, expanded; NULL: the built-in client */
	const char *trace_path; /* where the run's trace goes */
	bool dwarf;		/* user stacks unwound with DWARF CFI instead of frame pointers */
	struct model_fds *fds;	/* if not NULL: the tree's fds as events flow (fdsnap.h) */
};

/* Records the server while the load runs, into co->trace_path. Returns the recorder's 0 or
 * -errno (it reported why); *load_err: the load's -errno or a command's non-zero status, 0
 * when it ran (res: what the built-in client measured). */
int model__collect(const struct collect_opts *co, struct load_result *res, int *load_err);

/* The threads tids' (the network threads') CPU per request with nothing recording: the
 * built-in load of co->spec runs once more, unrecorded, in 3 slices, and their CPU time
 * and voluntary switches over each (/proc/TID/schedstat, status) are divided by the requests it completed
 * (the recorder's own cost on those threads, its syscall and scheduler probes, is not in
 * it); *out is the median slice's. Returns 0 with *out, or -errno: -ESRCH when a thread is
 * gone, the load's error. */
struct model_cpu_run; /* model.h */
int model__cpu_unrecorded(const struct collect_opts *co, const uint32_t *tids, size_t n,
			  struct model_cpu_run *out);

#endif
