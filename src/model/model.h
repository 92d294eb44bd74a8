/* 'srvscope model': what a server is, from recordings of it under load. analyze.c turns one
 * trace into facts per thread and per connection (pure, over the trace in memory); roles.c
 * groups threads, names their roles and derives the network model (Ditto's keys and ours);
 * profile.c sums the network threads' syscalls per measured request; output.c writes the
 * JSON document (docs/model-json.md) and the summary; collect.c runs loads and records. */
#ifndef SRVSCOPE_MODEL_MODEL_H
#define SRVSCOPE_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fdsnap.h"
#include "model/listen.h"
#include "trace/u64map.h"

struct trace;

/* What a file descriptor is, as far as the trace tells. */
enum fd_kind {
	FDK_OTHER = 0,
	FDK_TCP,
	FDK_UDP,
	FDK_UNIX,
	FDK_FILE,
	FDK_PIPE,
	FDK_EVENTFD,
	FDK_EPOLL,
	FDK_TIMERFD,
	FDK_SIGNALFD,
	FDK_KINDS,
};
const char *model__fd_kind_name(enum fd_kind k);

/* How a thread waits, by the syscall it is off-CPU in. */
enum wait_kind {
	WK_EPOLL = 0,
	WK_POLL,
	WK_SELECT,
	WK_URING,
	WK_READ,   /* read/recv family on a connection: blocking I/O */
	WK_ACCEPT, /* blocked in accept */
	WK_FUTEX,
	WK_SLEEP,
	WK_OTHER,
	WK_KINDS,
};
const char *model__wait_name(enum wait_kind k);
/* How a thread off-CPU in syscall nr waits. */
enum wait_kind model__wait_kind(int nr);

/* One stack of a thread and the time spent in it (on- and off-CPU). */
struct model_stack {
	uint64_t ustack, kstack;
	uint64_t ns;
	bool on_cpu;
};

/* One syscall of a request's cycle (what the clone replays). */
#define MODEL_CYCLE_MAX 16
struct model_step {
	int16_t nr;
	uint8_t kind; /* enum fd_kind, for calls that take an fd */
	uint8_t ret;  /* 0 ok, 1 EAGAIN, 2 another error */
	uint32_t bytes;
	int32_t maxevents, timeout_ms; /* epoll_wait/poll; -2: not known */
	uint32_t iov_n, iov[4];
};

struct model_cycle {
	struct model_step steps[MODEL_CYCLE_MAX];
	unsigned len;
	uint64_t count;
};

struct model_thread {
	uint32_t tid, pid;
	char comm[16];
	uint64_t on_ns, off_ns;
	uint64_t wait_ns[WK_KINDS];
	uint64_t waits[WK_KINDS]; /* calls that waited this way (epoll_wait... returns) */
	uint64_t accepts;	  /* accept/accept4 that returned a connection */
	uint64_t conn_io;	  /* read/write family calls on connections */
	uint64_t conn_blocked;	  /* of which blocked (off-CPU) in a read */
	uint64_t eagain;	  /* connection I/O that returned EAGAIN */
	uint32_t conns;		  /* distinct connections it did I/O on */
	uint32_t max_open_conns;  /* connections it served at once, at most */
	uint64_t syscalls;	  /* all its syscalls */
	struct model_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct u64map stack_idx;
	/* Profile pass: connections whose request cycle is under way in this thread (index
	 * + 1), the last one it touched first. */
	uint32_t open_seq[8];
	unsigned nr_open_seq;
	int cluster; /* -1 until clustered */
	bool network, acceptor;
	/* The epoll instance it waits in most (0: none), and how often. */
	uint64_t epoll_id, epoll_waits;
	struct u64map epolls; /* epoll instance -> waits, while walking */
	uint64_t listener;    /* the listening socket it accepted on last (identity) */
	/* Its wake-ups: waits of its commonest kind that ended, and the median interval
	 * between their ends when they come at a regular period (0: not periodic). */
	uint64_t wakes, period_ns;
	/* Switch windows: the time from its first switch to its last, the part of it its
	 * switches were left out, and of the rest the time it ran (analyze.c scale_to_span:
	 * off_ns, wait_ns and wakes estimated from them). */
	uint64_t span_ns, gap_ns, ran_ns;
	/* The last run's threads that serve no connection: their CPU time and voluntary
	 * switches over the unrecorded run at its rate (unrec: measured). */
	uint64_t unrec_on_ns, unrec_wakes;
	bool unrec;
	/* Threads that serve no connection: their syscalls (number -> calls, -> bytes). */
	struct u64map sc_n, sc_bytes;
};

/* A connection: from accept (or from the start, for one seen only in I/O) to close. */
struct model_conn {
	uint32_t pid; /* the process that accepted it */
	int32_t fd;
	uint32_t accept_tid;
	uint64_t accept_ns, close_ns;
	uint32_t io_tid;     /* the first thread that did I/O on it */
	uint32_t other_tids; /* further threads that did */
	uint64_t reads, writes, cycles;
	uint64_t req_acc, resp_acc; /* bytes of the request, the response under way */
	uint8_t last;		    /* 1 after a read that returned data, 2 after a write */
	bool handed;		    /* I/O by a thread other than the acceptor */
	bool nonblocking;
};

#define MODEL_SIZE_BUCKETS 24 /* powers of two from 1 to 8M, and more */

/* A distribution of sizes in power-of-two buckets. */
struct model_sizes {
	uint64_t hist[MODEL_SIZE_BUCKETS];
	uint64_t n, max;
	double sum;
};
void model_sizes__add(struct model_sizes *s, uint64_t bytes);

/* Syscall statistics of the network threads, summed per syscall number. */
struct model_sc_stat {
	uint64_t count;
	uint64_t fd_kind[FDK_KINDS];
	uint64_t ok, eagain, err;
	uint64_t sock_hist[MODEL_SIZE_BUCKETS], file_hist[MODEL_SIZE_BUCKETS];
	uint64_t sock_n, file_n;
	double sock_sum, file_sum;
	uint64_t sock_max, file_max;
	struct u64map arg_vals; /* epoll_wait maxevents, poll timeout, fcntl/epoll_ctl ops */
	struct u64map timeouts; /* epoll_wait, epoll_pwait: timeout (ms) -> calls */
	struct u64map flags;	/* accept4, sendto, recvfrom: flags; epoll_ctl: events -> calls */
	struct {
		uint32_t n, len[7]; /* iovec count, the first lengths */
		uint64_t count;
	} iov[8]; /* layouts, in order of appearance */
	uint64_t iov_other, iov_n;
	uint64_t off_min, off_max, off_n, off_aligned;
	uint64_t ns; /* time inside the call */
};

#define MODEL_MAX_SYSCALL 512

/* A file the network threads used: one per path when it is known, else one per shape of
 * use (the same syscalls from open to close: a file served per request). */
#define MODEL_FILE_OPS 8
struct model_file {
	uint64_t key;
	char *path;	 /* NULL: opened during the run, its path not recorded */
	bool before;	 /* open before the run (its path from /proc) */
	bool append;	 /* O_APPEND */
	bool positional; /* pread/pwrite */
	int64_t size;	 /* as /proc gave it, -1 when not known */
	uint64_t opens, uses, reads, writes, read_bytes, written_bytes, other_calls;
	uint64_t off_max;
	struct model_sizes per_use;  /* bytes moved from open to close (or over the run) */
	int16_t ops[MODEL_FILE_OPS]; /* syscalls of its first use in order, repeats merged */
	unsigned nr_ops;
};

struct model_run {
	unsigned index;
	unsigned conns; /* asked of the load, 0 when not known */
	double rate, duration_s;
	/* the built-in client's --reconnect (s), < 0 when not known (a command, a trace), 0:
	 * connections kept open */
	double reconnect_s;
	double load_elapsed_s;
	uint64_t client_requests; /* as the client counted them, 0 when not known */
	double client_rps;
	double p50_us, p90_us, p99_us, max_us;
	bool have_latency;
	uint64_t errors;
	const char *trace_path;

	uint32_t main_pid;
	uint64_t start_ns, end_ns;
	struct model_thread *thr;
	size_t nr_thr, cap_thr;
	struct u64map thr_idx;
	struct model_conn *conn;
	size_t nr_conn, cap_conn;
	uint32_t peak_conns;
	uint64_t cycles; /* measured requests: request/response cycles on connections (in the
			  * windows of a sampled recording: model_run__requests for them all) */
	struct model_sizes req_bytes, resp_bytes; /* per cycle: read, then written */
	struct model_cycle *seqs; /* distinct syscall sequences of a cycle, network threads */
	size_t nr_seqs, cap_seqs;
	struct u64map seq_idx;
	uint64_t seqs_seen;
	uint32_t listeners;
	bool fork_per_conn;	  /* connections handled in processes forked after accept */
	struct model_sc_stat *sc; /* [MODEL_MAX_SYSCALL], network threads only */
	uint64_t unknown_syscalls;
	uint64_t net_on_ns; /* on-CPU of the network threads (times sampled: the windows' share) */
	/* Of it, outside syscalls: their user-space CPU time (model__analyze); only when every
	 * syscall was written (net_user false: a sampled recording, or none) */
	uint64_t net_user_ns;
	bool net_user;
	/* The share of the targets' syscalls recorded in full: 1, or less when the recorder
	 * sampled them in windows (trace_syscall_sample). What is counted per request, the
	 * profile, cycles, connections' I/O, comes from the windows; counts over the run are
	 * scaled by 1 / sampled. */
	double sampled;
	bool epoll_exclusive; /* a listener was added to an epoll with EPOLLEXCLUSIVE */
	bool have_args;	      /* the trace has REC_SYSCALL_ARGS records */
	uint64_t procs_seen;
	struct u64map procs; /* pid -> ppid */
	/* The fds open as the run started (fdsnap.h): set by the caller before
	 * model__analyze, or taken from the trace's fd descriptions when empty. Freed with
	 * the run. */
	struct model_fds fds;
	int reuseport;		  /* the listeners accepted on: SO_REUSEPORT 1, not 0, -1 unknown */
	uint32_t port_sockets;	  /* most listening sockets accepted on that share one port */
	uint32_t shared_epoll;	  /* most network threads waiting in one epoll instance */
	struct model_file *files; /* files the network threads used */
	size_t nr_files, cap_files;
	struct u64map file_idx;
};

/* Turns the trace into run's facts. main_pid 0: the trace's first target. Returns 0 or
 * -errno. */
int model__analyze(const struct trace *t, uint32_t main_pid, struct model_run *run);
/* The measured requests of the whole run: its cycles, scaled up when it was sampled. */
uint64_t model_run__requests(const struct model_run *run);
void model_run__free(struct model_run *run);

/* A cluster of threads (over every run). */
enum model_role {
	ROLE_MAIN = 0,
	ROLE_ACCEPTOR,
	ROLE_NETWORK,
	ROLE_BACKGROUND,
	ROLE_IDLE,
	ROLES,
};
const char *model__role_name(enum model_role r);

struct model_item { /* a thread in one run */
	unsigned run;
	size_t thr;
};

/* A background cluster in one run: wake-ups per second of each of its threads, their
 * period (0: not periodic in that run), CPU per wake-up, and the CPU per wake-up with
 * nothing recording (the last run's rate only; 0: not measured). */
struct model_bg_run {
	double wakes_per_s, period_ms, on_cpu_us, on_cpu_us_unrecorded;
};

struct model_cluster {
	int id;
	char name[16];
	enum model_role role;
	bool roles[ROLES];
	struct model_item *items;
	size_t nr_items;
	unsigned *size_per_run;
	unsigned processes;
	bool grows_with_conns;
	double on_cpu_share;
	enum wait_kind wait;
	double wait_share;
	char **stack; /* heaviest path, outermost first */
	size_t stack_len;
	/* Background and idle clusters: the period its threads wake at (0: none found), and
	 * what they do per wake-up. */
	double period_ms;
	uint64_t wakes;
	double work_on_cpu_us;
	double work_on_cpu_us_unrecorded; /* at the last run's rate, 0: not measured */
	/* The same in each run (nr_runs of them), as the wake-ups follow the load (memcached's
	 * LRU maintainer sleeps 1 ms to 1 s as it finds work). */
	struct model_bg_run *per_run;
	struct model_work {
		int nr; /* syscall */
		double per_wake, bytes;
	} work[8];
	unsigned nr_work;
};

struct model_netmodel {
	bool accept_dispatch, network_dispatch, network_epoll, nonblocking, blocking;
	unsigned accept_pool, network_pool;
	bool accept_per_conn, network_per_conn;
	const char *network_io, *accept_io;
	bool multi_process;
	const char *per_connection; /* none | thread | process */
	double handoff_share;
	const char *handoff;
	unsigned listeners;
	int reuseport;	   /* 1, 0, -1: not known */
	bool shared_epoll; /* network threads wait in one epoll instance */
	bool epoll_exclusive;
	bool found; /* a connection was seen at all */
};

/* A load run without the recorder: the network threads' CPU time and voluntary switches
 * (wake-ups) per request the client completed, in the slice whose CPU per request is the
 * median of the run's slices (at most MODEL_CPU_SLICES_MAX). */
#define MODEL_CPU_SLICES_MAX 5
struct model_cpu_run {
	unsigned conns;
	double rate; /* 0: closed loop, the peak */
	uint64_t requests;
	double cpu_us, wakeups; /* per request */
	/* each slice's CPU per request, in the order they ran */
	double slice_cpu_us[MODEL_CPU_SLICES_MAX];
	unsigned nr_slices;
};

/* The original beside its skeleton (clone__beside, src/clone): the clone of this model
 * spinning nothing and the original, loaded at once by the last run's load at its rate,
 * in slices after one not counted; their network threads' CPU per request (schedstat)
 * over the requests each load completed. ratio 0: not measured. */
#define MODEL_BESIDE_SLICES 16 /* 7 in the model, twice that when they spread wide */
struct model_beside {
	unsigned conns, nr_slices;
	double rate;
	uint64_t requests, skeleton_requests; /* completed, all slices */
	double ratio;			      /* the median slice's original over skeleton */
	double original_us, skeleton_us;      /* CPU per request in that slice */
	double slice_ratio[MODEL_BESIDE_SLICES];
};

struct model {
	struct model_run *runs;
	size_t nr_runs;
	struct model_cluster *clusters;
	size_t nr_clusters;
	double threshold;
	size_t distinct_trees;
	struct model_netmodel net;
	/* The target and the load, for the output. */
	uint32_t pid;
	char comm[16];
	char exe[512];
	char title[512];
	const char *protocol, *url, *command;
	struct model_listen listen[16];
	size_t nr_listen;
	const struct trace **traces; /* per run, for naming frames; may be NULL */
	/* The network threads' CPU per request in runs without the recorder (its probes cost
	 * the traced threads CPU): at the last run's rate, then at peak. */
	struct model_cpu_run cpu_unrecorded[2];
	unsigned nr_cpu_unrecorded;
	/* A bare sleeper's CPU per wake-up beside the unrecorded run at the last run's rate,
	 * sleeping the shortest period of the other threads (0: not measured). */
	double wake_floor_us, wake_floor_period_ms;
	struct model_beside beside;
};

/* Clusters the threads of every run, names the roles and derives the network model. The
 * runs' traces are used to name stack frames. Returns 0 or -errno. */
int model__build(struct model *m);
void model__free(struct model *m);

/* Output (output.c). */
int model__write_json(const struct model *m, FILE *f);
void model__print_summary(const struct model *m, FILE *f);

#endif
