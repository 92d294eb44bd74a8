/* Grouping of identical stacks and the four output formats, on hand-made snapshots. */
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "output/output.h"
#include "snapshot/snapshot.h"
#include "unit.h"

static void add(struct snapshot *snap, pid_t tid, const char *name, long sc, const char **syms,
		unsigned int n, unsigned int nk)
{
	struct thread_sample *t = snapshot__add_thread(snap);
	unsigned int i;

	t->tid = tid;
	strcpy(t->name, name);
	t->state = sc >= 0 ? 'S' : 'R';
	t->syscall = sc;
	t->stall_ns = 10000 * tid;
	t->frames = calloc(n, sizeof(*t->frames));
	for (i = 0; i < n; i++) {
		t->frames[i].addr = 0x1000 + i;
		t->frames[i].symbol = syms[i];
		t->frames[i].module = i < nk ? "[kernel]" : "/usr/bin/fix";
		t->frames[i].offset = i;
		t->frames[i].kernel = i < nk;
	}
	t->nr_frames = n;
}

static char *capture(void (*fn)(FILE *, const struct stack_agg *), const struct stack_agg *agg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, agg);
	fclose(f);
	return buf;
}

static void json_compact(FILE *f, const struct stack_agg *agg)
{
	output__json(f, agg, true);
}

int main(void)
{
	const char *a[] = {"futex_wait", "lock", "worker", "start_thread"};
	const char *a2[] = {"futex_wait", "lock", "worker", "start_thread"};
	const char *b[] = {"spin", "main"};
	const char *k[] = {"schedule", "futex_wait", "lock", "worker", "start_thread"};
	const char *unknown[] = {NULL, "main"};
	struct snapshot *s1 = snapshot__new(42), *s2 = snapshot__new(42);
	struct stack_agg *agg = stack_agg__new(false);
	enum output_format fmt;
	char *out;

	strcpy(s1->comm, "fix");
	add(s1, 43, "worker", 202, a, 4, 0);
	add(s1, 44, "worker", 202, a2, 4, 0);
	add(s1, 42, "fix", -1, b, 2, 0);
	add(s1, 45, "other", 202, k, 5, 1);
	add(s1, 46, "odd", -1, unknown, 2, 0);
	strcpy(s2->comm, "fix");
	add(s2, 43, "worker", 202, a, 4, 0);
	add(s2, 42, "fix", -1, b, 2, 0);

	stack_agg__add(agg, s1);
	stack_agg__add(agg, s2);
	stack_agg__sort(agg);
	is_int(agg->samples, 2, "two samples");
	is_int(agg->threads, 5, "largest thread count");
	is_int(agg->nr_groups, 3, "kernel frames ignored for grouping unless asked");
	is_int(agg->groups[0].count, 4, "biggest group first: 4 thread-samples");
	is_int(agg->groups[0].nr_threads, 3, "three threads in it");
	is_str(agg->groups[0].frames[0].symbol, "futex_wait", "innermost first");
	is_int(agg->groups[1].count, 2, "then the spinning main thread");
	is_int(agg->stall.nr, 7, "stall counted per thread-sample");
	is_int(agg->stall.max_ns, 460000, "max stall");

	out = capture(output__folded, agg);
	ok(strstr(out, "worker;start_thread;worker;lock;futex_wait 3\n") != NULL,
	   "folded: one line per thread name, outermost first, counts summed");
	ok(strstr(out, "fix;main;spin 2\n") != NULL, "folded: main thread");
	ok(strstr(out, "odd;main;fix+0x0 1\n") != NULL, "folded: unknown frame as module+offset");
	free(out);

	out = capture(json_compact, agg);
	ok(strstr(out, "\"pid\":42") && strstr(out, "\"samples\":2") &&
		   strstr(out, "\"syscall\":\"futex\"") && strstr(out, "\"symbol\":null") &&
		   strstr(out, "\"stall_us\":{\"total\":") &&
		   strchr(out, '\n') == strrchr(out, '\n'),
	   "json: fields, syscall names, null symbols, one line when compact");
	free(out);

	out = capture(output__text, agg);
	ok(strstr(out, "4 thread-samples (") && strstr(out, "worker/43") &&
		   strstr(out, "[S futex]"),
	   "text: counts, thread names, state and syscall");
	free(out);
	stack_agg__delete(agg);

	agg = stack_agg__new(true);
	stack_agg__add(agg, s1);
	stack_agg__sort(agg);
	is_int(agg->nr_groups, 4, "with kernel frames, the kernel stack splits a group");
	out = capture(output__folded, agg);
	ok(strstr(out, "other;start_thread;worker;lock;futex_wait;schedule_[k] 1\n") != NULL,
	   "folded: kernel frames last with _[k]");
	free(out);
	stack_agg__delete(agg);

	ok(output__parse_format("folded", &fmt) == 0 && fmt == OUTPUT_FOLDED, "format names");
	ok(output__parse_format("xml", &fmt) < 0, "unknown format refused");

	snapshot__delete(s1);
	snapshot__delete(s2);
	return done_testing();
}
