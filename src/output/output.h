/* Writers of stack snapshots and aggregates, one module per format: text (grouped,
 * human), raw (gdb "thread apply all bt" blocks for pt-pmp scripts), folded (FlameGraph
 * input), json (documented in docs/stacks-json.md) and speedscope. */
#ifndef SRVSCOPE_OUTPUT_OUTPUT_H
#define SRVSCOPE_OUTPUT_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct stack_agg;
struct snapshot;

enum output_format {
	OUTPUT_TEXT,
	OUTPUT_RAW,
	OUTPUT_FOLDED,
	OUTPUT_JSON,
	OUTPUT_SPEEDSCOPE,
	OUTPUT_PPROF,
};

/* Parses "text", "raw", "folded", "json", "speedscope", "pprof"; returns -1 after an error message
 * otherwise. */
int output__parse_format(const char *s, enum output_format *fmt);

void output__text(FILE *f, const struct stack_agg *agg);
/* One block per thread per snapshot, gdb style. */
void output__raw(FILE *f, const struct snapshot *snap);
/* "threadname;outermost;...;innermost COUNT" lines, kernel frames suffixed "_[k]". */
void output__folded(FILE *f, const struct stack_agg *agg);
/* One JSON document on one line (json_dumps compact) followed by '\n' when compact,
 * else indented. */
void output__json(FILE *f, const struct stack_agg *agg, bool compact);
/* The folded stacks as one speedscope document on one line (a profile per thread name,
 * weights in thread-samples); name: the document's. */
void output__speedscope(FILE *f, const struct stack_agg *agg, const char *name);
/* The aggregate as one gzip'd pprof profile (samples/count, labels thread and tid;
 * docs/pprof.md), over duration_ns; 0, or -1 after an error message. */
int output__pprof(FILE *f, const struct stack_agg *agg, uint64_t duration_ns);

#endif
