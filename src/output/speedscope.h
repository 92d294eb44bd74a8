/* Folded stacks as a speedscope document (https://www.speedscope.app, its file format
 * "sampled" profiles): one profile per root frame (the thread name), the rest of each stack
 * as a sample, root first, with its weight. speedscope shows them as a timeline-free flame
 * chart ("left heavy"), a sandwich view and a per-thread selector. */
#ifndef SRVSCOPE_OUTPUT_SPEEDSCOPE_H
#define SRVSCOPE_OUTPUT_SPEEDSCOPE_H

#include <stdio.h>

#include "output/flamegraph.h"

struct speedscope_opts {
	const char *name; /* of the profile group, e.g. the trace file's */
	const char *unit; /* "microseconds" or "none" (sample counts) */
};

/* Writes the document; kernel frames ("name_[k]") become frames named "name" in the file
 * "[kernel]". Returns 0 or -errno. */
int speedscope__write(FILE *f, const struct flamegraph_entry *e, size_t n,
		      const struct speedscope_opts *o);

#endif
