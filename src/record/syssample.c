/* Syscall sampling: windows of full recording sized to a budget (syssample.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/record.h"
#include "record/syssample.h"
#include "util/util.h"

void syssample__start(struct syssample *s, uint64_t budget, int counts_fd, int nr_cpus,
		      volatile uint32_t *between, uint64_t now)
{
	memset(s, 0, sizeof(*s));
	s->budget = budget;
	s->counts_fd = counts_fd;
	s->nr_cpus = nr_cpus;
	s->between = between;
	s->period_start = now - (SYSSAMPLE_PERIOD_NS - SYSSAMPLE_FIRST_NS);
	s->last_tick = s->counted_at = now;
	s->window_end = UINT64_MAX; /* the first period is all window: it measures the rate */
	*between = 0;
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

void syssample__tick(struct syssample *s, uint64_t now)
{
	uint64_t total, allowed;

	if (!s->budget)
		return;
	if (now - s->period_start >= SYSSAMPLE_PERIOD_NS) {
		/* The targets' syscall rate since the last count sizes the next window: the
		 * budget's share of a period at that rate. */
		total = counted(s, SYSCNT_FULL) + counted(s, SYSCNT_OUT);
		allowed = s->budget * (now - s->counted_at) / 1000000000ull;
		s->window_end =
			total - s->total_then <= allowed
				? UINT64_MAX
				: now + SYSSAMPLE_PERIOD_NS * allowed / (total - s->total_then);
		s->total_then = total;
		s->counted_at = now;
		s->period_start = now;
		s->last_tick = now;
		*s->between = 0;
		return;
	}
	/* Ticks come tens of milliseconds apart: the window closes at the tick nearest its
	 * end, not the first one after it. */
	if (!*s->between && now + (now - s->last_tick) / 2 >= s->window_end)
		*s->between = 1;
	s->last_tick = now;
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
