/* Syscall sampling: windows of full recording sized to a budget (syssample.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/record.h"
#include "record/syssample.h"
#include "util/util.h"

/* Whether the trace event a program's section names exists (tracefs, where it is). */
static bool event_exists(const char *sec)
{
	static const char *const roots[] = {"/sys/kernel/tracing/events",
					    "/sys/kernel/debug/tracing/events"};
	char path[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(roots); i++) {
		snprintf(path, sizeof(path), "%s/%s", roots[i], sec + strlen("tracepoint/"));
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

bool syssample__prepare(struct bpf_object *obj, uint64_t budget)
{
	struct bpf_program *p;
	bool all = budget > 0;

	bpf_object__for_each_program(p, obj) if (!strncmp(bpf_program__name(p), "fd_", 3) &&
						 !event_exists(bpf_program__section_name(p))) all =
		false;
	bpf_object__for_each_program(p, obj) if (!strncmp(bpf_program__name(p), "fd_", 3))
		bpf_program__set_autoload(p, all);
	return all;
}

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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Time in the current state, into its total. */
static void account(struct syssample *s, uint64_t now)
{
	if (*s->between)
		s->between_ns += now - s->since;
	else
		s->window_ns += now - s->since;
	s->since = now;
}

/* sys_enter and sys_exit attached again (false: detached). A failure leaves them attached
 * from then on: every syscall written between windows again, as without fd events. */
static void set_attached(struct syssample *s, bool on)
{
	int i;

	if (!s->detach)
		return;
	for (i = 0; i < 2; i++) {
		if (on && !*s->links[i]) {
			*s->links[i] = bpf_program__attach(s->progs[i]);
			if (!*s->links[i]) {
				warning("cannot attach to the syscalls again (%s): every "
					"syscall is traced from now on",
					strerror(errno));
				s->detach = false;
				*s->links[i ^ 1] = *s->links[i ^ 1]
							   ? *s->links[i ^ 1]
							   : bpf_program__attach(s->progs[i ^ 1]);
				return;
			}
		} else if (!on && *s->links[i]) {
			bpf_link__destroy(*s->links[i]);
			*s->links[i] = NULL;
		}
	}
}

void syssample__start(struct syssample *s, uint64_t budget, bool detach, int counts_fd, int nr_cpus,
		      volatile uint32_t *between, volatile uint64_t *window_start,
		      struct bpf_program *enter, struct bpf_link **enter_link,
		      struct bpf_program *exit, struct bpf_link **exit_link, uint64_t now)
{
	memset(s, 0, sizeof(*s));
	s->budget = budget;
	s->detach = budget && detach;
	s->counts_fd = counts_fd;
	s->nr_cpus = nr_cpus;
	s->between = between;
	s->window_start = window_start;
	s->progs[0] = enter;
	s->progs[1] = exit;
	s->links[0] = enter_link;
	s->links[1] = exit_link;
	s->period_start = now - (SYSSAMPLE_PERIOD_NS - SYSSAMPLE_FIRST_NS);
	s->last_tick = s->opened_at = s->since = now;
	s->window_end = UINT64_MAX; /* the first period is all window: it measures the rate */
	*between = 0;
}

void syssample__tick(struct syssample *s, uint64_t now)
{
	uint64_t full;

	if (!s->budget)
		return;
	if (now - s->period_start >= SYSSAMPLE_PERIOD_NS) {
		/* A window opens, sized by the rate the last one saw: the budget's share of
		 * a period at that rate. */
		if (!*s->between) { /* the window ran on: measure it */
			full = counted(s, SYSCNT_FULL);
			if (now > s->opened_at)
				s->rate = (full - s->full_then) * 1000000000ull /
					  (now - s->opened_at);
			account(s, now);
		} else {
			/* Attaching can wait for a grace period (a tracepoint going from one
			 * probe to two again): the window opens once it is done. */
			set_attached(s, true);
			now = mono_ns();
			account(s, now);
			*s->window_start = now;
			*s->between = 0;
		}
		s->window_end = s->rate <= s->budget
					? UINT64_MAX
					: now + SYSSAMPLE_PERIOD_NS * s->budget / s->rate;
		s->period_start = s->opened_at = s->last_tick = now;
		s->full_then = counted(s, SYSCNT_FULL);
		return;
	}
	/* Ticks come tens of milliseconds apart: the window closes at the tick nearest its
	 * end, not the first one after it. */
	if (!*s->between && now + (now - s->last_tick) / 2 >= s->window_end) {
		full = counted(s, SYSCNT_FULL);
		if (now > s->opened_at)
			s->rate = (full - s->full_then) * 1000000000ull / (now - s->opened_at);
		account(s, now);
		*s->between = 1;
		set_attached(s, false);
	}
	s->last_tick = now;
}

int syssample__read(const struct syssample *s, uint64_t now, struct trace_syscall_sample *out)
{
	memset(out, 0, sizeof(*out));
	if (!s->budget)
		return -ENOENT;
	out->window_ns = s->window_ns + (*s->between ? 0 : now - s->since);
	out->between_ns = s->between_ns + (*s->between ? now - s->since : 0);
	out->full = counted(s, SYSCNT_FULL);
	out->out = counted(s, SYSCNT_OUT);
	out->budget = s->budget;
	out->period_ns = SYSSAMPLE_PERIOD_NS;
	return 0;
}

struct doomed {
	struct bpf_link *links[64];
	int n;
};

static void *destroy_links(void *arg)
{
	struct doomed *d = arg;
	int i;

	for (i = 0; i < d->n; i++)
		bpf_link__destroy(d->links[i]);
	free(d);
	return NULL;
}

void syssample__detach_events(struct bpf_object_skeleton *skel)
{
	struct doomed *d = xcalloc(1, sizeof(*d));
	pthread_t th;
	int i;

	for (i = 0; i < skel->prog_cnt && d->n < (int)ARRAY_SIZE(d->links); i++) {
		struct bpf_link **l = skel->progs[i].link;

		if (strncmp(skel->progs[i].name, "fd_", 3) || !l || !*l)
			continue;
		d->links[d->n++] = *l;
		*l = NULL;
	}
	/* Closing a syscall event waits for grace periods, one event after the other: 1.5 s
	 * for the 38 here. Their programs return at once already (the recording is
	 * stopping), so that is left to a thread while the caller goes on. */
	if (!d->n || pthread_create(&th, NULL, destroy_links, d)) {
		destroy_links(d);
		return;
	}
	pthread_detach(th);
}
