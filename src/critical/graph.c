/* The execution graph over one trace per host: each thread's states come from the timeline
 * analysis (running, preempted, blocked with its waker), the packets from the record --net
 * events, matched between hosts by what identifies a TCP segment on the wire; the hosts'
 * clocks are put on host 0's over a spanning tree of the pairs that exchanged packets. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "analysis/blocking.h"
#include "critical/critical.h"
#include "trace/trace.h"
#include "util/util.h"

const char *crit_edge__name(enum crit_edge e)
{
	static const char *const names[] = {"RUNNING", "PREEMPTED",   "BLOCKED",
					    "TIMER",   "INTERRUPTED", "BLOCK_DEVICE",
					    "NETWORK", "IPI",	      "UNKNOWN"};

	return e < CRIT_EDGES ? names[e] : "?";
}

const char *crit_wake__name(enum crit_wake w)
{
	static const char *const names[] = {NULL,      "timer", "device", "task",
					    "network", "ipi",	"unknown"};

	return w <= CRIT_WAKE_UNKNOWN ? names[w] : NULL;
}

/* Of the segment's own record: an IPv6 one whose REC_NET6 was lost is still matched (its
 * addresses by their folds), and one never matches a segment of the other family. */
static uint64_t pkt_key(const struct rec_net *n)
{
	uint64_t h = fnv1a(&n->saddr, 4, 14695981039346656037ull);

	h = fnv1a(&n->daddr, 4, h);
	h = fnv1a(&n->family, 1, h);
	h = fnv1a(&n->sport, 2, h);
	h = fnv1a(&n->dport, 2, h);
	h = fnv1a(&n->seq, 4, h);
	h = fnv1a(&n->ack, 4, h);
	h = fnv1a(&n->len, 2, h);
	return fnv1a(&n->flags, 1, h);
}

/* ---- the threads' states, from the switches and wake-ups (one pass, in time order) ---- */

static struct crit_thread *thread_of(struct crit_host *h, uint32_t tid, uint32_t pid)
{
	bool created;
	uint64_t *slot = u64map__slot(&h->tidx, tid, &created);

	if (created) {
		xgrow((void **)&h->threads, &h->cap_threads, h->nr_threads + 1,
		      sizeof(*h->threads));
		*slot = h->nr_threads;
		memset(&h->threads[h->nr_threads], 0, sizeof(*h->threads));
		h->threads[h->nr_threads].tid = tid;
		h->threads[h->nr_threads++].pid = pid;
	}
	return &h->threads[*slot];
}

static struct crit_state *open_state(const struct crit_thread *th)
{
	return th->nr && !th->st[th->nr - 1].end ? &th->st[th->nr - 1] : NULL;
}

static void close_state(struct crit_thread *th, uint64_t ts)
{
	struct crit_state *s = open_state(th);

	if (s)
		s->end = ts > s->start ? ts : s->start + 1;
}

static void push_state(struct crit_host *h, struct crit_thread *th, uint64_t ts,
		       enum crit_state_kind kind)
{
	struct crit_state *s;

	close_state(th, ts);
	xgrow((void **)&th->st, &th->cap, th->nr + 1, sizeof(*th->st));
	s = &th->st[th->nr++];
	s->start = th->nr > 1 && th->st[th->nr - 2].end > ts ? th->st[th->nr - 2].end : ts;
	s->end = 0;
	s->kind = kind;
	s->wait = UINT32_MAX;
	if (kind == CRIT_S_BLOCKED) {
		struct crit_wait *w;

		xgrow((void **)&h->waits, &h->cap_waits, h->nr_waits + 1, sizeof(*h->waits));
		w = &h->waits[h->nr_waits];
		memset(w, 0, sizeof(*w));
		w->kind = 255;
		w->cpu = -1;
		s->wait = h->nr_waits++;
	}
}

/* A wake-up ends the blocked state: what woke it is kept, the thread waits for a CPU. */
static void on_waking(struct crit_host *h, struct crit_thread *th, const struct rec *e)
{
	struct crit_wait *w = &h->waits[th->st[th->nr - 1].wait];

	w->wake_ns = e->h.ts;
	w->cpu = e->h.cpu;
	w->kind = e->h.aux & 0xff;
	w->waker_tid = e->wk.waker_tid;
	w->detail = e->wk.detail;
	if (w->kind == WAKE_TASK || w->kind == WAKE_HARDIRQ)
		memcpy(w->name, e->wk.u.comm, sizeof(w->name));
	else if (w->kind == WAKE_IPI)
		w->since = e->wk.u.since;
	else if (w->kind != WAKE_SOFTIRQ)
		w->func = e->wk.u.func;
	push_state(h, th, e->h.ts, CRIT_S_WOKEN);
}

static void host_states(struct crit_host *h)
{
	const struct trace *t = h->t;
	struct crit_thread *th;
	size_t i;

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct crit_state *s;

		trace__done_before(t, i);
		switch (e->h.type) {
		case REC_SWITCH:
			if ((e->sw.flags & SWITCH_PREV_TARGET) && e->h.tid) {
				th = thread_of(h, e->h.tid, e->h.pid);
				if (blocking__is_blocked_state(e->h.aux)) {
					push_state(h, th, e->h.ts, CRIT_S_BLOCKED);
					if (th->early)
						on_waking(h, th, th->early);
				} else if (e->h.aux) { /* exiting */
					close_state(th, e->h.ts);
				} else {
					push_state(h, th, e->h.ts, CRIT_S_PREEMPTED);
				}
				th->early = NULL;
			}
			if ((e->sw.flags & SWITCH_NEXT_TARGET) && e->sw.next_tid) {
				th = thread_of(h, e->sw.next_tid, e->sw.next_pid);
				push_state(h, th, e->h.ts, CRIT_S_RUNNING);
			}
			break;
		case REC_WAKING:
			th = thread_of(h, e->h.tid, e->h.pid);
			s = open_state(th);
			if (s && s->kind == CRIT_S_BLOCKED)
				on_waking(h, th, e);
			else
				th->early = e;
			break;
		case REC_WAKEUP:
			th = thread_of(h, e->h.tid, e->h.pid);
			th->early = NULL;
			break;
		case REC_STATE:
			th = thread_of(h, e->h.tid, e->h.pid);
			if (th->nr || ((e->h.aux & 0xff) != 'S' && (e->h.aux & 0xff) != 'D'))
				break;
			push_state(h, th, e->h.ts, CRIT_S_BLOCKED);
			h->waits[th->st[0].wait].from_start = true;
			break;
		case REC_EXIT:
			close_state(thread_of(h, e->h.tid, e->h.pid), e->h.ts);
			break;
		}
	}
	for (i = 0; i < h->nr_threads; i++)
		close_state(&h->threads[i], t->end_ns);
}

const struct crit_thread *crit_graph__thread(const struct crit_graph *g, size_t host, uint32_t tid)
{
	const struct crit_host *h = &g->hosts[host];
	uint64_t v;

	if (!u64map__get(&h->tidx, tid, &v) || !h->threads[v].nr)
		return NULL;
	return &h->threads[v];
}

static void add_ipi(struct crit_host *h, const struct rec *e, size_t *cap)
{
	struct crit_ipi *s;

	xgrow((void **)&h->ipis, cap, h->nr_ipis + 1, sizeof(*h->ipis));
	s = &h->ipis[h->nr_ipis++];
	s->ts = e->h.ts;
	s->cpus[0] = e->ipi.cpus[0];
	s->cpus[1] = e->ipi.cpus[1];
	s->tid = e->h.tid;
	s->pid = e->h.pid;
	s->cpu = e->h.cpu;
	s->ctx = e->h.aux & 0xff;
	s->detail = e->h.aux >> 8;
	s->call = e->ipi.callback != 0;
}

/* A packet's addresses: an IPv4 segment's from its record, an IPv6 segment's from the
 * REC_NET6 written just before it (a6, the last one read: same time, CPU, ports and seq). */
static void pkt_addrs(struct crit_pkt *p, const struct rec *e, const struct rec *a6)
{
	const struct rec_net6 *n6 = &a6->net6;

	if (e->net.family != REC_NET_IPV6) {
		p->family = AF_INET;
		memcpy(p->saddr, &e->net.saddr, 4);
		memcpy(p->daddr, &e->net.daddr, 4);
	} else if (a6->h.type == REC_NET6 && a6->h.ts == e->h.ts && a6->h.cpu == e->h.cpu &&
		   n6->sport == e->net.sport && n6->dport == e->net.dport &&
		   n6->seq == e->net.seq) {
		p->family = AF_INET6;
		memcpy(p->saddr, n6->saddr, sizeof(p->saddr));
		memcpy(p->daddr, n6->daddr, sizeof(p->daddr));
	}
}

/* The packets and the IPIs sent, in one pass over the events. */
static void host_sends(struct crit_host *h)
{
	const struct trace *t = h->t;
	size_t i, cap = 0, cap_ipis = 0;
	struct rec a6 = {0}; /* the last REC_NET6 */

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];
		struct crit_pkt *p;

		if (e->h.type == REC_IPI_SEND) {
			add_ipi(h, e, &cap_ipis);
			continue;
		}
		if (e->h.type == REC_NET6)
			a6 = *e;
		if (e->h.type != REC_NET_TX && e->h.type != REC_NET_RX)
			continue;
		xgrow((void **)&h->pkts, &cap, h->nr_pkts + 1, sizeof(*h->pkts));
		p = &h->pkts[h->nr_pkts++];
		memset(p, 0, sizeof(*p));
		p->ts = e->h.ts;
		p->key = pkt_key(&e->net);
		p->ctx = e->net.softirq;
		p->tid = e->h.tid;
		p->pid = e->h.pid;
		pkt_addrs(p, e, &a6);
		p->sport = e->net.sport;
		p->dport = e->net.dport;
		p->cpu = e->h.cpu;
		p->flags = e->net.flags;
		p->tx = e->h.type == REC_NET_TX;
	}
}

/* Each received packet to the first send of the same segment, on any host (the same one
 * too: loopback). A retransmitted segment is matched to its first send. */
static void match_packets(struct crit_graph *g)
{
	struct u64map tx = {0};
	size_t h, i;

	for (h = 0; h < g->nr; h++)
		for (i = 0; i < g->hosts[h].nr_pkts; i++) {
			const struct crit_pkt *p = &g->hosts[h].pkts[i];
			bool created;
			uint64_t *slot;

			if (!p->tx)
				continue;
			slot = u64map__slot(&tx, p->key, &created);
			if (created)
				*slot = (uint64_t)h << 40 | i;
		}
	for (h = 0; h < g->nr; h++)
		for (i = 0; i < g->hosts[h].nr_pkts; i++) {
			struct crit_pkt *p = &g->hosts[h].pkts[i], *q;
			uint64_t v;

			if (p->tx || !u64map__get(&tx, p->key, &v))
				continue;
			q = &g->hosts[v >> 40].pkts[v & ((1ull << 40) - 1)];
			if (q->sport != p->sport || q->dport != p->dport ||
			    (p->family && q->family &&
			     (memcmp(q->saddr, p->saddr, sizeof(p->saddr)) ||
			      memcmp(q->daddr, p->daddr, sizeof(p->daddr)))))
				continue;
			p->peer_host = v >> 40;
			p->peer = (v & ((1ull << 40) - 1)) + 1;
			if (!q->peer) {
				q->peer_host = h;
				q->peer = i + 1;
			}
		}
	u64map__free(&tx);
}

struct pair {
	struct crit_sync_result r;
	uint32_t packets;
	uint64_t x0, y0; /* the sync's origin: the first packet's times on each clock */
};

static int cmp_x(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Host b's clock against host a's (x: a's, y: b's) from their matched packets. */
static void sync_pair(const struct crit_graph *g, size_t a, size_t b, struct pair *out)
{
	uint64_t *ab = NULL, *ba = NULL;
	size_t nab = 0, nba = 0, cab = 0, cba = 0, i, k;
	struct crit_sync s = {0};

	for (i = 0; i < g->hosts[a].nr_pkts; i++) {
		const struct crit_pkt *p = &g->hosts[a].pkts[i], *q;

		if (!p->peer || p->peer_host != b)
			continue;
		q = &g->hosts[b].pkts[p->peer - 1];
		if (p->tx == q->tx)
			continue;
		if (p->tx) {
			xgrow((void **)&ab, &cab, 2 * (nab + 1), sizeof(*ab));
			ab[2 * nab] = p->ts;
			ab[2 * nab++ + 1] = q->ts;
		} else {
			xgrow((void **)&ba, &cba, 2 * (nba + 1), sizeof(*ba));
			ba[2 * nba] = p->ts;
			ba[2 * nba++ + 1] = q->ts;
		}
	}
	if (nab)
		qsort(ab, nab, 2 * sizeof(*ab), cmp_x);
	if (nba)
		qsort(ba, nba, 2 * sizeof(*ba), cmp_x);
	/* In time order over both directions, as the incremental algorithm takes them. */
	for (i = 0, k = 0; i < nab || k < nba;) {
		if (k >= nba || (i < nab && ab[2 * i] <= ba[2 * k])) {
			crit_sync__add(&s, ab[2 * i], ab[2 * i + 1], true);
			i++;
		} else {
			crit_sync__add(&s, ba[2 * k], ba[2 * k + 1], false);
			k++;
		}
	}
	crit_sync__solve(&s, &out->r);
	out->packets = nab + nba;
	out->x0 = s.x0;
	out->y0 = s.y0;
	crit_sync__free(&s);
	free(ab);
	free(ba);
}

static int rank(enum crit_sync_quality q)
{
	return q == CRIT_SYNC_ACCURATE ? 2 : q == CRIT_SYNC_APPROXIMATE ? 1 : 0;
}

/* A host's map to the reference from its parent's: two points of the host's time mapped
 * through the pair's bisector and then the parent's clock determine the line. */
struct link {
	uint64_t x0, y0; /* the pair's origin: parent's clock, child's clock */
	double slope, intercept;
};

static double child_to_parent(const struct link *l, double y)
{
	return ((y - (double)l->y0) - l->intercept) / l->slope + (double)l->x0;
}

int64_t crit_graph__to_ref(const struct crit_graph *g, size_t host, uint64_t local)
{
	const struct crit_clock *c = &g->hosts[host].clock;

	return (int64_t)local + c->offset + llround(c->drift * (double)(int64_t)(local - c->x0));
}

uint64_t crit_graph__to_local(const struct crit_graph *g, size_t host, int64_t ref)
{
	const struct crit_clock *c = &g->hosts[host].clock;
	/* ref - offset = x0 + (local - x0) * (1 + drift) */
	double d = (double)(ref - c->offset - (int64_t)c->x0) / (1 + c->drift);

	return (uint64_t)((int64_t)c->x0 + llround(d));
}

static int sync_hosts(struct crit_graph *g, char *err, size_t errlen)
{
	size_t n = g->nr, a, b, done = 1;
	struct pair *pairs = xcalloc(n * n, sizeof(*pairs));
	struct link *links = xcalloc(n, sizeof(*links));
	bool *in = xcalloc(n, sizeof(*in));
	int ret = 0;

	for (a = 0; a < n; a++)
		for (b = 0; b < n; b++)
			if (a != b)
				sync_pair(g, a, b, &pairs[a * n + b]);
	in[0] = true;
	g->hosts[0].parent = -1;
	g->hosts[0].sync = CRIT_SYNC_ACCURATE;
	/* Prim's: the best link (quality, then packets) from the tree to a host outside. */
	while (done < n) {
		int best_a = -1, best_b = -1;

		for (a = 0; a < n; a++)
			for (b = 0; b < n; b++) {
				const struct pair *p = &pairs[a * n + b], *q;

				if (!in[a] || in[b] || rank(p->r.quality) == 0)
					continue;
				q = best_a < 0 ? NULL : &pairs[best_a * n + best_b];
				if (!q || rank(p->r.quality) > rank(q->r.quality) ||
				    (rank(p->r.quality) == rank(q->r.quality) &&
				     p->packets > q->packets)) {
					best_a = a;
					best_b = b;
				}
			}
		if (best_a < 0) {
			for (b = 0; b < n && in[b]; b++)
				;
			snprintf(
				err, errlen,
				"cannot synchronise the clock of %s with %s: %s (record with --net "
				"on every host, while they talk over TCP)",
				g->hosts[b].name, g->hosts[0].name,
				pairs[b].packets || pairs[b * n].packets
					? "their packets contradict every clock offset"
					: "they share no TCP packet");
			ret = -EINVAL;
			goto out;
		}
		a = best_a;
		b = best_b;
		in[b] = true;
		done++;
		g->hosts[b].parent = a;
		g->hosts[b].sync = pairs[a * n + b].r.quality;
		g->hosts[b].accuracy_ns = pairs[a * n + b].r.accuracy_ns;
		g->hosts[b].exchanged = pairs[a * n + b].packets;
		links[b].slope = pairs[a * n + b].r.slope;
		links[b].intercept = pairs[a * n + b].r.intercept;
		links[b].x0 = pairs[a * n + b].x0;
		links[b].y0 = pairs[a * n + b].y0;
		/* Two points of b's time, through the link, then through a's clock. */
		{
			const struct trace *t = g->hosts[b].t;
			double y1 = (double)t->first_ns, y2 = (double)t->end_ns;
			double x1, x2, r1, r2;

			if (y2 <= y1)
				y2 = y1 + 1e9;
			x1 = child_to_parent(&links[b], y1);
			x2 = child_to_parent(&links[b], y2);
			r1 = (double)crit_graph__to_ref(g, a, (uint64_t)llround(x1));
			r2 = (double)crit_graph__to_ref(g, a, (uint64_t)llround(x2));
			g->hosts[b].clock.x0 = t->first_ns;
			g->hosts[b].clock.offset = llround(r1 - y1);
			g->hosts[b].clock.drift = (r2 - r1) / (y2 - y1) - 1;
		}
	}
out:
	free(pairs);
	free(links);
	free(in);
	return ret;
}

int crit_graph__build(struct crit_graph *g, struct trace **traces, size_t n, char *err,
		      size_t errlen)
{
	size_t i, j;
	char buf[96];

	memset(g, 0, sizeof(*g));
	g->hosts = xcalloc(n, sizeof(*g->hosts));
	g->nr = n;
	for (i = 0; i < n; i++) {
		struct crit_host *h = &g->hosts[i];
		const struct trace *t = traces[i];

		h->t = t;
		trace__info_value(t, "host_id", h->id, sizeof(h->id));
		trace__info_value(t, "netns", buf, sizeof(buf));
		if (n > 1 && buf[0])
			snprintf(h->name, sizeof(h->name), "%.60s/net:%.30s", t->hdr.host, buf);
		else
			snprintf(h->name, sizeof(h->name), "%.60s", t->hdr.host);
		for (j = 0; j < i; j++) {
			const struct trace *o = g->hosts[j].t;

			if (h->id[0] ? !strcmp(h->id, g->hosts[j].id)
				     : o->hdr.start_ns == t->hdr.start_ns &&
					       o->hdr.recorder_pid == t->hdr.recorder_pid) {
				snprintf(err, errlen,
					 "traces %zu and %zu were recorded on the same host (%s): "
					 "give "
					 "one trace per host",
					 j + 1, i + 1, h->name);
				crit_graph__free(g);
				return -EINVAL;
			}
		}
		h->clock.x0 = t->first_ns;
		host_states(h);
		host_sends(h);
	}
	match_packets(g);
	if (n > 1) {
		int ret;

		for (i = 0; i < n; i++)
			g->hosts[i].clock = (struct crit_clock){.x0 = g->hosts[i].t->first_ns};
		ret = sync_hosts(g, err, errlen);
		if (ret) {
			crit_graph__free(g);
			return ret;
		}
	}
	return 0;
}

void crit_graph__free(struct crit_graph *g)
{
	size_t i;

	for (i = 0; g->hosts && i < g->nr; i++) {
		struct crit_host *h = &g->hosts[i];
		size_t k;

		for (k = 0; k < h->nr_threads; k++)
			free(h->threads[k].st);
		free(h->threads);
		u64map__free(&h->tidx);
		free(h->waits);
		free(h->pkts);
		free(h->ipis);
	}
	free(g->hosts);
	memset(g, 0, sizeof(*g));
}

_Static_assert(offsetof(struct crit_pkt, ts) == 0 && offsetof(struct crit_ipi, ts) == 0,
	       "crit__after reads the time first");

size_t crit__after(const void *base, size_t n, size_t size, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t t;

		memcpy(&t, (const char *)base + mid * size, sizeof(t));
		if (t <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* An IPI reaches its target in microseconds (tens in a VM); a send older than this before
 * the handler's entry is not the one that raised it. */
#define IPI_MAX_DELAY_NS 10000000

long crit_graph__ipi_send(const struct crit_graph *g, size_t host, const struct crit_wait *w)
{
	const struct crit_host *h = &g->hosts[host];
	uint64_t at = w->since ? w->since : w->wake_ns;
	long i;

	/* irq_work is raised on the CPU itself (no ipi_send event); a platform IPI comes from
	 * outside. A call-function vector runs the queue a send with a callback raised, the
	 * reschedule vector a send without. */
	if (w->kind != WAKE_IPI || w->cpu < 0 || w->cpu >= 128 ||
	    (w->detail != IPI_CALL_FUNCTION && w->detail != IPI_CALL_FUNCTION_SINGLE &&
	     w->detail != IPI_RESCHEDULE))
		return -1;
	for (i = (long)crit__after(h->ipis, h->nr_ipis, sizeof(*h->ipis), at) - 1;
	     i >= 0 && at - h->ipis[i].ts <= IPI_MAX_DELAY_NS; i--) {
		const struct crit_ipi *s = &h->ipis[i];

		if ((s->cpus[w->cpu / 64] >> (w->cpu % 64) & 1) &&
		    s->call == (w->detail != IPI_RESCHEDULE))
			return i;
	}
	return -1;
}

bool crit_graph__thread_span(const struct crit_graph *g, size_t host, uint32_t tid, int64_t *first,
			     int64_t *last)
{
	const struct crit_thread *th = crit_graph__thread(g, host, tid);

	if (!th)
		return false;
	*first = crit_graph__to_ref(g, host, th->st[0].start);
	*last = crit_graph__to_ref(g, host, th->st[th->nr - 1].end);
	return true;
}
