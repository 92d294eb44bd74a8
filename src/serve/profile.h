/* The answers of serve that name frames: a profile window as pprof, a nostop snapshot as
 * JSON. They symbolize through process-wide caches: callers hold one lock around them.
 * Private to src/serve. */
#ifndef SRVSCOPE_SERVE_PROFILE_H
#define SRVSCOPE_SERVE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "serve/agg.h"

/* The window's entries as a gzip'd pprof profile (off: off_cpu/nanoseconds; on:
 * samples/count and cpu/nanoseconds at hz), malloc'ed into *buf. pid: only that process
 * (0: all); main_pid: the process whose executable names the profile (0: none).
 * 0 or -errno. */
int serve_profile__pprof(struct serve_agg *a, const struct serve_window *w, unsigned int hz,
			 pid_t pid, pid_t main_pid, uint64_t duration_ns, uint8_t **buf,
			 size_t *len);
/* A nostop snapshot of pid and its descendants with kernel frames, as 'srvscope stacks
 * --format=json' prints it, malloc'ed into *buf. 0 or -errno (-ESRCH: no such process). */
int serve_profile__stacks_json(pid_t pid, char **buf, size_t *len);

#endif
