/* srvscope clone: a synthetic server run straight from a `srvscope model` file (schema in
 * docs/model-json.md): the original's process and thread structure, network model and
 * per-request syscall cycle, answering the same protocol. This header is the module's door:
 * the model as the clone reads it, its parser (pure, fuzzed) and the server. */
#ifndef SRVSCOPE_CLONE_CLONE_H
#define SRVSCOPE_CLONE_CLONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CLONE_MODEL_VERSION 1	 /* the newest model version this reader knows */
#define CLONE_MAX_POOL	    4096 /* threads or processes in one pool */
#define CLONE_MAX_THREADS   10000
#define CLONE_MAX_SIZE	    (64u << 20) /* bytes of one request, response or file */
#define CLONE_MAX_STEPS	    32
#define CLONE_MAX_BG	    16
#define CLONE_MAX_WORK	    8
#define CLONE_MAX_RUNS	    16 /* a background cluster's points: request rates of the model's runs */
#define CLONE_MAX_IOV	    16
#define CLONE_MAX_HIST	    64
#define CLONE_NAME	    16 /* a thread name, as prctl(PR_SET_NAME) takes it */

/* RAW: requests of the modelled size; LINE: requests end with '\n', answers too (a
 * clone option, --framing line: the model does not say how a protocol it does not know
 * frames its requests). */
enum clone_proto { CLONE_RAW, CLONE_MEMCACHED, CLONE_REDIS, CLONE_HTTP, CLONE_LINE };

/* How a thread waits for its sockets (network_model.network_io / accept_io). */
enum clone_io {
	CLONE_IO_EPOLL,
	CLONE_IO_POLL,
	CLONE_IO_SELECT,
	CLONE_IO_BLOCKING,
	CLONE_IO_NONBLOCKING,
	CLONE_IO_URING
};

enum clone_handoff {
	CLONE_HANDOFF_NONE,
	CLONE_HANDOFF_QUEUE,
	CLONE_HANDOFF_SHARED_EPOLL,
	CLONE_HANDOFF_REUSEPORT,
	CLONE_HANDOFF_FORK,
	CLONE_HANDOFF_THREAD
};

enum clone_per_conn { CLONE_PER_CONN_NONE, CLONE_PER_CONN_THREAD, CLONE_PER_CONN_PROCESS };

/* The syscalls the clone replays, by what they do. */
enum clone_sys {
	CS_NONE,
	/* socket reads */
	CS_READ,
	CS_RECV,
	CS_RECVFROM,
	CS_RECVMSG,
	CS_READV,
	/* socket writes */
	CS_WRITE,
	CS_SEND,
	CS_SENDTO,
	CS_SENDMSG,
	CS_WRITEV,
	CS_SENDFILE,
	/* file work on the scratch file */
	CS_STAT,
	CS_LSTAT,
	CS_NEWFSTATAT,
	CS_STATX,
	CS_OPEN,
	CS_OPENAT,
	CS_FSTAT,
	CS_PREAD,
	CS_PWRITE,
	CS_LSEEK,
	CS_CLOSE,
	CS_FSYNC,
	CS_FDATASYNC,
	/* waits and the rest */
	CS_EPOLL_WAIT,
	CS_EPOLL_PWAIT,
	CS_EPOLL_CTL,
	CS_POLL,
	CS_PPOLL,
	CS_SELECT,
	CS_PSELECT6,
	CS_NANOSLEEP,
	CS_CLOCK_NANOSLEEP,
	CS_FUTEX,
	CS_SETSOCKOPT,
	CS_GETPID,
	CS_TIMES,
	CS_GETTIMEOFDAY,
	CS_CLOCK_GETTIME,
	/* made on a connection as it is accepted (clone_model.per_accept), or in a cycle */
	CS_GETSOCKOPT,
	CS_GETPEERNAME,
	CS_GETSOCKNAME,
	CS__COUNT
};

/* A size distribution: a constant when nhist is 0 (p50, else mean). */
struct clone_dist {
	double mean;
	uint64_t p50, max;
	unsigned nhist;
	uint64_t le[CLONE_MAX_HIST], count[CLONE_MAX_HIST];
};

/* One step of the per-request cycle. */
struct clone_step {
	enum clone_sys sys;
	bool file;	/* on the scratch file, not the connection */
	bool eagain;	/* the original saw EAGAIN here: a read that drains the socket */
	uint64_t bytes; /* count argument (reads, write/send, pread) */
	unsigned niov;	/* readv/writev/sendmsg/recvmsg: iovec lengths, in order */
	uint64_t iov[CLONE_MAX_IOV];
	int maxevents;	/* epoll_wait, 0 unknown */
	int timeout_ms; /* epoll_wait/poll/select, -1 none */
};

/* A file the network threads used now and then beside their requests, not in the cycle
 * (redis reads /proc/self/stat in its 10 Hz cron: openat, read, close): made on the scratch
 * file as often a request, its ops in order, after the answers. */
#define CLONE_MAX_FILE_USES 4
#define CLONE_MAX_FILE_OPS  8
struct clone_file_use {
	double per_request;
	uint64_t read_bytes; /* a read op's */
	unsigned nops;
	enum clone_sys ops[CLONE_MAX_FILE_OPS];
};

/* A background (or idle) cluster: threads that wake at a period and do some work. */
struct clone_bg {
	char name[CLONE_NAME];
	unsigned threads;
	double period_ms; /* 0: never wakes (idle) */
	double on_cpu_us; /* per wake-up */
	/* What a wake-up alone cost a bare sleeper beside the original when the model measured
	 * it (0: not measured): the spin is then the rest of on_cpu_us, with no feedback. */
	double wake_floor_us;
	enum clone_sys wait;
	unsigned nwork;
	struct {
		enum clone_sys sys;
		double per_wake;
		uint64_t bytes;
	} work[CLONE_MAX_WORK];
	/* The model's runs (work.per_run), in order of request rate: each thread's wake-ups
	 * per second and CPU per wake-up at that rate (none: period_ms and on_cpu_us at any). */
	unsigned nruns;
	struct clone_bg_run {
		double rps, wakes_per_s, on_cpu_us;
	} run[CLONE_MAX_RUNS];
};

/* The period (ms, 0: never wakes) and CPU per wake-up (us) of a background cluster's
 * threads while the clone answers rps requests a second: between the model's runs, along
 * the line through the two around it; below the slowest, its wake-ups along the line
 * through the two slowest toward none (memcached's LRU maintainer, 23 a second at 105
 * requests/s and 102 at 505, wakes twice a second without load), never below none nor
 * above the slowest's, and its CPU per wake-up; above the fastest, the fastest's. */
void clone_bg__at(const struct clone_bg *bg, double rps, double *period_ms, double *on_cpu_us);

struct clone_model {
	char comm[CLONE_NAME];	   /* the main thread's name */
	char acceptor[CLONE_NAME]; /* the acceptor cluster's thread name */
	char network[CLONE_NAME];  /* the network cluster's thread name */
	enum clone_proto proto;
	char listen_addr[64];
	uint16_t listen_port;

	enum clone_io network_io, accept_io;
	unsigned accept_pool, network_pool; /* ignored for a per-connection pool */
	enum clone_per_conn per_conn;
	enum clone_handoff handoff;
	bool multi_process;
	unsigned processes; /* processes the network threads live in (multi_process) */
	unsigned listeners; /* listening sockets */
	bool reuseport, epoll_exclusive, nonblocking;
	bool main_accepts;     /* the main thread is the (first) acceptor */
	bool main_network;     /* the main thread is the (first) network thread */
	bool network_accepts;  /* network threads accept themselves (event loops that all accept) */
	int accept_timeout_ms; /* the acceptor's wait timeout, -1 none */
	int maxevents;
	int wait_timeout_ms; /* the network threads' wait timeout, -1 none */

	struct clone_dist request, response;
	double on_cpu_us_per_request;
	bool cpu_unrecorded; /* it is the model's figure without the recorder */
	/* CPU per request as a line of wake-ups per request, w + k * wake-ups, from the model's
	 * runs without the recorder at its rate and at peak (cpu_line false: not known) */
	bool cpu_line;
	double cpu_w_us, cpu_k_us;
	double cpu_x_rate, cpu_x_peak; /* the line's two points' wake-ups per request */
	/* The original's CPU per request over its skeleton's (this clone spinning nothing),
	 * both loaded at once when the model was made (syscall_profile.cpu_beside_skeleton;
	 * 0: not measured). With it the clone aims at that multiple of its own CPU per request
	 * less its spin, whatever the machine does (a machine slower by a third slows the
	 * original and the skeleton alike), instead of at the model's microseconds; at the
	 * wake-ups per request of the model's fixed rate, that is, blended into the line
	 * towards its peak (server.c, request_work). */
	double cpu_ratio;
	unsigned nsteps;
	struct clone_step steps[CLONE_MAX_STEPS];
	/* Calls on each connection as it is accepted, on average: socket options and
	 * addresses the original set or asked for once a connection (redis: 3 setsockopt),
	 * from the network threads' syscalls per request over their accepts per request,
	 * where the cycle does not make them. */
	double per_accept[CS__COUNT];
	/* The listener is read until it has no connection left (non-blocking, accept again
	 * until EAGAIN), as the original's network threads did: their accept calls found none
	 * about as often as they found one (redis: 0.02 calls a request, half EAGAIN). */
	bool accept_drain;
	unsigned nfile_uses;
	struct clone_file_use file_use[CLONE_MAX_FILE_USES];
	uint64_t file_size;    /* the scratch file per-request file work uses */
	uint64_t answer_bytes; /* what the cycle's write steps carried, 0 unknown */
	unsigned nbg;
	struct clone_bg bg[CLONE_MAX_BG];
};

/* Parses and checks a model document (len bytes of JSON) into m. Returns 0, or -EINVAL
 * with one line in err saying what is wrong (a field, its value, what is allowed), or
 * -EPROTONOSUPPORT for a newer version. Nothing is allocated: m needs no freeing. */
int clone_model__parse(const char *text, size_t len, struct clone_model *m, char *err,
		       size_t errlen);

/* Reads path (a regular file) and parses it as clone_model__parse does. */
int clone_model__load(const char *path, struct clone_model *m, char *err, size_t errlen);

/* The name of a replayed syscall ("sendmsg"), and the reverse (CS_NONE when not replayed). */
const char *clone_sys__name(enum clone_sys s);
enum clone_sys clone_sys__from_name(const char *name);

/* Per-syscall counts the clone's processes add to (shared memory), for --check.
 * bg_excess_ns: the CPU the background threads took beyond the model's CPU per wake-up,
 * summed (less than it: negative), which the network threads take off their spin. */
#define CLONE_COUNTS_TIDS 1024
struct clone_counts {
	uint64_t requests;
	uint64_t sys[CS__COUNT];
	uint64_t accepts, conns;
	int64_t bg_excess_ns;
	/* The network threads as they start (every process's: kernel thread ids), the first
	 * CLONE_COUNTS_TIDS; nr_net counts them all. */
	uint32_t nr_net;
	uint32_t net_tids[CLONE_COUNTS_TIDS];
};

struct clone_opts {
	const char *listen_addr; /* NULL: the model's, else 127.0.0.1 */
	int port;		 /* -1: the model's; 0: any free port */
	bool quiet;
	int ready_fd; /* >= 0: "PORT\n" is written there once listening, then closed */
};

/* Runs the clone in this process until SIGINT or SIGTERM (or *stop from another thread);
 * every process it forked is gone and its scratch directory removed when it returns.
 * counts, if not NULL, must be shared memory (MAP_SHARED) to see the forked processes'
 * requests. Returns 0 or -errno (an error already reported, one line). */
int clone__run(const struct clone_model *m, const struct clone_opts *o,
	       struct clone_counts *counts);

struct clone_check_opts {
	double rate;	   /* the fixed-rate run's requests/s; < 0: the model's last run's */
	unsigned conns;	   /* 0: the model's last run's */
	double duration_s; /* of each run */
	const char *load;  /* an external load command ({port} {conns} {rate} {duration}
			    * {requests}), for protocols the built-in load does not speak */
};

/* --check: starts the clone (a child process), drives it with the built-in load of the
 * model's protocol at peak and at a fixed rate, prints the clone side by side with the
 * model (path, already parsed into m), and stops it. Returns 0 or -errno (reported). */
int clone__check(const char *path, const struct clone_model *m, const struct clone_opts *o,
		 const struct clone_check_opts *co);

/* The original beside its skeleton: the clone of the model spinning nothing (no CPU aim),
 * started in a child, and the original, driven at once by the same built-in load (spec,
 * its target the original) in slices after one not counted; per slice the CPU per request
 * of the original's network threads (tids) and of the skeleton's (schedstat), over the
 * requests each load completed. */
struct load_spec;    /* load/load.h */
struct model_beside; /* model/model.h */
/* stopped, if not NULL, is asked between slices (a signal: -EINTR). Returns 0 with *out, or
 * -errno: -ESRCH when a thread of the original is gone, -ENODATA when a slice completed no
 * request, the load's error. */
int clone__beside(const struct clone_model *m, const struct load_spec *spec, const uint32_t *tids,
		  size_t n, unsigned slices, int (*stopped)(void), struct model_beside *out);

/* Draws one size from d: a bucket as often as the histogram has it, then prefer when it
 * falls in that bucket (the size the cycle's answer had: histogram buckets are coarse),
 * else uniform within it. seed: per-thread. */
uint64_t clone_dist__draw(const struct clone_dist *d, uint64_t prefer, uint64_t *seed);

/* The protocol parsers and response builders (proto.c), pure, for the server and tests. */
enum clone_req_kind { CLONE_REQ_GET, CLONE_REQ_SET, CLONE_REQ_OTHER, CLONE_REQ_QUIT };
struct clone_req {
	size_t len; /* bytes of the request in the buffer */
	enum clone_req_kind kind;
	const char *key; /* memcached/redis key, not NUL-terminated */
	size_t keylen;
	bool close; /* HTTP: the connection closes after the answer */
};
/* Looks for one whole request at the start of buf: 1 and *r filled, 0 when more bytes are
 * needed, -EPROTO when the bytes cannot be a request. raw: fixed-size requests of
 * raw_size bytes. */
int clone_proto__parse(enum clone_proto p, const char *buf, size_t len, uint64_t raw_size,
		       struct clone_req *r);
/* Writes the answer to r into out (at most outlen bytes), of total size about want bytes
 * where the protocol lets the size vary (a get's value, an HTTP body); returns its length. */
size_t clone_proto__answer(enum clone_proto p, const struct clone_req *r, uint64_t want, char *out,
			   size_t outlen);

#endif
