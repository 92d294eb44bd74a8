/* The critical path over a hand-made trace (A waits on B, B on C, C on a timer), and the
 * convex-hull clock synchronisation over made-up packets whose true clocks are known. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "critical/critical.h"
#include "rec_build.h"
#include "unit.h"
#include "util/util.h"

enum { A = 10, B = 11, C = 12, P = 10 };

static void path_test(void)
{
	static const struct {
		uint32_t tid;
		enum crit_edge edge;
		int64_t start, end;
	} want[] = {
		{C, CRIT_TIMER, 200, 600},   {C, CRIT_PREEMPTED, 600, 610},
		{C, CRIT_RUNNING, 610, 800}, {B, CRIT_PREEMPTED, 800, 820},
		{B, CRIT_RUNNING, 820, 850}, {A, CRIT_PREEMPTED, 850, 870},
	};
	struct trace *t, *two[2];
	struct crit_graph g;
	struct crit_path p;
	char err[256];
	size_t i, n = 0;
	struct tb b;

	tb_open(&b);
	trace_writer__add_name(b.w, A, P, "a");
	trace_writer__add_name(b.w, B, P, "b");
	trace_writer__add_name(b.w, C, P, "c");
	tb_switch(&b, 50, 0, 0, 0, C, P, -1, -1, 0, 0);
	tb_switch(&b, 100, 0, 0, 0, A, P, -1, -1, 0, 0);
	tb_switch(&b, 120, 0, 0, 0, B, P, -1, -1, 0, 0);
	tb_switch(&b, 150, C, P, 1, 0, 0, 35, -1, 0, 0);  /* nanosleep */
	tb_switch(&b, 160, B, P, 1, 0, 0, 202, -1, 0, 0); /* futex */
	tb_switch(&b, 200, A, P, 1, 0, 0, 0, 3, 0, 0);	  /* read */
	tb_waking_irq(&b, 600, C, P, WAKE_HRTIMER, 0, 0x1234, 0);
	tb_switch(&b, 610, 0, 0, 0, C, P, -1, -1, 0, 0);
	tb_waking_task(&b, 800, B, P, C, "c", 0, 0);
	tb_switch(&b, 820, 0, 0, 0, B, P, -1, -1, 0, 0);
	tb_waking_task(&b, 850, A, P, B, "b", 0, 0);
	tb_switch(&b, 870, 0, 0, 0, A, P, -1, -1, 0, 0);
	tb_switch(&b, 880, B, P, 1, 0, 0, 202, -1, 0, 0);
	tb_switch(&b, 900, C, P, 1, 0, 0, 35, -1, 0, 0);
	t = tb_read(&b, 1000);
	if (!ok(t != NULL, "trace read back"))
		return;
	ok(!crit_graph__build(&g, &t, 1, err, sizeof(err)), "graph over one host");
	ok(!crit_graph__path(&g, 0, A, 200, 870, &p), "path of A over its wait");
	for (i = 0; i < p.nr && i < ARRAY_SIZE(want); i++) {
		const struct crit_segment *s = &p.segs[i];

		n += s->tid == want[i].tid && s->edge == want[i].edge &&
		     s->start_ns == want[i].start && s->end_ns == want[i].end;
		if (s->tid != want[i].tid || s->edge != want[i].edge)
			printf("# segment %zu: %u %s %" PRId64 "-%" PRId64 "\n", i, s->tid,
			       crit_edge__name(s->edge), s->start_ns, s->end_ns);
	}
	is_int(p.nr, ARRAY_SIZE(want), "six segments");
	is_int(n, ARRAY_SIZE(want), "C's timer, C woken and running, B woken and running, A woken");
	is_int(p.hops, 2, "two wake-ups crossed");
	crit_path__free(&p);
	ok(!crit_graph__path(&g, 0, A, 0, 1000, &p) && p.nr && p.segs[0].edge == CRIT_UNKNOWN &&
		   p.segs[0].start_ns == 0 && p.segs[0].end_ns == 100,
	   "before the thread is seen: UNKNOWN");
	crit_path__free(&p);
	crit_graph__free(&g);
	two[0] = two[1] = t;
	ok(crit_graph__build(&g, two, 2, err, sizeof(err)) == -EINVAL && strstr(err, "same host"),
	   "the same trace twice is refused: %s", err);
	trace__close(t);
}

/* Waits of W ended by IPI handlers on CPU 1: a call-function IPI sent by thread S is
 * followed to S (IPI from the send, S's path before it); an irq_work (raised by the CPU
 * itself, never sent) is an IPI edge, not a nearby send's; sends to another CPU, of the
 * other kind (a reschedule) or too long before are not the IPI's; one sent from a softirq
 * leaves the wait an IPI edge that names it. */
static void ipi_test(void)
{
	enum { W = 40, S = 41, K = 42, P = 40, LATE = 20000000 };
	static const char *const names[] = {"waiter", "sender", "other"}; /* W, S, K */
	struct trace *t;
	struct crit_graph g;
	struct crit_path p;
	char err[256] = "", what[96];
	struct tb b;
	uint32_t i;

	tb_open(&b);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		trace_writer__add_name(b.w, W + i, P, names[i]);
	/* S runs on CPU 0 throughout, W on CPU 1 between its waits. */
	tb_switch(&b, 50, 0, 0, 0, S, P, -1, -1, 0, 0);
	tb_switch(&b, 60, 0, 0, 0, W, P, -1, -1, 0, 0);
	/* 1: S sends at 500, the handler runs at 510 and wakes W at 520. */
	tb_switch(&b, 100, W, P, 1, 0, 0, 202, -1, 0, 0);
	tb_ipi_send(&b, 500, S, P, 0, WAKE_TASK, 1, true);
	tb_waking_ipi(&b, 520, W, P, 1, IPI_CALL_FUNCTION_SINGLE, 510);
	tb_switch(&b, 530, 0, 0, 0, W, P, -1, -1, 0, 0);
	/* 2: irq_work at 900; a call-function send to CPU 1 at 890 is not its. */
	tb_switch(&b, 600, W, P, 1, 0, 0, 7, 3, 0, 0);
	tb_ipi_send(&b, 890, S, P, 0, WAKE_TASK, 1, true);
	tb_waking_ipi(&b, 900, W, P, 1, IPI_IRQ_WORK, 895);
	tb_switch(&b, 910, 0, 0, 0, W, P, -1, -1, 0, 0);
	/* 3: the latest call-function send to CPU 1 came from a softirq (1100); later ones
	 * went to CPU 0 or were reschedules. */
	tb_switch(&b, 1000, W, P, 1, 0, 0, 202, -1, 0, 0);
	tb_ipi_send(&b, 1100, K, P, 0, WAKE_SOFTIRQ | 3 << 8, 1, true);
	tb_ipi_send(&b, 1200, S, P, 0, WAKE_TASK, 0, true);
	tb_ipi_send(&b, 1250, S, P, 0, WAKE_TASK, 1, false);
	tb_waking_ipi(&b, 1300, W, P, 1, IPI_CALL_FUNCTION_SINGLE, 1295);
	tb_switch(&b, 1310, 0, 0, 0, W, P, -1, -1, 0, 0);
	/* 4: the only send is 20 ms before the handler: not its. */
	tb_switch(&b, 1400, W, P, 1, 0, 0, 202, -1, 0, 0);
	tb_ipi_send(&b, 1500, S, P, 0, WAKE_TASK, 1, true);
	tb_waking_ipi(&b, 1500 + LATE, W, P, 1, IPI_CALL_FUNCTION_SINGLE, 1490 + LATE);
	tb_switch(&b, 1510 + LATE, 0, 0, 0, W, P, -1, -1, 0, 0);
	t = tb_read(&b, 2000 + LATE);
	if (!ok(t != NULL, "ipi: trace read back"))
		return;
	ok(!crit_graph__build(&g, &t, 1, err, sizeof(err)), "ipi: graph: %s", err);
	is_int(g.hosts[0].nr_ipis, 6, "six IPIs sent");

	ok(!crit_graph__path(&g, 0, W, 100, 530, &p), "path of W over its first wait");
	ok(p.nr == 3 && p.segs[0].tid == S && p.segs[0].edge == CRIT_RUNNING &&
		   p.segs[0].start_ns == 100 && p.segs[0].end_ns == 500 && p.segs[1].tid == W &&
		   p.segs[1].edge == CRIT_IPI && p.segs[1].wake == CRIT_WAKE_IPI &&
		   p.segs[1].start_ns == 500 && p.segs[1].end_ns == 520 &&
		   p.segs[1].from_tid == S && p.segs[2].edge == CRIT_PREEMPTED,
	   "the sender running until the send, then IPI from the send to the wake-up");
	is_int(p.hops, 1, "one hop: the IPI");
	if (p.nr > 1)
		is_str(crit_segment__what(&g, &p.segs[1], what, sizeof(what)),
		       "call_function_single from sender 41", "what: the vector and its sender");
	crit_path__free(&p);

	ok(!crit_graph__path(&g, 0, W, 600, 910, &p) && p.nr == 2 && p.segs[0].tid == W &&
		   p.segs[0].edge == CRIT_IPI && p.segs[0].start_ns == 600 &&
		   p.segs[0].end_ns == 900 && !p.segs[0].ipi && !p.hops,
	   "irq_work: the whole wait an IPI edge, no sender");
	if (p.nr)
		is_str(crit_segment__what(&g, &p.segs[0], what, sizeof(what)), "irq_work",
		       "what: irq_work");
	crit_path__free(&p);

	ok(!crit_graph__path(&g, 0, W, 1000, 1310, &p) && p.nr == 2 && p.segs[0].edge == CRIT_IPI &&
		   p.segs[0].start_ns == 1000 && p.segs[0].end_ns == 1300 &&
		   p.segs[0].from_tid == 0 && p.segs[0].ipi,
	   "sent from a softirq: an IPI edge over the wait, no thread to follow");
	if (p.nr)
		is_str(crit_segment__what(&g, &p.segs[0], what, sizeof(what)),
		       "call_function_single from softirq NET_RX on cpu 0",
		       "what: the softirq that sent it (not the later sends to CPU 0, nor the "
		       "reschedule)");
	crit_path__free(&p);

	ok(!crit_graph__path(&g, 0, W, 1400, 1510 + LATE, &p) && p.nr == 2 &&
		   p.segs[0].edge == CRIT_IPI && p.segs[0].start_ns == 1400 && !p.segs[0].ipi,
	   "a send 20 ms before the handler is not its");
	crit_path__free(&p);
	crit_graph__free(&g);
	trace__close(t);
}

/* A TCP segment's record, not yet written: 8 bytes of payload, PSH|ACK. */
static void net_rec(struct rec *r, struct tb *b, uint64_t ts, bool tx, uint32_t tid, uint16_t cpu,
		    uint64_t softirq, uint32_t seq, uint16_t sport, uint16_t dport)
{
	tb_rec(b, ts, tx ? REC_NET_TX : REC_NET_RX, tid, tid, 1, r);
	r->h.cpu = cpu;
	r->net.sport = sport;
	r->net.dport = dport;
	r->net.seq = seq;
	r->net.flags = 0x18;
	r->net.len = 8;
	r->net.softirq = softirq;
}

/* An IPv4 segment between 10.0.0.1 (port 5000) and 10.0.0.2 (port 80). */
static void net(struct tb *b, uint64_t ts, bool tx, uint32_t tid, uint16_t cpu, uint64_t softirq,
		uint32_t seq, uint16_t sport, uint16_t dport)
{
	struct rec r;

	net_rec(&r, b, ts, tx, tid, cpu, softirq, seq, sport, dport);
	r.net.saddr = sport == 80 ? 0x0200000a : 0x0100000a;
	r.net.daddr = sport == 80 ? 0x0100000a : 0x0200000a;
	trace_writer__add_event(b->w, &r);
}

/* The XOR of an IPv6 address's words: what its segment's own record holds. */
static uint32_t fold6(const uint8_t *a)
{
	uint32_t w[4];

	memcpy(w, a, sizeof(w));
	return w[0] ^ w[1] ^ w[2] ^ w[3];
}

/* An IPv6 segment from src to dst, as the recorder writes it: its addresses in a REC_NET6
 * just before (left out when !whole: lost), then its record with their folds. */
static void net6(struct tb *b, uint64_t ts, bool tx, uint32_t tid, uint16_t cpu, uint64_t softirq,
		 uint32_t seq, uint16_t sport, uint16_t dport, const uint8_t *src,
		 const uint8_t *dst, bool whole)
{
	struct rec r;

	if (whole) {
		tb_rec(b, ts, REC_NET6, tid, tid, 0, &r);
		r.h.cpu = cpu;
		memcpy(r.net6.saddr, src, 16);
		memcpy(r.net6.daddr, dst, 16);
		r.net6.sport = sport;
		r.net6.dport = dport;
		r.net6.seq = seq;
		trace_writer__add_event(b->w, &r);
	}
	net_rec(&r, b, ts, tx, tid, cpu, softirq, seq, sport, dport);
	r.net.family = REC_NET_IPV6;
	r.net.saddr = fold6(src);
	r.net.daddr = fold6(dst);
	trace_writer__add_event(b->w, &r);
}

/* The path's segments as comments, for a check that failed. */
static void print_path(const struct crit_graph *g, const struct crit_path *p)
{
	char what[CRIT_WHAT_SIZE];

	for (size_t i = 0; i < p->nr; i++)
		printf("# host %u %u %s %" PRId64 "-%" PRId64 " %s\n", p->segs[i].host,
		       p->segs[i].tid, crit_edge__name(p->segs[i].edge), p->segs[i].start_ns,
		       p->segs[i].end_ns, crit_segment__what(g, &p->segs[i], what, sizeof(what)));
}

static void two_hosts_free(struct crit_graph *g, struct crit_path *p, struct trace **t)
{
	crit_path__free(p);
	crit_graph__free(g);
	trace__close(t[0]);
	trace__close(t[1]);
}

/* Reads y's trace into t[1] (t[0] read before) and builds the graph of the two hosts;
 * false when a trace could not be read back. prefix: the checks' names start with it. */
static bool two_hosts_build(struct tb *y, struct trace **t, struct crit_graph *g,
			    const char *prefix)
{
	char err[256] = "";

	t[1] = tb_read(y, 2000);
	if (!ok(t[0] && t[1], "%stwo traces read back", prefix))
		return false;
	ok(!crit_graph__build(g, t, 2, err, sizeof(err)), "%sgraph over two hosts: %s", prefix,
	   err);
	return true;
}

/* A trace of host id (its host_id), where tid (a process alone) is switched in at ts. */
static void host_open(struct tb *b, const char *id, uint32_t tid, const char *comm, uint64_t ts)
{
	char info[32];
	int n = snprintf(info, sizeof(info), "host_id=%s\n", id);

	tb_open(b);
	trace_writer__section(b->w, SEC_INFO, info, n);
	trace_writer__add_name(b->w, tid, tid, comm);
	tb_switch(b, ts, 0, 0, 0, tid, tid, -1, -1, 0, 0);
}

/* tid woken at ts from a NET_RX softirq (as a received packet wakes its reader), then
 * switched in at run. */
static void rx_woken(struct tb *b, uint64_t ts, uint64_t run, uint32_t tid)
{
	tb_waking_irq(b, ts, tid, tid, WAKE_SOFTIRQ, 3, 0, 0);
	tb_switch(b, run, 0, 0, 0, tid, tid, -1, -1, 0, 0);
}

/* Two packets handled by the softirq run that woke server S: the last one came from the
 * client's softirq (a chain that ends there), the one before from client thread C. The
 * path takes the one that explains the wait: C's send, then C's work. */
static void longest_explained_test(void)
{
	enum { S = 20, CL = 30 };
	struct trace *t[2];
	struct crit_graph g;
	struct crit_path p;
	struct tb x, y;
	bool right;

	host_open(&x, "x", CL, "client", 50);	   /* the client */
	net(&x, 500, true, CL, 0, 0, 1, 5000, 80); /* P1, sent by C */
	tb_switch(&x, 600, CL, CL, 1, 0, 0, 0, 3, 0, 0);
	net(&x, 900, true, 0, 1, 9, 2, 5000, 80);   /* P2, sent from a softirq */
	net(&x, 1150, false, 0, 0, 4, 3, 80, 5000); /* the answer */
	t[0] = tb_read(&x, 2000);
	host_open(&y, "y", S, "server", 60);		/* the server */
	tb_switch(&y, 100, S, S, 1, 0, 0, 43, 3, 0, 0); /* accept */
	net(&y, 990, false, 0, 0, 7, 1, 5000, 80);
	net(&y, 995, false, 0, 0, 7, 2, 5000, 80);
	rx_woken(&y, 1000, 1010, S);
	net(&y, 1100, true, S, 0, 0, 3, 80, 5000);
	if (!two_hosts_build(&y, t, &g, ""))
		return;
	ok(g.hosts[1].sync == CRIT_SYNC_APPROXIMATE || g.hosts[1].sync == CRIT_SYNC_ACCURATE,
	   "their clocks synchronised (%s)", crit_sync__quality_name(g.hosts[1].sync));
	/* The server's wait, switch-out to wake-up, on the client's clock (the reference). */
	ok(!crit_graph__path(&g, 1, S, crit_graph__to_ref(&g, 1, 100),
			     crit_graph__to_ref(&g, 1, 1000), &p),
	   "path of the server's wait");
	right = p.nr == 2 && p.segs[0].host == 0 && p.segs[0].tid == CL &&
		p.segs[0].edge == CRIT_RUNNING && p.segs[1].host == 1 && p.segs[1].tid == S &&
		p.segs[1].edge == CRIT_NETWORK && p.segs[1].from_host == 0 &&
		p.segs[1].from_tid == CL && llabs(p.segs[1].start_ns - 500) < 100;
	ok(right, "C running, then the network from C's send: the chain that explains it all");
	if (!right)
		print_path(&g, &p);
	two_hosts_free(&g, &p, t);
}

/* Client C sends its request at 500, is preempted from 600 to 650, and blocks for the
 * answer at 700: the request was on the wire from 500, so the path goes from C's send to
 * the network; C's preemption after it was not on the path (it delayed nothing). */
static void sent_then_preempted_test(void)
{
	enum { S = 20, CL = 30 };
	struct trace *t[2];
	struct crit_graph g;
	struct crit_path p;
	struct tb x, y;
	bool right = true, net_from_send = false;

	host_open(&x, "x", CL, "client", 50);
	net(&x, 500, true, CL, 0, 0, 1, 5000, 80);	   /* the request */
	tb_switch(&x, 600, CL, CL, 0, 0, 0, -1, -1, 0, 0); /* preempted */
	tb_switch(&x, 650, 0, 0, 0, CL, CL, -1, -1, 0, 0);
	tb_switch(&x, 700, CL, CL, 1, 0, 0, 0, 3, 0, 0); /* read() */
	net(&x, 1150, false, 0, 0, 4, 3, 80, 5000);	 /* the answer */
	rx_woken(&x, 1155, 1160, CL);
	t[0] = tb_read(&x, 2000);
	host_open(&y, "y", S, "server", 60);
	tb_switch(&y, 100, S, S, 1, 0, 0, 0, 3, 0, 0);
	net(&y, 990, false, 0, 0, 7, 1, 5000, 80);
	rx_woken(&y, 1000, 1010, S);
	net(&y, 1100, true, S, 0, 0, 3, 80, 5000);
	if (!two_hosts_build(&y, t, &g, ""))
		return;
	ok(!crit_graph__path(&g, 0, CL, 50, 1200, &p), "path of the client");
	for (size_t i = 0; i < p.nr; i++) {
		const struct crit_segment *s = &p.segs[i];

		if (s->host == 0 && s->tid == CL && s->edge == CRIT_PREEMPTED && s->end_ns <= 700)
			right = false;
		if (s->host == 1 && s->tid == S && s->edge == CRIT_NETWORK && s->from_tid == CL &&
		    s->start_ns == 500)
			net_from_send = true;
	}
	ok(right && net_from_send && p.nr && p.segs[0].edge == CRIT_RUNNING &&
		   p.segs[0].end_ns == 500,
	   "C running to its send, then the request on the wire; not C's preemption after it");
	if (!right || !net_from_send)
		print_path(&g, &p);
	two_hosts_free(&g, &p, t);
}

/* Client C sends its request at 500 and blocks for the answer at 700. Server S, blocked in
 * read() since 100, is woken at 755 by another of C's segments (sent at 200), runs to 800
 * and blocks again until the request comes at 990. The request was on the wire from its
 * send: S's run woken by the other segment did not bring it, and is not on C's path, nor
 * is the other segment. (Both ways 490 on the wire: the clocks agree.) */
static void woken_meanwhile_test(void)
{
	enum { S = 20, CL = 30 };
	struct trace *t[2];
	struct crit_graph g;
	struct crit_path p;
	struct tb x, y;
	bool right = true, wire = false;

	host_open(&x, "x", CL, "client", 50);
	net(&x, 200, true, CL, 0, 0, 1, 5000, 80); /* the other segment */
	net(&x, 500, true, CL, 0, 0, 2, 5000, 80); /* the request */
	tb_switch(&x, 700, CL, CL, 1, 0, 0, 0, 3, 0, 0);
	net(&x, 1590, false, 0, 0, 4, 3, 80, 5000); /* the answer */
	rx_woken(&x, 1595, 1600, CL);
	t[0] = tb_read(&x, 2000);
	host_open(&y, "y", S, "server", 60);
	tb_switch(&y, 100, S, S, 1, 0, 0, 0, 3, 0, 0);
	net(&y, 750, false, 0, 0, 7, 1, 5000, 80);
	rx_woken(&y, 755, 760, S);
	tb_switch(&y, 800, S, S, 1, 0, 0, 0, 3, 0, 0);
	net(&y, 990, false, 0, 0, 7, 2, 5000, 80);
	rx_woken(&y, 1000, 1010, S);
	net(&y, 1100, true, S, 0, 0, 3, 80, 5000);
	if (!two_hosts_build(&y, t, &g, "woken meanwhile: "))
		return;
	ok(!crit_graph__path(&g, 0, CL, 50, 1650, &p), "path of the client");
	for (size_t i = 0; i < p.nr; i++) {
		const struct crit_segment *s = &p.segs[i];

		if (s->host == 1 && s->tid == S && s->edge == CRIT_RUNNING && s->start_ns < 990)
			right = false;
		if (s->host == 1 && s->edge == CRIT_NETWORK && s->from_tid == CL &&
		    s->start_ns == 500 && llabs(s->end_ns - 1000) < 20)
			wire = true;
	}
	ok(right && wire && p.nr && p.segs[0].edge == CRIT_RUNNING && p.segs[0].end_ns == 500,
	   "C running to its send, then the request on the wire; not S's run woken meanwhile");
	if (!right || !wire)
		print_path(&g, &p);
	crit_path__free(&p);
	/* S's own wait, followed from S: its run after the other segment is its own. */
	ok(!crit_graph__path(&g, 1, S, crit_graph__to_ref(&g, 1, 100),
			     crit_graph__to_ref(&g, 1, 1000), &p),
	   "path of the server's wait");
	right = false;
	for (size_t i = 0; i < p.nr; i++)
		if (p.segs[i].host == 1 && p.segs[i].tid == S && p.segs[i].edge == CRIT_RUNNING &&
		    p.segs[i].start_ns == 760 && p.segs[i].end_ns == 800)
			right = true;
	ok(right, "followed from S, S's run after the other segment stays on the path");
	if (!right)
		print_path(&g, &p);
	two_hosts_free(&g, &p, t);
}

/* The received packet of host h at ts. */
static const struct crit_pkt *pkt_at(const struct crit_graph *g, size_t h, uint64_t ts)
{
	for (size_t i = 0; i < g->hosts[h].nr_pkts; i++)
		if (g->hosts[h].pkts[i].ts == ts)
			return &g->hosts[h].pkts[i];
	return NULL;
}

/* Client C (fd00::1, port 5000) asks server S (fd00::2, port 80) over IPv6 and waits for the
 * answer: C's wait is followed to S's work through the network, both ways, and the clocks
 * synchronised over those packets. Segments that only look the same are not matched: the
 * same ports and sequence number from an address whose words are those of C's in another
 * order (its fold is the same: the record alone cannot tell them apart), or over IPv4 with
 * C's and S's folds for addresses (sent as a segment whose REC_NET6 was lost). One whose
 * REC_NET6 was lost is matched by its record. */
static void ipv6_test(void)
{
	enum { S = 20, CL = 30 };
	static const uint8_t a[16] = {0xfd, [15] = 1}, b6[16] = {0xfd, [15] = 2},
			     other[16] = {[3] = 1, [12] = 0xfd}; /* a's words in another order */
	struct trace *t[2];
	struct crit_graph g;
	struct crit_path p;
	char what[CRIT_WHAT_SIZE] = "";
	const uint16_t c_port = htons(5000), s_port = htons(80);
	const struct crit_pkt *k;
	struct tb x, y;
	struct rec r;
	bool right;

	ok(fold6(other) == fold6(a) && memcmp(other, a, 16), "ipv6: a look-alike address");
	host_open(&x, "x", CL, "client", 50);			       /* the client */
	net6(&x, 500, true, CL, 0, 0, 1, c_port, s_port, a, b6, true); /* the request */
	net6(&x, 510, true, CL, 0, 0, 2, c_port, s_port, a, b6, true);
	net6(&x, 520, true, CL, 0, 0, 4, c_port, s_port, a, b6, true);
	net6(&x, 530, true, CL, 0, 0, 5, c_port, s_port, a, b6, false);
	tb_switch(&x, 600, CL, CL, 1, 0, 0, 0, 3, 0, 0);		/* read */
	net6(&x, 1150, false, 0, 0, 4, 3, s_port, c_port, b6, a, true); /* the answer */
	rx_woken(&x, 1160, 1170, CL);
	t[0] = tb_read(&x, 2000);
	host_open(&y, "y", S, "server", 60);	       /* the server */
	tb_switch(&y, 100, S, S, 1, 0, 0, 0, 3, 0, 0); /* read */
	net6(&y, 990, false, 0, 0, 7, 1, c_port, s_port, a, b6, true);
	net6(&y, 992, false, 0, 1, 8, 2, c_port, s_port, other, b6, true);
	net6(&y, 994, false, 0, 1, 8, 4, c_port, s_port, a, b6, false);
	net_rec(&r, &y, 996, false, 0, 1, 8, 5, c_port, s_port);
	r.net.saddr = fold6(a);
	r.net.daddr = fold6(b6);
	trace_writer__add_event(y.w, &r);
	rx_woken(&y, 1000, 1010, S);
	net6(&y, 1100, true, S, 0, 0, 3, s_port, c_port, b6, a, true);
	tb_switch(&y, 1120, S, S, 1, 0, 0, 0, 3, 0, 0);
	if (!two_hosts_build(&y, t, &g, "ipv6: "))
		return;
	ok(g.hosts[1].sync == CRIT_SYNC_APPROXIMATE || g.hosts[1].sync == CRIT_SYNC_ACCURATE,
	   "ipv6: clocks synchronised over IPv6 packets (%s, %u packets)",
	   crit_sync__quality_name(g.hosts[1].sync), g.hosts[1].exchanged);
	k = pkt_at(&g, 1, 990);
	ok(k && k->peer && k->peer_host == 0 && k->family == AF_INET6 && !memcmp(k->saddr, a, 16),
	   "the request received is matched to its send, its addresses whole");
	k = pkt_at(&g, 1, 992);
	ok(k && !k->peer, "not a segment from a look-alike address");
	k = pkt_at(&g, 1, 994);
	ok(k && k->peer && k->family == 0, "one recorded without its addresses: matched");
	k = pkt_at(&g, 1, 996);
	ok(k && !k->peer && k->family == AF_INET, "not an IPv4 segment with the same fields");

	/* The request on the wire as S's wait, S's work, the answer on the wire. */
	ok(!crit_graph__path(&g, 0, CL, 600, 1160, &p), "ipv6: path of the client's wait");
	right = p.nr >= 3 && p.segs[0].host == 1 && p.segs[0].tid == S &&
		p.segs[0].edge == CRIT_NETWORK && p.segs[0].from_host == 0 &&
		p.segs[0].from_tid == CL &&
		!strcmp(crit_segment__what(&g, &p.segs[0], what, sizeof(what)),
			"[fd00::1]:5000 -> [fd00::2]:80") &&
		p.segs[p.nr - 2].host == 1 && p.segs[p.nr - 2].tid == S &&
		p.segs[p.nr - 2].edge == CRIT_RUNNING && p.segs[p.nr - 1].host == 0 &&
		p.segs[p.nr - 1].tid == CL && p.segs[p.nr - 1].edge == CRIT_NETWORK &&
		p.segs[p.nr - 1].from_host == 1 && p.segs[p.nr - 1].from_tid == S &&
		!strcmp(crit_segment__what(&g, &p.segs[p.nr - 1], what, sizeof(what)),
			"[fd00::2]:80 -> [fd00::1]:5000");
	ok(right, "the request on the wire [fd00::1]:5000 -> [fd00::2]:80 as S's wait, S's work, "
		  "the answer [fd00::2]:80 -> [fd00::1]:5000");
	if (!right)
		print_path(&g, &p);
	two_hosts_free(&g, &p, t);
}

/* Packets between X (the true clock) and Y, whose clock is offset and drifts; one-way
 * delays of delay_ns plus up to jitter_ns. */
static double y_of(double x, double offset, double ppm)
{
	return x + offset + x * ppm / 1e6;
}

static double sync_error(double offset, double ppm, double delay_ns, double jitter_ns, int n,
			 enum crit_sync_quality *q)
{
	struct crit_sync s = {0};
	struct crit_sync_result r;
	double worst = 0, x;
	int i;

	srand(42);
	for (i = 0; i < n; i++) {
		double t = 10e9 + i * 2e9 / n, d1 = delay_ns + jitter_ns * rand() / RAND_MAX,
		       d2 = delay_ns + jitter_ns * rand() / RAND_MAX;

		crit_sync__add(&s, (uint64_t)t, (uint64_t)y_of(t + d1, offset, ppm), true);
		/* Y sends at t + d1 + 1 ms (Y's clock), X receives d2 later. */
		crit_sync__add(&s, (uint64_t)(t + d1 + 1e6 + d2),
			       (uint64_t)y_of(t + d1 + 1e6, offset, ppm), false);
	}
	crit_sync__solve(&s, &r);
	*q = r.quality;
	for (x = 10e9; x <= 12e9; x += 1e8) {
		double y = r.slope * (x - s.x0) + r.intercept + s.y0;

		worst = fmax(worst, fabs(y - y_of(x, offset, ppm)));
	}
	crit_sync__free(&s);
	return worst;
}

static void sync_test(void)
{
	struct crit_sync s = {0};
	struct crit_sync_result r;
	enum crit_sync_quality q;
	double e;

	e = sync_error(5e9, 100, 50e3, 30e3, 200, &q);
	ok(q == CRIT_SYNC_ACCURATE && e < 2e3, "+5 s, +100 ppm, 50-80 us delays: within %.0f ns",
	   e);
	e = sync_error(-5e9, -100, 20e6, 200e3, 50, &q);
	ok(q == CRIT_SYNC_ACCURATE && e < 100e3,
	   "-5 s, -100 ppm, a 20 ms delay line: within %.0f ns (same delay both ways)", e);

	crit_sync__solve(&s, &r);
	is_int(r.quality, CRIT_SYNC_ABSENT, "no packet: absent");
	crit_sync__add(&s, 100, 200, true);
	crit_sync__add(&s, 300, 400, true);
	crit_sync__solve(&s, &r);
	is_int(r.quality, CRIT_SYNC_FAILED, "one way only: failed");
	crit_sync__add(&s, 150, 400, false); /* sent by Y after X received it: impossible */
	crit_sync__add(&s, 350, 600, false);
	crit_sync__solve(&s, &r);
	is_int(r.quality, CRIT_SYNC_FAILED, "packets that contradict every line: failed");
	crit_sync__free(&s);
	crit_sync__add(&s, 1000, 1100, true);
	crit_sync__add(&s, 1300, 1150, false);
	crit_sync__solve(&s, &r);
	ok(r.quality == CRIT_SYNC_APPROXIMATE && fabs(r.intercept + 125) < 1e-6,
	   "one packet each way: approximate, the middle of the offsets allowed");
	crit_sync__free(&s);
	is_str(crit_sync__quality_name(CRIT_SYNC_ACCURATE), "accurate", "quality names");
}

int main(void)
{
	path_test();
	ipi_test();
	longest_explained_test();
	sent_then_preempted_test();
	woken_meanwhile_test();
	ipv6_test();
	sync_test();
	return done_testing();
}
