/* gdb "thread apply all bt" style blocks, one per thread, so the aggregation scripts
 * written for gdb-based poor man's profilers (pt-pmp) work unchanged: they read the
 * function from "#N 0xADDR in NAME (...)" lines. */
#include <stdio.h>
#include <string.h>

#include "output/frame.h"
#include "output/output.h"
#include "snapshot/snapshot.h"
#include "util/escape.h"

/* gdb prints a function's name without its parameter list. */
static void print_name(FILE *f, const struct frame *fr)
{
	char buf[512];
	const char *name = frame__name(fr, buf, sizeof(buf));
	size_t len = strlen(name);
	int depth = 0;
	size_t i;

	if (!fr->symbol) {
		fprintf(f, "??");
		return;
	}
	/* The parameter list is the last top-level parenthesised part. */
	for (i = len; i > 0; i--) {
		char c = name[i - 1];

		if (c == ')')
			depth++;
		else if (c == '(' && --depth == 0) {
			len = i - 1;
			break;
		}
	}
	if (i == 0)
		len = strlen(name);
	fprintf(f, "%.*s", (int)len, name);
}

void output__raw(FILE *f, const struct snapshot *snap)
{
	size_t i, n = snap->nr_threads;
	unsigned int j;

	for (i = 0; i < n; i++) {
		const struct thread_sample *t = &snap->threads[i];
		char name[COMM_ESCAPED_SIZE];

		name_escape(name, sizeof(name), t->name, strnlen(t->name, sizeof(t->name)));
		fprintf(f, "\nThread %zu (LWP %d \"%s\"):\n", n - i, t->tid, name);
		for (j = 0; j < t->nr_frames; j++) {
			const struct frame *fr = &t->frames[j];

			fprintf(f, "#%-2u 0x%016llx in ", j, (unsigned long long)fr->addr);
			print_name(f, fr);
			fprintf(f, " () from %s\n", fr->module ? fr->module : "??");
		}
	}
	fflush(f);
}
