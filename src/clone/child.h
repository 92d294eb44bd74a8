/* The clone started in a child process of srvscope's (clone --check, the model's
 * skeleton beside the original): private to src/clone. */
#ifndef SRVSCOPE_CLONE_CHILD_H
#define SRVSCOPE_CLONE_CHILD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clone/clone.h"

/* Starts the clone of m in a child process (killed if this one dies), on a free port
 * unless o says which, and waits until it listens. Returns 0 with *pid and *port, or
 * -errno (reported in one line). */
int clone_child__start(const struct clone_model *m, const struct clone_opts *o,
		       struct clone_counts *counts, pid_t *pid, int *port);

/* The clone's network threads so far (they register as they start, clone_counts.net_tids),
 * the first CLONE_COUNTS_TIDS of them, into tids. Returns how many. */
size_t clone_child__net_tids(const struct clone_counts *counts, uint32_t *tids);

/* Stops it (SIGTERM) and reaps it. Returns 0, or -EIO when it did not stop cleanly. */
int clone_child__stop(pid_t pid);

#endif
