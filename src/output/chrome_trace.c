/* The Trace Event Format: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {}}.
 * Events used: "M" (process_name, thread_name), "X" (a slice: ts and dur in microseconds),
 * "s"/"f" (a flow arrow, bound to the slices enclosing its two ends). The array is
 * streamed, each event written by jansson, so a long trace is never held as one
 * document. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/timeline.h"
#include "output/chrome_trace.h"
#include "trace/syscalls.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/escape.h"

struct writer {
	FILE *f;
	const struct trace *t;
	bool first;
	int err;
};

static void emit(struct writer *w, json_t *ev)
{
	if (!w->first)
		fputs(",\n", w->f);
	w->first = false;
	if (json_dumpf(ev, w->f, JSON_COMPACT))
		w->err = -EIO;
	json_decref(ev);
}

static double us(const struct writer *w, uint64_t ns)
{
	return ns >= w->t->first_ns ? (ns - w->t->first_ns) / 1e3 : 0;
}

static json_t *event(const char *ph, const char *name, uint32_t pid, uint32_t tid)
{
	json_t *ev = json_object();

	json_object_set_new(ev, "ph", json_string(ph));
	if (name)
		json_object_set_new(ev, "name", json_string(name));
	json_object_set_new(ev, "pid", json_integer(pid));
	json_object_set_new(ev, "tid", json_integer(tid));
	return ev;
}

json_t *chrome_trace__event(const char *ph, const char *name, uint32_t pid, uint32_t tid)
{
	return event(ph, name, pid, tid);
}

static void name_thread(struct writer *w, uint32_t pid, uint32_t tid, bool process)
{
	const struct trace_thread *th = trace__thread(w->t, process ? pid : tid);
	json_t *ev = event("M", process ? "process_name" : "thread_name", pid, tid), *args, *name;
	char title[256];

	args = json_object();
	/* A process by its title (postgres: walwriter): its workers all have one comm. */
	name = process && trace__title(w->t, pid, title, sizeof(title)) && title[0]
		       ? json_string(title)
		       : NULL;
	json_object_set_new(args, "name",
			    name ? name : json_string(th && th->comm[0] ? th->comm : "?"));
	json_object_set_new(ev, "args", args);
	emit(w, ev);
}

static json_t *blocked_args(const struct writer *w, const struct block_episode *ep,
			    const char *(*kernel)(void *ctx, uint64_t addr), void *ctx)
{
	json_t *a = json_object();
	const char *desc = ep->fd >= 0 ? trace__fd_desc(w->t, ep->pid, ep->fd, ep->start_ns) : NULL;
	const char *detail;
	char buf[64];

	if (ep->syscall >= 0)
		json_object_set_new(a, "syscall",
				    json_string(syscall__name(ep->syscall, buf, sizeof(buf))));
	if (ep->fd >= 0)
		json_object_set_new(a, "fd", json_integer(ep->fd));
	if (desc)
		json_object_set_new(a, "fd_desc", json_string(desc));
	json_object_set_new(a, "wakeup", json_string(blocking__kind_name(ep->wake_kind)));
	detail = blocking__wake_detail(ep, kernel, ctx, buf, sizeof(buf));
	if (detail)
		json_object_set_new(a, "wakeup_detail", json_string(detail));
	if (ep->wake_kind == WAKE_TASK) {
		json_object_set_new(a, "waker_tid", json_integer(ep->waker_tid));
		char name[COMM_ESCAPED_SIZE];

		json_object_set_new(a, "waker_comm",
				    json_string(blocking__waker_name(ep, name, sizeof(name))));
	}
	return a;
}

static void slice(struct writer *w, const struct timeline *tl, const struct tl_slice *s,
		  const char *(*kernel)(void *ctx, uint64_t addr), void *ctx)
{
	const struct block_episode *ep = s->kind >= TL_BLOCKED ? &tl->blocks.eps[s->ep] : NULL;
	char name[64], buf[32];
	json_t *ev;

	if (s->kind == TL_BLOCKED && ep->syscall >= 0)
		snprintf(name, sizeof(name), "blocked: %s",
			 syscall__name(ep->syscall, buf, sizeof(buf)));
	else
		snprintf(name, sizeof(name), "%s", timeline__kind_name(s->kind));
	ev = event("X", name, s->pid, s->tid);
	json_object_set_new(ev, "cat", json_string(s->kind == TL_BLOCKED ? "blocking" : "sched"));
	json_object_set_new(ev, "ts", json_real(us(w, s->start_ns)));
	json_object_set_new(ev, "dur", json_real((s->end_ns - s->start_ns) / 1e3));
	if (ep && s->kind == TL_BLOCKED)
		json_object_set_new(ev, "args", blocked_args(w, ep, kernel, ctx));
	if (s->kind == TL_RUNNING && s->cpu_ns)
		json_object_set_new(ev, "args", json_pack("{sI}", "cpu_ns", (json_int_t)s->cpu_ns));
	if (s->open) {
		json_t *a = json_object_get(ev, "args");

		if (!a)
			json_object_set_new(ev, "args", a = json_object());
		json_object_set_new(a, "cut_by_recording", json_true());
	}
	emit(w, ev);
}

/* An arrow from the waker, at the wake-up, to the slice the woken thread starts then. */
static void flow(struct writer *w, const struct block_episode *ep, uint64_t id)
{
	const struct trace_thread *waker = trace__thread(w->t, ep->waker_tid);
	json_t *s = event("s", "wakeup", waker->pid, ep->waker_tid);
	json_t *f = event("f", "wakeup", ep->pid, ep->tid);

	json_object_set_new(s, "cat", json_string("wakeup"));
	json_object_set_new(s, "id", json_integer(id));
	json_object_set_new(s, "ts", json_real(us(w, ep->wake_ns)));
	emit(w, s);
	json_object_set_new(f, "cat", json_string("wakeup"));
	json_object_set_new(f, "id", json_integer(id));
	json_object_set_new(f, "ts", json_real(us(w, ep->wake_ns)));
	json_object_set_new(f, "bp", json_string("e"));
	emit(w, f);
}

int chrome_trace__write(FILE *f, const struct trace *t, const struct timeline *tl,
			const char *(*kernel)(void *ctx, uint64_t addr), void *ctx)
{
	return chrome_trace__write_more(f, t, tl, kernel, ctx, NULL, NULL);
}

int chrome_trace__write_more(FILE *f, const struct trace *t, const struct timeline *tl,
			     const char *(*kernel)(void *ctx, uint64_t addr), void *ctx,
			     int (*more)(FILE *f, bool *first, void *arg), void *arg)
{
	struct writer w = {.f = f, .t = t, .first = true};
	struct u64map tids = {0}, pids = {0};
	json_t *other = json_object();
	uint64_t flows = 0;
	bool created;
	size_t i;

	fputs("{\"traceEvents\": [\n", f);
	for (i = 0; i < tl->nr; i++) {
		const struct tl_slice *s = &tl->slices[i];

		u64map__slot(&pids, s->pid, &created);
		if (created)
			name_thread(&w, s->pid, s->tid, true);
		u64map__slot(&tids, s->tid, &created);
		if (created)
			name_thread(&w, s->pid, s->tid, false);
		slice(&w, tl, s, kernel, ctx);
	}
	/* Arrows only between threads on the timeline: their ends must bind to slices. */
	for (i = 0; i < tl->nr; i++) {
		const struct tl_slice *s = &tl->slices[i];
		const struct block_episode *ep;

		if (s->kind != TL_WOKEN)
			continue;
		ep = &tl->blocks.eps[s->ep];
		if (ep->wake_kind == WAKE_TASK && u64map__get(&tids, ep->waker_tid, NULL) &&
		    trace__thread(t, ep->waker_tid))
			flow(&w, ep, ++flows);
	}
	if (more && more(f, &w.first, arg))
		w.err = -EIO;
	fputs("\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": ", f);
	json_object_set_new(other, "tool", json_string("srvscope timeline"));
	json_object_set_new(other, "host", json_string(t->hdr.host));
	json_object_set_new(other, "kernel", json_string(t->hdr.kernel));
	json_object_set_new(other, "trace_start_ns", json_integer(t->first_ns));
	json_object_set_new(other, "lost_events", json_integer(trace__lost_events(t)));
	if (json_dumpf(other, f, JSON_COMPACT))
		w.err = -EIO;
	json_decref(other);
	fputs("}\n", f);
	u64map__free(&tids);
	u64map__free(&pids);
	return w.err;
}
