/* One recorded load run of 'srvscope model' (collect.c). */
#ifndef SRVSCOPE_MODEL_COLLECT_H
#define SRVSCOPE_MODEL_COLLECT_H

#include <stdbool.h>
#include <sys/types.h>

#include "load/load.h"
#include "model/fdsnap.h"

struct ktext_copy;

/* How long a load command may outlive its run before it is stopped (and the run kept). */
#define MODEL_COMMAND_GRACE_S 5.0

struct collect_opts {
	pid_t pid;		/* the server: its whole process tree is recorded */
	struct load_spec spec;	/* the load (duration_s also bounds a load command) */
	const char *command;	/* --load COMMAND, expanded; NULL: the built-in client */
	const char *trace_path; /* where the run's trace goes */
	bool dwarf;		/* user stacks unwound with DWARF CFI instead of frame pointers */
	struct model_fds *fds;	/* if not NULL: the tree's fds as events flow (fdsnap.h) */
	/* /proc/kallsyms read once before the runs (record/ktext.h); NULL: each run reads it */
	const struct ktext_copy *kallsyms;
};

/* Records the server while the load runs, into co->trace_path. Returns the recorder's 0 or
 * -errno (it reported why); *load_err: the load's -errno or a command's non-zero status, 0
 * when it ran (res: what the built-in client measured). */
int model__collect(const struct collect_opts *co, struct load_result *res, int *load_err);

/* /proc/kallsyms read and packed once, before the first run (collect_opts.kallsyms): the
 * kernel's print of it and its packing, 90 to 150 ms of CPU, no longer come at the start
 * of each run beside the server it records. NULL (with a notice) when it cannot be read:
 * each run then tries on its own. */
struct ktext_copy *model__kallsyms_read(void);
void model__kallsyms_free(struct ktext_copy *k);

/* The threads tids' (the network threads') CPU per request with nothing recording: the
 * built-in load of co->spec runs once more, unrecorded, in 3 slices, and their CPU time
 * and voluntary switches over each (/proc/TID/schedstat, status) are divided by the requests it
 * completed (the recorder's own cost on those threads, its syscall and scheduler probes, is not in
 * it); *out is the median slice's. Returns 0 with *out, or -errno: -ESRCH when a thread is
 * gone, the load's error. */
struct model_cpu_run; /* model.h */
/* A thread of srvscope's own that sleeps period_ms (nanosleep) and wakes, again and again,
 * from start to stop: its CPU time per wake-up is what a wake-up costs a thread that does
 * nothing else, on this machine at that moment (12 to 30 us in a 2-core VM, as busy or idle
 * as the CPUs are). A server's background thread that wakes as often spends that much and
 * its own work: the clone spins the difference. start: NULL when the period is not from
 * 0.05 ms to 1 s or no thread could be made; stop: microseconds per wake-up, 0 when fewer
 * than 10 wake-ups were seen (accepts NULL). */
struct wake_floor;
struct wake_floor *model__wake_floor_start(double period_ms);
double model__wake_floor_stop(struct wake_floor *w);
/* co->spec's load cut in `slices` runs (1 to MODEL_CPU_SLICES_MAX) of an equal share of its
 * duration; out gets the median slice. */
int model__cpu_unrecorded(const struct collect_opts *co, const uint32_t *tids, size_t n,
			  unsigned slices, struct model_cpu_run *out);

#endif
