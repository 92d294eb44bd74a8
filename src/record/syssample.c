/* Syscall sampling: windows of full recording sized to a budget (syssample.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

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

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/* Destroys n links at once: closing a syscall tracepoint's perf event waits for grace
 * periods (70 ms or so each here), which closes made together share: 38 one after the
 * other took 2.7 s. */
static void destroy_links(struct bpf_link **links, int n)
{
	pthread_t *t = xcalloc((size_t)n, sizeof(*t));
	bool *started = xcalloc((size_t)n, sizeof(*started));
	int i;

	for (i = 0; i < n; i++)
		started[i] = !pthread_create(&t[i], NULL, destroy_link, links[i]);
	for (i = 0; i < n; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		else
			bpf_link__destroy(links[i]);
	}
	free(started);
	free(t);
}

/* The fd syscalls (record.bpf.c fd_lifecycle), by their tracepoints' names. */
static const char *const fd_syscalls[] = {
	"open",	    "close",	      "dup",	      "dup2",	   "socket",
	"accept",   "fcntl",	      "epoll_create", "epoll_ctl", "openat",
	"signalfd", "timerfd_create", "eventfd",      "accept4",   "signalfd4",
	"eventfd2", "epoll_create1",  "dup3",	      "openat2",
};

/* Split: fd_exit on each fd syscall's exit tracepoint that this kernel has. False (nothing
 * left attached) when it has none: no tracefs, or no syscall tracepoints. */
static bool fd_attach(struct syssample *s)
{
	char name[64];
	size_t i;

	s->fd_links = xcalloc(ARRAY_SIZE(fd_syscalls), sizeof(*s->fd_links));
	for (i = 0; i < ARRAY_SIZE(fd_syscalls); i++) {
		struct bpf_link *l;

		snprintf(name, sizeof(name), "sys_exit_%s", fd_syscalls[i]);
		l = bpf_program__attach_tracepoint(s->progs.fd_exit, "syscalls", name);
		if (l)
			s->fd_links[s->nr_fd_links++] = l;
	}
	return s->nr_fd_links > 0;
}

/* Opens (between = 0) or closes a window; split, with sys_exit attached while it is open
 * (a new generation first: an exit seen then of a syscall entered before is not written).
 * An attach that fails leaves the window closed: the fd syscalls alone are written. */
static void window(struct syssample *s, bool open)
{
	if (open && s->progs.sw_period)
		(*s->progs.sw_period)++;
	/* Split from the first window's close: a recording that never samples (a load
	 * below the budget) attaches nothing more, and closes nothing slow at its end. */
	if (!open && s->progs.split && !s->nr_fd_links && !s->fd_tried) {
		s->fd_tried = true;
		if (fd_attach(s))
			*s->progs.split = 1;
		else
			notice("syscall sampling: this kernel's syscall tracepoints cannot be had "
			       "(tracefs): every syscall's exit is looked at, which costs more");
	}
	if (!s->progs.split || !*s->progs.split) {
		*s->between = !open;
		return;
	}
	if (open == !!s->exit_link)
		return;
	if (open) {
		(*s->progs.gen)++;
		s->exit_link = bpf_program__attach(s->progs.sys_exit);
		if (s->exit_link)
			*s->between = 0;
	} else {
		*s->between = 1;
		bpf_link__destroy(s->exit_link);
		s->exit_link = NULL;
	}
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
		window(s, true);
		if (total - total_then > allowed &&
		    !sleep_until(s, now + SYSSAMPLE_PERIOD_NS * allowed / (total - total_then)))
			break;
		if (total - total_then > allowed)
			window(s, false);
		total_then = total;
		counted_at = now;
	}
	window(s, true);
	return NULL;
}

int syssample__start(struct syssample *s, uint64_t budget, int counts_fd, int nr_cpus,
		     volatile uint32_t *between, const struct syssample_progs *progs)
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
	if (progs) {
		s->progs = *progs;
		*s->progs.split = 0;
		s->exit_link = bpf_program__attach(progs->sys_exit);
		if (!s->exit_link) {
			s->budget = 0;
			return error("cannot attach to the syscalls' exits: %s", strerror(errno));
		}
	}
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
	bpf_link__destroy(s->exit_link);
	s->exit_link = NULL;
	destroy_links(s->fd_links, s->nr_fd_links);
	s->nr_fd_links = 0;
	free(s->fd_links);
	s->fd_links = NULL;
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
