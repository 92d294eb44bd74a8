/* Syscall sampling: windows of full recording sized to a budget (syssample.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "bpf/record.h"
#include "record/syssample.h"
#include "util/util.h"

static uint64_t counted(const struct syssample *s, uint32_t kind)
{
	uint64_t *v = xcalloc((size_t)s->nr_cpus, sizeof(*v)), n = 0;
	int i;

	if (!bpf_map_lookup_elem(s->counts_fd, &kind, v))
		for (i = 0; i < s->nr_cpus; i++)
			n += v[i];
	free(v);
	return n;
}

/* Sleeps until the monotonic time t; false when stopped meanwhile. */
static bool sleep_until(struct syssample *s, uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
			      .tv_nsec = (long)(t % 1000000000ull)};
	bool stop;

	pthread_mutex_lock(&s->lock);
	while (!s->stop && now_ns() < t)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
			break;
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	return !stop;
}

/* Each period opens a window sized by the targets' syscall rate over the period before:
 * the budget's share of the period at that rate (all of it below the budget). */
static void *windows(void *arg)
{
	struct syssample *s = arg;
	uint64_t now = now_ns(), period_end = now + SYSSAMPLE_FIRST_NS, counted_at = now;
	uint64_t total_then = counted(s, SYSCNT_FULL) + counted(s, SYSCNT_OUT), total, allowed;

	while (sleep_until(s, period_end)) {
		now = now_ns();
		total = counted(s, SYSCNT_FULL) + counted(s, SYSCNT_OUT);
		allowed = s->budget * (now - counted_at) / 1000000000ull;
		/* Below the budget (a load that has not started yet), the rate is looked at
		 * again soon: a whole period at full cost would be a fifth of a short run. */
		period_end = now + (total - total_then > allowed ? SYSSAMPLE_PERIOD_NS
								 : SYSSAMPLE_FIRST_NS);
		*s->between = 0;
		if (total - total_then > allowed &&
		    !sleep_until(s, now + SYSSAMPLE_PERIOD_NS * allowed / (total - total_then)))
			break;
		if (total - total_then > allowed)
			*s->between = 1;
		total_then = total;
		counted_at = now;
	}
	*s->between = 0;
	return NULL;
}

int syssample__start(struct syssample *s, uint64_t budget, int counts_fd, int nr_cpus,
		     volatile uint32_t *between)
{
	pthread_condattr_t ca;
	int err;

	memset(s, 0, sizeof(*s));
	*between = 0;
	if (!budget)
		return 0;
	s->budget = budget;
	s->counts_fd = counts_fd;
	s->nr_cpus = nr_cpus;
	s->between = between;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&s->thread, NULL, windows, s);
	if (err) {
		s->budget = 0;
		error("cannot start the syscall sampling: %s (every syscall is written)",
		      strerror(err));
		return -err;
	}
	s->running = true;
	return 0;
}

void syssample__stop(struct syssample *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->running = false;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}

int syssample__read(const struct syssample *s, struct trace_syscall_sample *out)
{
	memset(out, 0, sizeof(*out));
	if (!s->budget)
		return -ENOENT;
	out->full = counted(s, SYSCNT_FULL);
	out->out = counted(s, SYSCNT_OUT);
	out->budget = s->budget;
	out->period_ns = SYSSAMPLE_PERIOD_NS;
	return 0;
}
