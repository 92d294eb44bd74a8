// SPDX-License-Identifier: GPL-2.0
#include "bpf/record.h"
#include "record/cost.h"
#include "util/util.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int prog_stats(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

void record_cost__start(struct record_cost *c, struct bpf_object *obj)
{
	struct bpf_program *prog;

	memset(c, 0, sizeof(*c));
	/* Held by this fd: the statistics (a few ns per run) end with the recording, and
	 * kernel.bpf_stats_enabled is left as it was. */
	c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	bpf_object__for_each_program(prog, obj)
	{
		int fd = bpf_program__fd(prog);

		if (fd < 0 || c->nr == COST_PROGS)
			continue;
		c->p[c->nr].fd = fd;
		c->p[c->nr].name = bpf_program__name(prog);
		if (!prog_stats(fd, &c->p[c->nr].cnt, &c->p[c->nr].ns))
			c->nr++;
	}
	c->start_ns = now_ns();
	getrusage(RUSAGE_SELF, &c->start_ru);
}

void record_cost__running(struct record_cost *c)
{
	c->run_ns = now_ns();
	getrusage(RUSAGE_SELF, &c->run_ru);
}

void record_cost__tick(struct record_cost *c, uint64_t now)
{
	if (c->run_ns && !c->warm_ns && now - c->run_ns >= 1000000000ull) {
		c->warm_ns = now;
		getrusage(RUSAGE_SELF, &c->warm_ru);
	}
}

static double tv_ms(const struct timeval *a, const struct timeval *b)
{
	return (b->tv_sec - a->tv_sec) * 1e3 + (b->tv_usec - a->tv_usec) / 1e3;
}

static double ru_ms(const struct rusage *a, const struct rusage *b)
{
	return tv_ms(&a->ru_utime, &b->ru_utime) + tv_ms(&a->ru_stime, &b->ru_stime);
}

/* The recorder's own time once started, per second of that: from its second second when
 * the recording lasted that long (record_cost__tick), its start-up (the snapshot, a fifth
 * of a second compressing the kernel's symbols) and first second once, apart: over a 5 s
 * recording the start-up had tripled the figure per second, and over 3 s the first second
 * had quadrupled it (80 ms a second, where /proc showed 18 from then on). ru: now; secs:
 * since record_cost__start. */
static void report_recorder(const struct record_cost *c, const struct rusage *ru, double secs)
{
	const struct rusage *from = c->warm_ns	? &c->warm_ru
				    : c->run_ns ? &c->run_ru
						: &c->start_ru;
	uint64_t since = c->warm_ns ? c->warm_ns : c->run_ns;
	double rsecs = since ? (now_ns() - since) / 1e9 : secs;
	double user = tv_ms(&from->ru_utime, &ru->ru_utime);
	double sys = tv_ms(&from->ru_stime, &ru->ru_stime);

	if (rsecs <= 0)
		rsecs = 1e-9;
	fprintf(stderr, "  %-26s %12s %9s %10.2f (user %.2f, system %.2f)%s\n", "recorder process",
		"", "", (user + sys) / rsecs, user / rsecs, sys / rsecs,
		c->warm_ns ? ", after its first second" : "");
	if (c->run_ns)
		fprintf(stderr, "  %-26s %12s %9s %10.0f ms once\n", "recorder start-up", "", "",
			ru_ms(&c->start_ru, &c->run_ru));
	if (c->warm_ns)
		fprintf(stderr, "  %-26s %12s %9s %10.0f ms once\n", "recorder first second", "",
			"", ru_ms(&c->run_ru, &c->warm_ru));
}

/* Counter key of the stack caches' map (enum cache_stat), summed over the CPUs; 0 when it
 * cannot be read. */
static uint64_t cache_sum(int fd, uint32_t key, int nr_cpus)
{
	uint64_t *v = calloc(nr_cpus, sizeof(*v)), sum = 0;
	int cpu;

	if (v && !bpf_map_lookup_elem(fd, &key, v))
		for (cpu = 0; cpu < nr_cpus; cpu++)
			sum += v[cpu];
	free(v);
	return sum;
}

/* The stack caches' counters, in enum cache_stat's order. */
static void report_caches(int fd, int nr_cpus, double secs)
{
	static const char *const names[CS_NR] = {
		"kernel stacks checked", "kernel stacks reused",  "kernel stacks walked",
		"kernel words scanned",	 "user stacks reused",	  "user stacks taken",
		"user stacks pending",	 "switches kept between", "switches left out",
	};
	uint32_t i;

	for (i = 0; i < CS_NR; i++)
		fprintf(stderr, "  %-26s %12.0f/s\n", names[i], cache_sum(fd, i, nr_cpus) / secs);
}

uint64_t record_cost__pending(int cache_fd, int nr_cpus)
{
	return cache_sum(cache_fd, CS_UPENDING, nr_cpus);
}

void record_cost__report(struct record_cost *c, int cache_fd, int nr_cpus)
{
	double secs = (now_ns() - c->start_ns) / 1e9, total = 0;
	struct rusage ru;
	int i;

	getrusage(RUSAGE_SELF, &ru);
	if (secs <= 0)
		secs = 1e-9;
	if (c->stats_fd < 0)
		fprintf(stderr, "srvscope: --cost: the kernel's BPF run-time statistics could "
				"not be enabled: BPF programs not measured\n");
	else
		fprintf(stderr,
			"srvscope: cost per second of recording (%.1f s):\n"
			"  %-26s %12s %9s %10s\n",
			secs, "BPF program", "runs/s", "ns/run", "CPU ms/s");
	for (i = 0; i < c->nr && c->stats_fd >= 0; i++) {
		uint64_t cnt, ns;

		if (prog_stats(c->p[i].fd, &cnt, &ns) || cnt == c->p[i].cnt)
			continue;
		cnt -= c->p[i].cnt;
		ns -= c->p[i].ns;
		total += ns;
		fprintf(stderr, "  %-26s %12.0f %9.0f %10.2f\n", c->p[i].name, cnt / secs,
			(double)ns / cnt, ns / 1e6 / secs);
	}
	if (c->stats_fd >= 0)
		fprintf(stderr, "  %-26s %12s %9s %10.2f\n", "all BPF programs", "", "",
			total / 1e6 / secs);
	report_recorder(c, &ru, secs);
	report_caches(cache_fd, nr_cpus, secs);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	c->stats_fd = -1;
}
