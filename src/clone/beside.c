/* The original beside its skeleton: the clone of its model spinning nothing and the
 * original itself, loaded at once by the same built-in load, their network threads' CPU
 * per request compared slice by slice. The ratio is what the original's own code adds to
 * the structure a clone reproduces (its syscalls, wake-ups, hand-offs), measured where
 * both see the same machine: a clone that aims at it follows the machine as the original
 * does, where one aimed at the model's microseconds is off by whatever the machine did
 * since (docs/clone.md). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clone/child.h"
#include "clone/clone.h"
#include "load/load.h"
#include "model/model.h"
#include "proc/task.h"
#include "util/util.h"

#define GONE UINT64_MAX

struct side {
	struct load_spec spec;
	struct load_result res;
	int err;
	pthread_t th;
};

static void *side_load(void *arg)
{
	static const volatile int no_stop;
	struct side *s = arg;

	s->err = load__run(&s->spec, &s->res, &no_stop);
	return NULL;
}

/* Both loads at once (the skeleton's in a thread). Returns 0 or the first error. */
static int both(struct side *orig, struct side *skel)
{
	if (pthread_create(&skel->th, NULL, side_load, skel))
		return -EAGAIN;
	side_load(orig);
	pthread_join(skel->th, NULL);
	if (orig->err || skel->err)
		return orig->err ? orig->err : skel->err;
	return orig->res.completed && skel->res.completed ? 0 : -ENODATA;
}

/* Each thread's CPU nanoseconds so far, GONE for one that has exited. */
static void sched_all(const uint32_t *tids, size_t n, uint64_t *ns)
{
	uint64_t w;
	size_t i;

	for (i = 0; i < n; i++)
		if (proc_task__sched((pid_t)tids[i], &ns[i], &w))
			ns[i] = GONE;
}

/* The CPU the threads took between a and b, those there at both ends; *gone counts the
 * others. */
static uint64_t took(const uint64_t *a, const uint64_t *b, size_t n, size_t *gone)
{
	uint64_t sum = 0;
	size_t i;

	*gone = 0;
	for (i = 0; i < n; i++) {
		if (a[i] == GONE || b[i] == GONE || b[i] < a[i]) {
			(*gone)++;
			continue;
		}
		sum += b[i] - a[i];
	}
	return sum;
}

static int by_ratio(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The slices' ratios spread wide: their quartiles more than a quarter of the median
 * apart. The machine's other work then moves one side more than the other from slice to
 * slice (redis: 0.73 to 1.72 in seven slices, where the next three models read 1.08 to
 * 1.33), and the median of a few is a draw between its states: as many slices again. */
static bool spread_wide(const double *ratio, unsigned n)
{
	double order[MODEL_BESIDE_SLICES];

	memcpy(order, ratio, n * sizeof(*order));
	qsort(order, n, sizeof(*order), by_ratio);
	return order[3 * n / 4] - order[n / 4] > order[n / 2] / 4;
}

static int measure(const struct clone_counts *counts, const uint32_t *tids, size_t n,
		   struct side *orig, struct side *skel, unsigned slices, int (*stopped)(void),
		   struct model_beside *out)
{
	uint64_t *o0 = xcalloc(n, sizeof(*o0)), *o1 = xcalloc(n, sizeof(*o1));
	uint64_t s0[CLONE_COUNTS_TIDS], s1[CLONE_COUNTS_TIDS];
	uint32_t stids[CLONE_COUNTS_TIDS];
	double order[MODEL_BESIDE_SLICES], o_us[MODEL_BESIDE_SLICES], s_us[MODEL_BESIDE_SLICES];
	size_t ns, gone;
	unsigned i, j, total = slices;
	int err;

	/* one slice's load first, not counted: the skeleton has just started, and after a
	 * pause the first slice is often the dearest (model__cpu_unrecorded) */
	if ((err = both(orig, skel)))
		goto out;
	for (i = 0; i < total; i++) {
		if (stopped && stopped()) {
			err = -EINTR;
			goto out;
		}
		ns = clone_child__net_tids(counts, stids);
		sched_all(tids, n, o0);
		sched_all(stids, ns, s0);
		if ((err = both(orig, skel)))
			goto out;
		sched_all(tids, n, o1);
		sched_all(stids, ns, s1);
		o_us[i] = took(o0, o1, n, &gone) / 1e3 / (double)orig->res.completed;
		if (gone) {
			err = -ESRCH;
			goto out;
		}
		s_us[i] = took(s0, s1, ns, &gone) / 1e3 / (double)skel->res.completed;
		if (!ns || !(s_us[i] > 0) || !(o_us[i] > 0)) {
			err = -ENODATA;
			goto out;
		}
		out->slice_ratio[i] = o_us[i] / s_us[i];
		out->requests += orig->res.completed;
		out->skeleton_requests += skel->res.completed;
		if (i + 1 == slices && spread_wide(out->slice_ratio, slices) &&
		    2 * slices <= MODEL_BESIDE_SLICES)
			total = 2 * slices;
	}
	memcpy(order, out->slice_ratio, total * sizeof(*order));
	qsort(order, total, sizeof(*order), by_ratio);
	out->ratio = order[total / 2];
	for (j = 0; j < total; j++)
		if (out->slice_ratio[j] == out->ratio) {
			out->original_us = o_us[j];
			out->skeleton_us = s_us[j];
			break;
		}
	out->nr_slices = total;
out:
	free(o0);
	free(o1);
	return err;
}

int clone__beside(const struct clone_model *m, const struct load_spec *spec, const uint32_t *tids,
		  size_t n, unsigned slices, int (*stopped)(void), struct model_beside *out)
{
	struct clone_opts o = {.listen_addr = "127.0.0.1", .port = 0, .quiet = true};
	struct clone_model *skeleton;
	struct clone_counts *counts;
	struct side orig = {.spec = *spec}, skel = {.spec = *spec};
	pid_t pid;
	int port, err;

	memset(out, 0, sizeof(*out));
	if (!n || !slices || slices > MODEL_BESIDE_SLICES)
		return -EINVAL;
	out->conns = spec->conns;
	out->rate = spec->rate;
	/* spinning nothing at any load: no aim */
	skeleton = xmalloc(sizeof(*skeleton));
	*skeleton = *m;
	skeleton->on_cpu_us_per_request = 0;
	skeleton->cpu_line = false;
	skeleton->cpu_ratio = 0;
	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		      0);
	if (counts == MAP_FAILED) {
		free(skeleton);
		return -ENOMEM;
	}
	if ((err = clone_child__start(skeleton, &o, counts, &pid, &port)))
		goto out;
	snprintf(skel.spec.target.host, sizeof(skel.spec.target.host), "%s", o.listen_addr);
	skel.spec.target.port = (uint16_t)port;
	err = measure(counts, tids, n, &orig, &skel, slices, stopped, out);
	if (clone_child__stop(pid) && !err)
		err = -EIO;
out:
	munmap(counts, sizeof(*counts));
	free(skeleton);
	return err;
}
