/* What a recording reads from /proc about the processes it meets, while they live. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proc/maps.h"
#include "proc/task.h"
#include "record/procinfo.h"
#include "record/procs.h"
#include "trace/trace.h"
#include "unwind/unwind.h"
#include "util/util.h"

#define YOUNG_FAST_NS 200000000ull  /* the first 0.2 s: maps read every 20 ms */
#define YOUNG_NS      2000000000ull /* the first 2 s: every 100 ms */
#define CHECK_NS      1000000000ull /* then every second */
#define FORCE_NS      10000000ull   /* reads out of turn, at most every 10 ms */
#define FD_RECHECK_NS 1000000000ull

void rec_procs__init(struct rec_procs *ps, struct trace_writer *w, bool all)
{
	memset(ps, 0, sizeof(*ps));
	ps->w = w;
	ps->all = all;
}

void rec_procs__free(struct rec_procs *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++) {
		unwinder__delete(ps->p[i].unw);
		proc_maps__delete(ps->p[i].maps);
	}
	free(ps->p);
	for (i = 0; i < ps->nr_fds; i++)
		free(ps->fds[i].desc);
	free(ps->fds);
	u64map__free(&ps->idx);
	u64map__free(&ps->fd_idx);
	memset(ps, 0, sizeof(*ps));
}

static void write_maps(struct rec_procs *ps, struct rec_proc *p, uint64_t now)
{
	char *ids = NULL;
	size_t ids_len;

	if (!p->maps->text_len)
		return;
	ids_len = procinfo__build_ids(p->pid, p->maps, &ids);
	if (trace_writer__maps(ps->w, now, p->pid, p->maps->text, p->maps->text_len, ids,
			       ids_len) &&
	    !ps->err)
		ps->err = -errno;
	free(ids);
}

void rec_procs__check_maps(struct rec_procs *ps, struct rec_proc *p, uint64_t now, bool force)
{
	struct proc_maps *m;

	static uint64_t force_ns;

	if (!force_ns) /* tests: SRVSCOPE_MAPS_FORCE_MS, a longer wait between reads out of turn */
		force_ns = getenv("SRVSCOPE_MAPS_FORCE_MS")
				   ? strtoull(getenv("SRVSCOPE_MAPS_FORCE_MS"), NULL, 10) * 1000000ull
				   : FORCE_NS;
	if (force && now - p->forced_ns > force_ns) {
		p->forced_ns = now;
		p->next_check_ns = 0;
	}
	if (p->dead || now < p->next_check_ns)
		return;
	if (now - p->born_ns < YOUNG_FAST_NS)
		p->next_check_ns = now + YOUNG_FAST_NS / 10;
	else if (now - p->born_ns < YOUNG_NS)
		p->next_check_ns = now + YOUNG_NS / 20;
	else if (ps->all)
		p->next_check_ns = UINT64_MAX;
	else
		p->next_check_ns = now + CHECK_NS;
	if (p->maps && !proc_maps__changed(p->maps))
		return;
	m = proc_maps__read(p->pid);
	if (!m) {
		p->dead = true;
		return;
	}
	proc_maps__delete(p->maps);
	p->maps = m;
	if (p->unw)
		unwinder__set_maps(p->unw, m);
	write_maps(ps, p, now);
}

void rec_procs__check_all(struct rec_procs *ps, uint64_t now)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		rec_procs__check_maps(ps, &ps->p[i], now, false);
}

/* The process's command line or title (postgres: walwriter), which tells apart the
 * processes of one server that all have the same name; none for kernel threads. */
static void write_title(struct rec_procs *ps, pid_t pid, uint64_t now)
{
	struct {
		uint64_t ts;
		uint32_t pid, len;
		char title[256];
	} sec = {.ts = now, .pid = pid};
	int n = proc__title(pid, sec.title, sizeof(sec.title));

	if (n <= 0)
		return;
	sec.len = n;
	if (trace_writer__section(ps->w, SEC_TITLE, &sec, offsetof(typeof(sec), title) + n) &&
	    !ps->err)
		ps->err = -errno;
}

/* Most records come from the process of the one before: that one is found without a
 * lookup. */
struct rec_proc *rec_procs__seen(struct rec_procs *ps, pid_t pid, uint64_t now)
{
	bool created;
	uint64_t *slot;
	struct rec_proc *p;

	if (ps->last && ps->p[ps->last - 1].pid == pid)
		return &ps->p[ps->last - 1];
	slot = u64map__slot(&ps->idx, pid, &created);
	if (!created) {
		ps->last = *slot + 1;
		return &ps->p[*slot];
	}
	xgrow((void **)&ps->p, &ps->cap, ps->nr + 1, sizeof(*ps->p));
	*slot = ps->nr;
	ps->last = ps->nr + 1;
	p = &ps->p[ps->nr++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->born_ns = now;
	write_title(ps, pid, now);
	rec_procs__check_maps(ps, p, now, false);
	return p;
}

struct unwinder *rec_procs__unwinder(struct rec_proc *p)
{
	if (!p->maps)
		return NULL;
	if (!p->unw) {
		p->unw = unwinder__new(p->pid, p->maps);
		if (p->unw)
			unwinder__set_live_memory(p->unw, false);
	}
	return p->unw;
}

void rec_procs__describe_fd(struct rec_procs *ps, uint64_t ts, pid_t pid, int fd, uint64_t now)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)fd, idx;
	bool created;
	struct rec_fd *f;
	char desc[256];

	idx = *u64map__slot(&ps->fd_idx, key, &created);
	if (created) {
		xgrow((void **)&ps->fds, &ps->cap_fds, ps->nr_fds + 1, sizeof(*ps->fds));
		idx = ps->nr_fds++;
		u64map__put(&ps->fd_idx, key, idx);
		ps->fds[idx].checked_ns = 0;
		ps->fds[idx].desc = NULL;
	}
	f = &ps->fds[idx];
	if (f->desc && now - f->checked_ns < FD_RECHECK_NS)
		return;
	f->checked_ns = now;
	if (procinfo__describe_fd(pid, fd, desc, sizeof(desc)))
		return;
	if (f->desc && !strcmp(f->desc, desc))
		return;
	free(f->desc);
	f->desc = xstrdup(desc);
	trace_writer__add_fd(ps->w, ts, pid, fd, desc);
}
