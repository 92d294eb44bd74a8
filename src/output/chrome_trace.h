/* A timeline in the Trace Event Format of chrome://tracing, which Perfetto's UI
 * (ui.perfetto.dev) also opens: a track per thread with its running, runnable and blocked
 * slices (blocked ones named by their syscall, with the fd and the waker in their
 * arguments), and an arrow from a waker task to each thread it woke. */
#ifndef SRVSCOPE_OUTPUT_CHROME_TRACE_H
#define SRVSCOPE_OUTPUT_CHROME_TRACE_H

#include <stdint.h>
#include <stdio.h>

struct trace;
struct timeline;

/* Writes the document, streamed; kernel(ctx, address) names timer callbacks. Returns 0 or
 * -errno. */
int chrome_trace__write(FILE *f, const struct trace *t, const struct timeline *tl,
			const char *(*kernel)(void *ctx, uint64_t addr), void *ctx);

#endif
