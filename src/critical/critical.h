/* The critical path of a thread: an execution graph built from one or more traces (one per
 * host), whose horizontal edges are each thread's states and whose vertical edges are
 * wake-ups and matched network packets, walked backwards from the end of each wait to the
 * work that ended it (Giraldeau's wait analysis, as Trace Compass's bounded algorithm).
 * Hosts' clocks are synchronised from their matched TCP packets with the convex-hull
 * method. Pure analysis over the trace reader's data; docs/critical.md. */
#ifndef SRVSCOPE_CRITICAL_CRITICAL_H
#define SRVSCOPE_CRITICAL_CRITICAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/u64map.h"

struct trace;

/* The edge types of Trace Compass's execution graph. */
enum crit_edge {
	CRIT_RUNNING,
	CRIT_PREEMPTED,	   /* runnable, waiting for a CPU (preempted, or woken and not run) */
	CRIT_BLOCKED,	   /* asleep, and the graph cannot say on what */
	CRIT_TIMER,	   /* asleep until a timer fired */
	CRIT_INTERRUPTED,  /* woken by an interrupt that is neither a disk's nor a NIC's */
	CRIT_BLOCK_DEVICE, /* waiting for a disk */
	CRIT_NETWORK,	   /* waiting for the network (a packet on the wire, or its softirq) */
	CRIT_IPI,	   /* woken by an inter-processor interrupt */
	CRIT_UNKNOWN,	   /* outside what the trace recorded of the thread */
	CRIT_EDGES,
};

/* The wake-up classes of the seed: what ended a wait. */
enum crit_wake {
	CRIT_WAKE_NONE,	   /* not a wait */
	CRIT_WAKE_TIMER,   /* a timer callback */
	CRIT_WAKE_DEVICE,  /* an irq or softirq, by its vector */
	CRIT_WAKE_TASK,	   /* another thread of the same host */
	CRIT_WAKE_NETWORK, /* a packet from another thread, maybe of another host */
	CRIT_WAKE_IPI,	   /* an IPI's handler (irq_work, a call-function IPI) */
	CRIT_WAKE_UNKNOWN,
};

const char *crit_edge__name(enum crit_edge e); /* "RUNNING", "BLOCK_DEVICE", ... */
const char *crit_wake__name(enum crit_wake w); /* "timer", "device", ... */

/* A packet seen by one host: sent (net_dev_queue) or received (netif_receive_skb). */
struct crit_pkt {
	uint64_t ts;  /* local clock */
	uint64_t key; /* hash of what identifies the segment on the wire */
	uint64_t ctx; /* the softirq it was sent or received in (0: a task's context) */
	uint32_t tid, pid;
	/* IPv4: the first 4 bytes. An IPv6 segment whose REC_NET6 was lost has family 0 and
	 * its addresses zero (it is still matched, by what its own record holds). */
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
	uint16_t cpu;
	uint8_t family; /* AF_INET, AF_INET6, 0 */
	uint8_t flags;	/* TCP flags */
	bool tx;
	uint32_t peer; /* index of the matched packet in the peer host's list + 1, 0: none */
	uint16_t peer_host;
};

/* An IPI sent on one host (record --ipi): the graph's edge from the sending CPU to the
 * handler, on the target, that woke a thread. */
struct crit_ipi {
	uint64_t ts;	   /* local clock */
	uint64_t cpus[2];  /* the target CPUs below 128, a bit each */
	uint32_t tid, pid; /* the task running on the sending CPU */
	uint32_t detail;   /* the sender's context's detail (irq, vector) */
	uint16_t cpu;	   /* the sending CPU */
	uint8_t ctx;	   /* the sender's context: enum wake_kind (WAKE_TASK: the task sent it) */
	bool call;	   /* a call-function IPI (it has a callback), else a reschedule */
};

/* The map from a host's clock to the reference host's: ref = local + offset + drift *
 * (local - x0), kept so that nanoseconds survive over hours (a double alone would not). */
struct crit_clock {
	int64_t offset;
	double drift; /* slope - 1 */
	uint64_t x0;
};

enum crit_sync_quality {
	CRIT_SYNC_ACCURATE,    /* both bounding lines found: the clock lies between them */
	CRIT_SYNC_APPROXIMATE, /* packets both ways, but only an offset or one line */
	CRIT_SYNC_FAILED,      /* packets contradict every line (or go one way only) */
	CRIT_SYNC_ABSENT,      /* no packet between the two hosts */
};
const char *crit_sync__quality_name(enum crit_sync_quality q);

struct crit_pt {
	double x, y; /* relative to the sync's origin */
};

/* The fully incremental convex-hull synchronisation of host Y's clock onto host X's, from
 * packets both ways: a packet X->Y sent at x, received at y, says y > f(x); one Y->X sent at
 * y, received at x, says y < f(x). Each set keeps only its hull facing the other (the lower
 * hull of the first, the upper hull of the second): every other point is redundant. */
struct crit_sync {
	uint64_t x0, y0; /* the origin: the first packet's times */
	bool started;
	struct crit_pt *up, *lo; /* lower hull of the X->Y points, upper hull of the Y->X ones */
	size_t nr_up, nr_lo, cap_up, cap_lo;
	uint64_t n_xy, n_yx;	   /* packets each way */
	double sum_x_xy, sum_x_yx; /* their x, summed: the mean x of each way */
};

struct crit_sync_result {
	enum crit_sync_quality quality;
	double slope, intercept;     /* y - y0 = slope * (x - x0) + intercept */
	double slope_min, slope_max; /* the bounding lines' (NAN when not found) */
	double accuracy_ns;	     /* the clock is within this of the line, whatever the delays */
};

/* Packets must be added with their x in ascending order within each direction. */
void crit_sync__add(struct crit_sync *s, uint64_t x, uint64_t y, bool x_to_y);
void crit_sync__solve(const struct crit_sync *s, struct crit_sync_result *r);
void crit_sync__free(struct crit_sync *s);

/* The horizontal edges: a thread's states, each until the next starts (or its end). */
enum crit_state_kind {
	CRIT_S_RUNNING,
	CRIT_S_PREEMPTED, /* switched out runnable */
	CRIT_S_BLOCKED,	  /* switched out asleep, until woken */
	CRIT_S_WOKEN,	  /* woken, not running yet */
};

struct crit_state {
	uint64_t start, end; /* local clock; end 0 while open */
	uint32_t wait;	     /* CRIT_S_BLOCKED: its entry in the host's waits */
	uint8_t kind;	     /* enum crit_state_kind */
};

/* What ended a blocked state: the vertical edge into it. */
struct crit_wait {
	uint64_t wake_ns; /* 0: no wake-up seen */
	union {
		uint64_t func;	/* timer callback */
		uint64_t since; /* WAKE_IPI: when the vector's handler was entered */
	};
	uint32_t waker_tid, detail; /* detail: irq number, softirq vector, ipi vector */
	int16_t cpu;		    /* of the wake-up, -1 when unknown */
	uint8_t kind;		    /* enum wake_kind, or 255: none seen */
	bool from_start;	    /* already blocked when the recording started */
	char name[16];		    /* the waker's name, or the irq handler's */
};

struct crit_thread {
	uint32_t tid, pid;
	struct crit_state *st; /* in time order */
	size_t nr, cap;
	const struct rec *early; /* a wake-up seen before the switch-out it ends */
};

/* One host of the graph: one trace. */
struct crit_host {
	const struct trace *t;
	char name[96]; /* for the user: the trace's host name, or its file */
	char id[96];   /* the host identity the recorder wrote (host_id=), "" when none */
	struct crit_thread *threads;
	size_t nr_threads, cap_threads;
	struct u64map tidx; /* tid -> index in threads */
	struct crit_wait *waits;
	size_t nr_waits, cap_waits;
	struct crit_pkt *pkts; /* by time */
	size_t nr_pkts;
	struct crit_ipi *ipis; /* by time */
	size_t nr_ipis;
	struct crit_clock clock; /* to the reference host's */
	enum crit_sync_quality sync;
	double accuracy_ns;
	int parent;	    /* in the synchronisation tree, -1 for the reference */
	uint32_t exchanged; /* packets matched with the parent */
};

struct crit_graph {
	struct crit_host *hosts;
	size_t nr;
};

/* Builds the graph over n traces (host 0 is the reference clock): the threads' states,
 * the packets matched between hosts, the clocks synchronised over a spanning tree. 0, or
 * -EINVAL with a line for the user in err (the same host twice, hosts that share no
 * packet). */
int crit_graph__build(struct crit_graph *g, struct trace **traces, size_t n, char *err,
		      size_t errlen);
void crit_graph__free(struct crit_graph *g);
int64_t crit_graph__to_ref(const struct crit_graph *g, size_t host, uint64_t local);
uint64_t crit_graph__to_local(const struct crit_graph *g, size_t host, int64_t ref);
/* The thread's states on host, NULL when it has none. */
const struct crit_thread *crit_graph__thread(const struct crit_graph *g, size_t host, uint32_t tid);
/* In an array of n elements of size bytes in time order, each starting with its uint64_t
 * time (crit_pkt, crit_ipi), the index of the first one later than ts; n when none. */
size_t crit__after(const void *base, size_t n, size_t size, uint64_t ts);
/* The IPI sent that raised the handler whose wake-up ended w (a WAKE_IPI wait of host):
 * the latest send of its kind to the wake-up's CPU before the handler began; its index in
 * the host's ipis, -1 when none was recorded (irq_work is raised by the CPU itself). */
long crit_graph__ipi_send(const struct crit_graph *g, size_t host, const struct crit_wait *w);
/* Whether tid has any state recorded on host; its first and last times (reference). */
bool crit_graph__thread_span(const struct crit_graph *g, size_t host, uint32_t tid, int64_t *first,
			     int64_t *last);

/* One segment of the path. */
struct crit_segment {
	int64_t start_ns, end_ns; /* reference clock */
	uint32_t tid, pid;
	uint16_t host;
	uint8_t edge;	    /* enum crit_edge */
	uint8_t wake;	    /* enum crit_wake: what ended the wait, for the waiting edges */
	uint16_t from_host; /* NETWORK, IPI: the sender's host */
	uint32_t from_tid;  /* NETWORK, IPI: the sending thread, 0 when an interrupt sent it */
	uint32_t wait;	    /* the host's wait it stands for, UINT32_MAX: none */
	uint32_t pkt;	    /* NETWORK: the received packet (index + 1), 0: none */
	uint16_t pkt_host;  /* ... in the packets of this host */
	uint32_t ipi;	    /* IPI: the send found for it (index + 1 in the host's), 0: none */
};

/* What a segment waited for, for the user: "hrtimer", "NET_RX", "irq 36 virtio1-req.0",
 * "10.0.0.1:80 -> 10.0.0.2:5000", "[fd00::1]:80 -> [fd00::2]:5000", "irq_work",
 * "call_function_single from web 4242", "" for the others. Returns buf, whose size should be
 * CRIT_WHAT_SIZE (two IPv6 addresses and ports fit). */
#define CRIT_WHAT_SIZE 128
const char *crit_segment__what(const struct crit_graph *g, const struct crit_segment *s, char *buf,
			       size_t size);

struct crit_path {
	struct crit_segment *segs; /* in time order, contiguous from start to end */
	size_t nr, cap;
	int64_t start_ns, end_ns;
	uint32_t hops; /* wake-ups, packets and IPIs crossed */
};

/* The critical path of thread tid of host in [from, to] (reference clock): each of its
 * waits replaced by the path of what ended it, recursively, bounded by the wait. 0 or
 * -errno. */
int crit_graph__path(const struct crit_graph *g, size_t host, uint32_t tid, int64_t from,
		     int64_t to, struct crit_path *p);
void crit_path__free(struct crit_path *p);

/* The path's time by thread and state, largest first: at most max into out; returns how
 * many. For one-line summaries ('blocking --critical'). */
struct crit_share {
	uint16_t host;
	uint8_t edge;
	uint32_t tid;
	uint64_t ns;
};
size_t crit_path__top(const struct crit_path *p, struct crit_share *out, size_t max);

#endif
