/* Blocking episodes from a trace: a thread switched out in a sleeping state, then woken
 * (by a hard irq, a softirq, a timer, an IPI or another task) and switched back in. Each episode
 * knows the syscall and fd it blocked in and the stacks on both sides. Pure functions over
 * the trace's events, and the summaries the 'blocking' report prints. */
#ifndef SRVSCOPE_ANALYSIS_BLOCKING_H
#define SRVSCOPE_ANALYSIS_BLOCKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace;

#define WAKE_UNKNOWN 255 /* with enum wake_kind: no wake-up event was seen */

/* Ordered without holes (120 bytes, not 136): a report holds every episode of the trace,
 * hundreds of thousands for a busy server. */
struct block_episode {
	uint32_t tid, pid;
	uint64_t start_ns, end_ns;	     /* switched out, switched back in (absolute) */
	uint64_t wake_ns;		     /* woken; 0 when not seen */
	int64_t ret;			     /* the syscall's return value, when has_ret */
	uint64_t kstack, ustack;	     /* the blocked thread's, as it blocked */
	uint64_t waker_kstack, waker_ustack; /* the waker's (kernel only for interrupts) */
	union {				     /* by wake_kind: */
		char waker_name[16];	     /* WAKE_TASK: its name; WAKE_HARDIRQ: the handler's */
		uint64_t wake_func;	     /* WAKE_HRTIMER, WAKE_TIMER: the callback's address */
	};
	int32_t syscall;      /* -1 when not in a syscall, or unknown */
	int32_t fd;	      /* -1 when the syscall takes no fd first */
	uint32_t state;	      /* as switched out (TASK_INTERRUPTIBLE, ...) */
	uint32_t wake_detail; /* irq number, softirq vector, enum ipi_vector */
	uint32_t waker_tid;   /* WAKE_TASK */
	uint8_t wake_kind;    /* enum wake_kind, or WAKE_UNKNOWN */
	bool polled_fd;	      /* poll, select: fd is the first of the fds waited on */
	bool more_fds;	      /* ... and there are others */
	bool has_ret;
	bool from_start; /* already blocked when the recording started */
	bool unfinished; /* still blocked when it ended */
};

struct block_filter {
	long pid, tid;	  /* 0: any */
	const char *comm; /* NULL: any; else the thread's name must be equal */
	uint64_t min_ns;  /* shorter episodes are left out */
};

struct block_report {
	struct block_episode *eps; /* by pid, tid, then start (unless unsorted) */
	size_t nr;
};

/* Fills r with the episodes of t that pass f (NULL: all). */
void blocking__analyze(const struct trace *t, const struct block_filter *f, struct block_report *r);
/* The same with the episodes in no particular order, for callers that only add them up:
 * sorting millions of episodes costs more than finding them. */
void blocking__analyze_unsorted(const struct trace *t, const struct block_filter *f,
				struct block_report *r);
void block_report__free(struct block_report *r);
/* The episode's waker_name, kept as recorded (escaping it in place would cut it to 16
 * bytes), escaped (util/escape.h) into buf: whole with COMM_ESCAPED_SIZE bytes. Returns buf. */
const char *blocking__waker_name(const struct block_episode *ep, char *buf, size_t size);
/* True when a thread switched out in this state is waiting (not preempted, not exiting). */
bool blocking__is_blocked_state(uint32_t state);

/* "softirq", "hardirq", "timer", "ipi", "task", "unknown" */
const char *blocking__kind_name(uint8_t kind);
/* What woke ep besides its kind: "NET_RX", "24 virtio0-input.0", "irq_work", a timer's callback
 * named by kernel(ctx, address); NULL for tasks and unknown causes. May return buf. */
const char *blocking__wake_detail(const struct block_episode *ep,
				  const char *(*kernel)(void *ctx, uint64_t addr), void *ctx,
				  char *buf, size_t size);
const char *blocking__softirq_name(uint32_t vec); /* "NET_RX", "TIMER", ... */
/* enum ipi_vector: "irq_work", "call_function", ...: the stems of the vectors' irq_vectors
 * tracepoints (NAME_entry, NAME_exit), by which the recorder attaches them. "?" beyond. */
const char *blocking__ipi_name(uint32_t vector);

struct block_stats {
	uint64_t count, sum_ns, min_ns, max_ns;
	double sumsq; /* of the values in ms, for the standard deviation */
};

void block_stats__add(struct block_stats *s, uint64_t ns);
double block_stats__mean_ns(const struct block_stats *s);
double block_stats__stddev_ns(const struct block_stats *s);

struct block_group {
	int32_t key; /* syscall number or fd */
	struct block_stats st;
};

/* Groups n episodes (of one task) by syscall or by fd (episodes without an fd are left
 * out), sorted by total time, descending. Returns the count; *out is malloc'ed. */
size_t blocking__by_syscall(const struct block_episode *eps, size_t n, struct block_group **out);
size_t blocking__by_fd(const struct block_episode *eps, size_t n, struct block_group **out);

#endif
