/* FlameGraph's folded format: "threadname;outermost;...;innermost COUNT", kernel frames
 * (innermost, so last) suffixed "_[k]". Threads of a group with the same name share a
 * line. */
#include <stdio.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "output/frame.h"
#include "output/output.h"

static void put_frame_name(FILE *f, const struct frame *fr)
{
	char buf[512], *p;

	frame__name(fr, buf, sizeof(buf));
	/* ';' separates frames and a trailing number is the count: keep names clean. */
	for (p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ':';
	fprintf(f, ";%s%s", buf, fr->kernel ? "_[k]" : "");
}

void output__folded(FILE *f, const struct stack_agg *agg)
{
	size_t g, i, j;

	for (g = 0; g < agg->nr_groups; g++) {
		const struct stack_group *grp = &agg->groups[g];

		for (i = 0; i < grp->nr_threads; i++) {
			unsigned int count = 0;
			int k;

			/* Only the first thread of each name prints, with the names' total. */
			for (j = 0; j < i && strcmp(grp->threads[j].name, grp->threads[i].name);
			     j++)
				;
			if (j < i)
				continue;
			for (j = i; j < grp->nr_threads; j++)
				if (!strcmp(grp->threads[j].name, grp->threads[i].name))
					count += grp->threads[j].count;
			fprintf(f, "%s", grp->threads[i].name[0] ? grp->threads[i].name : "?");
			for (k = (int)grp->nr_frames - 1; k >= 0; k--)
				if (!grp->frames[k].kernel)
					put_frame_name(f, &grp->frames[k]);
			for (k = (int)grp->nr_frames - 1; k >= 0; k--)
				if (grp->frames[k].kernel)
					put_frame_name(f, &grp->frames[k]);
			fprintf(f, " %u\n", count);
		}
	}
}
