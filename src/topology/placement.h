/* 'topology -p': where a process's threads ran during a window, from a cpu profile. */
#ifndef SRVSCOPE_TOPOLOGY_PLACEMENT_H
#define SRVSCOPE_TOPOLOGY_PLACEMENT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "topology/topology.h"

struct cpu_profile;

struct placement {
	long long *mig0; /* migrations of each profile thread at the start */
	size_t nr_mig0, cap_mig0;
};

/* Takes the threads' migration counts at the start (after cpu_proc__start). */
void placement__start(struct placement *pl, struct cpu_profile *p);
/* The window's placement of pid's threads (docs/cpu.md, "topology -p"). */
json_t *placement__json(const struct placement *pl, const struct cpu_profile *p,
			const struct topo *topo, pid_t pid);
int placement__write_text(FILE *f, json_t *j);
/* Resident memory per NUMA node from /proc/PID/numa_maps into kb[0..nr_nodes). */
int placement__numa_kb(pid_t pid, uint64_t *kb, int nr_nodes);
void placement__free(struct placement *pl);

#endif
