/* Allocation and release of snapshots. */
#include <stdlib.h>
#include <string.h>

#include "snapshot/snapshot.h"
#include "util/util.h"

struct snapshot *snapshot__new(pid_t pid)
{
	struct snapshot *snap = xcalloc(1, sizeof(*snap));

	snap->pid = pid;
	snap->mode = "ptrace";
	return snap;
}

void snapshot__drop_stacks(struct snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->nr_threads; i++) {
		free(snap->threads[i].stack_data);
		snap->threads[i].stack_data = NULL;
	}
}

void snapshot__delete(struct snapshot *snap)
{
	size_t i;

	if (!snap)
		return;
	snapshot__drop_stacks(snap);
	for (i = 0; i < snap->nr_threads; i++) {
		free(snap->threads[i].frames);
		free(snap->threads[i].ktext);
	}
	free(snap->threads);
	free(snap);
}

struct thread_sample *snapshot__add_thread(struct snapshot *snap)
{
	struct thread_sample *t;

	xgrow((void **)&snap->threads, &snap->cap_threads, snap->nr_threads + 1,
	      sizeof(*snap->threads));
	t = &snap->threads[snap->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->syscall = -1;
	return t;
}
