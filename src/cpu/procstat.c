/* The figures htop shows, read from /proc at the start and the end of a window: per
 * thread user and system time, state, last CPU and context switches; per process RSS and
 * page faults; per core user, system and idle time. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "proc/task.h"
#include "util/util.h"

int cpu_parse_stat(const char *buf, char *state, uint64_t *utime, uint64_t *stime, uint64_t *minflt,
		   uint64_t *majflt, int *processor)
{
	/* The name in parentheses may hold anything: the fields start after the last ')'. */
	const char *s = strrchr(buf, ')');
	unsigned long long v[40];
	char st;
	int n, i;

	if (!s)
		return -EINVAL;
	s++;
	if (sscanf(s, " %c%n", &st, &n) != 1)
		return -EINVAL;
	s += n;
	/* fields 4.. of stat(5): ppid is v[0]; minflt 10 -> v[6], majflt 12 -> v[8], utime 14
	 * -> v[10], stime 15 -> v[11], processor 39 -> v[35] */
	for (i = 0; i < 36; i++) {
		char *end;

		while (*s == ' ')
			s++;
		errno = 0;
		v[i] = strtoull(s, &end, 10);
		if (end == s) {
			if (*s != '-')
				return -EINVAL;
			v[i] = strtoll(s, &end, 10);
			if (end == s)
				return -EINVAL;
		}
		s = end;
	}
	*state = st;
	*minflt = v[6];
	*majflt = v[8];
	*utime = v[10];
	*stime = v[11];
	*processor = (int)v[35];
	return 0;
}

static int read_switches(pid_t pid, pid_t tid, uint64_t *vcsw, uint64_t *ivcsw)
{
	char path[64], buf[4096], *s;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	s = strstr(buf, "\nvoluntary_ctxt_switches:");
	if (s)
		*vcsw = strtoull(s + 25, NULL, 10);
	s = strstr(buf, "\nnonvoluntary_ctxt_switches:");
	if (s)
		*ivcsw = strtoull(s + 28, NULL, 10);
	return 0;
}

static int read_thread(pid_t pid, pid_t tid, char *state, uint64_t *v, int *cpu, char *comm)
{
	char path[64], buf[1024];
	uint64_t minflt, majflt;
	ssize_t n;
	const char *a, *b;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (cpu_parse_stat(buf, state, &v[0], &v[1], &minflt, &majflt, cpu))
		return -EINVAL;
	a = strchr(buf, '(');
	b = strrchr(buf, ')');
	if (comm && a && b > a) {
		snprintf(comm, COMM_ESCAPED_SIZE, "%.*s", (int)(b - a - 1), a + 1);
		name_escape_inplace(comm, COMM_ESCAPED_SIZE);
	}
	return read_switches(pid, tid, &v[2], &v[3]);
}

static int read_process(pid_t pid, uint64_t *rss_kb, uint64_t *minflt, uint64_t *majflt, char *comm)
{
	char path[64], buf[4096], *s, st;
	uint64_t ut, stt;
	ssize_t n;
	int cpu;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (cpu_parse_stat(buf, &st, &ut, &stt, minflt, majflt, &cpu))
		return -EINVAL;
	if (comm) {
		const char *a = strchr(buf, '('), *b = strrchr(buf, ')');

		if (a && b > a) {
			snprintf(comm, COMM_ESCAPED_SIZE, "%.*s", (int)(b - a - 1), a + 1);
			name_escape_inplace(comm, COMM_ESCAPED_SIZE);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	s = strstr(buf, "\nVmRSS:");
	*rss_kb = s ? strtoull(s + 7, NULL, 10) : 0;
	return 0;
}

void cpu_proc__start(struct cpu_profile *p, pid_t pid)
{
	struct cpu_process *c = cpu_profile__process(p, pid);
	pid_t *tids = NULL;
	int n, i;

	p->live = true;
	if (read_process(pid, &c->rss0_kb, &c->minflt0, &c->majflt0, c->comm))
		return;
	c->rss_kb = c->rss_max_kb = c->rss0_kb;
	c->minflt = c->minflt0;
	c->majflt = c->majflt0;
	n = proc_tasks__list(pid, &tids);
	for (i = 0; i < n; i++) {
		struct cpu_thread *t = cpu_profile__thread(p, pid, tids[i], NULL);
		char comm[COMM_ESCAPED_SIZE] = "";

		if (!read_thread(pid, tids[i], &t->state, t->stat0, &t->last_cpu, comm)) {
			t->have_stat = true;
			if (!t->comm[0])
				memcpy(t->comm, comm, sizeof(comm));
		}
	}
	free(tids);
}

void cpu_proc__finish(struct cpu_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_procs; i++) {
		struct cpu_process *c = &p->procs[i];
		uint64_t rss;

		if (read_process(c->pid, &rss, &c->minflt, &c->majflt,
				 c->comm[0] ? NULL : c->comm)) {
			c->gone = true;
			continue;
		}
		c->rss_kb = rss;
		if (rss > c->rss_max_kb)
			c->rss_max_kb = rss;
	}
	for (i = 0; i < p->nr_threads; i++) {
		struct cpu_thread *t = &p->threads[i];
		uint64_t v[4];
		char state;
		int cpu;

		if (read_thread(t->pid, t->tid, &state, v, &cpu, t->comm[0] ? NULL : t->comm)) {
			t->state = 'X'; /* gone: its figures up to now stay */
			continue;
		}
		if (!t->have_stat) { /* born in the window: everything it did is in it */
			memset(t->stat0, 0, sizeof(t->stat0));
			t->have_stat = true;
		}
		t->state = state;
		t->last_cpu = cpu;
		t->utime = v[0] - t->stat0[0];
		t->stime = v[1] - t->stat0[1];
		t->vcsw = v[2] - t->stat0[2];
		t->ivcsw = v[3] - t->stat0[3];
	}
}

void cpu_cores__read(struct cpu_profile *p, bool start)
{
	static char buf[1 << 16];
	const char *s = buf;
	ssize_t n = read_file("/proc/stat", buf, sizeof(buf));

	if (n < 0)
		return;
	while ((s = strstr(s, "\ncpu"))) {
		unsigned long long v[8] = {0};
		int cpu, k;

		s += 4;
		if (sscanf(s, "%d %llu %llu %llu %llu %llu %llu %llu %llu%n", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &k) < 9)
			continue;
		if (cpu < 0 || cpu >= p->nr_cpus)
			continue;
		/* user+nice, system+irq+softirq, idle+iowait, steal */
		uint64_t x[4] = {v[0] + v[1], v[2] + v[5] + v[6], v[3] + v[4], v[7]};
		struct cpu_core *c = &p->cores[cpu];

		if (start) {
			memcpy(c->s0, x, sizeof(x));
		} else {
			c->user = x[0] - c->s0[0];
			c->system = x[1] - c->s0[1];
			c->idle = x[2] - c->s0[2];
			c->other = x[3] - c->s0[3];
		}
	}
}

void cpu_proc__rebase(struct cpu_profile *p)
{
	size_t i;
	int c;

	for (i = 0; i < p->nr_threads; i++) {
		struct cpu_thread *t = &p->threads[i];

		t->stat0[0] += t->utime;
		t->stat0[1] += t->stime;
		t->stat0[2] += t->vcsw;
		t->stat0[3] += t->ivcsw;
		t->utime = t->stime = t->vcsw = t->ivcsw = 0;
	}
	for (i = 0; i < p->nr_procs; i++) {
		struct cpu_process *c = &p->procs[i];

		c->rss0_kb = c->rss_max_kb = c->rss_kb;
		c->minflt0 = c->minflt;
		c->majflt0 = c->majflt;
	}
	for (c = 0; c < p->nr_cpus; c++) {
		struct cpu_core *cr = &p->cores[c];

		cr->s0[0] += cr->user;
		cr->s0[1] += cr->system;
		cr->s0[2] += cr->idle;
		cr->s0[3] += cr->other;
		cr->user = cr->system = cr->idle = cr->other = 0;
	}
}
