/* The machine as hwloc sees it (packages, NUMA nodes, caches, cores, hardware threads),
 * printed the way lstopo prints it, as JSON, and the lookups 'topology -p' and 'cpu' make:
 * the core, package and NUMA node of a CPU. */
#ifndef SRVSCOPE_TOPOLOGY_TOPOLOGY_H
#define SRVSCOPE_TOPOLOGY_TOPOLOGY_H

#include <stdio.h>

struct topo;
typedef struct json_t json_t;

/* Loads this machine's topology (without I/O devices). NULL after a one-line error. */
struct topo *topo__load(void);
/* Accepts NULL. */
void topo__delete(struct topo *t);

/* The tree as 'lstopo-no-graphics --no-io' prints it. Returns 0 or -EIO. */
int topo__write_text(FILE *f, const struct topo *t);
/* {"machine": {...tree...}, "packages": N, "numa_nodes": N, "cores": N, "pus": N,
 *  "cpus": [{"cpu", "core", "package", "numa_node", "siblings": [..]}]} (docs/cpu.md) */
json_t *topo__json(const struct topo *t);

/* For the CPU numbered cpu by the OS: its core's, package's and NUMA node's logical
 * indexes (-1 when unknown). */
struct topo_cpu {
	int core, package, node;
	int nr_siblings; /* hardware threads of its core, itself included */
};
int topo__cpu(const struct topo *t, int cpu, struct topo_cpu *out);
int topo__nr_nodes(const struct topo *t);

#endif
