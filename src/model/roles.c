/* From the runs' facts to the model: threads grouped into clusters, each cluster's roles,
 * and the network model. A role is what threads were seen doing (accepting, serving
 * connections), never guessed from names; pools are the threads that did the work, widened
 * to the peers clustered with them under the same name (a worker of a pool that received no
 * connection in a short run is still one of the pool). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/frames.h"
#include "model/group.h"
#include "model/model.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "util/util.h"

static const char *const role_names[ROLES] = {
	[ROLE_MAIN] = "main",	    [ROLE_ACCEPTOR] = "acceptor",
	[ROLE_NETWORK] = "network", [ROLE_BACKGROUND] = "background",
	[ROLE_IDLE] = "idle",
};

const char *model__role_name(enum model_role r)
{
	return r < ROLES ? role_names[r] : "idle";
}

static struct model_thread *item_thr(const struct model *m, const struct model_item *it)
{
	return &m->runs[it->run].thr[it->thr];
}

/* A thread that ran for less than this share of the run's on-CPU time, and served no
 * connection, is idle. */
#define BACKGROUND_SHARE 0.001

static void name_stack(const struct model *m, struct model_cluster *c)
{
	const struct model_stack *best = NULL;
	const struct model_thread *bt = NULL;
	unsigned best_run = 0;
	const char *frames[MODEL_MAX_FRAMES];
	const struct trace *t;
	struct trace_symbols *sym;
	size_t i, j, n;

	for (i = 0; i < c->nr_items; i++) {
		const struct model_thread *th = item_thr(m, &c->items[i]);

		for (j = 0; j < th->nr_stacks; j++)
			if (!best || th->stacks[j].ns > best->ns) {
				best = &th->stacks[j];
				bt = th;
				best_run = c->items[i].run;
			}
	}
	if (!best || !m->traces || !(t = m->traces[best_run]))
		return;
	sym = trace_symbols__new(t);
	if (!sym)
		return;
	n = model__frames(t, sym, bt->pid, m->runs[best_run].start_ns, best->ustack, best->kstack,
			  frames, MODEL_MAX_FRAMES);
	c->stack = xcalloc(n ? n : 1, sizeof(*c->stack));
	for (i = 0; i < n; i++)
		c->stack[i] = xstrdup(frames[i]);
	c->stack_len = n;
	trace_symbols__delete(sym);
}

static enum wait_kind main_wait(const uint64_t *ns, const bool *allowed, double *share)
{
	uint64_t sum = 0, best = 0;
	enum wait_kind k = WK_OTHER;
	int i;

	for (i = 0; i < WK_KINDS; i++) {
		sum += ns[i];
		if ((!allowed || allowed[i]) && ns[i] > best) {
			best = ns[i];
			k = (enum wait_kind)i;
		}
	}
	if (share)
		*share = sum ? (double)best / sum : 0;
	return best ? k : WK_KINDS;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int by_per_wake(const void *a, const void *b)
{
	const struct model_work *x = a, *y = b;

	return (x->per_wake < y->per_wake) - (x->per_wake > y->per_wake);
}

/* The median of np periods, when at least half of the woke threads had one. */
static double median_period(double *periods, size_t np, size_t woke)
{
	if (!np || np * 2 < woke)
		return 0;
	qsort(periods, np, sizeof(*periods), cmp_double);
	return periods[np / 2];
}

/* A background cluster's wake-ups run by run: per second of the run's trace and per thread
 * the cluster has in it, their period and CPU per wake-up, for a clone that wakes as often
 * as the original did at the load it is driven at. */
static struct model_bg_run *per_run_wakes(const struct model *m, const struct model_cluster *c)
{
	struct model_bg_run *pr = xcalloc(m->nr_runs, sizeof(*pr));
	double *periods = xcalloc(c->nr_items ? c->nr_items : 1, sizeof(*periods));
	size_t r, i;

	for (r = 0; r < m->nr_runs; r++) {
		const struct model_run *run = &m->runs[r];
		double secs = run->end_ns > run->start_ns ? (run->end_ns - run->start_ns) / 1e9 : 0;
		size_t np = 0, woke = 0;
		uint64_t wakes = 0, on = 0, uwakes = 0, uon = 0;

		for (i = 0; i < c->nr_items; i++) {
			const struct model_thread *th = item_thr(m, &c->items[i]);

			if (c->items[i].run == r && th->unrec) {
				uwakes += th->unrec_wakes;
				uon += th->unrec_on_ns;
			}
			if (c->items[i].run != r || !th->wakes)
				continue;
			woke++;
			wakes += th->wakes;
			on += th->on_ns;
			if (th->period_ns)
				periods[np++] = th->period_ns / 1e6;
		}
		if (secs > 0 && c->size_per_run[r])
			pr[r].wakes_per_s = wakes / secs / c->size_per_run[r];
		pr[r].period_ms = median_period(periods, np, woke);
		pr[r].on_cpu_us = wakes ? on / 1e3 / wakes : 0;
		pr[r].on_cpu_us_unrecorded = uwakes ? uon / 1e3 / uwakes : 0;
	}
	free(periods);
	return pr;
}

/* A cluster that serves no connection: the period its threads wake at (the median of its
 * periodic threads' periods, when most of its threads that woke are periodic), and what
 * they do per wake-up (CPU time, the syscalls other than the wait itself). */
static void background_work(struct model *m, struct model_cluster *c)
{
	struct u64map n = {0}, bytes = {0};
	double *periods = xcalloc(c->nr_items ? c->nr_items : 1, sizeof(*periods));
	size_t i, j, np = 0, woke = 0;
	uint64_t on = 0, k, v;

	for (i = 0; i < c->nr_items; i++) {
		const struct model_thread *th = item_thr(m, &c->items[i]);

		if (!th->wakes)
			continue;
		woke++;
		c->wakes += th->wakes;
		on += th->on_ns;
		if (th->period_ns)
			periods[np++] = th->period_ns / 1e6;
		for (j = 0; u64map__next(&th->sc_n, &j, &k, &v);)
			*u64map__slot(&n, k, NULL) += v;
		for (j = 0; u64map__next(&th->sc_bytes, &j, &k, &v);)
			*u64map__slot(&bytes, k, NULL) += v;
	}
	c->period_ms = median_period(periods, np, woke);
	c->per_run = per_run_wakes(m, c);
	c->work_on_cpu_us_unrecorded =
		m->nr_runs ? c->per_run[m->nr_runs - 1].on_cpu_us_unrecorded : 0;
	if (c->wakes) {
		c->work_on_cpu_us = on / 1e3 / c->wakes;
		for (i = 0; u64map__next(&n, &i, &k, &v);) {
			uint64_t b = 0;

			if (model__wait_kind((int)k) == c->wait && c->wait != WK_OTHER)
				continue; /* the wait itself */
			u64map__get(&bytes, k, &b);
			if (c->nr_work == ARRAY_SIZE(c->work)) { /* keep the commonest */
				qsort(c->work, c->nr_work, sizeof(c->work[0]), by_per_wake);
				if ((double)v / c->wakes <= c->work[c->nr_work - 1].per_wake)
					continue;
				c->nr_work--;
			}
			c->work[c->nr_work].nr = (int)k;
			c->work[c->nr_work].per_wake = (double)v / c->wakes;
			c->work[c->nr_work].bytes = v ? (double)b / v : 0;
			c->nr_work++;
		}
		qsort(c->work, c->nr_work, sizeof(c->work[0]), by_per_wake);
	}
	free(periods);
	u64map__free(&n);
	u64map__free(&bytes);
}

static void describe_cluster(struct model *m, struct model_cluster *c, uint64_t total_on)
{
	uint64_t on = 0, wait_ns[WK_KINDS] = {0};
	struct u64map pids = {0}, names = {0};
	bool any_main = false, any_acc = false, any_net = false;
	uint64_t k, v, best = 0;
	size_t i, j;
	int w;

	c->size_per_run = xcalloc(m->nr_runs, sizeof(*c->size_per_run));
	for (i = 0; i < c->nr_items; i++) {
		const struct model_thread *th = item_thr(m, &c->items[i]);

		c->size_per_run[c->items[i].run]++;
		on += th->on_ns;
		for (w = 0; w < WK_KINDS; w++)
			wait_ns[w] += th->wait_ns[w];
		u64map__put(&pids, th->pid, 1);
		(*u64map__slot(&names, fnv1a(th->comm, strlen(th->comm), FNV1A_INIT), NULL))++;
		any_main |= th->tid == m->runs[c->items[i].run].main_pid;
		any_acc |= th->acceptor;
		any_net |= th->network;
	}
	for (i = 0; u64map__next(&names, &i, &k, &v);)
		if (v > best) {
			best = v;
			for (j = 0; j < c->nr_items; j++) {
				const struct model_thread *th = item_thr(m, &c->items[j]);

				if (fnv1a(th->comm, strlen(th->comm), FNV1A_INIT) == k) {
					snprintf(c->name, sizeof(c->name), "%s", th->comm);
					break;
				}
			}
		}
	c->processes = (unsigned)pids.nr;
	/* Grows with the connections: bigger in a run with more of them, never smaller. */
	if (m->nr_runs > 1) {
		bool grew = false, shrank = false;

		for (i = 1; i < m->nr_runs; i++)
			for (j = 0; j < i; j++) {
				const struct model_run *a = &m->runs[j], *b = &m->runs[i];
				int dc = (b->conns > a->conns) - (b->conns < a->conns);
				int ds = (c->size_per_run[i] > c->size_per_run[j]) -
					 (c->size_per_run[i] < c->size_per_run[j]);

				if (dc && ds == dc)
					grew = true;
				else if (dc && ds == -dc)
					shrank = true;
			}
		c->grows_with_conns = grew && !shrank;
	}
	c->on_cpu_share = total_on ? (double)on / total_on : 0;
	c->wait = main_wait(wait_ns, NULL, &c->wait_share);
	c->roles[ROLE_MAIN] = any_main;
	c->roles[ROLE_ACCEPTOR] = any_acc;
	c->roles[ROLE_NETWORK] = any_net;
	if (!any_net)
		background_work(m, c);
	if (any_net)
		c->role = ROLE_NETWORK;
	else if (any_acc)
		c->role = ROLE_ACCEPTOR;
	else if (any_main)
		c->role = ROLE_MAIN;
	else if (c->on_cpu_share >= BACKGROUND_SHARE || c->period_ms > 0)
		c->role = ROLE_BACKGROUND; /* busy, or woken on a clock however little it does */
	else
		c->role = ROLE_IDLE;
	if (c->role != ROLE_BACKGROUND && c->role != ROLE_IDLE)
		c->period_ms = 0; /* woken by its connections, not a clock */
	if (!any_net && !any_acc && !any_main)
		c->roles[c->role] = true;
	u64map__free(&pids);
	u64map__free(&names);
	name_stack(m, c);
}

/* Threads of run r that play role (acceptor or network), widened to their cluster peers of
 * the same name and process that played no role (a worker thread that got no connection in
 * a short run; not the other processes of a server, whose trees can be alike: postgres's
 * postmaster, background workers and backends). */
static unsigned pool_in_run(const struct model *m, unsigned r, bool network)
{
	const struct model_run *run = &m->runs[r];
	unsigned n = 0;
	size_t i, j;

	for (i = 0; i < run->nr_thr; i++) {
		const struct model_thread *th = &run->thr[i];
		bool peer = false;

		if (network ? th->network : th->acceptor) {
			n++;
			continue;
		}
		/* a thread seen in the other role is not an idle peer of this one */
		if (th->cluster < 0 || th->network || th->acceptor)
			continue;
		for (j = 0; j < run->nr_thr && !peer; j++) {
			const struct model_thread *o = &run->thr[j];

			peer = (network ? o->network : o->acceptor) && o->cluster == th->cluster &&
			       !strcmp(o->comm, th->comm) && o->pid == th->pid;
		}
		n += peer;
	}
	return n;
}

static const char *io_name(enum wait_kind k)
{
	switch (k) {
	case WK_EPOLL:
		return "epoll";
	case WK_POLL:
		return "poll";
	case WK_SELECT:
		return "select";
	case WK_URING:
		return "io_uring";
	case WK_READ:
	case WK_ACCEPT:
		return "blocking";
	default:
		return "nonblocking";
	}
}

static void network_model(struct model *m)
{
	struct model_netmodel *n = &m->net;
	uint64_t net_wait[WK_KINDS] = {0}, acc_wait[WK_KINDS] = {0};
	uint64_t served = 0, handed = 0, nonblock = 0;
	bool io_waits[WK_KINDS] = {
		[WK_EPOLL] = 1, [WK_POLL] = 1, [WK_SELECT] = 1, [WK_URING] = 1, [WK_READ] = 1};
	bool acc_waits[WK_KINDS] = {
		[WK_EPOLL] = 1, [WK_POLL] = 1, [WK_SELECT] = 1, [WK_URING] = 1, [WK_ACCEPT] = 1};
	bool per_conn = true, any_net = false, fork = false, rp_known = false;
	unsigned port_sockets = 0;
	struct u64map pids = {0};
	unsigned r;
	size_t i;
	int w;

	for (r = 0; r < m->nr_runs; r++) {
		const struct model_run *run = &m->runs[r];
		unsigned acc = pool_in_run(m, r, false), net = pool_in_run(m, r, true), nthr = 0;

		if (acc > n->accept_pool)
			n->accept_pool = acc;
		if (net > n->network_pool)
			n->network_pool = net;
		if (run->listeners > n->listeners)
			n->listeners = run->listeners;
		fork |= run->fork_per_conn;
		n->epoll_exclusive |= run->epoll_exclusive;
		n->shared_epoll |= run->shared_epoll > 1;
		if (run->port_sockets > port_sockets)
			port_sockets = run->port_sockets;
		if (run->reuseport >= 0 && (!rp_known || run->reuseport > n->reuseport)) {
			n->reuseport = run->reuseport;
			rp_known = true;
		}
		for (i = 0; i < run->nr_conn; i++) {
			const struct model_conn *c = &run->conn[i];

			if (!c->io_tid)
				continue;
			served++;
			handed += c->handed;
			nonblock += c->nonblocking;
		}
		for (i = 0; i < run->nr_thr; i++) {
			const struct model_thread *th = &run->thr[i];

			for (w = 0; w < WK_KINDS; w++) {
				if (th->network)
					net_wait[w] += th->wait_ns[w];
				if (th->acceptor)
					acc_wait[w] += th->wait_ns[w];
			}
			if (th->network || th->acceptor)
				u64map__put(&pids, th->pid, 1);
			if (!th->network)
				continue;
			any_net = true;
			nthr++;
			/* one at a time: a cached thread may serve several in turn */
			if (th->max_open_conns > 1)
				per_conn = false;
		}
		/* One thread per connection: as many serving threads as connections open at
		 * once, none serving two. Not a pool bigger than the load (memcached -t 1000:
		 * 75 workers served 16 connections at a time, one each, and 925 waited idle
		 * beside them): its idle peers outnumber the threads that served. */
		if (run->nr_conn && (nthr < run->peak_conns || run->peak_conns < 2))
			per_conn = false;
		if (net > 2 * nthr + 2)
			per_conn = false;
	}
	n->found = served > 0;
	n->handoff_share = served ? (double)handed / served : 0;
	/* a deliberate hand-off, not the odd connection: haproxy moves about half of its
	 * connections to the least loaded thread (44 % to 51 % in runs here) */
	n->network_dispatch = n->handoff_share >= 0.25;
	n->accept_dispatch = n->accept_pool > 1;
	w = main_wait(net_wait, io_waits, NULL);
	n->network_io = w < WK_KINDS ? io_name(w) : NULL;
	w = main_wait(acc_wait, acc_waits, NULL);
	n->accept_io = w < WK_KINDS ? io_name(w) : "nonblocking";
	/* Network threads that never wait on their sockets, fed through a queue by a thread
	 * that does (apache's event MPM: the listener polls every connection and hands the
	 * ready ones to its workers): the I/O model is that thread's. */
	if (!n->network_io)
		n->network_io = n->network_dispatch ? n->accept_io : "nonblocking";
	n->network_epoll = !strcmp(n->network_io, "epoll");
	n->nonblocking = served && nonblock * 2 > served;
	n->blocking = served && !n->nonblocking;
	n->multi_process = pids.nr > 1;
	n->network_per_conn = any_net && per_conn && n->network_dispatch;
	n->per_connection = !n->network_per_conn ? "none" : fork ? "process" : "thread";
	if (!rp_known)
		n->reuseport = -1;
	/* Connections reach the threads that serve them: by the kernel, each acceptor on a
	 * listening socket of its own on one port (SO_REUSEPORT); else handed over by the
	 * acceptor through a fork, a thread of its own, an epoll instance that the serving
	 * threads all wait in, or a queue. */
	if (!n->network_dispatch)
		n->handoff = n->accept_dispatch && n->reuseport == 1 && port_sockets > 1
				     ? "reuseport"
				     : "none";
	else if (fork)
		n->handoff = "fork";
	else if (n->network_per_conn)
		n->handoff = "thread";
	else if (n->shared_epoll)
		n->handoff = "shared-epoll";
	else
		n->handoff = "queue";
	u64map__free(&pids);
}

int model__build(struct model *m)
{
	struct model_item *items = NULL;
	size_t nr = 0, cap = 0, i;
	uint64_t total_on = 0;
	int *assign, nc;
	unsigned r;

	for (r = 0; r < m->nr_runs; r++)
		for (i = 0; i < m->runs[r].nr_thr; i++) {
			xgrow((void **)&items, &cap, nr + 1, sizeof(*items));
			items[nr++] = (struct model_item){r, i};
			total_on += m->runs[r].thr[i].on_ns;
		}
	assign = xcalloc(nr ? nr : 1, sizeof(*assign));
	nc = model__group(m, items, nr, assign, &m->threshold, &m->distinct_trees);
	if (nc < 0) {
		free(items);
		free(assign);
		return nc;
	}
	m->clusters = xcalloc(nc ? nc : 1, sizeof(*m->clusters));
	m->nr_clusters = nc;
	for (i = 0; i < nr; i++) {
		struct model_cluster *c = &m->clusters[assign[i]];

		c->items = xrealloc(c->items, (c->nr_items + 1) * sizeof(*c->items));
		c->items[c->nr_items++] = items[i];
		item_thr(m, &items[i])->cluster = assign[i];
	}
	for (i = 0; i < m->nr_clusters; i++) {
		m->clusters[i].id = (int)i;
		describe_cluster(m, &m->clusters[i], total_on);
	}
	network_model(m);
	free(items);
	free(assign);
	return 0;
}

void model__free(struct model *m)
{
	size_t i, j;

	for (i = 0; i < m->nr_clusters; i++) {
		for (j = 0; j < m->clusters[i].stack_len; j++)
			free(m->clusters[i].stack[j]);
		free(m->clusters[i].stack);
		free(m->clusters[i].items);
		free(m->clusters[i].size_per_run);
		free(m->clusters[i].per_run);
	}
	free(m->clusters);
	for (i = 0; i < m->nr_runs; i++)
		model_run__free(&m->runs[i]);
	free(m->runs);
}
