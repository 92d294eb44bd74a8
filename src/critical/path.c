/* The bounded critical path: walk the followed thread backwards from the end of the window;
 * its running and preempted states are on the path as they are; each wait is replaced by
 * what ended it: a timer, a device, or the path of the thread (or, through a packet, the
 * host) that woke it, walked backwards in turn but only over the wait's own interval. The
 * walk keeps an explicit stack of the intervals still to explain, so a long chain of
 * wake-ups costs memory, not the C stack. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "critical/critical.h"
#include "trace/trace.h"
#include "util/util.h"

struct work {
	size_t host;
	uint32_t tid;
	int64_t from, to; /* reference clock */
	bool root;	  /* the followed thread's own time (not a waker's) */
};

struct walker {
	const struct crit_graph *g;
	struct crit_path *p;
	struct work *stack;
	size_t nr, cap;
	uint64_t steps;
};

static void push(struct walker *w, size_t host, uint32_t tid, int64_t from, int64_t to, bool root)
{
	if (to <= from)
		return;
	xgrow((void **)&w->stack, &w->cap, w->nr + 1, sizeof(*w->stack));
	w->stack[w->nr++] = (struct work){host, tid, from, to, root};
}

/* Appends a segment (they come latest first); one that continues the last is merged. */
static struct crit_segment *emit(struct walker *w, size_t host, uint32_t tid, uint32_t pid,
				 enum crit_edge edge, enum crit_wake wake, int64_t start,
				 int64_t end, uint32_t wait, uint32_t pkt)
{
	struct crit_path *p = w->p;
	struct crit_segment *s;

	if (end <= start)
		return NULL;
	if (p->nr) {
		s = &p->segs[p->nr - 1];
		if (s->host == host && s->tid == tid && s->edge == edge && s->wake == wake &&
		    s->start_ns == end && s->wait == wait && !pkt && !s->pkt) {
			s->start_ns = start;
			return s;
		}
	}
	xgrow((void **)&p->segs, &p->cap, p->nr + 1, sizeof(*p->segs));
	s = &p->segs[p->nr++];
	memset(s, 0, sizeof(*s));
	s->start_ns = start;
	s->end_ns = end;
	s->host = host;
	s->tid = tid;
	s->pid = pid;
	s->edge = edge;
	s->wake = wake;
	s->wait = wait;
	s->pkt = pkt;
	s->pkt_host = host;
	return s;
}

/* The index of the thread's last state starting before ts, or -1. */
static long state_at(const struct crit_thread *th, uint64_t ts)
{
	size_t lo = 0, hi = th->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (th->st[mid].start < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* Hard irq handlers by name: a disk's queues, a NIC's queues, else something else. */
static enum crit_edge hardirq_edge(const char *name)
{
	static const char *const disk[] = {"req",  "nvme", "ahci", "ata",	"blk",
					   "scsi", "mmc",  "sd",   "virtio_blk"};
	static const char *const net[] = {"input", "output", "rx",  "tx",	  "eth", "net",
					  "mlx",   "ens",    "enp", "virtio_net", "igb", "ixgbe"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(disk); i++)
		if (strstr(name, disk[i]))
			return CRIT_BLOCK_DEVICE;
	for (i = 0; i < ARRAY_SIZE(net); i++)
		if (strstr(name, net[i]))
			return CRIT_NETWORK;
	return CRIT_INTERRUPTED;
}

/* What a wait that was not ended by a recorded thread is: the edge and the wake class. */
static enum crit_edge wait_edge(const struct crit_wait *w, enum crit_wake *wake)
{
	char name[COMM_ESCAPED_SIZE];

	switch (w->kind) {
	case WAKE_HRTIMER:
	case WAKE_TIMER:
		*wake = CRIT_WAKE_TIMER;
		return CRIT_TIMER;
	case WAKE_SOFTIRQ:
		*wake = CRIT_WAKE_DEVICE;
		switch (w->detail) {
		case 1: /* TIMER */
		case 8: /* HRTIMER */
			*wake = CRIT_WAKE_TIMER;
			return CRIT_TIMER;
		case 2: /* NET_TX */
		case 3: /* NET_RX */
			*wake = CRIT_WAKE_NETWORK;
			return CRIT_NETWORK;
		case 4: /* BLOCK */
		case 5: /* IRQ_POLL */
			return CRIT_BLOCK_DEVICE;
		default:
			return CRIT_INTERRUPTED;
		}
	case WAKE_HARDIRQ:
		*wake = CRIT_WAKE_DEVICE;
		name_escape(name, sizeof(name), w->name, strnlen(w->name, sizeof(w->name)));
		return hardirq_edge(name);
	case WAKE_TASK:
		*wake = CRIT_WAKE_TASK;
		return CRIT_BLOCKED;
	case WAKE_IPI:
		*wake = CRIT_WAKE_IPI;
		return CRIT_IPI;
	default:
		*wake = CRIT_WAKE_UNKNOWN;
		return w->from_start ? CRIT_UNKNOWN : CRIT_BLOCKED;
	}
}

/* A received packet that a softirq on cpu handled before ts (2 ms at most before it: one
 * softirq run), matched to its send: the latest one before index 'before'; -1 when none.
 * With ctx, only packets of that softirq run. */
static long rx_before(const struct crit_host *h, int cpu, uint64_t ts, uint64_t ctx, long before)
{
	size_t lo = crit__after(h->pkts, h->nr_pkts, sizeof(*h->pkts), ts);
	long i;

	if ((long)lo > before)
		lo = before;
	for (i = (long)lo - 1; i >= 0 && ts - h->pkts[i].ts < 2000000; i--) {
		const struct crit_pkt *p = &h->pkts[i];

		if (p->tx || !p->peer || p->cpu != cpu)
			continue;
		if (ctx && p->ctx != ctx)
			continue;
		return i;
	}
	return -1;
}

/* How far back (reference clock) the chain of packets that ends with received packet i of
 * host h explains a wait begun at from: from itself when it reaches a recorded sending
 * thread (whose path explains the rest), else the send time of the last packet matched. */
static int64_t chain_reach(const struct crit_graph *g, size_t h, long i, int64_t from)
{
	int64_t sent = from;
	int hop;

	for (hop = 0; hop < 32 && i >= 0; hop++) {
		const struct crit_pkt *rx = &g->hosts[h].pkts[i];
		const struct crit_pkt *tx = &g->hosts[rx->peer_host].pkts[rx->peer - 1];

		sent = crit_graph__to_ref(g, rx->peer_host, tx->ts);
		if (sent <= from)
			return from;
		h = rx->peer_host;
		if (!tx->ctx)
			return crit_graph__thread(g, h, tx->tid) ? from : sent;
		i = rx_before(&g->hosts[h], tx->cpu, tx->ts, tx->ctx, LONG_MAX);
	}
	return sent;
}

/* Of the packets a softirq run handled before waking the thread, the one whose chain
 * explains most of the wait (the latest of those that explain it all): where several
 * paths explain a wait, the longest explained one, not merely the last. */
static long pick_rx(const struct crit_graph *g, size_t h, int cpu, uint64_t ts, uint64_t ctx,
		    int64_t from)
{
	int64_t best_reach = INT64_MAX;
	long i, best = -1;

	for (i = rx_before(&g->hosts[h], cpu, ts, ctx, LONG_MAX); i >= 0;
	     i = rx_before(&g->hosts[h], cpu, ts, ctx, i)) {
		int64_t r = chain_reach(g, h, i, from);

		if (r < best_reach) {
			best = i;
			best_reach = r;
		}
		if (r <= from)
			break;
	}
	return best;
}

/* "10.0.0.1", "[fd00::1]"; "[?]" for the addresses of an IPv6 segment recorded without them. */
static void addr_name(int family, const uint8_t *a, char *buf, size_t size)
{
	char s[INET6_ADDRSTRLEN];

	if (family == AF_INET && inet_ntop(AF_INET, a, buf, size))
		return;
	if (family == AF_INET6 && inet_ntop(AF_INET6, a, s, sizeof(s)))
		snprintf(buf, size, "[%s]", s);
	else
		snprintf(buf, size, "[?]");
}

static void pkt_name(const struct crit_pkt *p, char *buf, size_t size)
{
	char s[INET6_ADDRSTRLEN + 2], d[INET6_ADDRSTRLEN + 2];

	addr_name(p->family, p->saddr, s, sizeof(s));
	addr_name(p->family, p->daddr, d, sizeof(d));
	snprintf(buf, size, "%s:%u -> %s:%u", s, ntohs(p->sport), d, ntohs(p->dport));
}

/* A packet sent at 'sent', before the wait of (host, tid) began at from: it was on the wire
 * from its send, and nothing done meanwhile brought it sooner. The time just before from
 * (the top of the stack, when it ends there) gives way to it when it is
 * - the sender's (a client that sent its request, then was preempted or ran on before it
 *   blocked for the answer): its work item ends at the send;
 * - the waiting thread's own time before its wait, unless it is the followed thread (whose
 *   own states are the path's): a server woken meanwhile by another packet, that ran and
 *   blocked again, did not bring the request. That time is cut at the send, and what is
 *   left of it before the send is the sender's, when the sender is a recorded thread;
 *   taken all, the item below is tried in turn (it may be the sender's).
 * Returns where the wire time starts: from when neither holds. */
static int64_t sent_before(struct walker *w, size_t host, uint32_t tid, size_t peer,
			   const struct crit_pkt *tx, int64_t sent, int64_t from)
{
	while (w->nr) {
		struct work *top = &w->stack[w->nr - 1];
		bool sender = !tx->ctx && top->host == peer && top->tid == tx->tid;
		bool self = !top->root && top->host == host && top->tid == tid;

		if (top->to != from || (!sender && !self))
			break;
		from = sent > top->from ? sent : top->from;
		top->to = from;
		if (sender)
			break;
		if (top->to > top->from) {
			if (!tx->ctx && crit_graph__thread(w->g, peer, tx->tid)) {
				top->host = peer;
				top->tid = tx->tid;
			}
			break;
		}
		w->nr--; /* all of it was the wire's */
	}
	return from;
}

/* A wait ended by the network on host: follow the packet that woke it back to its sender,
 * across hosts, through the softirqs that answered a packet with another (a handshake);
 * the wire times are NETWORK segments of the waiting thread. The rest of the interval
 * [from, end) goes to the sending thread when one sent it, else stays a network wait. */
static void network_wait(struct walker *w, size_t host, uint32_t tid, uint32_t pid, uint32_t wait,
			 int64_t from, int64_t end)
{
	const struct crit_graph *g = w->g;
	const struct crit_wait *wt = &g->hosts[host].waits[wait];
	int cpu = wt->cpu;
	size_t h = host, hop;
	uint64_t at = wt->wake_ns, ctx = 0;
	enum crit_wake wake;
	enum crit_edge e;

	for (hop = 0; cpu >= 0 && hop < 32 && end > from; hop++) {
		long i = pick_rx(g, h, cpu, at, ctx, from);
		const struct crit_pkt *rx, *tx;
		struct crit_segment *s;
		int64_t sent;

		if (i < 0)
			break;
		rx = &g->hosts[h].pkts[i];
		tx = &g->hosts[rx->peer_host].pkts[rx->peer - 1];
		sent = crit_graph__to_ref(g, rx->peer_host, tx->ts);
		if (sent < from) {
			sent = sent_before(w, host, tid, rx->peer_host, tx, sent, from);
			from = sent; /* a softirq's answer: its own cause may be earlier too */
		}
		if (sent >= end)
			break;
		s = emit(w, host, tid, pid, CRIT_NETWORK, CRIT_WAKE_NETWORK, sent, end, UINT32_MAX,
			 i + 1);
		if (s) {
			s->from_host = rx->peer_host;
			s->from_tid = tx->ctx ? 0 : tx->tid;
			s->pkt_host = h; /* a handshake's hops were received by other hosts */
		}
		w->p->hops++;
		end = sent;
		h = rx->peer_host;
		if (!tx->ctx) {
			/* Sent by a task: its path explains the time before. */
			if (crit_graph__thread(g, h, tx->tid)) {
				push(w, h, tx->tid, from, end, false);
				return;
			}
			break;
		}
		/* Sent from a softirq: in answer to a packet it received in the same run. */
		cpu = tx->cpu;
		at = tx->ts;
		ctx = tx->ctx;
	}
	e = wait_edge(wt, &wake);
	emit(w, host, tid, pid, e, wake, from, end, wait, 0);
}

/* A wait of tid, [start, cursor], ended by an IPI's handler. When the IPI was sent by a
 * recorded thread (in its own context, not an interrupt's), the time from the send to the
 * wake-up is IPI, and the sender's path explains the wait before the send, as a waker's
 * does (true: the walk goes on from the stack); otherwise the whole wait is IPI, naming
 * the sender when the send was recorded. */
static bool ipi_wait(struct walker *w, const struct work *wk, uint32_t pid, uint32_t wait,
		     int64_t start, int64_t cursor)
{
	const struct crit_graph *g = w->g;
	long k = crit_graph__ipi_send(g, wk->host, &g->hosts[wk->host].waits[wait]);
	const struct crit_ipi *s = k >= 0 ? &g->hosts[wk->host].ipis[k] : NULL;
	bool follow = s && s->ctx == WAKE_TASK && s->tid && s->tid != wk->tid &&
		      crit_graph__thread(g, wk->host, s->tid);
	struct crit_segment *seg;
	int64_t sent = start;

	if (follow) {
		sent = crit_graph__to_ref(g, wk->host, s->ts);
		sent = sent < start ? start : sent > cursor ? cursor : sent;
	}
	seg = emit(w, wk->host, wk->tid, pid, CRIT_IPI, CRIT_WAKE_IPI, sent, cursor, wait, 0);
	if (seg && s) {
		seg->from_host = wk->host;
		seg->from_tid = s->ctx == WAKE_TASK ? s->tid : 0;
		seg->ipi = k + 1;
	}
	if (follow) {
		push(w, wk->host, wk->tid, wk->from, start, wk->root);
		push(w, wk->host, s->tid, start, sent, false);
		w->p->hops++;
	}
	return follow;
}

static void walk(struct walker *w, const struct work *wk)
{
	const struct crit_graph *g = w->g;
	const struct crit_host *host = &g->hosts[wk->host];
	const struct crit_thread *th = crit_graph__thread(g, wk->host, wk->tid);
	int64_t cursor = wk->to;
	long i = th ? state_at(th, crit_graph__to_local(g, wk->host, wk->to)) : -1;
	uint32_t pid = th ? th->pid : 0;

	while (cursor > wk->from) {
		const struct crit_state *s;
		int64_t start, end;

		if (++w->steps > 100000000ull)
			return;
		if (i < 0) {
			emit(w, wk->host, wk->tid, pid, CRIT_UNKNOWN, CRIT_WAKE_NONE, wk->from,
			     cursor, UINT32_MAX, 0);
			return;
		}
		s = &th->st[i];
		start = crit_graph__to_ref(g, wk->host, s->start);
		end = crit_graph__to_ref(g, wk->host, s->end);
		if (end < cursor) { /* a gap between two states: not recorded */
			int64_t st = end > wk->from ? end : wk->from;

			emit(w, wk->host, wk->tid, pid, CRIT_UNKNOWN, CRIT_WAKE_NONE, st, cursor,
			     UINT32_MAX, 0);
			cursor = st;
			continue;
		}
		if (start < wk->from)
			start = wk->from;
		switch (s->kind) {
		case CRIT_S_RUNNING:
			emit(w, wk->host, wk->tid, pid, CRIT_RUNNING, CRIT_WAKE_NONE, start, cursor,
			     UINT32_MAX, 0);
			break;
		case CRIT_S_PREEMPTED:
		case CRIT_S_WOKEN:
			emit(w, wk->host, wk->tid, pid, CRIT_PREEMPTED, CRIT_WAKE_NONE, start,
			     cursor, UINT32_MAX, 0);
			break;
		case CRIT_S_BLOCKED: {
			const struct crit_wait *wt = &host->waits[s->wait];
			enum crit_wake wake;
			enum crit_edge e;

			if (wt->kind == WAKE_TASK && wt->waker_tid != wk->tid &&
			    crit_graph__thread(g, wk->host, wt->waker_tid)) {
				/* This thread before the wait, after the waker's path over it. */
				push(w, wk->host, wk->tid, wk->from, start, wk->root);
				push(w, wk->host, wt->waker_tid, start, cursor, false);
				w->p->hops++;
				return;
			}
			if (wt->kind == WAKE_IPI) {
				if (ipi_wait(w, wk, pid, s->wait, start, cursor))
					return;
				break;
			}
			e = wait_edge(wt, &wake);
			if (e == CRIT_NETWORK && host->nr_pkts) {
				push(w, wk->host, wk->tid, wk->from, start, wk->root);
				network_wait(w, wk->host, wk->tid, pid, s->wait, start, cursor);
				return;
			}
			emit(w, wk->host, wk->tid, pid, e, wake, start, cursor, s->wait, 0);
			break;
		}
		}
		cursor = start;
		i--;
	}
}

int crit_graph__path(const struct crit_graph *g, size_t host, uint32_t tid, int64_t from,
		     int64_t to, struct crit_path *p)
{
	struct walker w = {.g = g, .p = p};
	size_t i;

	memset(p, 0, sizeof(*p));
	if (host >= g->nr || to <= from)
		return -EINVAL;
	p->start_ns = from;
	p->end_ns = to;
	push(&w, host, tid, from, to, true);
	while (w.nr) {
		struct work wk = w.stack[--w.nr];

		walk(&w, &wk);
	}
	free(w.stack);
	/* Found latest first. */
	for (i = 0; i < p->nr / 2; i++) {
		struct crit_segment tmp = p->segs[i];

		p->segs[i] = p->segs[p->nr - 1 - i];
		p->segs[p->nr - 1 - i] = tmp;
	}
	return 0;
}

static int cmp_share(const void *a, const void *b)
{
	const struct crit_share *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

size_t crit_path__top(const struct crit_path *p, struct crit_share *out, size_t max)
{
	struct crit_share *all = NULL;
	size_t nr = 0, cap = 0, i, k;

	for (i = 0; i < p->nr; i++) {
		const struct crit_segment *s = &p->segs[i];

		for (k = 0; k < nr; k++)
			if (all[k].host == s->host && all[k].tid == s->tid &&
			    all[k].edge == s->edge)
				break;
		if (k == nr) {
			xgrow((void **)&all, &cap, nr + 1, sizeof(*all));
			all[nr++] = (struct crit_share){s->host, s->edge, s->tid, 0};
		}
		all[k].ns += s->end_ns - s->start_ns;
	}
	if (nr)
		qsort(all, nr, sizeof(*all), cmp_share);
	if (nr > max)
		nr = max;
	if (nr)
		memcpy(out, all, nr * sizeof(*all));
	free(all);
	return nr;
}

void crit_path__free(struct crit_path *p)
{
	free(p->segs);
	memset(p, 0, sizeof(*p));
}

/* "irq_work"; with the send found, "call_function_single from web 4242" (a thread; "(not
 * recorded)" when it is not in the trace), "... from idle on cpu 0" (the idle task: the
 * idle loop's own work, such as a tick), or "... from softirq NET_RX on cpu 1". */
static void ipi_what(const struct crit_graph *g, const struct crit_segment *s,
		     const struct crit_wait *w, char *buf, size_t size)
{
	const char *vector = blocking__ipi_name(w->detail);
	const struct crit_ipi *i;
	const struct trace_thread *th;

	if (!s->ipi) {
		snprintf(buf, size, "%s", vector);
		return;
	}
	i = &g->hosts[s->host].ipis[s->ipi - 1];
	if (i->ctx == WAKE_TASK && !i->tid) {
		snprintf(buf, size, "%s from idle on cpu %u", vector, i->cpu);
		return;
	}
	if (i->ctx == WAKE_TASK) {
		th = trace__thread(g->hosts[s->host].t, i->tid);
		snprintf(buf, size, "%s from %.40s %u%s", vector,
			 th && th->comm[0] ? th->comm : "?", i->tid,
			 crit_graph__thread(g, s->host, i->tid) ? "" : " (not recorded)");
		return;
	}
	snprintf(buf, size, "%s from %s%s%s on cpu %u", vector, blocking__kind_name(i->ctx),
		 i->ctx == WAKE_SOFTIRQ ? " " : "",
		 i->ctx == WAKE_SOFTIRQ ? blocking__softirq_name(i->detail) : "", i->cpu);
}

const char *crit_segment__what(const struct crit_graph *g, const struct crit_segment *s, char *buf,
			       size_t size)
{
	const struct crit_wait *w;
	char name[COMM_ESCAPED_SIZE];

	buf[0] = 0;
	if (s->pkt) {
		pkt_name(&g->hosts[s->pkt_host].pkts[s->pkt - 1], buf, size);
		return buf;
	}
	if (s->wait == UINT32_MAX)
		return buf;
	w = &g->hosts[s->host].waits[s->wait];
	name_escape(name, sizeof(name), w->name, strnlen(w->name, sizeof(w->name)));
	switch (w->kind) {
	case WAKE_HRTIMER:
		snprintf(buf, size, "hrtimer");
		break;
	case WAKE_TIMER:
		snprintf(buf, size, "timer");
		break;
	case WAKE_SOFTIRQ:
		snprintf(buf, size, "%s", blocking__softirq_name(w->detail));
		break;
	case WAKE_HARDIRQ:
		snprintf(buf, size, "irq %u %.48s", w->detail, name);
		break;
	case WAKE_TASK:
		snprintf(buf, size, "%.40s %u (not recorded)", name, w->waker_tid);
		break;
	case WAKE_IPI:
		ipi_what(g, s, w, buf, size);
		break;
	default:
		if (!w->from_start)
			snprintf(buf, size, "no wake-up recorded");
		break;
	}
	return buf;
}
