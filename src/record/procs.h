/* The processes a recording meets (its targets, and those of wakers whose stacks it
 * unwinds), kept while they live: their maps, written into the trace whenever they
 * change, descriptions of their file descriptors, and an unwinder for their stack dumps. */
#ifndef SRVSCOPE_RECORD_PROCS_H
#define SRVSCOPE_RECORD_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/u64map.h"

struct proc_maps;
struct trace_writer;
struct unwinder;

struct rec_proc {
	pid_t pid;
	bool dead;
	uint64_t born_ns, next_check_ns;
	uint64_t forced_ns; /* when its maps were last read out of turn */
	struct proc_maps *maps;
	struct unwinder *unw; /* created on first use */
};

struct rec_fd {
	uint64_t checked_ns;
	char *desc;
};

struct rec_procs {
	struct trace_writer *w;
	bool all; /* -a: a process's maps are not read again once it is two seconds old */
	int err;  /* the first error writing to the trace */
	struct u64map idx;
	struct rec_proc *p;
	size_t nr, cap, last; /* last: index of the last one seen, + 1 */
	struct u64map fd_idx;
	struct rec_fd *fds;
	size_t nr_fds, cap_fds;
};

void rec_procs__init(struct rec_procs *ps, struct trace_writer *w, bool all);
void rec_procs__free(struct rec_procs *ps);

/* The process pid, met at now (CLOCK_MONOTONIC ns); the first time, its maps are read and
 * written. The pointer is valid until the next call. */
struct rec_proc *rec_procs__seen(struct rec_procs *ps, pid_t pid, uint64_t now);
/* Reads the maps of p again if they changed and it is time: often while the process is
 * young (the dynamic loader is still mapping), then every second. force: now, unless that
 * was done in the last 10 ms. */
void rec_procs__check_maps(struct rec_procs *ps, struct rec_proc *p, uint64_t now, bool force);
/* rec_procs__check_maps on every process. */
void rec_procs__check_all(struct rec_procs *ps, uint64_t now);
/* p's unwinder over its current maps, which never reads the live process's memory; NULL
 * when it has none (it is gone) or it cannot be made. */
struct unwinder *rec_procs__unwinder(struct rec_proc *p);
/* Writes what fd of pid is (socket addresses, pipe, path) when it is first met or has
 * changed; checked at most once a second per fd. */
void rec_procs__describe_fd(struct rec_procs *ps, uint64_t ts, pid_t pid, int fd, uint64_t now);

#endif
