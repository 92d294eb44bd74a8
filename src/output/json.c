/* The JSON document of docs/stacks-json.md, built with jansson. */
#include <jansson.h>
#include <stdio.h>

#include "analysis/aggregate.h"
#include "output/output.h"
#include "trace/syscalls.h"

static json_t *hex(unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", v);
	return json_string(buf);
}

static json_t *frame_json(const struct frame *fr)
{
	json_t *o = json_object();

	json_object_set_new(o, "addr", hex(fr->addr));
	json_object_set_new(o, "symbol", fr->symbol ? json_string(fr->symbol) : json_null());
	json_object_set_new(o, "module", fr->module ? json_string(fr->module) : json_null());
	json_object_set_new(o, "offset", hex(fr->offset));
	json_object_set_new(o, "kernel", json_boolean(fr->kernel));
	return o;
}

static json_t *group_json(const struct stack_group *g)
{
	json_t *o = json_object(), *threads = json_array(), *frames = json_array();
	size_t i;

	for (i = 0; i < g->nr_threads; i++) {
		const struct group_thread *t = &g->threads[i];
		char tmp[32], state[2] = {t->state, 0};
		const char *sc =
			t->syscall >= 0 ? syscall__name((int)t->syscall, tmp, sizeof(tmp)) : NULL;
		json_t *jt = json_object();

		json_object_set_new(jt, "tid", json_integer(t->tid));
		if (t->pid)
			json_object_set_new(jt, "pid", json_integer(t->pid));
		json_object_set_new(jt, "name", json_string(t->name));
		json_object_set_new(jt, "state", json_string(state));
		json_object_set_new(jt, "syscall", sc ? json_string(sc) : json_null());
		json_object_set_new(jt, "count", json_integer(t->count));
		json_array_append_new(threads, jt);
	}
	for (i = 0; i < g->nr_frames; i++)
		json_array_append_new(frames, frame_json(&g->frames[i]));
	json_object_set_new(o, "count", json_integer(g->count));
	json_object_set_new(o, "threads", threads);
	json_object_set_new(o, "frames", frames);
	return o;
}

void output__json(FILE *f, const struct stack_agg *agg, bool compact)
{
	json_t *doc = json_object(), *stall = json_object(), *groups = json_array(), *title;
	size_t i;

	json_object_set_new(doc, "pid", json_integer(agg->pid));
	json_object_set_new(doc, "comm", json_string(agg->comm));
	title = agg->title[0] ? json_string(agg->title) : NULL; /* NULL too when not UTF-8 */
	json_object_set_new(doc, "title", title ? title : json_null());
	json_object_set_new(doc, "mode", json_string(agg->mode ? agg->mode : "ptrace"));
	json_object_set_new(doc, "samples", json_integer(agg->samples));
	json_object_set_new(doc, "threads", json_integer(agg->threads));
	json_object_set_new(doc, "processes", json_integer(agg->processes ? agg->processes : 1));
	json_object_set_new(doc, "exited_threads", json_integer(agg->exited));
	json_object_set_new(doc, "failed_threads", json_integer(agg->failed));
	json_object_set_new(stall, "total", json_integer(agg->stall.total_ns / 1000));
	json_object_set_new(
		stall, "mean",
		json_integer(agg->stall.nr ? agg->stall.total_ns / agg->stall.nr / 1000 : 0));
	json_object_set_new(stall, "max", json_integer(agg->stall.max_ns / 1000));
	json_object_set_new(stall, "stopped_thread_samples", json_integer(agg->stall.nr));
	json_object_set_new(doc, "stall_us", stall);
	json_object_set_new(doc, "freeze_us", json_integer(agg->freeze_ns_max / 1000));
	for (i = 0; i < agg->nr_groups; i++)
		json_array_append_new(groups, group_json(&agg->groups[i]));
	json_object_set_new(doc, "groups", groups);
	json_dumpf(doc, f, compact ? JSON_COMPACT : JSON_INDENT(2));
	fputc('\n', f);
	fflush(f);
	json_decref(doc);
}
