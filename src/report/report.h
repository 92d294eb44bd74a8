/* srvscope report: one self-contained HTML file from trace files. The analyses (sched,
 * blocking, flame, timeline) run here, their aggregates go into the page as JSON, and the
 * page's own JavaScript and CSS, built into srvscope, draw them: no network is needed to
 * open it, and its size does not grow with the number of events. docs/report.md. */
#ifndef SRVSCOPE_REPORT_REPORT_H
#define SRVSCOPE_REPORT_REPORT_H

#include <stddef.h>
#include <stdio.h>

struct report_opts {
	const char *model;	  /* a model document (docs/model-json.md) to show, or NULL */
	const char *critical;	  /* a critical-path document to show, or NULL */
	unsigned int buckets;	  /* the timeline's columns per thread */
	unsigned int max_threads; /* in the timeline and the table, the busiest first */
};

#define REPORT_BUCKETS_DEFAULT	   400
#define REPORT_MAX_THREADS_DEFAULT 1000

/* Reads the n traces one after the other (one in memory at a time) and writes the page to
 * f. Returns 0, or -1 once the reason has been reported (a trace or a document that
 * cannot be read, a write error). */
int report__write_html(FILE *f, char *const *paths, size_t n, const struct report_opts *o);

#endif
