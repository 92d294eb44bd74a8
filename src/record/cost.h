/* SPDX-License-Identifier: GPL-2.0 */
/* What a recording costs: the CPU time of each BPF program (the kernel's run-time
 * statistics, enabled for the recording's span) and the recorder's own. */
#ifndef SRVSCOPE_RECORD_COST_H
#define SRVSCOPE_RECORD_COST_H

#include <stdint.h>
#include <sys/resource.h>

struct bpf_object;

#define COST_PROGS 64

struct record_cost {
	int stats_fd; /* holds the kernel's statistics on; -1 when they could not be */
	uint64_t start_ns;
	struct rusage start_ru;
	/* from the end of the start-up (record_cost__running): the recorder's steady cost */
	uint64_t run_ns;
	struct rusage run_ru;
	/* a second after that (record_cost__tick): the first unwinds and object loads behind */
	uint64_t warm_ns;
	struct rusage warm_ru;
	int nr;
	struct {
		int fd;
		const char *name;
		uint64_t cnt, ns; /* at the start */
	} p[COST_PROGS];
};

/* Turns the statistics on and notes where every program of obj stands. */
void record_cost__start(struct record_cost *c, struct bpf_object *obj);
/* The start-up is done (the targets' snapshot, the kernel's symbols written, the command
 * started): the recorder's own CPU is counted per second from here, its start-up apart. */
void record_cost__running(struct record_cost *c);
/* From the recorder's loop: a second after record_cost__running, the recorder's CPU is
 * counted from there (its first second, the first stacks unwound and their objects loaded,
 * cost a third of a 3 s recording's total once), the first second apart. */
void record_cost__tick(struct record_cost *c, uint64_t now_ns);
/* Prints, on stderr, each program's runs and time since the start, the recorder's CPU
 * time, per second of recording, and what the stack caches did (the BPF side's per-CPU
 * counters, map cache_fd, in the order of record.bpf.c's CS_*); then turns the statistics
 * off. */
void record_cost__report(struct record_cost *c, int cache_fd, int nr_cpus);
/* The waits recorded without their user stack because a ring was more than half full
 * (record.bpf.c ring_half_full), all CPUs together; counted with or without --cost. */
uint64_t record_cost__pending(int cache_fd, int nr_cpus);

#endif
