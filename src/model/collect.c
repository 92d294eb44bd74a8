/* One run of 'srvscope model': the recorder follows the server's whole process tree (with
 * every syscall, on-CPU samples and off-CPU stacks) while a load drives it; the load
 * starts once events flow, and its end ends the recording. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/collect.h"
#include "model/model.h"
#include "proc/task.h"
#include "record/ktext.h"
#include "record/record.h"
#include "util/util.h"

/* Shared with the load's thread; on the heap, and left there if that thread never ends. */
struct driver {
	struct collect_opts co;
	struct load_result res;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, done;
	volatile int stop_record; /* the load is over: the recording ends */
	volatile int stop_load;	  /* the recording is over: the load ends */
	int err;		  /* the load's: -errno, or the command's status */
};

static void on_started(void *arg)
{
	struct driver *d = arg;

	pthread_mutex_lock(&d->lock);
	d->started = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static void *drive(void *arg)
{
	struct driver *d = arg;
	const struct collect_opts *co = &d->co;

	pthread_mutex_lock(&d->lock);
	while (!d->started && !d->done)
		pthread_cond_wait(&d->cond, &d->lock);
	pthread_mutex_unlock(&d->lock);
	if (d->done) /* the recording failed before it started */
		return NULL;
	/* The fds opened before: taken once events flow, so none opened or closed in
	 * between is missed (the trace's own records win over the snapshot). */
	if (co->fds)
		model_fds__snapshot(co->pid, co->fds);
	if (co->command) {
		bool stopped;
		int st = load__run_command(co->command, co->spec.duration_s, MODEL_COMMAND_GRACE_S,
					   &stopped);

		d->res.elapsed_s = co->spec.duration_s;
		d->res.command_stopped = stopped;
		if (st < 0)
			d->err = st;
		else if (st && !stopped)
			d->err = st; /* a command's failure: its status */
	} else {
		d->err = load__run(&co->spec, &d->res, &d->stop_load);
	}
	d->stop_record = 1;
	return NULL;
}

/* SRVSCOPE_MODEL_RECORD (comma-separated syscalls=0, args=0, stacks=0, wakers=1, hz=N,
 * refresh=MS, fp, dump=BYTES, budget=N, swwin=0, cost): what the recorder is asked for, item by
 * item, for bench/model.sh to measure what each costs the server (a model recorded without some of
 * it lacks what that item gives, wakers=1 adds what it does not need: docs/model.md). */
#define MODEL_SYSCALL_BUDGET 20000

static void record_overrides(struct record_opts *o)
{
	const char *env = getenv("SRVSCOPE_MODEL_RECORD");
	char buf[256], *tok, *save;

	if (!env || strlen(env) >= sizeof(buf))
		return;
	strcpy(buf, env);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "syscalls=0"))
			o->syscalls = o->syscall_args = false;
		else if (!strcmp(tok, "args=0"))
			o->syscall_args = false;
		else if (!strcmp(tok, "wakers=1"))
			o->no_wakers = false;
		else if (!strcmp(tok, "stacks=0"))
			o->no_stacks = true;
		else if (!strcmp(tok, "fp"))
			o->ustack_dump_bytes = 0;
		else if (!strncmp(tok, "hz=", 3))
			o->on_cpu_hz = (unsigned)strtoul(tok + 3, NULL, 10);
		else if (!strncmp(tok, "refresh=", 8))
			o->stack_refresh_ms = strtod(tok + 8, NULL);
		else if (!strncmp(tok, "budget=", 7))
			o->syscall_budget = strtoull(tok + 7, NULL, 10);
		else if (!strcmp(tok, "swwin=0"))
			o->switch_windows = false;
		else if (!strcmp(tok, "cost"))
			o->cost = true; /* record --cost's table, on stderr after each run */
		else if (!strncmp(tok, "dump=", 5) && o->ustack_dump_bytes)
			o->ustack_dump_bytes = (unsigned)strtoul(tok + 5, NULL, 10);
		else
			warning("SRVSCOPE_MODEL_RECORD: '%s' is not known (syscalls=0, args=0, "
				"stacks=0, wakers=1, hz=N, refresh=MS, fp, dump=BYTES, budget=N, "
				"swwin=0, cost)",
				tok);
	}
}

int model__collect(const struct collect_opts *co, struct load_result *res, int *load_err)
{
	pid_t pid = co->pid;
	struct driver *d = xcalloc(1, sizeof(*d));
	struct record_opts o = {
		.pids = &pid,
		.nr_pids = 1,
		.duration = co->spec.duration_s + 15,
		.output = co->trace_path,
		.force = true,
		.buffer_size = 64u << 20,
		.on_cpu_hz = 99,
		.ustack_dump_bytes = co->dwarf ? RECORD_DEFAULT_DUMP_SIZE : 0,
		.syscalls = true,
		.syscall_args = true,
		/* A busy server's syscalls are written in full in windows of each 500 ms
		 * period that hold this many a second (more than any of the model's default
		 * loads makes): the per-request profile needs thousands of requests, not
		 * every one, and each syscall written costs the server. */
		.syscall_budget = MODEL_SYSCALL_BUDGET,
		/* And the busy threads' switches with them: where a thread waits, and for
		 * how long against its time, is as well read from the windows. */
		.switch_windows = true,
		/* Clustering and the network model read where threads wait, never who woke
		 * them: the wakers' stacks would cost a check or a walk per wake-up. */
		.no_waker_stacks = true,
		/* Nor the wakings at all: the waits end at the switch-in, and the two programs
		 * a wake-up (with those at every interrupt's entry and exit) are not run. */
		.no_wakers = true,
		.stack_refresh_ms = 100,
		.progress = 0,
		.cmdline = "srvscope model",
		.started = on_started,
		.started_arg = d,
		.stop = &d->stop_record,
		.kallsyms = co->kallsyms,
	};
	struct timespec until;
	pthread_t th;
	int err, st;

	record_overrides(&o);
	d->co = *co;
	memset(res, 0, sizeof(*res));
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if ((err = pthread_create(&th, NULL, drive, d))) {
		error("cannot start the load: %s", strerror(err));
		free(d);
		return -err;
	}
	err = record__run(&o, &st);
	pthread_mutex_lock(&d->lock);
	d->done = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	d->stop_load = 1;
	/* A load bounds itself (its duration, a second to drain, a command's grace): one that
	 * has not ended well after is stuck, and must not hold the model. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)co->spec.duration_s + 10;
	if (pthread_timedjoin_np(th, NULL, &until)) {
		error("the load did not end within %.0f s of the recording: the model describes "
		      "the runs before it",
		      co->spec.duration_s + 10);
		pthread_detach(th);
		*load_err = -ETIMEDOUT;
		return err ? err : -ETIMEDOUT; /* d stays: the thread still uses it */
	}
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	*res = d->res;
	*load_err = d->err;
	free(d);
	return err;
}

struct ktext_copy *model__kallsyms_read(void)
{
	struct ktext_copy *k = xcalloc(1, sizeof(*k));
	int err = ktext__copy_read(k);

	if (!err)
		return k;
	notice("cannot read /proc/kallsyms before the runs (%s): each run will try",
	       strerror(-err));
	free(k);
	return NULL;
}

void model__kallsyms_free(struct ktext_copy *k)
{
	if (!k)
		return;
	ktext__copy_free(k);
	free(k);
}

/* The same, summed over the threads tids. */
static int threads_sched(const uint32_t *tids, size_t n, uint64_t *ns, uint64_t *wakes)
{
	uint64_t v, w;
	size_t i;
	int err;

	*ns = *wakes = 0;
	for (i = 0; i < n; i++) {
		if ((err = proc_task__sched(tids[i], &v, &w)))
			return err;
		*ns += v;
		*wakes += w;
	}
	return 0;
}

int model__cpu_unrecorded(const struct collect_opts *co, const uint32_t *tids, size_t n,
			  unsigned slices, struct model_cpu_run *out)
{
	static const volatile int no_stop;
	struct load_spec spec = co->spec;
	struct model_cpu_run sl[MODEL_CPU_SLICES_MAX], t;
	double order[MODEL_CPU_SLICES_MAX] = {0};
	struct load_result res;
	uint64_t t0, t1, k0, k1, total = 0;
	int err, i, j;

	if (!n)
		return -ESRCH;
	if (!slices || slices > MODEL_CPU_SLICES_MAX)
		return -EINVAL;
	/* The median of a few slices: a moment when the machine's other work slows the
	 * threads (their CPU per request doubles on a busy 2-core machine) weighs on one. The
	 * keys were stored by the recorded runs: storing them again would be CPU that no
	 * completed request pays for. */
	spec.duration_s /= slices;
	spec.no_prefill = true;
	/* One slice's load first, not counted: after a pause (the recorder's end, the
	 * model's analysis) the first slice is often the dearest (nginx at 2000 req/s after
	 * 5 s idle, no recorder: 29.0, 31.9, 22.0, 22.2 us against 18.3 to 24.5 in the
	 * slices after it; after the recorder, 27.9, 29.4 and 26.7 in three models of five). */
	if ((err = load__run(&spec, &res, &no_stop)))
		return err;
	for (i = 0; i < (int)slices; i++) {
		if ((err = threads_sched(tids, n, &t0, &k0)))
			return err;
		if ((err = load__run(&spec, &res, &no_stop)))
			return err;
		if ((err = threads_sched(tids, n, &t1, &k1)))
			return err;
		if (!res.completed)
			return -ENODATA;
		total += res.completed;
		order[i] = (double)(t1 - t0) / 1e3 / (double)res.completed;
		sl[i] = (struct model_cpu_run){
			.cpu_us = order[i],
			.wakeups = (double)(k1 - k0) / (double)res.completed,
		};
		for (j = i; j > 0 && sl[j - 1].cpu_us > sl[j].cpu_us; j--) {
			t = sl[j - 1];
			sl[j - 1] = sl[j];
			sl[j] = t;
		}
	}
	*out = sl[slices / 2];
	memcpy(out->slice_cpu_us, order, sizeof(order));
	out->nr_slices = slices;
	out->conns = co->spec.conns;
	out->rate = co->spec.rate;
	out->requests = total;
	return 0;
}

/* ---- a bare sleeper: what a wake-up alone costs ---- */

struct wake_floor {
	pthread_t th;
	uint64_t period_ns;
	volatile int stop;
	uint64_t wakes, cpu_ns;
};

static void *sleeper(void *arg)
{
	struct wake_floor *w = arg;
	struct timespec ts = {.tv_sec = (time_t)(w->period_ns / 1000000000),
			      .tv_nsec = (long)(w->period_ns % 1000000000)};
	uint64_t t0, n = 0;

	/* The CPU time of the first sleep's start is not a wake-up's: counted from its end. */
	nanosleep(&ts, NULL);
	t0 = thread_cpu_ns();
	while (!w->stop) {
		nanosleep(&ts, NULL);
		n++;
	}
	w->cpu_ns = thread_cpu_ns() - t0;
	w->wakes = n;
	return NULL;
}

struct wake_floor *model__wake_floor_start(double period_ms)
{
	struct wake_floor *w;

	if (!(period_ms >= 0.05 && period_ms <= 1000))
		return NULL;
	w = xcalloc(1, sizeof(*w));
	w->period_ns = (uint64_t)(period_ms * 1e6);
	if (pthread_create(&w->th, NULL, sleeper, w)) {
		free(w);
		return NULL;
	}
	return w;
}

double model__wake_floor_stop(struct wake_floor *w)
{
	double us;

	if (!w)
		return 0;
	w->stop = 1;
	pthread_join(w->th, NULL);
	us = w->wakes >= 10 ? w->cpu_ns / 1e3 / w->wakes : 0;
	free(w);
	return us;
}
