/* report__write_html over a hand-made trace: the page's JSON, read back, has the
 * thread's timeline summing to its slices, the off-CPU flame's weight, the count of a
 * section type the reader does not know (the hook for the critical path and the model),
 * and names with markup only escaped inside the JSON (no '<', no raw U+2028). */
#include <jansson.h>

#include "rec_build.h"
#include "report/report.h"
#include "unit.h"
#include "util/util.h"

#define US 1000ull

/* The JSON of <script ... id="ID">, parsed. */
static json_t *script_json(const char *page, const char *id)
{
	char open[64];
	const char *s, *e;
	char *text;
	json_t *doc;

	snprintf(open, sizeof(open), "id=\"%s\">", id);
	s = strstr(page, open);
	if (!s)
		return NULL;
	s += strlen(open);
	e = strstr(s, "</script>");
	if (!e)
		return NULL;
	text = strndup(s, e - s);
	ok(!strchr(text, '<') && !strstr(text, "\xe2\x80\xa8"), "%s: no '<', no raw U+2028", id);
	doc = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	return doc;
}

static long long sum(json_t *arr)
{
	long long n = 0;
	size_t i;

	for (i = 0; i < json_array_size(arr); i++)
		n += json_integer_value(json_array_get(arr, i));
	return n;
}

int main(void)
{
	struct report_opts o = {.buckets = 10, .max_threads = 100};
	static const char payload[] = "a critical path, some day";
	char *page = NULL, *path;
	size_t len = 0, i;
	json_t *doc, *T, *th = NULL;
	struct tb b;
	FILE *f;

	tb_open(&b);
	trace_writer__add_name(b.w, 10, 10, "<b>app</b>");
	trace_writer__add_name(b.w, 11, 10, "x\xe2\x80\xa8y");
	/* as test_timeline, in microseconds: runs 100-300, blocked 300-400, woken, runs
	 * 450-600, preempted 600-700, runs to the end (1000) */
	tb_switch(&b, 100 * US, 0, 0, 0, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 300 * US, 10, 10, 1, 11, 10, 0, 3, 0, 0);
	tb_waking_task(&b, 400 * US, 10, 10, 11, "x\xe2\x80\xa8y", 0, 0);
	tb_simple(&b, 400 * US, REC_WAKEUP, 10, 10);
	tb_switch(&b, 450 * US, 11, 10, 1, 10, 10, -1, -1, 0, 0);
	tb_switch(&b, 600 * US, 10, 10, 0, 11, 10, -1, -1, 0, 0);
	tb_switch(&b, 700 * US, 11, 10, 1, 10, 10, -1, -1, 0, 0);
	trace_writer__section(b.w, 11, payload, sizeof(payload));
	trace_writer__close(b.w, 1000 * US);
	path = b.path;

	f = open_memstream(&page, &len);
	is_int(report__write_html(f, &path, 1, &o), 0, "the page is written");
	fclose(f);
	unlink(b.path);
	ok(strstr(page, "<!DOCTYPE html>") == page && strstr(page, "</html>"), "a whole page");
	doc = script_json(page, "srvscope-data");
	T = json_array_get(json_object_get(doc, "traces"), 0);
	if (!ok(T != NULL, "the data parse"))
		return done_testing();
	is_int(json_integer_value(json_object_get(json_object_get(T, "other_sections"), "11")), 1,
	       "the section of type 11 is counted");
	for (i = 0; i < json_array_size(json_object_get(T, "threads")); i++)
		if (json_integer_value(json_object_get(
			    json_array_get(json_object_get(T, "threads"), i), "tid")) == 10)
			th = json_array_get(json_object_get(T, "threads"), i);
	if (!ok(th != NULL, "thread 10 has a row"))
		return done_testing();
	is_str(json_string_value(json_object_get(th, "comm")), "<b>app</b>",
	       "its name, whole once the JSON is read");
	{
		json_t *tl = json_object_get(th, "timeline");
		long long bucket = json_integer_value(json_object_get(T, "bucket_ns"));
		long long run = sum(json_object_get(tl, "running")) * bucket / 1000;
		long long wait = sum(json_object_get(tl, "runnable")) * bucket / 1000;
		long long blocked = sum(json_object_get(tl, "blocked")) * bucket / 1000;

		/* per mille of each of 10 buckets: within 10 x half a per mille */
		ok(llabs(run - 650 * (long long)US) < (long long)bucket / 100,
		   "running %lld ns of 650 us", run);
		ok(llabs(wait - 150 * (long long)US) < (long long)bucket / 100,
		   "runnable %lld ns of 150 us (woken 50, preempted 100)", wait);
		ok(llabs(blocked - 100 * (long long)US) < (long long)bucket / 100,
		   "blocked %lld ns of 100 us", blocked);
	}
	is_int(json_integer_value(json_object_get(th, "episodes")), 1, "one episode");
	is_int(json_integer_value(json_object_get(th, "blocked_ns")), 150 * US,
	       "blocked 150 us (until switched back in)");
	{
		json_t *off = json_object_get(json_object_get(T, "flames"), "off");
		json_t *names = json_object_get(off, "names"),
		       *nodes = json_object_get(off, "nodes");
		long long app = -1;

		/* the helper blocks too: 450-600 and 700-1000 (cut by the end) */
		is_int(json_integer_value(json_object_get(off, "total")), 550,
		       "off-CPU flame: 550 us in all");
		for (i = 0; i + 2 < json_array_size(nodes); i += 3)
			if (json_integer_value(json_array_get(nodes, i)) == 0 &&
			    !strcmp(json_string_value(json_array_get(
					    names,
					    json_integer_value(json_array_get(nodes, i + 1)))),
				    "<b>app</b>"))
				app = json_integer_value(json_array_get(nodes, i + 2));
		is_int(app, 100, "thread 10 under the root: 100 us (blocked until woken)");
	}
	ok(json_is_null(json_object_get(json_object_get(T, "flames"), "on")), "no on-CPU flame");
	json_decref(doc);
	doc = script_json(page, "srvscope-model");
	ok(doc && json_is_null(doc), "no model: null");
	json_decref(doc);
	free(page);

	/* A model that is not JSON: an error, nothing written. */
	f = open_memstream(&page, &len);
	o.model = "/nonexistent/model.json";
	ok(report__write_html(f, &path, 1, &o) < 0, "a model that cannot be read is an error");
	fclose(f);
	is_int(len, 0, "and nothing is written");
	free(page);
	return done_testing();
}
