/* A stack session: one target process, the sampler chosen for it, and what is kept
 * between samples (maps, unwinder caches, symbols). Each sample: capture, then with the
 * target released, refresh maps if they changed, unwind, symbolize. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/maps.h"
#include "proc/task.h"
#include "snapshot/snapshot.h"
#include "stacks/stacks.h"
#include "stacks/unwind_cache.h"
#include "symbol/symbolizer.h"
#include "unwind/unwind.h"
#include "util/util.h"

struct stacks_session {
	pid_t pid;
	pid_t tid; /* a live thread: pid, unless the leader called pthread_exit */
	struct stacks_opts opts;
	char comm[16];
	struct proc_maps *maps; /* what unwinding and symbols use */
	struct proc_maps *raw;	/* the process's maps as last read */
	struct symbolizer *sym;
	struct unwinder *unw;
	struct unwind_cache *ucache;
};

static int choose_mode(struct stacks_session *s)
{
	char why[256] = "";

	if (s->opts.mode == STACKS_MODE_PTRACE)
		return 0;
	if (nostop__available(why, sizeof(why))) {
		s->opts.mode = STACKS_MODE_NOSTOP;
		return 0;
	}
	if (s->opts.mode == STACKS_MODE_NOSTOP)
		return error("--mode=nostop is not available: it needs %s; use --mode=ptrace", why);
	notice("nostop mode needs %s; using ptrace", why);
	s->opts.mode = STACKS_MODE_PTRACE;
	return 0;
}

struct stacks_session *stacks_session__new(pid_t pid, const struct stacks_opts *opts)
{
	struct stacks_session *s;

	char comm[16];

	/* Another tracer only matters to ptrace mode, checked once the mode is known. */
	if (proc__check_target(pid, comm, opts->mode != STACKS_MODE_PTRACE && !opts->consistent) <
	    0)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	memcpy(s->comm, comm, sizeof(comm));
	s->pid = pid;
	s->tid = proc__live_tid(pid);
	s->opts = *opts;
	if (!s->opts.stack_size)
		s->opts.stack_size = STACKS_DEFAULT_STACK_SIZE;
	if (s->opts.consistent && s->opts.mode == STACKS_MODE_AUTO)
		s->opts.mode = STACKS_MODE_PTRACE;
	if (s->tid < 0) {
		error("process %d (%s) has exited: nothing to sample", pid, comm);
		goto out_free;
	}
	if (choose_mode(s) < 0)
		goto out_free;
	if (s->opts.mode == STACKS_MODE_PTRACE && opts->mode != STACKS_MODE_PTRACE &&
	    !opts->consistent && proc__check_target(pid, NULL, false) < 0)
		goto out_free;
	s->maps = proc_maps__read(s->tid);
	if (!s->maps) {
		if (errno == EACCES || errno == EPERM)
			proc__denied_error(pid);
		else if (errno == ENOENT || errno == ESRCH)
			error("process %d (%s) has exited: nothing to sample", pid, comm);
		else
			error("cannot read /proc/%d/maps: %s", s->tid, strerror(errno));
		goto out_free;
	}
	s->raw = s->maps;
	s->sym = symbolizer__new(s->tid, s->maps);
	s->unw = unwinder__new(s->tid, s->maps);
	s->ucache = unwind_cache__new();
	if (!s->sym || !s->unw) {
		error("cannot set up unwinding for %d: %s", pid, strerror(errno));
		goto out_free;
	}
	return s;

out_free:
	stacks_session__delete(s);
	return NULL;
}

void stacks_session__delete(struct stacks_session *s)
{
	if (!s)
		return;
	unwind_cache__delete(s->ucache);
	unwinder__delete(s->unw);
	symbolizer__delete(s->sym);
	if (s->raw != s->maps)
		proc_maps__delete(s->raw);
	proc_maps__delete(s->maps);
	free(s);
}

int stacks_session__exit_status(const struct stacks_session *s, unsigned long shown)
{
	if (errno != ESRCH)
		return 1;
	if (!shown)
		return error("process %d (%s) exited before it could be sampled", s->pid, s->comm),
		       1;
	notice("process %d (%s) exited after %lu sample%s", s->pid, s->comm, shown,
	       shown == 1 ? "" : "s");
	return 0;
}

const char *stacks_session__mode(const struct stacks_session *s)
{
	return s->opts.mode == STACKS_MODE_NOSTOP ? "nostop" : "ptrace";
}

static void use_maps(struct stacks_session *s, struct proc_maps *maps, struct proc_maps *raw)
{
	unwind_cache__clear(s->ucache);
	unwinder__set_maps(s->unw, maps);
	symbolizer__set_maps(s->sym, maps);
	if (s->raw != s->maps)
		proc_maps__delete(s->raw);
	proc_maps__delete(s->maps);
	s->maps = maps;
	s->raw = raw;
}

/*
 * New maps after a dlopen/munmap: symbols and unwind tables must follow them. Called
 * before a capture (so the maps describe what the threads run) and after it: when the
 * maps changed during the capture, the entries that vanished are kept for this sample,
 * so a frame in a library unloaded meanwhile is still named, and a library loaded
 * meanwhile is known too.
 */
static void refresh_maps(struct stacks_session *s, bool keep_stale)
{
	struct proc_maps *cur;

	if (!proc_maps__changed(s->raw)) {
		/* Stale entries serve one sample only. */
		if (!keep_stale && s->maps != s->raw) {
			cur = s->raw;
			s->raw = s->maps;
			use_maps(s, cur, cur);
		}
		return;
	}
	cur = proc_maps__read(s->tid);
	if (!cur)
		return;
	if (keep_stale)
		use_maps(s, proc_maps__merge_stale(cur, s->raw), cur);
	else
		use_maps(s, cur, cur);
}

/* Kernel frames from /proc/PID/task/TID/stack text: "[<0>] name+0x1a/0x40 [module]". */
static unsigned int kframes_from_text(char *text, struct frame *out, unsigned int max)
{
	unsigned int n = 0;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(line, ']'), *plus, *mod;

		if (!name)
			continue;
		name++;
		while (*name == ' ')
			name++;
		plus = strchr(name, '+');
		mod = strchr(name, '[');
		out[n] = (struct frame){.kernel = true, .module = "[kernel]"};
		if (mod) {
			char *end = strchr(mod, ']');

			if (end)
				end[1] = '\0';
			out[n].module = mod;
		}
		if (plus) {
			*plus = '\0';
			out[n].offset = strtoull(plus + 1, NULL, 16);
		}
		out[n].symbol = name;
		n++;
	}
	return n;
}

static void symbolize_thread(struct stacks_session *s, struct thread_sample *t)
{
	unsigned int i, n = 0, cap = t->nr_ips + SNAP_MAX_KFRAMES + 1;
	struct sym_result r;

	t->frames = xcalloc(cap, sizeof(*t->frames));
	if (s->opts.kernel) {
		for (i = 0; i < t->nr_kips && n < SNAP_MAX_KFRAMES; i++, n++) {
			symbolizer__resolve_kernel(s->sym, t->kips[i], &r);
			t->frames[n] =
				(struct frame){t->kips[i], r.symbol, r.module, r.offset, true};
		}
		if (!t->nr_kips && t->ktext)
			n = kframes_from_text(t->ktext, t->frames, SNAP_MAX_KFRAMES);
	}
	for (i = 0; i < t->nr_ips; i++, n++) {
		/* A return address points after the call: look up the call itself. */
		uint64_t lookup = i ? t->ips[i] - 1 : t->ips[i];

		symbolizer__resolve(s->sym, lookup, &r);
		if (i && !r.symbol)
			r.offset++;
		t->frames[n] = (struct frame){t->ips[i], r.symbol, r.module, r.offset, false};
	}
	/* The unwind stopped short of the outermost frame: every format shows it. */
	if (t->flags & THREAD_TRUNCATED)
		t->frames[n++] = (struct frame){0, FRAME_TRUNCATED, NULL, 0, false};
	t->nr_frames = n;
}

struct snapshot *stacks_session__sample(struct stacks_session *s)
{
	struct snapshot *snap = snapshot__new(s->pid);
	struct unwind_reads reads = {0};
	size_t i;
	int err;

	refresh_maps(s, false);
	if (s->opts.mode == STACKS_MODE_NOSTOP)
		err = nostop__capture(s->pid, &s->opts, snap);
	else
		err = ptrace__capture(s->pid, &s->opts, snap);
	if (err || !snap->nr_threads) {
		/* The process exited: the command says so, knowing what it has shown. */
		snapshot__delete(snap);
		errno = err && err != -ESRCH ? -err : ESRCH;
		return NULL;
	}
	memcpy(snap->comm, snap->threads[0].tid == s->pid ? snap->threads[0].name : s->comm,
	       sizeof(snap->comm));
	if (!snap->comm[0]) {
		struct task_stat st;

		if (proc_task__stat(s->pid, s->pid, &st) == 0)
			memcpy(snap->comm, st.comm, sizeof(snap->comm));
	}
	memcpy(s->comm, snap->comm, sizeof(s->comm));
	refresh_maps(s, true);
	unwinder__new_sample(s->unw);
	/* Any failed read may succeed next time: uncheckable. */
	reads.copy_limit = UINT64_MAX;
	for (i = 0; i < snap->nr_threads; i++) {
		struct thread_sample *t = &snap->threads[i];
		bool reusable = true;

		if (!unwind_cache__lookup(s->ucache, t)) {
			/* The cache compares registers and the stack copy: an unwind that read
			 * live memory beyond the copy, or failed to, is not kept. */
			unwinder__note_reads(s->unw, &reads);
			unwinder__unwind(s->unw, t);
			unwinder__note_reads(s->unw, NULL);
			reusable = !reads.uncheckable;
		}
		if (reusable)
			unwind_cache__store(s->ucache, t);
		if (!s->opts.no_symbols)
			symbolize_thread(s, t);
	}
	unwind_cache__end_sample(s->ucache);
	snapshot__drop_stacks(snap);
	return snap;
}
