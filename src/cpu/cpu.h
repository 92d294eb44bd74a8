/* srvscope cpu: where CPU time goes. A profile (sampled stacks with their counts, per
 * thread and per CPU), its classification into components (data copy, TCP/IP, locks...:
 * docs/cpu.md), the /proc figures htop shows (per thread user/system time, state, last
 * CPU, switches; per process RSS and faults; per core utilisation), the sampling session
 * that fills a profile from a BPF program, and the reports written from it. */
#ifndef SRVSCOPE_CPU_CPU_H
#define SRVSCOPE_CPU_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>

#include "trace/u64map.h"
#include "util/escape.h"

struct topo;

/* ---- components ---- */

#define COMP_TABLE_VERSION "sigcomm21+linux6-1"

/* One line of the published mapping (components_sigcomm21.c). */
struct comp_builtin {
	const char *symbol, *component;
};
extern const struct comp_builtin comp_sigcomm21[];
extern const size_t comp_sigcomm21_nr;

struct comp_table;

/* The built-in table: the published mapping plus prefix rules for today's kernels. */
struct comp_table *comp_table__new(void);
/* Accepts NULL. */
void comp_table__delete(struct comp_table *t);
/* Adds the rules of a components file (docs/cpu.md: "PATTERN COMPONENT [kernel|user]" per
 * line, PATTERN a name or a prefix ending in '*'); they take precedence over the built-in
 * ones. text need not be NUL-terminated. A bad line is reported into err (size bytes) as
 * "NAME:LINE: what is wrong" and -EINVAL returned; the lines before it are kept. */
int comp_table__parse(struct comp_table *t, const char *name, const char *text, size_t len,
		      char *err, size_t size);
/* Reads the file at path and parses it; -errno or -EINVAL with err filled. */
int comp_table__load(struct comp_table *t, const char *path, char *err, size_t size);
/* Reads a whole file (at most 1 GiB) into *buf (malloc'ed, NUL-terminated) and *len: a
 * regular file (util/safefile.h: -EINVAL for a FIFO, a device...), or standard input or a
 * /dev/fd/N stream. Returns 0 or -errno. */
int cpu_read_file(const char *path, char **buf, size_t *len);
/* The component of a function (its name cut at the first '.': "memcpy_orig.isra.0" is
 * "memcpy_orig"), or -1 when no rule matches. Kernel and user functions have separate
 * rules. */
int comp_table__classify(const struct comp_table *t, const char *name, bool kernel);
size_t comp_table__nr(const struct comp_table *t);
const char *comp_table__name(const struct comp_table *t, int comp);
/* Number of rules, for --help and the report's header. */
size_t comp_table__rules(const struct comp_table *t);

/* ---- the profile: pure data, filled by a session or from a trace file ---- */

struct cpu_func {
	/* Never NULL: "[unknown]" or "module+0x1a2b" when unresolved. Names from the target
	 * (symbols, paths, thread names) are escaped as util/escape.h says: safe in every
	 * output, ';' included. */
	const char *name;
	const char *module; /* "[kernel]", "[xfs]", "/usr/lib/...so", "[unknown]" */
	bool kernel;
	int comp; /* set by cpu_profile__classify; -1: unmatched */
};

struct cpu_stack {
	pid_t pid, tid;
	uint64_t count;
	uint32_t nr;
	uint32_t *frames; /* indexes into funcs, innermost (leaf) first: kernel, then user */
};

struct cpu_thread {
	pid_t pid, tid;
	char comm[COMM_ESCAPED_SIZE]; /* escaped (util/escape.h), as every name here */
	uint64_t samples;
	uint64_t *on_cpu; /* samples per CPU, nr_cpus entries */
	/* From /proc at the start and the end of the window. */
	bool have_stat;
	char state;
	int last_cpu;
	uint64_t utime, stime; /* clock ticks spent in the window */
	uint64_t vcsw, ivcsw;  /* context switches in the window */
	uint64_t stat0[4];     /* utime, stime, vcsw, ivcsw at the start */
	uint32_t migrations;   /* changes of CPU between samples (lower bound) */
	int prev_cpu;
};

struct cpu_process {
	pid_t pid;
	char comm[COMM_ESCAPED_SIZE];
	bool gone;
	uint64_t rss0_kb, rss_kb, rss_max_kb;
	uint64_t minflt0, majflt0, minflt, majflt; /* totals at the start and the end */
};

struct cpu_core {
	uint64_t samples;		    /* samples of the targets on it */
	uint64_t user, system, idle, other; /* ticks in the window, from /proc/stat */
	uint64_t s0[4];
};

struct cpu_profile {
	struct strpool *pool;
	struct cpu_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct u64map func_idx; /* hash of (name, module, kernel) -> index + 1 */
	struct cpu_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct u64map stack_idx; /* hash of (pid, tid, frames) -> index + 1 */
	struct cpu_thread *threads;
	size_t nr_threads, cap_threads;
	struct u64map thread_idx; /* tid -> index + 1 */
	struct cpu_process *procs;
	size_t nr_procs, cap_procs;
	struct cpu_core *cores;
	int nr_cpus;
	uint64_t samples, kernel_samples, lost;
	uint64_t stacks_lost; /* samples whose stack the full stack map could not hold */
	uint64_t duration_ns;
	uint64_t end_ns; /* when the samples were last taken out (CLOCK_MONOTONIC; for a
			  * TRACE, its last event); the window is the duration_ns before */
	unsigned int hz;
	bool live; /* /proc figures were taken (not from a trace file) */
	/* Shares of the kernel samples per component over time: one row per interval. */
	uint64_t *comp_series;
	size_t series_rows, series_cols;
};

struct cpu_profile *cpu_profile__new(int nr_cpus);
void cpu_profile__delete(struct cpu_profile *p);
/* Empties the samples (not the functions), for the next interval of a live view. */
void cpu_profile__clear(struct cpu_profile *p);
uint32_t cpu_profile__func(struct cpu_profile *p, const char *name, const char *module,
			   bool kernel);
/* Adds count samples of a stack (frames innermost first) of thread tid of process pid on
 * cpu (-1: not known). */
void cpu_profile__add(struct cpu_profile *p, pid_t pid, pid_t tid, const char *comm,
		      const uint32_t *frames, uint32_t nr, uint64_t count, int cpu);
struct cpu_thread *cpu_profile__thread(struct cpu_profile *p, pid_t pid, pid_t tid,
				       const char *comm);
struct cpu_process *cpu_profile__process(struct cpu_profile *p, pid_t pid);
void cpu_profile__classify(struct cpu_profile *p, const struct comp_table *t);
/* Adds the folded stacks of text ("root;...;leaf COUNT" lines, kernel frames suffixed
 * "_[k]") to p. A bad line is reported into err as "NAME:LINE: ..." and -EINVAL returned
 * (the lines before it are kept). */
int cpu_profile__parse_folded(struct cpu_profile *p, const char *name, const char *text, size_t len,
			      char *err, size_t size);

/* ---- analyses (pure) ---- */

struct cpu_func_row {
	uint32_t func;
	uint64_t self, total;
};
/* Every function with samples, by self then total, descending; *nr set. Free with free(). */
struct cpu_func_row *cpu_profile__functions(const struct cpu_profile *p, size_t *nr);

struct cpu_comp_share {
	uint64_t *per_comp; /* comp_table__nr() entries */
	uint64_t unmatched, kernel_total;
	/* Unmatched functions (self, or the leaf of an unclassified stack with inclusive),
	 * by samples: funcs and counts, nr_unmatched of them. */
	uint32_t *unmatched_funcs;
	uint64_t *unmatched_counts;
	size_t nr_unmatched;
};
/* The kernel samples (those whose innermost frame is a kernel one) of the stacks selected
 * by filter (NULL: all), attributed to components: by the innermost frame (self, the
 * SIGCOMM'21 way) or, inclusive, by the innermost classified kernel frame. */
void cpu_profile__components(const struct cpu_profile *p, const struct comp_table *t,
			     bool inclusive, bool (*filter)(const struct cpu_stack *, void *),
			     void *arg, struct cpu_comp_share *out);
void cpu_comp_share__free(struct cpu_comp_share *s);

/* ---- /proc figures (procstat.c) ---- */

/* Reads the start figures of every thread of pid and of the process. */
void cpu_proc__start(struct cpu_profile *p, pid_t pid);
/* Reads the end figures (window deltas) of every thread and process the profile has; a
 * thread or process without start figures was born in the window (counted from 0). */
void cpu_proc__finish(struct cpu_profile *p);
void cpu_cores__read(struct cpu_profile *p, bool start);
/* The end figures become the start ones: the next window starts where this one ended
 * (two /proc reads per thread and window instead of four). */
void cpu_proc__rebase(struct cpu_profile *p);
/* Parses a /proc/PID/task/TID/stat line: state, utime, stime, minflt, majflt, processor. */
int cpu_parse_stat(const char *buf, char *state, uint64_t *utime, uint64_t *stime, uint64_t *minflt,
		   uint64_t *majflt, int *processor);

/* ---- sampling session (session.c) ---- */

struct cpu_opts {
	const pid_t *pids;
	size_t nr_pids;
	bool all;
	bool children; /* follow the targets' descendants */
	unsigned int hz;
	/* Symbols only at the last read: the counts of each read are kept as they are and the
	 * maps of each process are read when it is met, the rest waits for the end (a report
	 * after -d does not slow the machine it looks at while it samples). on_interval, if
	 * set, is called with the profile after each read's samples are added, with the
	 * time the read took them out. */
	bool defer_symbols;
	void (*on_interval)(struct cpu_profile *p, uint64_t end_ns, void *arg);
	void *arg;
};

struct cpu_session;
/* Loads and attaches the sampler; NULL after a one-line error. */
struct cpu_session *cpu_session__new(const struct cpu_opts *o);
/* Adds the samples counted since the last call into p (symbolized) and clears the
 * in-kernel counts; p->end_ns is when they were taken out. last: the window ends, the
 * /proc end figures are read right then (cpu_proc__finish, cpu_cores__read), before the
 * symbols. Returns the number of targets still alive (0: all gone). */
int cpu_session__read(struct cpu_session *s, struct cpu_profile *p, bool last);
int cpu_session__nr_cpus(const struct cpu_session *s);
/* When the samplers were all attached (CLOCK_MONOTONIC): the first window starts there. */
uint64_t cpu_session__start_ns(const struct cpu_session *s);
/* Whether pid still runs: it exists and is not a zombie. */
bool cpu_pid_alive(pid_t pid);
/* Every process looked at so far (the targets and their descendants); empty with -a. */
const pid_t *cpu_session__targets(struct cpu_session *s, size_t *nr);
/* Accepts NULL. */
void cpu_session__delete(struct cpu_session *s);

/* ---- reports (report.c) ---- */

enum cpu_format { CPU_TEXT, CPU_JSON, CPU_FOLDED, CPU_SVG, CPU_SPEEDSCOPE, CPU_PPROF };

struct cpu_report_opts {
	enum cpu_format fmt;
	bool inclusive;
	bool compact;	      /* JSON on one line (a snapshot per interval) */
	size_t top;	      /* functions listed in text (0: 30) */
	double min_unmatched; /* percent of kernel samples (0.1) */
	const char *title;
	const struct topo *topo; /* the cores' core, package and NUMA node; may be NULL */
};

/* Writes the report of p in o->fmt. Returns 0 or -errno. */
int cpu_report__write(FILE *f, const struct cpu_profile *p, const struct comp_table *t,
		      const struct cpu_report_opts *o);

/* 'cpu TRACE': the REC_SAMPLE records of a trace made by 'record --on-cpu', reported in
 * o->fmt to stdout. Returns the exit status. */
int cpu_trace__report(const char *path, const struct comp_table *t,
		      const struct cpu_report_opts *o);

/* The live view (tui.c): refreshed every interval_ms until q, iterations or *stop.
 * Returns the exit status. */
int cpu_tui__run(struct cpu_session *s, const struct comp_table *t, long interval_ms,
		 long iterations, bool inclusive, volatile sig_atomic_t *stop);

#endif
