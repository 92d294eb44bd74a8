/* The sampling session of 'srvscope cpu': a cpu-clock perf event on every CPU runs the
 * BPF program of cpu.bpf.c, which counts (thread, kernel stack, user stack) in a hash map;
 * every interval the counts are taken out in one batch, their stacks symbolized (once per
 * process and stack id) and added to a profile. */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <linux/types.h>

#include "bpf/cpu.h"
#include "cpu.skel.h"
#include "cpu/cpu.h"
#include "proc/maps.h"
#include "proc/task.h"
#include "symbol/symbolizer.h"
#include "util/util.h"

#define BATCH 1024

struct cpu_proc_sym {
	pid_t pid;
	struct proc_maps *maps;
	struct symbolizer *sym;
};

struct cached_stack {
	uint32_t nr;
	uint32_t *frames;
};

/* A count's key once its stacks are in the store: their store indexes, or negative for
 * none (-EFAULT: a sample in user mode has no kernel stack), -ENOSPC (the stacks map was
 * full) or -ENOENT (gone from the map: never, by the way names are kept). */
struct sample_key {
	pid_t tgid, tid;
	int32_t kstack, ustack;
};

struct cpu_session {
	struct cpu_opts o;
	struct cpu_bpf *skel;
	int nr_cpus;
	uint64_t start_ns; /* when every sampler was attached (CLOCK_MONOTONIC) */
	int *fds;
	struct bpf_link **links;
	struct u64map target_set;
	pid_t *targets; /* every process looked at; the roots are o.pids */
	size_t nr_targets, cap_targets;
	struct cpu_proc_sym *procs;
	size_t nr_procs, cap_procs;
	struct u64map proc_idx;	  /* pid -> index + 1 */
	struct u64map kstack_idx; /* kernel stack (store index) -> index + 1 into cache */
	struct u64map ustack_idx; /* pid << 32 | user stack (store index) -> index + 1 */
	/* The stacks taken out of the BPF stacks map, by their name there (the hash of their
	 * frames): a name stays valid once its stack is here, so the map is emptied of the
	 * names met at each read, and holds only the stacks new since. */
	struct u64map store_idx; /* name -> index + 1 */
	uint64_t **store_ips;
	uint32_t *store_nr;
	size_t nr_store, cap_store_ips, cap_store_nr;
	struct cached_stack *cache;
	size_t nr_cache, cap_cache;
	struct symbolizer *ksym; /* for kernel addresses, which need no maps */
	/* defer_symbols: the counts of every read so far, and where each read's begin */
	struct sample_key *raw_keys;
	uint64_t *raw_vals;
	size_t nr_raw, cap_rk, cap_rv;
	size_t *read_ends; /* raw index where each read ends */
	uint64_t *read_ns; /* and when it was taken out */
	size_t nr_reads, cap_reads, cap_read_ns;
	struct cpu_stack_ips *ips; /* a stack read out of the stacks map */
	uint64_t lost_reported;
};

static int libbpf_silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int libbpf_debug(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static struct cpu_proc_sym *proc_sym(struct cpu_session *s, pid_t pid);

/* Adds a target: its bit in the BPF program's set, and its maps read now, while it lives
 * (its samples are symbolized at the end of the interval, when it may be gone). */
static void track(struct cpu_session *s, pid_t pid)
{
	bool created;

	if (pid <= 0 || pid >= (pid_t)(ARRAY_SIZE(s->skel->bss->target_bits) * 64))
		return;
	u64map__slot(&s->target_set, (uint64_t)pid, &created);
	if (!created)
		return;
	__atomic_fetch_or(&s->skel->bss->target_bits[pid / 64], 1ull << (pid % 64),
			  __ATOMIC_SEQ_CST);
	xgrow((void **)&s->targets, &s->cap_targets, s->nr_targets + 1, sizeof(pid_t));
	s->targets[s->nr_targets++] = pid;
	proc_sym(s, pid);
}

/* Adds the descendants of the roots that appeared since the last look. */
static void follow(struct cpu_session *s)
{
	pid_t *tree = NULL;
	int n, i;

	if (s->o.all || !s->o.children)
		return;
	n = proc__tree(s->o.pids, s->o.nr_pids, &tree);
	for (i = 0; i < n; i++)
		track(s, tree[i]);
	free(tree);
}

static int open_events(struct cpu_session *s)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* A fixed period in ns of CPU clock, not a frequency the kernel adjusts: every
		 * sample weighs the same. */
		.sample_period = 1000000000ull / s->o.hz,
	};
	int cpu;

	s->fds = xcalloc(s->nr_cpus, sizeof(int));
	s->links = xcalloc(s->nr_cpus, sizeof(*s->links));
	for (cpu = 0; cpu < s->nr_cpus; cpu++)
		s->fds[cpu] = -1;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		s->fds[cpu] = fd;
		if (fd < 0) {
			if (errno == ENODEV) /* CPU offline */
				continue;
			if (errno == EACCES || errno == EPERM)
				return error("cannot open the cpu-clock event: permission denied "
					     "(run as root, or grant CAP_PERFMON)");
			return error("cannot open the cpu-clock event on CPU %d: %s", cpu,
				     strerror(errno));
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.cpu_sample, fd);
		if (!s->links[cpu])
			return error("cannot attach the sampler on CPU %d: %s", cpu,
				     strerror(errno));
	}
	return 0;
}

struct cpu_session *cpu_session__new(const struct cpu_opts *o)
{
	struct cpu_session *s = xcalloc(1, sizeof(*s));
	size_t i;
	int err;

	s->o = *o;
	s->o.pids = NULL;
	if (o->nr_pids) {
		pid_t *p = xmalloc(o->nr_pids * sizeof(pid_t));

		memcpy(p, o->pids, o->nr_pids * sizeof(pid_t));
		s->o.pids = p;
	}
	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0)
		s->nr_cpus = 1;
	s->ips = xcalloc(1, sizeof(struct cpu_stack_ips));
	s->ksym = symbolizer__new(0, NULL);
	libbpf_set_print(getenv("SRVSCOPE_BPF_DEBUG") ? libbpf_debug : libbpf_silent);
	s->skel = cpu_bpf__open();
	if (!s->skel) {
		error("cannot open the BPF program: %s", strerror(errno));
		goto fail;
	}
	s->skel->rodata->filter_all = o->all;
	s->skel->rodata->self_tgid = getpid();
	err = cpu_bpf__load(s->skel);
	if (err == -EPERM || (err == -EACCES && geteuid())) {
		error("cannot load the sampler: permission denied (run as root, or grant CAP_BPF "
		      "and CAP_PERFMON)");
		goto fail;
	}
	if (err) {
		error("cannot load the sampler: %s", strerror(-err));
		goto fail;
	}
	for (i = 0; i < o->nr_pids; i++)
		track(s, o->pids[i]);
	follow(s);
	if (open_events(s))
		goto fail;
	s->start_ns = now_ns();
	return s;
fail:
	cpu_session__delete(s);
	return NULL;
}

void cpu_session__delete(struct cpu_session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; s->fds && i < (size_t)s->nr_cpus; i++) {
		bpf_link__destroy(s->links[i]);
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	}
	free(s->fds);
	free(s->links);
	cpu_bpf__destroy(s->skel);
	for (i = 0; i < s->nr_procs; i++) {
		symbolizer__delete(s->procs[i].sym);
		proc_maps__delete(s->procs[i].maps);
	}
	symbolizer__delete(s->ksym);
	free(s->procs);
	u64map__free(&s->proc_idx);
	for (i = 0; i < s->nr_cache; i++)
		free(s->cache[i].frames);
	free(s->cache);
	u64map__free(&s->kstack_idx);
	u64map__free(&s->ustack_idx);
	for (i = 0; i < s->nr_store; i++)
		free(s->store_ips[i]);
	free(s->store_ips);
	free(s->store_nr);
	u64map__free(&s->store_idx);
	u64map__free(&s->target_set);
	free(s->targets);
	free(s->raw_keys);
	free(s->raw_vals);
	free(s->read_ends);
	free(s->read_ns);
	free((void *)s->o.pids);
	free(s->ips);
	free(s);
}

static struct cpu_proc_sym *proc_sym(struct cpu_session *s, pid_t pid)
{
	struct cpu_proc_sym *ps;
	uint64_t *slot;
	bool created;

	slot = u64map__slot(&s->proc_idx, (uint64_t)pid, &created);
	if (!created) {
		ps = &s->procs[*slot - 1];
		return ps;
	}
	xgrow((void **)&s->procs, &s->cap_procs, s->nr_procs + 1, sizeof(*s->procs));
	ps = &s->procs[s->nr_procs];
	memset(ps, 0, sizeof(*ps));
	ps->pid = pid;
	ps->maps = proc_maps__read(pid);
	if (ps->maps)
		ps->sym = symbolizer__new(pid, ps->maps);
	*slot = ++s->nr_procs;
	return ps;
}

/* The maps of every process met, read again when they changed since the last interval
 * (a library loaded): before the stacks of the interval are symbolized. */
static void refresh_maps(struct cpu_session *s)
{
	size_t i;

	for (i = 0; i < s->nr_procs; i++) {
		struct cpu_proc_sym *ps = &s->procs[i];
		struct proc_maps *m;

		if (!ps->maps || !proc_maps__changed(ps->maps))
			continue;
		m = proc_maps__read(ps->pid);
		if (!m)
			continue; /* gone: the old maps still name its stacks */
		symbolizer__set_maps(ps->sym, m);
		proc_maps__delete(ps->maps);
		ps->maps = m;
	}
}

static uint32_t frame_of(struct cpu_profile *p, const struct sym_result *r, bool kernel)
{
	char buf[512];

	if (r->symbol)
		return cpu_profile__func(p, r->symbol, r->module, kernel);
	/* perf's way of naming what has no symbol: the module and the offset in it */
	snprintf(buf, sizeof(buf), "%s+0x%llx",
		 r->module ? (strrchr(r->module, '/') ? strrchr(r->module, '/') + 1 : r->module)
			   : "[unknown]",
		 (unsigned long long)r->offset);
	return cpu_profile__func(p, buf, r->module ? r->module : "[unknown]", kernel);
}

/* The symbolized frames of a stored stack, cached: kernel ones by stack, user ones by
 * process and stack. A stack that could not be taken (-EFAULT for a kernel stack of a
 * sample taken in user mode; -EEXIST, a full map; -ENOENT, gone from the map) has no
 * frames. */
static const struct cached_stack *stack_frames(struct cpu_session *s, struct cpu_profile *p,
					       pid_t pid, int32_t id, bool kernel)
{
	struct u64map *idx = kernel ? &s->kstack_idx : &s->ustack_idx;
	uint64_t key = kernel ? (uint64_t)(uint32_t)id : (uint64_t)pid << 32 | (uint32_t)id;
	static const struct cached_stack none;
	struct cached_stack *c;
	struct cpu_proc_sym *ps = NULL;
	uint64_t *slot;
	bool created;
	uint32_t n;

	if (id < 0)
		return &none;
	slot = u64map__slot(idx, key, &created);
	if (!created)
		return &s->cache[*slot - 1];
	xgrow((void **)&s->cache, &s->cap_cache, s->nr_cache + 1, sizeof(*s->cache));
	c = &s->cache[s->nr_cache];
	*slot = ++s->nr_cache;
	memset(c, 0, sizeof(*c));
	if (!kernel)
		ps = proc_sym(s, pid);
	c->frames = xmalloc((s->store_nr[id] ? s->store_nr[id] : 1) * sizeof(uint32_t));
	for (n = 0; n < s->store_nr[id]; n++) {
		/* A return address is past its call: look up the call (perf does the same). */
		uint64_t a = s->store_ips[id][n] - (n > 0);
		struct sym_result r;

		if (kernel)
			symbolizer__resolve_kernel(s->ksym, a, &r);
		else if (ps->sym)
			symbolizer__resolve(ps->sym, a, &r);
		else
			r = (struct sym_result){.module = "[unknown]", .offset = a};
		c->frames[c->nr++] = frame_of(p, &r, kernel);
	}
	return c;
}

static void add_sample(struct cpu_session *s, struct cpu_profile *p, const struct sample_key *k,
		       uint64_t count)
{
	const struct cached_stack *ks, *us;
	uint32_t frames[2 * CPU_MAX_DEPTH + 1];
	uint32_t n = 0;
	char comm[16] = "";

	/* -EFAULT is a sample without a kernel or a user part */
	if (k->kstack == -ENOSPC || k->kstack == -ENOENT || k->ustack == -ENOSPC ||
	    k->ustack == -ENOENT)
		p->stacks_lost += count;
	ks = stack_frames(s, p, k->tgid, k->kstack, true);
	/* An empty stack may have no frames array: memcpy's arguments must not be NULL. */
	if (ks->nr)
		memcpy(frames, ks->frames, ks->nr * sizeof(uint32_t));
	n = ks->nr;
	us = stack_frames(s, p, k->tgid, k->ustack, false);
	if (us->nr)
		memcpy(frames + n, us->frames, us->nr * sizeof(uint32_t));
	n += us->nr;
	if (!n) /* neither stack: a kernel thread without one, or the map was full */
		frames[n++] = cpu_profile__func(p, "[unknown]", "[unknown]", false);
	if (!cpu_profile__thread(p, k->tgid, k->tid, NULL)->comm[0]) {
		char path[80], buf[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", k->tgid, k->tid);
		if (read_file(path, buf, sizeof(buf)) > 0)
			snprintf(comm, sizeof(comm), "%.*s", (int)strcspn(buf, "\n"), buf);
	}
	cpu_profile__add(p, k->tgid, k->tid, comm[0] ? comm : NULL, frames, n, count, -1);
}

/* Takes every entry out of a hash map in batches, into *keys and *vals (malloc'ed);
 * returns how many. Entries added meanwhile stay for the next interval. */
static size_t drain(int fd, size_t key_size, char **keys_out, uint64_t **vals_out)
{
	char *keys = NULL, batch[16];
	uint64_t *vals = NULL;
	size_t nr = 0, cap_k = 0, cap_v = 0;
	bool first = true;

	for (;;) {
		__u32 n = BATCH;
		int err;

		xgrow((void **)&keys, &cap_k, (nr + BATCH) * key_size, 1);
		xgrow((void **)&vals, &cap_v, nr + BATCH, sizeof(uint64_t));
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : batch, batch,
						      keys + nr * key_size, vals + nr, &n, NULL);
		first = false;
		nr += n;
		if (err)
			break; /* -ENOENT: that was the last batch */
	}
	*keys_out = keys;
	*vals_out = vals;
	return nr;
}

static struct cpu_thread *where_thread(struct cpu_profile *p, pid_t tid)
{
	uint64_t idx;
	char path[64], buf[256], *s;
	pid_t pid = tid;

	if (u64map__get(&p->thread_idx, (uint32_t)tid, &idx))
		return &p->threads[idx - 1];
	/* a thread met only here (its count entry was lost): find its process */
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (read_file(path, buf, sizeof(buf)) > 0 && (s = strstr(buf, "\nTgid:")))
		pid = strtoul(s + 6, NULL, 10);
	return cpu_profile__thread(p, pid, tid, NULL);
}

/* The store index of the stack named name, its frames copied out of the stacks map the
 * first time it is met; met (the names to delete from the map after this read) gets it. */
static int32_t store_stack(struct cpu_session *s, uint64_t name, struct u64map *met)
{
	struct cpu_stack_ips *st = s->ips;
	uint64_t idx;
	uint32_t n;

	if (name == CPU_STACK_NONE)
		return -EFAULT;
	if (name == CPU_STACK_LOST)
		return -ENOSPC;
	u64map__put(met, name, 1);
	if (u64map__get(&s->store_idx, name, &idx))
		return (int32_t)(idx - 1);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stacks), &name, st))
		return -ENOENT;
	n = st->nr < CPU_MAX_DEPTH ? st->nr : CPU_MAX_DEPTH;
	xgrow((void **)&s->store_ips, &s->cap_store_ips, s->nr_store + 1, sizeof(uint64_t *));
	xgrow((void **)&s->store_nr, &s->cap_store_nr, s->nr_store + 1, sizeof(uint32_t));
	s->store_ips[s->nr_store] = xmalloc((n ? n : 1) * sizeof(uint64_t));
	memcpy(s->store_ips[s->nr_store], st->ips, n * sizeof(uint64_t));
	s->store_nr[s->nr_store] = n;
	u64map__put(&s->store_idx, name, ++s->nr_store);
	return (int32_t)(s->nr_store - 1);
}

/* The keys of nr counts with their stacks in the store (a malloc'ed array); the stacks map
 * is emptied of the names met. A sample between the drain and the delete that finds its
 * stack still there is counted under a name the store now has: nothing is lost. */
static struct sample_key *store_stacks(struct cpu_session *s, const char *keys, size_t nr)
{
	struct sample_key *out = xcalloc(nr ? nr : 1, sizeof(*out));
	struct u64map met = {0};
	size_t i, it = 0;
	uint64_t name, v;
	int fd = bpf_map__fd(s->skel->maps.stacks);

	for (i = 0; i < nr; i++) {
		const struct cpu_key *k = (const void *)(keys + i * sizeof(struct cpu_key));

		out[i] = (struct sample_key){k->tgid, k->tid, store_stack(s, k->kstack, &met),
					     store_stack(s, k->ustack, &met)};
	}
	while (u64map__next(&met, &it, &name, &v))
		bpf_map_delete_elem(fd, &name);
	u64map__free(&met);
	return out;
}

bool cpu_pid_alive(pid_t pid)
{
	char path[64], buf[512];
	const char *e;

	/* An exited process its parent has not reaped yet is gone too: state Z. */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	e = strrchr(buf, ')');
	return e && e[1] == ' ' && e[2] != 'Z' && e[2] != 'X';
}

int cpu_session__read(struct cpu_session *s, struct cpu_profile *p, bool last)
{
	uint64_t *lost = xcalloc(s->nr_cpus, sizeof(uint64_t)), *cv, *wv;
	struct sample_key *sk;
	char *ck, *wk;
	size_t nc, nw, i;
	uint32_t key = 1;
	int alive = 0;

	/* Both maps first, then the slow part (symbols): the two agree, and the window ends
	 * here. */
	nc = drain(bpf_map__fd(s->skel->maps.counts), sizeof(struct cpu_key), &ck, &cv);
	nw = drain(bpf_map__fd(s->skel->maps.where), sizeof(struct cpu_where), &wk, &wv);
	p->end_ns = now_ns();
	sk = store_stacks(s, ck, nc);
	free(ck);
	if (last) {
		/* the end figures of every thread sampled and of every process met */
		for (i = 0; i < nc; i++)
			cpu_profile__thread(p, sk[i].tgid, sk[i].tid, NULL);
		for (i = 0; i < s->nr_targets; i++)
			cpu_profile__process(p, s->targets[i]); /* new ones: from their birth */
		cpu_proc__finish(p);
		cpu_cores__read(p, false);
	}
	if (s->o.defer_symbols) {
		/* keep the counts; read the maps of the processes met for the first time */
		xgrow((void **)&s->raw_keys, &s->cap_rk, s->nr_raw + nc, sizeof(*sk));
		xgrow((void **)&s->raw_vals, &s->cap_rv, s->nr_raw + nc, sizeof(uint64_t));
		memcpy(s->raw_keys + s->nr_raw, sk, nc * sizeof(*sk));
		memcpy(s->raw_vals + s->nr_raw, cv, nc * sizeof(uint64_t));
		s->nr_raw += nc;
		xgrow((void **)&s->read_ends, &s->cap_reads, s->nr_reads + 1, sizeof(size_t));
		xgrow((void **)&s->read_ns, &s->cap_read_ns, s->nr_reads + 1, sizeof(uint64_t));
		s->read_ns[s->nr_reads] = p->end_ns;
		s->read_ends[s->nr_reads++] = s->nr_raw;
		for (i = 0; i < nc; i++)
			proc_sym(s, sk[i].tgid);
	}
	/* A long window keeps its counts in memory until the end: past a million of them
	 * (24 MB), they are symbolized now. */
	if (s->o.defer_symbols && (last || s->nr_raw > (1u << 20))) {
		size_t r, start = 0;

		refresh_maps(s);
		for (r = 0; r < s->nr_reads; r++) {
			for (i = start; i < s->read_ends[r]; i++)
				add_sample(s, p, &s->raw_keys[i], s->raw_vals[i]);
			start = s->read_ends[r];
			if (s->o.on_interval)
				s->o.on_interval(p, s->read_ns[r], s->o.arg);
		}
		s->nr_raw = s->nr_reads = 0;
	} else if (!s->o.defer_symbols) {
		refresh_maps(s);
		for (i = 0; i < nc; i++)
			add_sample(s, p, &sk[i], cv[i]);
		if (s->o.on_interval)
			s->o.on_interval(p, p->end_ns, s->o.arg);
	}
	for (i = 0; i < nw; i++) {
		const struct cpu_where *w = (const void *)(wk + i * sizeof(struct cpu_where));
		struct cpu_thread *t;

		if (w->cpu >= (uint32_t)p->nr_cpus)
			continue;
		t = where_thread(p, w->tid);
		t->on_cpu[w->cpu] += wv[i];
		p->cores[w->cpu].samples += wv[i];
	}
	free(sk);
	free(cv);
	free(wk);
	free(wv);
	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &key, lost)) {
		uint64_t sum = 0;
		int cpu;

		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			sum += lost[cpu];
		p->lost = sum;
	}
	free(lost);
	p->hz = s->o.hz;
	follow(s);
	if (s->o.all)
		return 1;
	for (i = 0; i < s->o.nr_pids; i++)
		alive += cpu_pid_alive(s->o.pids[i]);
	if (!alive) /* the roots are gone; descendants may still run */
		for (i = 0; i < s->nr_targets; i++)
			alive += cpu_pid_alive(s->targets[i]);
	return alive;
}

const pid_t *cpu_session__targets(struct cpu_session *s, size_t *nr)
{
	*nr = s->nr_targets;
	return s->targets;
}

uint64_t cpu_session__start_ns(const struct cpu_session *s)
{
	return s->start_ns;
}

int cpu_session__nr_cpus(const struct cpu_session *s)
{
	return s->nr_cpus;
}
