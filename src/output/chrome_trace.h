/* A timeline in the Trace Event Format of chrome://tracing, which Perfetto's UI
 * (ui.perfetto.dev) also opens: a track per thread with its running, runnable and blocked
 * slices (blocked ones named by their syscall, with the fd and the waker in their
 * arguments), and an arrow from a waker task to each thread it woke. */
#ifndef SRVSCOPE_OUTPUT_CHROME_TRACE_H
#define SRVSCOPE_OUTPUT_CHROME_TRACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct trace;
struct timeline;

/* One event object {"ph", "name" (unless NULL), "pid", "tid"}, for other writers of the
 * format (the critical path's). */
json_t *chrome_trace__event(const char *ph, const char *name, uint32_t pid, uint32_t tid);

/* Writes the document, streamed; kernel(ctx, address) names timer callbacks. Returns 0 or
 * -errno. */
int chrome_trace__write(FILE *f, const struct trace *t, const struct timeline *tl,
			const char *(*kernel)(void *ctx, uint64_t addr), void *ctx);
/* The same, with more events written by more(f, first, arg) at the end of the array (each
 * preceded by ",\n" unless *first): 'timeline --critical' adds the critical path's track. */
int chrome_trace__write_more(FILE *f, const struct trace *t, const struct timeline *tl,
			     const char *(*kernel)(void *ctx, uint64_t addr), void *ctx,
			     int (*more)(FILE *f, bool *first, void *arg), void *arg);

#endif
