/* Thread clustering on synthetic call-stack trees shaped like a memcached's threads: the
 * distance's properties, frame-name normalisation, the groups the data-chosen cut makes,
 * matching across runs, and the time for 1000 threads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/cluster.h"
#include "model/stacktree.h"
#include "unit.h"

#define MS 1000000ull

/* Adds the path "a;b;c" (outermost first) with weight ns. */
static void add(struct stacktree *t, const char *path, uint64_t ns)
{
	char buf[1024], *save, *f;
	const char *frames[64];
	unsigned nr = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (f = strtok_r(buf, ";", &save); f && nr < 64; f = strtok_r(NULL, ";", &save))
		frames[nr++] = f;
	if (stacktree__add(t, frames, nr, ns))
		abort();
}

static struct stacktree *tree(void)
{
	struct stacktree *t = stacktree__new();

	if (!t)
		abort();
	return t;
}

#define MAIN   "_start;__libc_start_main;main;event_base_loop"
#define WORKER "clone3;start_thread;worker_libevent;event_base_loop"
#define DRIVE  "event_process_active;event_handler;drive_machine"

static struct stacktree *mc_main(void)
{
	struct stacktree *t = tree();

	add(t, MAIN ";epoll_wait;entry_SYSCALL_64;do_epoll_wait", 4700 * MS);
	add(t, MAIN ";" DRIVE ";accept4", 200 * MS);
	add(t, MAIN ";" DRIVE ";dispatch_conn_new;write", 100 * MS);
	return t;
}

/* A worker waiting in epoll_wait for `idle` ms and serving for `busy` ms, spread as reads
 * (30%), sendmsg (60%) and the hash lookup on CPU (10%). The event loop is in a library
 * without symbols there (a return address, the same in every worker); the on-CPU samples
 * hit code without symbols at an address that varies with `off`. */
static struct stacktree *mc_worker(uint64_t idle, uint64_t busy, unsigned off)
{
	struct stacktree *t = tree();
	char path[512];

	add(t, WORKER ";libevent-2.1.so.7+0x2af14;epoll_wait;entry_SYSCALL_64;do_epoll_wait",
	    idle * MS);
	add(t, WORKER ";" DRIVE ";read;entry_SYSCALL_64;ksys_read", busy * 3 / 10 * MS);
	add(t, WORKER ";" DRIVE ";transmit;sendmsg;entry_SYSCALL_64;__sys_sendmsg",
	    busy * 6 / 10 * MS);
	snprintf(path, sizeof(path), WORKER ";" DRIVE ";process_command;memcached+0x%x",
		 0x25bb6 + off);
	add(t, path, busy / 10 * MS);
	return t;
}

static struct stacktree *bg(const char *fn, const char *wait, uint64_t ms)
{
	struct stacktree *t = tree();
	char path[256];

	snprintf(path, sizeof(path), "clone3;start_thread;%s;%s", fn, wait);
	add(t, path, ms * MS);
	return t;
}

#define COND  "pthread_cond_wait;futex_wait;entry_SYSCALL_64;futex_wait_queue"
#define SLEEP "usleep;clock_nanosleep;entry_SYSCALL_64;hrtimer_nanosleep"

enum { T_MAIN, T_W1, T_W2, T_W3, T_W4, T_ASSOC, T_CRAWL, T_LRU, T_LOGGER, T_TIMEOUT, T_NR };

static void memcached(struct cluster_thread *t)
{
	static const char *comm[T_NR] = {"memcached", "mc-worker", "mc-worker",	 "mc-worker",
					 "mc-worker", "mc-assoc",  "mc-crawler", "mc-lru",
					 "mc-logger", "mc-timeout"};

	for (unsigned i = 0; i < T_NR; i++) {
		t[i].tid = 1000 + i;
		t[i].pid = 1000;
		t[i].comm = comm[i];
	}
	t[T_MAIN].tree = mc_main();
	/* Busy shares 10%, 30% (3x), 20%, 15%; absolute time differing 3x too. */
	t[T_W1].tree = mc_worker(4500, 500, 0);
	t[T_W2].tree = mc_worker(3500 * 3, 1500 * 3, 0x40);
	t[T_W3].tree = mc_worker(4000, 1000, 0x13);
	t[T_W4].tree = mc_worker(4250 * 3, 750 * 3, 0);
	t[T_ASSOC].tree = bg("assoc_maintenance_thread", COND, 5000);
	t[T_CRAWL].tree = bg("item_crawler_thread", COND, 5000);
	t[T_LRU].tree = bg("lru_maintainer_thread", SLEEP, 5000);
	add(t[T_LRU].tree, "clone3;start_thread;lru_maintainer_thread;lru_maintainer_juggle",
	    20 * MS);
	t[T_LOGGER].tree = bg("logger_thread", SLEEP, 5000);
	t[T_TIMEOUT].tree = bg("conn_timeout_thread", SLEEP, 5000);
}

static void free_threads(struct cluster_thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		stacktree__free(t[i].tree);
}

static double dist(const struct stacktree *a, const struct stacktree *b)
{
	return stacktree__distance(a, b);
}

static void test_distance(void)
{
	struct cluster_thread t[T_NR];
	struct stacktree *a = tree(), *b = tree(), *c = tree();
	int sym = 1, range = 1, tri = 1, self = 1;

	add(a, "x;y;z", 10);
	add(b, "p;q", 7);
	ok(dist(a, b) == 1.0, "trees with no frame in common are at 1 (%g)", dist(a, b));
	add(c, "x;y;z", 30);
	ok(dist(a, c) == 0.0, "a tree and its copy with 3x the time are at 0 (%g)", dist(a, c));
	add(c, "x;y;w", 30);
	ok(dist(a, c) > 0 && dist(a, c) < 1, "half the time elsewhere: between (%g)", dist(a, c));
	/* x, y shared at equal shares; z: 1 against 1/2; w: 0 against 1/2. */
	ok(dist(a, c) > 0.166 && dist(a, c) < 0.167, "exactly (0.5 + 0.5) / (3 + 3) = 1/6 (%g)",
	   dist(a, c));
	ok(dist(NULL, NULL) == 0 && dist(a, NULL) == 1, "no tree: like an empty one");
	stacktree__free(a);
	stacktree__free(b);
	stacktree__free(c);

	memcached(t);
	for (unsigned i = 0; i < T_NR; i++)
		for (unsigned j = 0; j < T_NR; j++) {
			double dij = dist(t[i].tree, t[j].tree);

			if (i == j && dij != 0)
				self = 0;
			if (dij != dist(t[j].tree, t[i].tree))
				sym = 0;
			if (dij < 0 || dij > 1)
				range = 0;
			for (unsigned k = 0; k < T_NR; k++)
				if (dij >
				    dist(t[i].tree, t[k].tree) + dist(t[k].tree, t[j].tree) + 1e-12)
					tri = 0;
		}
	ok(self, "0 from every tree to itself");
	ok(sym, "symmetric");
	ok(range, "within [0, 1]");
	ok(tri, "the triangle inequality holds over the memcached threads");
	ok(dist(t[T_W1].tree, t[T_W2].tree) < dist(t[T_W1].tree, t[T_LRU].tree),
	   "two workers are nearer each other (%g) than to a background thread (%g)",
	   dist(t[T_W1].tree, t[T_W2].tree), dist(t[T_W1].tree, t[T_LRU].tree));
	ok(dist(t[T_MAIN].tree, t[T_W1].tree) == 1,
	   "the main thread and a worker share no path from the root (%g)",
	   dist(t[T_MAIN].tree, t[T_W1].tree));
	free_threads(t, T_NR);
}

/* The all-pairs path (an inverted index of call paths, in floats) against the distance
 * of each pair walked tree against tree. */
static void test_all_pairs(void)
{
	struct cluster_thread t[T_NR];
	const struct stacktree *trees[T_NR + 2];
	float d[(T_NR + 2) * (T_NR + 1) / 2];
	double worst = 0;
	unsigned m = T_NR + 2, k = 0;

	memcached(t);
	for (unsigned i = 0; i < T_NR; i++)
		trees[i] = t[i].tree;
	trees[T_NR] = tree(); /* empty */
	trees[T_NR + 1] = tree();
	add((struct stacktree *)trees[T_NR + 1], WORKER ";epoll_wait", 0); /* weighed by count */
	add((struct stacktree *)trees[T_NR + 1], WORKER ";" DRIVE ";read", 0);
	ok(!stacktree__all_pairs(trees, m, d), "all pairs at once");
	for (unsigned i = 0; i < m; i++)
		for (unsigned j = i + 1; j < m; j++, k++) {
			double x = d[k] - dist(trees[i], trees[j]);

			if (x < 0)
				x = -x;
			if (x > worst)
				worst = x;
		}
	ok(worst < 1e-5, "equal to the pair by pair distance within %g", worst);
	ok(d[k - 1] == 1 && dist(trees[T_NR], trees[T_NR + 1]) == 1, "an empty tree is at 1");
	ok(dist(trees[T_NR + 1], t[T_W1].tree) < 0.5,
	   "a tree weighed by counts is near the workers (%g)",
	   dist(trees[T_NR + 1], t[T_W1].tree));
	stacktree__free((struct stacktree *)trees[T_NR]);
	stacktree__free((struct stacktree *)trees[T_NR + 1]);
	free_threads(t, T_NR);
}

static void test_names(void)
{
	struct stacktree *a = tree(), *b = tree();
	const char *names[8];
	unsigned nr;

	add(a, "start;libfoo.so+0x1234;handler+0x1a/0x80;leaf", 10);
	add(b, "start;libfoo.so+0x1234;handler;leaf", 5);
	ok(dist(a, b) == 0, "a symbol's offset and size are cut (%g)", dist(a, b));
	add(b, "start;libfoo.so+0x4000;handler;leaf", 5);
	ok(dist(a, b) > 0, "two call sites in a module without symbols stay apart (%g)",
	   dist(a, b));
	stacktree__free(a);
	stacktree__free(b);

	a = tree();
	b = tree();
	add(a, "start;handler;libfoo.so+0x1234", 10);
	add(b, "start;handler;libfoo.so+0x99", 10);
	ok(dist(a, b) == 0, "a leaf's offset is cut: samples in one module are alike (%g)",
	   dist(a, b));
	nr = stacktree__heaviest(a, names, 8);
	is_int(nr, 3, "three frames");
	is_str(names[2], "libfoo.so", "the leaf module's name without the offset");
	stacktree__free(a);
	stacktree__free(b);

	a = tree();
	b = tree();
	add(a, "start;0x7f0012345678;0x7f0012340000;[unknown];work", 1);
	add(b, "start;0x7fab00000010;work", 1);
	ok(dist(a, b) == 0, "bare addresses are one unknown place (%g)", dist(a, b));
	add(b, "start;0x7fab00000010;0x7fab00000010;work;work", 1);
	ok(dist(a, b) > 0, "a symbol's recursion is kept (%g)", dist(a, b));
	stacktree__free(a);
	stacktree__free(b);
}

static void test_merge_heaviest(void)
{
	struct stacktree *a = tree(), *b = tree(), *ab = tree(), *m = tree();
	const char *names[8];
	unsigned nr;

	add(a, "r;s;t", 10);
	add(a, "r;u", 5);
	add(b, "r;u;v", 30);
	add(ab, "r;s;t", 10);
	add(ab, "r;u", 5);
	add(ab, "r;u;v", 30);
	ok(!stacktree__merge(m, a) && !stacktree__merge(m, b), "merge");
	ok(dist(m, ab) == 0, "merging two trees gives the tree of both paths (%g)", dist(m, ab));
	ok(stacktree__merge(m, m) < 0, "a tree is not merged into itself");
	nr = stacktree__heaviest(m, names, 8);
	ok(nr == 3 && !strcmp(names[0], "r") && !strcmp(names[1], "u") && !strcmp(names[2], "v"),
	   "the heaviest path r;u;v");
	nr = stacktree__heaviest(m, names, 2);
	is_int(nr, 2, "at most max names");
	add(m, "r;s", 100);
	add(m, "r;s;irq", 20);
	nr = stacktree__heaviest(m, names, 8);
	ok(nr == 2 && !strcmp(names[1], "s"),
	   "the path ends where more stacks end than go on to any child (%u frames)", nr);
	is_int(stacktree__heaviest(NULL, names, 8), 0, "no tree: no path");
	stacktree__free(a);
	stacktree__free(b);
	stacktree__free(ab);
	stacktree__free(m);
}

static void test_memcached(void)
{
	struct cluster_thread t[T_NR];
	struct cluster_result r;
	unsigned w = 0;
	int apart = 1;

	memcached(t);
	ok(!cluster__threads(t, T_NR, &r), "cluster memcached's threads");
	w = r.assign[T_W1];
	ok(r.assign[T_W2] == w && r.assign[T_W3] == w && r.assign[T_W4] == w,
	   "the four workers are one cluster though their busy shares and times differ 3x");
	is_int(w, 0, "the workers' cluster, the largest, comes first");
	for (unsigned i = 0; i < T_NR; i++)
		if (i != T_W1 && i != T_W2 && i != T_W3 && i != T_W4 && r.assign[i] == w)
			apart = 0;
	ok(apart, "no other thread is put with the workers");
	ok(r.assign[T_MAIN] != r.assign[T_ASSOC] && r.assign[T_LRU] != r.assign[T_ASSOC] &&
		   r.assign[T_LOGGER] != r.assign[T_ASSOC],
	   "the main thread, a sleeper and a condition waiter are apart");
	ok(r.threshold > dist(t[T_W1].tree, t[T_W2].tree) && r.threshold < 1,
	   "the cut (%g) lies above the workers' spread", r.threshold);
	is_int(r.nr_clusters, 7, "seven clusters: workers, main and five background threads");
	is_int(r.distinct, T_NR, "%d distinct trees", T_NR);
	is_int(r.assign[T_MAIN], 1, "then the smallest tid among singletons: main");
	cluster_result__free(&r);
	free_threads(t, T_NR);
}

/* A thread-per-connection server: a listener in accept, 40 connection threads whose busy
 * share runs evenly from 2% to 80% (no gap inside the role), two background threads. */
static void test_per_connection(void)
{
	struct cluster_thread t[43];
	struct cluster_result r;
	int together = 1;

	memset(t, 0, sizeof(t));
	for (unsigned i = 0; i < 43; i++)
		t[i].tid = 500 + i;
	t[0].tree = tree();
	add(t[0].tree, "_start;main;server_loop;poll;do_sys_poll", 900 * MS);
	add(t[0].tree, "_start;main;server_loop;accept4;inet_csk_accept", 100 * MS);
	for (unsigned i = 1; i <= 40; i++) {
		uint64_t busy = 20 + (i - 1) * 20; /* of 1000 ms */

		t[i].tree = tree();
		add(t[i].tree, "clone3;start_thread;handle_connection;do_command;poll;do_sys_poll",
		    (1000 - busy) * MS);
		add(t[i].tree, "clone3;start_thread;handle_connection;do_command;recv;tcp_recvmsg",
		    busy / 4 * MS);
		add(t[i].tree, "clone3;start_thread;handle_connection;do_command;dispatch;execute",
		    busy / 2 * MS);
		add(t[i].tree, "clone3;start_thread;handle_connection;do_command;send;tcp_sendmsg",
		    busy / 4 * MS);
	}
	t[41].tree = bg("timer_thread", SLEEP, 1000);
	t[42].tree = bg("signal_thread", "sigwaitinfo;do_sigtimedwait", 1000);
	ok(!cluster__threads(t, 43, &r), "cluster a thread-per-connection server");
	for (unsigned i = 2; i <= 40; i++)
		if (r.assign[i] != r.assign[1])
			together = 0;
	ok(together, "the 40 connection threads, 2%% to 80%% busy, are one cluster (cut %g)",
	   r.threshold);
	ok(r.assign[0] != r.assign[1] && r.assign[41] != r.assign[1] &&
		   r.assign[42] != r.assign[1] && r.assign[41] != r.assign[42],
	   "the listener and each background thread apart");
	is_int(r.nr_clusters, 4, "four clusters");
	printf("# the most and least busy connection threads are at %.3f\n",
	       dist(t[1].tree, t[40].tree));
	cluster_result__free(&r);
	free_threads(t, 43);
}

static void test_small(void)
{
	struct cluster_thread t[8];
	struct cluster_result r;

	ok(!cluster__threads(NULL, 0, &r) && r.nr_clusters == 0 && !r.assign, "no thread");

	memset(t, 0, sizeof(t));
	t[0].tid = 7;
	t[0].tree = mc_worker(10, 10, 0);
	ok(!cluster__threads(t, 1, &r), "one thread");
	ok(r.nr_clusters == 1 && r.assign[0] == 0 && r.distinct == 1, "one cluster");
	cluster_result__free(&r);
	stacktree__free(t[0].tree);

	for (unsigned i = 0; i < 8; i++) {
		t[i].tid = 20 - i;
		t[i].tree = mc_worker(100 * (i + 1), 50 * (i + 1), i % 2 ? 0x10 : 0);
	}
	ok(!cluster__threads(t, 8, &r), "eight identical workers (times scaled, offsets)");
	ok(r.nr_clusters == 1 && r.distinct == 1, "one cluster of one distinct tree (%u, %u)",
	   r.nr_clusters, r.distinct);
	cluster_result__free(&r);

	/* Two roles of 5 and 3 identical threads: merged before pairing, then apart. */
	for (unsigned i = 5; i < 8; i++) {
		stacktree__free(t[i].tree);
		t[i].tree = bg("logger_thread", SLEEP, 100 + i);
	}
	t[3].tree = (stacktree__free(t[3].tree), NULL); /* no stack seen at all */
	ok(!cluster__threads(t, 8, &r), "4 workers, 3 sleepers, one thread without stacks");
	is_int(r.distinct, 3, "three distinct trees");
	is_int(r.nr_clusters, 3, "three clusters");
	ok(r.assign[0] == 0 && r.assign[1] == 0 && r.assign[2] == 0 && r.assign[4] == 0 &&
		   r.assign[5] == 1 && r.assign[6] == 1 && r.assign[7] == 1 && r.assign[3] == 2,
	   "largest first; the thread without stacks alone");
	cluster_result__free(&r);
	free_threads(t, 8);
}

static void test_match(void)
{
	struct cluster_thread a[T_NR], b[T_NR];
	const struct stacktree *ca[4], *cb[5];
	struct stacktree *wa = tree(), *wb, *idle;
	int map[5];

	memcached(a);
	memcached(b);
	for (unsigned i = T_W1; i <= T_W4; i++)
		stacktree__merge(wa, a[i].tree);
	/* Run B, under another load: its workers split into a busy cluster and an idle
	 * one, listed in another order, and a background thread run A never had. */
	wb = mc_worker(2000, 3000, 0x77);
	idle = mc_worker(5000, 0, 0);
	ca[0] = wa;
	ca[1] = a[T_MAIN].tree;
	ca[2] = a[T_ASSOC].tree;
	ca[3] = a[T_LRU].tree;
	cb[0] = b[T_LOGGER].tree;
	cb[1] = b[T_ASSOC].tree;
	cb[2] = wb;
	cb[3] = b[T_MAIN].tree;
	cb[4] = idle;
	ok(!cluster__match(ca, 4, cb, 5, map), "match two runs' clusters");
	is_int(map[2], 0, "the busier workers are the workers");
	is_int(map[4], 0, "the idle workers are the workers too");
	is_int(map[3], 1, "main is main");
	is_int(map[1], 2, "the assoc thread is itself");
	is_int(map[0], -1, "the logger, new in run B, matches nothing");
	ok(!cluster__match(ca, 4, cb, 0, map) && !cluster__match(ca, 0, cb, 5, map) &&
		   map[0] == -1 && map[4] == -1,
	   "against an empty run nothing matches");
	stacktree__free(wa);
	stacktree__free(wb);
	stacktree__free(idle);
	free_threads(a, T_NR);
	free_threads(b, T_NR);
}

/* n threads of `kinds` distinct trees: each kind a thread function with its own mix of
 * waits, like a large server's pools. */
static double time_1000(unsigned n, unsigned kinds, unsigned *nr_clusters, unsigned *distinct,
			double *wall)
{
	struct cluster_thread *t = calloc(n, sizeof(*t));
	struct cluster_result r;
	struct timespec t0, t1, c0, c1;
	char path[256];

	for (unsigned i = 0; i < n; i++) {
		unsigned k = i % kinds, role = k % 5;

		t[i].tid = i + 1;
		t[i].tree = tree();
		for (unsigned j = 0; j < 24; j++) {
			snprintf(path, sizeof(path),
				 "clone3;start_thread;pool_%u;run;step_%u;op_%u;sub_%u;lock_%u;"
				 "io_%u;syscall_%u;entry_SYSCALL_64;k_%u;k2_%u;k3_%u",
				 role, j % 3, j % 6, j, j % 5, (j + role) % 7, (j + role) % 4, j,
				 j % 2, j);
			add(t[i].tree, path, (uint64_t)(1 + j) * (1 + k % 7) * MS + k);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	if (cluster__threads(t, n, &r))
		abort();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*nr_clusters = r.nr_clusters;
	*distinct = r.distinct;
	cluster_result__free(&r);
	free_threads(t, n);
	free(t);
	*wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
}

/* The bound is on CPU time: the machine running the tests may be shared by other jobs,
 * which stretch the wall time without saying anything about the clustering. */
static void test_speed(void)
{
	unsigned nr, distinct;
	double s, wall;

	s = time_1000(1000, 50, &nr, &distinct, &wall);
	printf("# 1000 threads, 50 distinct trees: %.3f s CPU (%.3f s wall), %u clusters\n", s,
	       wall, nr);
	ok(s <= 2 && distinct == 50, "1000 threads of 50 trees in %.3f s CPU (<= 2 s)", s);
	s = time_1000(1000, 1000, &nr, &distinct, &wall);
	printf("# 1000 threads, 1000 distinct trees: %.3f s CPU (%.3f s wall), %u clusters\n", s,
	       wall, nr);
	ok(s <= 2 && distinct == 1000, "1000 threads of 1000 trees in %.3f s CPU (<= 2 s)", s);
	is_int(nr, 5, "five roles found among 1000 distinct trees");
}

int main(void)
{
	test_distance();
	test_all_pairs();
	test_names();
	test_merge_heaviest();
	test_memcached();
	test_per_connection();
	test_small();
	test_match();
	test_speed();
	return done_testing();
}
