/* The critical path in the Trace Event Format (ui.perfetto.dev, chrome://tracing): the path
 * as a track of its own, each hop also on the track of the thread it ran on, and an arrow
 * at each hop. 'critical --format=chrome' writes it as a document; 'timeline --critical'
 * adds the path's track to its own document. */
#ifndef SRVSCOPE_OUTPUT_CRITICAL_CHROME_H
#define SRVSCOPE_OUTPUT_CRITICAL_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct crit_graph;
struct crit_path;

/* The whole document, streamed. Times are microseconds from the path's start; a thread's
 * track is process host * 10^7 + pid. Returns 0 or -EIO. */
int critical_chrome__write(FILE *f, const struct crit_graph *g, const struct crit_path *p);
/* Only the path's own track (process 0, "critical path"), as events of an array being
 * written: each preceded by ",\n" unless *first. Times are microseconds from base_ns
 * (reference clock). Returns 0 or -EIO. */
int critical_chrome__track(FILE *f, const struct crit_graph *g, const struct crit_path *p,
			   int64_t base_ns, bool *first);

#endif
