/* Profiles in pprof's format (profile.proto, gzip'd): what go tool pprof, Parca, Pyroscope
 * and Grafana read. A builder that samples are added to (identical stacks with identical
 * labels add up), then encoded once; the layout is in docs/pprof.md. */
#ifndef SRVSCOPE_OUTPUT_PPROF_H
#define SRVSCOPE_OUTPUT_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct frame;
struct pprof;
struct stack_agg;

/* The module of kernel frames, as perf and pprof name it. */
#define PPROF_KERNEL_MODULE "[kernel.kallsyms]"

struct pprof_value_type {
	const char *type; /* "samples", "off_cpu", "cpu" */
	const char *unit; /* "count", "nanoseconds" */
};

struct pprof_frame {
	const char *function; /* the name srvscope's other outputs show (folded, json) */
	const char *file;     /* source file; NULL when unknown */
	const char *module;   /* object path as mapped, PPROF_KERNEL_MODULE; NULL unknown */
	const char *build_id; /* lower-case hex; NULL when unknown */
	uint64_t addr;	      /* 0 when unknown (frames from folded text) */
};

struct pprof_labels {
	const char *thread; /* thread name; NULL: no label */
	long tid;	    /* 0: no label */
};

/* nr_types sample types, each sample carries one value per type. period_type may be NULL.
 * Never fails (allocation failures abort, as everywhere in srvscope). */
struct pprof *pprof__new(const struct pprof_value_type *types, size_t nr_types,
			 const struct pprof_value_type *period_type, int64_t period);
/* Accepts NULL. */
void pprof__delete(struct pprof *p);
/* When the profile was taken (CLOCK_REALTIME ns) and over how long. */
void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos);
void pprof__add_comment(struct pprof *p, const char *comment);

/* A sample: frames innermost first, values[nr_types]. l may be NULL. */
void pprof__add(struct pprof *p, const struct pprof_frame *frames, size_t n, const int64_t *values,
		const struct pprof_labels *l);
/* A folded stack as srvscope's folded outputs print it: "thread;outer;...;inner", kernel
 * frames suffixed "_[k]" (they get PPROF_KERNEL_MODULE and lose the suffix), every other
 * frame (the "--" of a wake-up stack too) kept as named. The first frame is the thread
 * label; tid 0 for none. This is the door for the commands that only have folded text
 * (flame, cpu). */
void pprof__add_folded(struct pprof *p, const char *stack, const int64_t *values, long tid);
/* A sample from symbolized frames of process pid (struct frame, as snapshots hold them:
 * kernel and user frames, each innermost first), named as the folded output names them;
 * mappings get the build-ids of the objects pid maps (read once per process; pid 0:
 * none). values[nr_types]; l may be NULL. */
void pprof__add_frames(struct pprof *p, pid_t pid, const struct frame *frames, size_t n,
		       const int64_t *values, const struct pprof_labels *l);
/* Makes pid's executable (with its build-id) the first mapping, which pprof names the
 * profile after. Call before adding samples. */
void pprof__add_main(struct pprof *p, pid_t pid);
/* The samples of a stacks/top aggregate: one sample per group and thread, valued in
 * thread-samples, with the thread's name and tid as labels, and mappings carrying the
 * build-ids of the objects still mapped by the threads' processes. p must have one
 * sample type (samples/count). */
void pprof__add_stack_agg(struct pprof *p, const struct stack_agg *agg);

/* The gzip'd encoding, malloc'ed into *buf. 0 or -errno. */
int pprof__encode(struct pprof *p, uint8_t **buf, size_t *len);
/* pprof__encode written to f; 0, or -1 after an error message. */
int pprof__write(struct pprof *p, FILE *f);

#endif
