/* srvscope sched: per-thread runtime, switches and scheduling delay from a trace file, in
 * the spirit of 'perf sched latency', as text or JSON, with an optional delay histogram. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "analysis/sched.h"
#include "cmd/cmd.h"
#include "trace/report_cmdline.h"
#include "trace/trace.h"
#include "util/util.h"

static const char usage_text[] =
	"usage: srvscope sched FILE [--format=text|json] [--hist]\n"
	"\n"
	"Per thread: time on CPU (as the kernel accounts it, what top and getrusage show),\n"
	"times switched out, and the delay between becoming runnable (woken or preempted)\n"
	"and running, average and maximum, and when the maximum was. A damaged section of\n"
	"the file is skipped with a warning; the rest is read.\n"
	"\n"
	"  -f, --format FMT   text (default) or json\n"
	"      --hist         add a histogram of the delays of each thread\n";

static void hist_bounds(unsigned int b, char *buf, size_t size)
{
	static const char *const units[] = {"us", "ms", "s"};
	uint64_t hi = 1ull << b; /* microseconds */
	unsigned int u = 0;

	if (b == SCHED_HIST_BUCKETS - 1) {
		snprintf(buf, size, ">= %.1f s", (1ull << (b - 1)) / 1e6);
		return;
	}
	while (hi >= 1000 && hi % 1000 == 0 && u < 2) {
		hi /= 1000;
		u++;
	}
	if (hi >= 1000 && u < 2)
		snprintf(buf, size, "< %.3g %s", hi / 1000.0, units[u + 1]);
	else
		snprintf(buf, size, "< %" PRIu64 " %s", hi, units[u]);
}

static void print_hist(const struct sched_task *k)
{
	uint64_t max = 0;
	unsigned int b, first = SCHED_HIST_BUCKETS, last = 0;

	for (b = 0; b < SCHED_HIST_BUCKETS; b++) {
		if (!k->hist[b])
			continue;
		if (k->hist[b] > max)
			max = k->hist[b];
		if (first == SCHED_HIST_BUCKETS)
			first = b;
		last = b;
	}
	if (!max)
		return;
	printf("\n  %s:%u delays\n", k->comm, k->tid);
	for (b = first; b <= last; b++) {
		char label[32], bar[41];
		unsigned int n = k->hist[b] * 40 / max;

		hist_bounds(b, label, sizeof(label));
		memset(bar, '#', n);
		bar[n] = '\0';
		printf("  %12s %10" PRIu64 " |%s\n", label, k->hist[b], bar);
	}
}

static void print_text(const struct trace *t, const struct sched_report *r, bool hist)
{
	uint64_t runtime = 0, switches = 0;
	char lost[512], name[COMM_ESCAPED_SIZE + 12];
	size_t i;

	printf(" %-28s | %12s | %9s | %13s | %13s | %14s\n", "Task", "Runtime ms", "Switches",
	       "Avg delay ms", "Max delay ms", "Max delay at s");
	printf(" %.*s\n", 104,
	       "-----------------------------------------------------------------------------"
	       "-----------------------------------------");
	for (i = 0; i < r->nr; i++) {
		const struct sched_task *k = &r->tasks[i];

		snprintf(name, sizeof(name), "%s:%u", k->comm[0] ? k->comm : "?", k->tid);
		printf(" %-28s | %12.3f | %9" PRIu64 " | %13.3f | %13.3f | %14.6f\n", name,
		       k->runtime_ns / 1e6, k->switches,
		       k->delays ? k->delay_sum_ns / 1e6 / k->delays : 0.0, k->max_delay_ns / 1e6,
		       k->max_delay_ns ? (k->max_delay_at_ns - t->first_ns) / 1e9 : 0.0);
		runtime += k->runtime_ns;
		switches += k->switches;
	}
	printf(" %.*s\n", 104,
	       "-----------------------------------------------------------------------------"
	       "-----------------------------------------");
	printf(" %-28s | %12.3f | %9" PRIu64 " |\n", "TOTAL", runtime / 1e6, switches);
	if (hist)
		for (i = 0; i < r->nr; i++)
			print_hist(&r->tasks[i]);
	printf("\n %zu thread%s, %.3f s traced on %s (%s); %s\n", r->nr, r->nr == 1 ? "" : "s",
	       (t->end_ns - t->first_ns) / 1e9, t->hdr.host, t->hdr.kernel,
	       trace__lost_summary(t, lost, sizeof(lost)));
}

static int print_json(const struct trace *t, const struct sched_report *r, bool hist)
{
	json_t *root = json_object(), *tasks = json_array();
	size_t i;
	unsigned int b;
	int err;

	json_object_set_new(root, "trace_start_ns", json_integer(t->first_ns));
	json_object_set_new(root, "duration_ns", json_integer(t->end_ns - t->first_ns));
	json_object_set_new(root, "lost_events", json_integer(t->lost_by_reason[LOST_RINGBUF]));
	json_object_set_new(root, "lost_stacks",
			    json_integer(t->lost_by_reason[LOST_STACK_RINGBUF]));
	json_object_set_new(root, "skipped_events", json_integer(t->lost_by_reason[LOST_SKIPPED]));
	for (i = 0; i < r->nr; i++) {
		const struct sched_task *k = &r->tasks[i];
		json_t *o = json_object(), *title;
		char buf[256];

		json_object_set_new(o, "tid", json_integer(k->tid));
		json_object_set_new(o, "pid", json_integer(k->pid));
		json_object_set_new(o, "comm", json_string(k->comm));
		/* the command line or title: processes of one server share their comm */
		title = trace__title(t, k->pid, buf, sizeof(buf)) ? json_string(buf) : NULL;
		json_object_set_new(o, "title", title ? title : json_null());
		json_object_set_new(o, "runtime_ns", json_integer(k->runtime_ns));
		json_object_set_new(o, "switches", json_integer(k->switches));
		json_object_set_new(o, "preemptions", json_integer(k->preemptions));
		json_object_set_new(o, "delays", json_integer(k->delays));
		json_object_set_new(o, "avg_delay_ns",
				    json_integer(k->delays ? k->delay_sum_ns / k->delays : 0));
		json_object_set_new(o, "max_delay_ns", json_integer(k->max_delay_ns));
		json_object_set_new(o, "max_delay_at_ns",
				    k->max_delay_ns ? json_integer(k->max_delay_at_ns - t->first_ns)
						    : json_null());
		if (hist) {
			json_t *h = json_array();

			for (b = 0; b < SCHED_HIST_BUCKETS; b++) {
				json_t *bk;

				if (!k->hist[b])
					continue;
				bk = json_object();
				json_object_set_new(bk, "lt_ns",
						    b == SCHED_HIST_BUCKETS - 1
							    ? json_null()
							    : json_integer((1ull << b) * 1000));
				json_object_set_new(bk, "count", json_integer(k->hist[b]));
				json_array_append_new(h, bk);
			}
			json_object_set_new(o, "hist", h);
		}
		json_array_append_new(tasks, o);
	}
	json_object_set_new(root, "tasks", tasks);
	err = json_dumpf(root, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(root);
	return err;
}

int cmd_sched(int argc, char **argv)
{
	enum { OPT_HIST = 256 };
	static const struct option longopts[] = {REPORT_CMDLINE_OPT_FORMAT,
						 {"hist", no_argument, NULL, OPT_HIST},
						 REPORT_CMDLINE_OPT_HELP,
						 {0}};
	struct report_cmdline rc;
	struct sched_report r;
	struct trace *t;
	bool hist = false;
	int c, ret;

	report_cmdline__init(&rc, "sched", usage_text, "text", "json");
	while ((c = report_cmdline__next(&rc, argc, argv, "f:h", longopts)) > 0)
		if (c == OPT_HIST)
			hist = true;
	if (c < 0)
		return rc.status;
	t = report_cmdline__open(&rc, argc, argv);
	if (!t)
		return rc.status;
	sched__analyze(t, &r);
	if (!strcmp(rc.format, "json"))
		ret = print_json(t, &r, hist);
	else
		print_text(t, &r, hist), ret = 0;
	sched_report__free(&r);
	trace__close(t);
	return ret ? 1 : 0;
}
