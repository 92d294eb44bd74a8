/* Where the threads of a process ran during a window ('topology -p'): each thread's share
 * of on-CPU samples per CPU, its migrations (from the scheduler's count), the CPUs it may
 * run on, the process's memory per NUMA node; threads that share a core's hardware
 * threads, or that run on several NUMA nodes, are flagged. */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "topology/placement.h"
#include "util/util.h"

/* se.nr_migrations of /proc/PID/task/TID/sched, or -1 (no CONFIG_SCHED_DEBUG). */
static long long migrations(pid_t pid, pid_t tid)
{
	char path[80], buf[8192], *s;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", pid, tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	s = strstr(buf, "se.nr_migrations");
	if (!s || !(s = strchr(s, ':')))
		return -1;
	return strtoll(s + 1, NULL, 10);
}

/* Cpus_allowed_list of the thread, e.g. "0-3,8". */
static void allowed(pid_t pid, pid_t tid, char *out, size_t size)
{
	char path[80], buf[4096], *s;

	snprintf(out, size, "?");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return;
	s = strstr(buf, "\nCpus_allowed_list:");
	if (!s)
		return;
	s += 19;
	while (*s == ' ' || *s == '\t')
		s++;
	snprintf(out, size, "%.*s", (int)strcspn(s, "\n"), s);
}

int placement__numa_kb(pid_t pid, uint64_t *kb, int nr_nodes)
{
	char path[64], *buf = NULL, *line, *save = NULL;
	size_t len;
	int ret;

	memset(kb, 0, nr_nodes * sizeof(uint64_t));
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", pid);
	ret = cpu_read_file(path, &buf, &len);
	if (ret)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long page_kb = 4;
		char *s = strstr(line, "kernelpagesize_kB=");

		if (s)
			page_kb = strtoul(s + 18, NULL, 10);
		for (s = strstr(line, " N"); s; s = strstr(s + 1, " N")) {
			char *end;
			long node = strtol(s + 2, &end, 10);

			if (end == s + 2 || *end != '=' || node < 0 || node >= nr_nodes)
				continue;
			kb[node] += strtoull(end + 1, NULL, 10) * page_kb;
		}
	}
	free(buf);
	return 0;
}

void placement__start(struct placement *pl, struct cpu_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_threads; i++) {
		struct cpu_thread *t = &p->threads[i];

		xgrow((void **)&pl->mig0, &pl->cap_mig0, i + 1, sizeof(long long));
		pl->mig0[i] = migrations(t->pid, t->tid);
	}
	pl->nr_mig0 = p->nr_threads;
}

static json_t *thread_json(const struct placement *pl, const struct cpu_profile *p,
			   const struct topo *topo, size_t i)
{
	const struct cpu_thread *t = &p->threads[i];
	json_t *where = json_array();
	long long m = migrations(t->pid, t->tid);
	uint64_t where_total = 0;
	char al[256];
	int c;

	allowed(t->pid, t->tid, al, sizeof(al));
	/* Shares of the per-CPU counts' own total: they are read from another map than the
	 * stacked samples, a moment apart, and may count a few more (100.1 % once). */
	for (c = 0; c < p->nr_cpus; c++)
		where_total += t->on_cpu[c];
	for (c = 0; c < p->nr_cpus; c++) {
		struct topo_cpu tc;

		if (!t->on_cpu[c])
			continue;
		topo__cpu(topo, c, &tc);
		json_array_append_new(
			where,
			json_pack("{s:i,s:I,s:f,s:i,s:i,s:i}", "cpu", c, "samples",
				  (json_int_t)t->on_cpu[c], "share",
				  100.0 * t->on_cpu[c] / (where_total ? where_total : 1), "core",
				  tc.core, "package", tc.package, "numa_node", tc.node));
	}
	if (i < pl->nr_mig0 && pl->mig0[i] >= 0 && m >= 0)
		m -= pl->mig0[i];
	else if (i < pl->nr_mig0)
		m = -1;
	return json_pack("{s:i,s:i,s:s,s:s,s:I,s:I,s:o}", "pid", t->pid, "tid", t->tid, "comm",
			 t->comm, "allowed_cpus", al, "migrations", (json_int_t)m, "samples",
			 (json_int_t)t->samples, "cpus", where);
}

/* The core (logical index) a thread ran on most, and the share there; -1 if none. */
static int main_core(const struct cpu_profile *p, const struct topo *topo,
		     const struct cpu_thread *t, int *cpu)
{
	uint64_t best = 0;
	int c, core = -1;

	*cpu = -1;
	for (c = 0; c < p->nr_cpus; c++)
		if (t->on_cpu[c] > best) {
			struct topo_cpu tc;

			topo__cpu(topo, c, &tc);
			best = t->on_cpu[c];
			core = tc.core;
			*cpu = c;
		}
	return core;
}

json_t *placement__json(const struct placement *pl, const struct cpu_profile *p,
			const struct topo *topo, pid_t pid)
{
	json_t *threads = json_array(), *flags = json_array(), *mem = json_array();
	int nodes = topo__nr_nodes(topo), n;
	uint64_t *kb = xcalloc(nodes > 0 ? nodes : 1, sizeof(uint64_t));
	size_t i, k;

	for (i = 0; i < p->nr_threads; i++)
		json_array_append_new(threads, thread_json(pl, p, topo, i));
	if (!placement__numa_kb(pid, kb, nodes))
		for (n = 0; n < nodes; n++)
			json_array_append_new(
				mem, json_pack("{s:i,s:I}", "node", n, "kb", (json_int_t)kb[n]));
	free(kb);
	/* Two busy threads whose main CPUs are different hardware threads of one core. */
	for (i = 0; i < p->nr_threads; i++)
		for (k = i + 1; k < p->nr_threads; k++) {
			int ci, ck, a = main_core(p, topo, &p->threads[i], &ci),
				    b = main_core(p, topo, &p->threads[k], &ck);

			if (a >= 0 && a == b && ci != ck)
				json_array_append_new(flags, json_pack("{s:s,s:[i,i],s:i,s:[i,i]}",
								       "kind", "shared_core",
								       "tids", p->threads[i].tid,
								       p->threads[k].tid, "core", a,
								       "cpus", ci, ck));
		}
	/* A thread with at least a tenth of its samples on each of two NUMA nodes. */
	for (i = 0; i < p->nr_threads && nodes > 1; i++) {
		const struct cpu_thread *t = &p->threads[i];
		uint64_t *per = xcalloc(nodes, sizeof(uint64_t));
		int c, many = 0;

		for (c = 0; c < p->nr_cpus; c++) {
			struct topo_cpu tc;

			topo__cpu(topo, c, &tc);
			if (tc.node >= 0 && tc.node < nodes)
				per[tc.node] += t->on_cpu[c];
		}
		for (n = 0; n < nodes; n++)
			many += t->samples && per[n] * 10 >= t->samples;
		if (many > 1)
			json_array_append_new(flags, json_pack("{s:s,s:i}", "kind", "numa_bounce",
							       "tid", t->tid));
		free(per);
	}
	return json_pack("{s:i,s:f,s:o,s:o,s:o}", "pid", pid, "duration_s", p->duration_ns / 1e9,
			 "threads", threads, "memory_per_node", mem, "flags", flags);
}

int placement__write_text(FILE *f, json_t *j)
{
	json_t *t, *w, *m, *fl;
	size_t i, k, nt = json_array_size(json_object_get(j, "threads"));

	fprintf(f, "\nPROCESS %lld: %zu thread%s over %.2f s\n",
		(long long)json_integer_value(json_object_get(j, "pid")), nt, nt == 1 ? "" : "s",
		json_real_value(json_object_get(j, "duration_s")));
	fprintf(f, "  %7s %-16s %-12s %5s %8s  %s\n", "TID", "COMM", "ALLOWED", "MIGR", "SAMPLES",
		"WHERE (share of its samples: cpu, core, NUMA node)");
	json_array_foreach(json_object_get(j, "threads"), i, t)
	{
		json_int_t mig = json_integer_value(json_object_get(t, "migrations"));
		char migs[24];

		if (mig < 0)
			snprintf(migs, sizeof(migs), "?");
		else
			snprintf(migs, sizeof(migs), "%lld", (long long)mig);
		fprintf(f, "  %7lld %-16s %-12s %5s %8lld ",
			(long long)json_integer_value(json_object_get(t, "tid")),
			json_string_value(json_object_get(t, "comm")),
			json_string_value(json_object_get(t, "allowed_cpus")), migs,
			(long long)json_integer_value(json_object_get(t, "samples")));
		if (!json_array_size(json_object_get(t, "cpus")))
			fprintf(f, " (not on a CPU)");
		json_array_foreach(json_object_get(t, "cpus"), k, w)
			fprintf(f, " cpu%lld %.1f%% (core L#%lld, node %lld)",
				(long long)json_integer_value(json_object_get(w, "cpu")),
				json_real_value(json_object_get(w, "share")),
				(long long)json_integer_value(json_object_get(w, "core")),
				(long long)json_integer_value(json_object_get(w, "numa_node")));
		fputc('\n', f);
	}
	fprintf(f, "\nMEMORY PER NUMA NODE\n");
	json_array_foreach(json_object_get(j, "memory_per_node"), i, m)
		fprintf(f, "  node %lld: %lld KB\n",
			(long long)json_integer_value(json_object_get(m, "node")),
			(long long)json_integer_value(json_object_get(m, "kb")));
	fl = json_object_get(j, "flags");
	if (json_array_size(fl))
		fprintf(f, "\nFLAGS\n");
	json_array_foreach(fl, i, m)
	{
		if (!strcmp(json_string_value(json_object_get(m, "kind")), "shared_core"))
			fprintf(f, "  threads %lld and %lld share core L#%lld (cpu%lld, cpu%lld)\n",
				(long long)json_integer_value(
					json_array_get(json_object_get(m, "tids"), 0)),
				(long long)json_integer_value(
					json_array_get(json_object_get(m, "tids"), 1)),
				(long long)json_integer_value(json_object_get(m, "core")),
				(long long)json_integer_value(
					json_array_get(json_object_get(m, "cpus"), 0)),
				(long long)json_integer_value(
					json_array_get(json_object_get(m, "cpus"), 1)));
		else
			fprintf(f, "  thread %lld ran on several NUMA nodes\n",
				(long long)json_integer_value(json_object_get(m, "tid")));
	}
	return ferror(f) ? -EIO : 0;
}

void placement__free(struct placement *pl)
{
	free(pl->mig0);
	memset(pl, 0, sizeof(*pl));
}
