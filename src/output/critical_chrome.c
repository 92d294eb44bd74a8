/* The critical path as Trace Event Format events, each written by jansson as it is made
 * (a path over a long trace has millions of segments): "M" names, "X" slices, "s"/"f"
 * flow arrows bound to the slices at their ends. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>

#include "critical/critical.h"
#include "output/chrome_trace.h"
#include "output/critical_chrome.h"
#include "trace/trace.h"

struct out {
	FILE *f;
	bool *first;
	int err;
};

static void put(struct out *o, json_t *ev)
{
	if (!*o->first)
		fputs(",\n", o->f);
	*o->first = false;
	if (json_dumpf(ev, o->f, JSON_COMPACT))
		o->err = -EIO;
	json_decref(ev);
}

static void meta(struct out *o, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	json_t *ev = chrome_trace__event("M", what, pid, tid), *args = json_object();

	json_object_set_new(args, "name", json_string(name));
	json_object_set_new(ev, "args", args);
	put(o, ev);
}

static const char *thread_name(const struct crit_graph *g, size_t host, uint32_t tid)
{
	const struct trace_thread *th = trace__thread(g->hosts[host].t, tid);

	return th && th->comm[0] ? th->comm : "?";
}

static uint32_t track_pid(const struct crit_segment *seg)
{
	return (seg->host + 1) * 10000000u + seg->pid; /* below 2^32 for 400 hosts */
}

static void slice(struct out *o, const struct crit_graph *g, const struct crit_segment *seg,
		  int64_t base_ns, uint32_t pid, uint32_t tid)
{
	char name[192], what[CRIT_WHAT_SIZE];
	json_t *ev, *args;

	crit_segment__what(g, seg, what, sizeof(what));
	snprintf(name, sizeof(name), "%s %s%s%s", crit_edge__name(seg->edge),
		 thread_name(g, seg->host, seg->tid), what[0] ? ": " : "", what);
	ev = chrome_trace__event("X", name, pid, tid);
	json_object_set_new(ev, "ts", json_real((seg->start_ns - base_ns) / 1e3));
	json_object_set_new(ev, "dur", json_real((seg->end_ns - seg->start_ns) / 1e3));
	args = json_object();
	json_object_set_new(args, "thread", json_string(thread_name(g, seg->host, seg->tid)));
	json_object_set_new(args, "tid", json_integer(seg->tid));
	json_object_set_new(args, "host", json_string(g->hosts[seg->host].name));
	if (what[0])
		json_object_set_new(args, "waited_for", json_string(what));
	json_object_set_new(ev, "args", args);
	put(o, ev);
}

int critical_chrome__track(FILE *f, const struct crit_graph *g, const struct crit_path *p,
			   int64_t base_ns, bool *first)
{
	struct out o = {.f = f, .first = first};
	size_t i;

	meta(&o, "process_name", 0, 0, "critical path");
	meta(&o, "thread_name", 0, 0, "critical path");
	for (i = 0; i < p->nr; i++)
		slice(&o, g, &p->segs[i], base_ns, 0, 0);
	return o.err;
}

int critical_chrome__write(FILE *f, const struct crit_graph *g, const struct crit_path *p)
{
	bool first = true;
	struct out o = {.f = f, .first = &first};
	size_t i;

	fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", f);
	o.err = critical_chrome__track(f, g, p, p->start_ns, &first);
	for (i = 0; i < p->nr; i++) {
		const struct crit_segment *seg = &p->segs[i], *prev = i ? &p->segs[i - 1] : NULL;
		bool hop = prev && (seg->host != prev->host || seg->tid != prev->tid);
		double ts = (seg->start_ns - p->start_ns) / 1e3;
		json_t *ev;

		if (!prev || hop) {
			char pname[160];

			snprintf(pname, sizeof(pname), "%s pid %u", g->hosts[seg->host].name,
				 seg->pid);
			meta(&o, "process_name", track_pid(seg), seg->tid, pname);
			meta(&o, "thread_name", track_pid(seg), seg->tid,
			     thread_name(g, seg->host, seg->tid));
		}
		slice(&o, g, seg, p->start_ns, track_pid(seg), seg->tid);
		if (!hop)
			continue;
		/* An arrow from the previous hop's thread to this one. */
		ev = chrome_trace__event("s", "hop", track_pid(prev), prev->tid);
		json_object_set_new(ev, "id", json_integer(i));
		json_object_set_new(ev, "cat", json_string("critical"));
		json_object_set_new(ev, "ts", json_real(ts - 0.001));
		put(&o, ev);
		ev = chrome_trace__event("f", "hop", track_pid(seg), seg->tid);
		json_object_set_new(ev, "id", json_integer(i));
		json_object_set_new(ev, "cat", json_string("critical"));
		json_object_set_new(ev, "bp", json_string("e"));
		json_object_set_new(ev, "ts", json_real(ts));
		put(&o, ev);
	}
	fputs("\n]}\n", f);
	return o.err;
}
