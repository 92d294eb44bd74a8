/* The default, human output: a header, then groups of identical stacks, largest first,
 * each with its share, threads and frames (innermost first). */
#include <stdio.h>

#include "analysis/aggregate.h"
#include "output/frame.h"
#include "output/output.h"

static void header(FILE *f, const struct stack_agg *agg)
{
	fprintf(f, "pid %d (%s): %u thread%s", agg->pid, agg->comm, agg->threads,
		agg->threads == 1 ? "" : "s");
	if (agg->processes > 1) /* the process and its descendants */
		fprintf(f, " in %u processes", agg->processes);
	fprintf(f, ", %u sample%s, mode %s", agg->samples, agg->samples == 1 ? "" : "s", agg->mode);
	if (agg->stall.nr)
		fprintf(f, ", stall per thread mean %llu us, max %llu us",
			(unsigned long long)(agg->stall.total_ns / agg->stall.nr / 1000),
			(unsigned long long)(agg->stall.max_ns / 1000));
	if (agg->freeze_ns_max)
		fprintf(f, ", all threads frozen %llu us",
			(unsigned long long)(agg->freeze_ns_max / 1000));
	fprintf(f, "\n");
	/* Processes of one server look alike by name: postgres, apache2; their titles differ. */
	if (agg->title[0])
		fprintf(f, "command: %s\n", agg->title);
	if (agg->exited)
		fprintf(f, "(%u thread%s exited while being sampled and were skipped)\n",
			agg->exited, agg->exited == 1 ? "" : "s");
	if (agg->failed)
		fprintf(f, "(%u thread%s could not be sampled)\n", agg->failed,
			agg->failed == 1 ? "" : "s");
}

void output__text(FILE *f, const struct stack_agg *agg)
{
	unsigned long long total = 0;
	size_t g, i;
	char name[512], st[64];

	for (g = 0; g < agg->nr_groups; g++)
		total += agg->groups[g].count;
	header(f, agg);
	for (g = 0; g < agg->nr_groups; g++) {
		const struct stack_group *grp = &agg->groups[g];

		fprintf(f, "\n%u %s%s (%.1f%%):", grp->count,
			agg->samples > 1 ? "thread-sample" : "thread", grp->count == 1 ? "" : "s",
			total ? 100.0 * grp->count / total : 0.0);
		for (i = 0; i < grp->nr_threads && i < 16; i++)
			fprintf(f, " %s/%d", grp->threads[i].name, grp->threads[i].tid);
		if (grp->nr_threads > 16)
			fprintf(f, " ... (%zu more)", grp->nr_threads - 16);
		if (grp->nr_threads)
			fprintf(f, "  [%s]",
				frame__thread_state(grp->threads[0].state, grp->threads[0].syscall,
						    st, sizeof(st)));
		fprintf(f, "\n");
		if (!grp->nr_frames)
			fprintf(f, "    (no stack: the thread could not be unwound)\n");
		for (i = 0; i < grp->nr_frames; i++) {
			const struct frame *fr = &grp->frames[i];

			if (!fr->addr && !fr->module) { /* FRAME_TRUNCATED: no module */
				fprintf(f, "    #%-3zu %s\n", i,
					frame__name(fr, name, sizeof(name)));
				continue;
			}
			fprintf(f, "    #%-3zu %s%s  (%s)\n", i,
				frame__name(fr, name, sizeof(name)), fr->kernel ? " [k]" : "",
				frame__module_base(fr));
		}
	}
}
