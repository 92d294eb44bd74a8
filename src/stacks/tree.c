/* A process tree sampled as one: a stack session per process, made when the process is
 * first listed, dropped a sample after it is gone (its symbols may still be named by the
 * caller's previous snapshot), the samples merged. */
#include <stdlib.h>
#include <string.h>

#include "proc/task.h"
#include "snapshot/snapshot.h"
#include "stacks/tree.h"
#include "util/util.h"

struct tree_proc {
	pid_t pid;
	struct stacks_session *s;
	bool gone;   /* seen gone at the last sample: dropped at the next */
	bool listed; /* in the latest listing */
};

struct stacks_tree {
	struct stacks_opts opts; /* the root's, with its mode as chosen */
	bool children;
	struct tree_proc *p; /* [0]: the root */
	size_t nr, cap;
};

struct stacks_tree *stacks_tree__new(pid_t pid, const struct stacks_opts *opts, bool children)
{
	struct stacks_session *root = stacks_session__new(pid, opts);
	struct stacks_tree *t;

	if (!root)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->opts = *opts;
	/* The descendants are sampled the same way as the root, without choosing again. */
	t->opts.mode = strcmp(stacks_session__mode(root), "nostop") ? STACKS_MODE_PTRACE
								    : STACKS_MODE_NOSTOP;
	t->children = children;
	xgrow((void **)&t->p, &t->cap, 1, sizeof(*t->p));
	t->p[0] = (struct tree_proc){.pid = pid, .s = root, .listed = true};
	t->nr = 1;
	return t;
}

void stacks_tree__delete(struct stacks_tree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr; i++)
		stacks_session__delete(t->p[i].s);
	free(t->p);
	free(t);
}

int stacks_tree__exit_status(const struct stacks_tree *t, unsigned long shown)
{
	return stacks_session__exit_status(t->p[0].s, shown);
}

const char *stacks_tree__mode(const struct stacks_tree *t)
{
	return stacks_session__mode(t->p[0].s);
}

/* Drops the processes seen gone last time, then lists the tree: new descendants get a
 * session (or none, quietly, when they cannot be sampled: they are tried again next
 * time), those no longer listed are marked gone. */
static void stacks_tree__refresh(struct stacks_tree *t)
{
	pid_t *pids = NULL, root = t->p[0].pid;
	size_t i, j, k;
	int n;

	for (i = j = 1; i < t->nr; i++) {
		if (t->p[i].gone)
			stacks_session__delete(t->p[i].s);
		else
			t->p[j++] = t->p[i];
	}
	t->nr = j;
	if (!t->children)
		return;
	n = proc__tree(&root, 1, &pids);
	if (n < 0)
		return;
	for (i = 1; i < t->nr; i++)
		t->p[i].listed = false;
	for (k = 1; k < (size_t)n; k++) {
		for (i = 1; i < t->nr && t->p[i].pid != pids[k]; i++)
			;
		if (i < t->nr) {
			t->p[i].listed = true;
			continue;
		}
		xgrow((void **)&t->p, &t->cap, t->nr + 1, sizeof(*t->p));
		t->p[t->nr++] = (struct tree_proc){.pid = pids[k], .listed = true};
	}
	free(pids);
	for (i = 1; i < t->nr; i++) {
		char why[256];

		if (!t->p[i].listed) {
			t->p[i].gone = true;
			continue;
		}
		if (t->p[i].s)
			continue;
		/* A child that exited since the listing, or that cannot be sampled, is no
		 * error of the tree's. */
		util_hold_errors(why, sizeof(why));
		t->p[i].s = stacks_session__new(t->p[i].pid, &t->opts);
		util_hold_errors(NULL, 0);
	}
}

/* Moves the threads of from into into, each marked with pid. */
static void merge(struct snapshot *into, struct snapshot *from, pid_t pid)
{
	size_t i;

	for (i = 0; i < from->nr_threads; i++) {
		struct thread_sample *t = snapshot__add_thread(into);

		*t = from->threads[i];
		t->pid = pid;
	}
	from->nr_threads = 0; /* their buffers belong to into now */
	into->exited += from->exited;
	into->failed += from->failed;
	into->capture_ns += from->capture_ns;
	if (from->freeze_ns > into->freeze_ns)
		into->freeze_ns = from->freeze_ns;
	into->procs++;
}

struct snapshot *stacks_tree__sample(struct stacks_tree *t)
{
	struct snapshot *snap;
	size_t i;

	stacks_tree__refresh(t);
	snap = stacks_session__sample(t->p[0].s);
	if (!snap)
		return NULL;
	for (i = 0; i < snap->nr_threads; i++)
		snap->threads[i].pid = t->p[0].pid;
	snap->procs = 1;
	for (i = 1; i < t->nr; i++) {
		struct snapshot *one;
		char why[256];

		if (!t->p[i].s || t->p[i].gone)
			continue;
		util_hold_errors(why, sizeof(why));
		one = stacks_session__sample(t->p[i].s);
		util_hold_errors(NULL, 0);
		if (!one) {
			t->p[i].gone = true; /* exited meanwhile: its session goes next time */
			continue;
		}
		merge(snap, one, t->p[i].pid);
		snapshot__delete(one);
	}
	return snap;
}
