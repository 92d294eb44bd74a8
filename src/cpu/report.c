/* The reports of 'srvscope cpu' (docs/cpu.md): text, JSON (built with jansson), folded
 * stacks, an SVG flame graph and a speedscope document, all from one profile. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "output/flamegraph.h"
#include "output/pprof.h"
#include "output/speedscope.h"
#include "topology/topology.h"
#include "util/escape.h"
#include "util/util.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * a / b : 0.0;
}

static const char *base(const char *module)
{
	const char *s = strrchr(module, '/');

	return s ? s + 1 : module;
}

static double ticks_pct(uint64_t ticks, uint64_t ns)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	return ns ? 100.0 * ticks / hz / (ns / 1e9) : 0.0;
}

static const struct cpu_thread *find_thread(const struct cpu_profile *p, pid_t tid)
{
	uint64_t i;

	return u64map__get(&p->thread_idx, (uint32_t)tid, &i) ? &p->threads[i - 1] : NULL;
}

static bool of_process(const struct cpu_stack *s, void *arg)
{
	return s->pid == *(pid_t *)arg;
}

static bool of_thread(const struct cpu_stack *s, void *arg)
{
	return s->tid == *(pid_t *)arg;
}

/* {"component": percent, ...} of a thread's kernel samples: only the components it has. */
static json_t *thread_components(const struct cpu_profile *p, const struct comp_table *t,
				 const struct cpu_report_opts *o, pid_t tid)
{
	struct cpu_comp_share cs;
	json_t *j = json_object();
	size_t i;

	cpu_profile__components(p, t, o->inclusive, of_thread, &tid, &cs);
	for (i = 0; i <= comp_table__nr(t); i++) {
		uint64_t n = i < comp_table__nr(t) ? cs.per_comp[i] : cs.unmatched;

		if (n)
			json_object_set_new(j, comp_table__name(t, i),
					    json_real(pct(n, cs.kernel_total)));
	}
	cpu_comp_share__free(&cs);
	return j;
}

/* ---- text ---- */

static void text_components(FILE *f, const struct cpu_profile *p, const struct comp_table *t,
			    const struct cpu_report_opts *o)
{
	struct cpu_comp_share cs;
	char b1[512];
	size_t i, shown = 0;

	cpu_profile__components(p, t, o->inclusive, NULL, NULL, &cs);
	fprintf(f, "\nCOMPONENTS (%s, %% of %llu kernel samples; table %s)\n",
		o->inclusive ? "inclusive: innermost classified kernel frame" : "self time",
		(unsigned long long)cs.kernel_total, COMP_TABLE_VERSION);
	for (i = 0; i < comp_table__nr(t); i++)
		fprintf(f, "  %-14s %6.2f %%  %8llu\n", comp_table__name(t, i),
			pct(cs.per_comp[i], cs.kernel_total), (unsigned long long)cs.per_comp[i]);
	fprintf(f, "  %-14s %6.2f %%  %8llu\n", "unmatched", pct(cs.unmatched, cs.kernel_total),
		(unsigned long long)cs.unmatched);
	for (i = 0; i < cs.nr_unmatched; i++) {
		const struct cpu_func *fn = &p->funcs[cs.unmatched_funcs[i]];

		if (pct(cs.unmatched_counts[i], cs.kernel_total) < o->min_unmatched)
			continue;
		if (!shown++)
			fprintf(f,
				"\nUNMATCHED (kernel functions above %.1f %% that no rule "
				"classifies)\n",
				o->min_unmatched);
		fprintf(f, "  %6.2f %%  %s %s\n", pct(cs.unmatched_counts[i], cs.kernel_total),
			name_shown(fn->name, b1, sizeof(b1)), base(fn->module));
	}
	cpu_comp_share__free(&cs);
}

static int write_text(FILE *f, const struct cpu_profile *p, const struct comp_table *t,
		      const struct cpu_report_opts *o)
{
	struct cpu_func_row *rows;
	size_t nr, i, top = o->top ? o->top : 30;
	char b1[512], b2[512];
	int c;

	fprintf(f, "%s: %llu samples", o->title ? o->title : "srvscope cpu",
		(unsigned long long)p->samples);
	if (p->hz)
		fprintf(f, " at %u Hz", p->hz);
	if (p->duration_ns)
		fprintf(f, " over %.2f s", p->duration_ns / 1e9);
	if (p->lost)
		fprintf(f, " (%llu not counted: the sample map was full)",
			(unsigned long long)p->lost);
	if (p->stacks_lost)
		fprintf(f, " (%llu without their stack: the stack map was full)",
			(unsigned long long)p->stacks_lost);
	fprintf(f, "; kernel %.2f %%, user %.2f %%\n", pct(p->kernel_samples, p->samples),
		pct(p->samples - p->kernel_samples, p->samples));

	rows = cpu_profile__functions(p, &nr);
	fprintf(f, "\nFUNCTIONS (%% of samples; top %zu of %zu)\n", nr < top ? nr : top, nr);
	fprintf(f, "  %6s %6s  %-3s %-20s %s\n", "SELF%", "TOTAL%", "", "MODULE", "FUNCTION");
	for (i = 0; i < nr && i < top; i++) {
		const struct cpu_func *fn = &p->funcs[rows[i].func];

		fprintf(f, "  %6.2f %6.2f  %-3s %-20s %s\n", pct(rows[i].self, p->samples),
			pct(rows[i].total, p->samples), fn->kernel ? "[k]" : "[.]",
			name_shown(base(fn->module), b1, sizeof(b1)),
			name_shown(fn->name, b2, sizeof(b2)));
	}
	free(rows);

	text_components(f, p, t, o);

	fprintf(f, "\nTHREADS\n  %7s %7s %-16s %6s %6s %6s %5s %4s %8s %8s %8s\n", "PID", "TID",
		"COMM", "CPU%", "USER%", "SYS%", "STATE", "LAST", "VCSW", "IVCSW", "SAMPLES");
	for (i = 0; i < p->nr_threads; i++) {
		const struct cpu_thread *th = &p->threads[i];

		if (!th->samples && !(th->have_stat && th->utime + th->stime))
			continue;
		fprintf(f, "  %7d %7d %-16s ", th->pid, th->tid,
			name_shown(th->comm[0] ? th->comm : "?", b1, sizeof(b1)));
		if (th->have_stat)
			fprintf(f, "%6.1f %6.1f %6.1f %5c %4d %8llu %8llu",
				ticks_pct(th->utime + th->stime, p->duration_ns),
				ticks_pct(th->utime, p->duration_ns),
				ticks_pct(th->stime, p->duration_ns), th->state, th->last_cpu,
				(unsigned long long)th->vcsw, (unsigned long long)th->ivcsw);
		else
			fprintf(f, "%6s %6s %6s %5s %4s %8s %8s", "-", "-", "-", "-", "-", "-",
				"-");
		fprintf(f, " %8llu\n", (unsigned long long)th->samples);
	}
	if (p->nr_procs) {
		fprintf(f, "\nPROCESSES\n  %7s %-16s %10s %10s %10s %8s %8s\n", "PID", "COMM",
			"RSS_KB", "GROWTH_KB", "MAX_KB", "MINFLT", "MAJFLT");
		for (i = 0; i < p->nr_procs; i++) {
			const struct cpu_process *pr = &p->procs[i];

			fprintf(f, "  %7d %-16s %10llu %+10lld %10llu %8llu %8llu%s\n", pr->pid,
				name_shown(pr->comm, b1, sizeof(b1)),
				(unsigned long long)pr->rss_kb,
				(long long)(pr->rss_kb - pr->rss0_kb),
				(unsigned long long)pr->rss_max_kb,
				(unsigned long long)(pr->minflt - pr->minflt0),
				(unsigned long long)(pr->majflt - pr->majflt0),
				pr->gone ? "  (exited)" : "");
		}
	}
	if (p->live) {
		fprintf(f, "\nCORES\n  %4s %5s %7s %4s %6s %6s %6s %8s\n", "CPU", "CORE", "PACKAGE",
			"NODE", "USER%", "SYS%", "IDLE%", "SAMPLES");
		for (c = 0; c < p->nr_cpus; c++) {
			const struct cpu_core *cr = &p->cores[c];
			uint64_t all = cr->user + cr->system + cr->idle + cr->other;
			struct topo_cpu tc = {-1, -1, -1, 1};

			if (o->topo)
				topo__cpu(o->topo, c, &tc);
			fprintf(f, "  %4d %5d %7d %4d %6.1f %6.1f %6.1f %8llu\n", c, tc.core,
				tc.package, tc.node, pct(cr->user, all), pct(cr->system, all),
				pct(cr->idle, all), (unsigned long long)cr->samples);
		}
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

static json_t *json_components(const struct cpu_profile *p, const struct comp_table *t,
			       const struct cpu_report_opts *o, pid_t *pid)
{
	struct cpu_comp_share cs;
	json_t *obj = json_object(), *arr = json_array(), *un = json_array();
	size_t i;

	cpu_profile__components(p, t, o->inclusive, pid ? of_process : NULL, pid, &cs);
	json_object_set_new(obj, "kernel_samples", json_integer(cs.kernel_total));
	for (i = 0; i <= comp_table__nr(t); i++) {
		uint64_t n = i < comp_table__nr(t) ? cs.per_comp[i] : cs.unmatched;

		json_array_append_new(
			arr,
			json_pack("{s:s,s:I,s:f}", "name",
				  i < comp_table__nr(t) ? comp_table__name(t, i) : "unmatched",
				  "samples", (json_int_t)n, "percent", pct(n, cs.kernel_total)));
	}
	json_object_set_new(obj, "components", arr);
	for (i = 0; i < cs.nr_unmatched; i++) {
		const struct cpu_func *fn = &p->funcs[cs.unmatched_funcs[i]];

		if (pct(cs.unmatched_counts[i], cs.kernel_total) < o->min_unmatched)
			continue;
		json_array_append_new(un, json_pack("{s:s,s:s,s:I,s:f}", "function", fn->name,
						    "module", fn->module, "samples",
						    (json_int_t)cs.unmatched_counts[i], "percent",
						    pct(cs.unmatched_counts[i], cs.kernel_total)));
	}
	json_object_set_new(obj, "unmatched", un);
	cpu_comp_share__free(&cs);
	return obj;
}

static int write_json(FILE *f, const struct cpu_profile *p, const struct comp_table *t,
		      const struct cpu_report_opts *o)
{
	json_t *doc = json_object(), *arr, *comps;
	struct cpu_func_row *rows;
	size_t nr, i;
	int c, ret;

	json_object_set_new(doc, "version", json_integer(1));
	json_object_set_new(doc, "samples", json_integer(p->samples));
	json_object_set_new(doc, "kernel_samples", json_integer(p->kernel_samples));
	json_object_set_new(doc, "not_counted", json_integer(p->lost));
	json_object_set_new(doc, "stacks_lost", json_integer(p->stacks_lost));
	json_object_set_new(doc, "hz", json_integer(p->hz));
	json_object_set_new(doc, "duration_s", json_real(p->duration_ns / 1e9));
	if (p->end_ns) { /* the window, to cut another tool's samples to it */
		json_object_set_new(doc, "start_ns", json_integer(p->end_ns - p->duration_ns));
		json_object_set_new(doc, "end_ns", json_integer(p->end_ns));
	}
	json_object_set_new(doc, "component_table", json_string(COMP_TABLE_VERSION));
	json_object_set_new(doc, "inclusive", json_boolean(o->inclusive));

	rows = cpu_profile__functions(p, &nr);
	arr = json_array();
	for (i = 0; i < nr; i++) {
		const struct cpu_func *fn = &p->funcs[rows[i].func];

		if (o->compact && o->top && i >= o->top)
			break;
		json_array_append_new(
			arr, json_pack("{s:s,s:s,s:b,s:s?,s:I,s:I,s:f,s:f}", "function", fn->name,
				       "module", fn->module, "kernel", fn->kernel, "component",
				       fn->comp >= 0 ? comp_table__name(t, fn->comp) : NULL, "self",
				       (json_int_t)rows[i].self, "total", (json_int_t)rows[i].total,
				       "self_percent", pct(rows[i].self, p->samples),
				       "total_percent", pct(rows[i].total, p->samples)));
	}
	free(rows);
	json_object_set_new(doc, "functions", arr);

	comps = json_components(p, t, o, NULL);
	json_object_set_new(doc, "components", json_incref(json_object_get(comps, "components")));
	json_object_set_new(doc, "unmatched", json_incref(json_object_get(comps, "unmatched")));
	json_decref(comps);

	if (p->series_rows) {
		size_t r, k;

		arr = json_array();
		for (r = 0; r < p->series_rows; r++) {
			json_t *row = json_array();

			for (k = 0; k < p->series_cols; k++)
				json_array_append_new(
					row, json_integer(p->comp_series[r * p->series_cols + k]));
			json_array_append_new(arr, row);
		}
		json_t *names = json_array();

		for (k = 0; k + 1 < p->series_cols; k++)
			json_array_append_new(names, json_string(comp_table__name(t, k)));
		json_array_append_new(names, json_string("unmatched"));
		json_object_set_new(doc, "component_series",
				    json_pack("{s:o,s:o}", "columns", names, "rows", arr));
	}

	arr = json_array();
	for (i = 0; i < p->nr_threads; i++) {
		const struct cpu_thread *th = &p->threads[i];
		json_t *th_j, *oc = json_array();

		if (!th->samples && !(th->have_stat && th->utime + th->stime))
			continue;
		for (c = 0; c < p->nr_cpus; c++)
			json_array_append_new(oc, json_integer(th->on_cpu[c]));
		th_j = json_pack("{s:i,s:i,s:s,s:I,s:o}", "pid", th->pid, "tid", th->tid, "comm",
				 th->comm, "samples", (json_int_t)th->samples, "samples_per_cpu",
				 oc);
		if (th->samples)
			json_object_set_new(th_j, "components",
					    thread_components(p, t, o, th->tid));
		if (th->have_stat) {
			char st[2] = {th->state, 0};

			json_object_update(
				th_j,
				json_pack("{s:f,s:f,s:s,s:i,s:I,s:I}", "user_percent",
					  ticks_pct(th->utime, p->duration_ns), "system_percent",
					  ticks_pct(th->stime, p->duration_ns), "state", st,
					  "last_cpu", th->last_cpu, "voluntary_switches",
					  (json_int_t)th->vcsw, "involuntary_switches",
					  (json_int_t)th->ivcsw));
		}
		json_array_append_new(arr, th_j);
	}
	json_object_set_new(doc, "threads", arr);

	arr = json_array();
	for (i = 0; i < p->nr_procs; i++) {
		const struct cpu_process *pr = &p->procs[i];
		pid_t pid = pr->pid;
		json_t *cj = json_components(p, t, o, &pid);

		json_array_append_new(
			arr,
			json_pack("{s:i,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:o}", "pid", pr->pid, "comm",
				  pr->comm, "exited", pr->gone, "rss_kb", (json_int_t)pr->rss_kb,
				  "rss_growth_kb", (json_int_t)(pr->rss_kb - pr->rss0_kb),
				  "rss_max_kb", (json_int_t)pr->rss_max_kb, "minor_faults",
				  (json_int_t)(pr->minflt - pr->minflt0), "major_faults",
				  (json_int_t)(pr->majflt - pr->majflt0), "components", cj));
	}
	json_object_set_new(doc, "processes", arr);

	arr = json_array();
	for (c = 0; c < p->nr_cpus && p->live; c++) {
		const struct cpu_core *cr = &p->cores[c];
		uint64_t all = cr->user + cr->system + cr->idle + cr->other;

		struct topo_cpu tc = {-1, -1, -1, 1};

		if (o->topo)
			topo__cpu(o->topo, c, &tc);
		json_array_append_new(
			arr, json_pack("{s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:I}", "cpu", c, "core",
				       tc.core, "package", tc.package, "numa_node", tc.node,
				       "user_percent", pct(cr->user, all), "system_percent",
				       pct(cr->system, all), "idle_percent", pct(cr->idle, all),
				       "samples", (json_int_t)cr->samples));
	}
	json_object_set_new(doc, "cores", arr);

	ret = json_dumpf(doc, f, o->compact ? JSON_COMPACT : JSON_INDENT(2));
	fputc('\n', f);
	json_decref(doc);
	return ret || ferror(f) ? -EIO : 0;
}

/* ---- folded, SVG, speedscope ---- */

/* "comm;outermost;...;innermost" per stack, kernel frames suffixed "_[k]"; *nr set. */
static struct flamegraph_entry *folded_entries(const struct cpu_profile *p, size_t *nr)
{
	struct flamegraph_entry *e = xcalloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*e));
	char *buf = NULL;
	size_t cap = 0, i;

	for (i = 0; i < p->nr_stacks; i++) {
		const struct cpu_stack *s = &p->stacks[i];
		const struct cpu_thread *th = find_thread(p, s->tid);
		size_t len;
		int j;

		len = snprintf(NULL, 0, "%s", th && th->comm[0] ? th->comm : "?");
		xgrow((void **)&buf, &cap, len + 1, 1);
		snprintf(buf, cap, "%s", th && th->comm[0] ? th->comm : "?");
		for (j = s->nr - 1; j >= 0; j--) {
			const struct cpu_func *fn = &p->funcs[s->frames[j]];
			size_t need = strlen(fn->name) + 6;

			xgrow((void **)&buf, &cap, len + need + 1, 1);
			len += snprintf(buf + len, cap - len, ";%s%s", fn->name,
					fn->kernel ? "_[k]" : "");
		}
		/* ';' and ' ' inside a name would cut it: folded has no escape */
		for (j = 0; j < (int)len; j++)
			if (buf[j] == ' ' || buf[j] == '\n')
				buf[j] = '_';
		e[i].stack = xstrdup(buf);
		e[i].weight = s->count;
	}
	free(buf);
	*nr = p->nr_stacks;
	return e;
}

static void free_entries(struct flamegraph_entry *e, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free((char *)e[i].stack);
	free(e);
}

/* pprof: samples/count and cpu/nanoseconds (a sample stands for one period of the
 * sampling clock), each stack labelled with its thread. */
static int write_pprof(FILE *f, const struct cpu_profile *p, const struct flamegraph_entry *e,
		       size_t nr)
{
	static const struct pprof_value_type types[] = {{"samples", "count"},
							{"cpu", "nanoseconds"}};
	int64_t period = p->hz ? 1000000000ll / p->hz : 0;
	struct pprof *pp = pprof__new(types, 2, &types[1], period);
	size_t i;
	int ret;

	pprof__set_time(pp, 0, (int64_t)p->duration_ns);
	for (i = 0; i < nr; i++) {
		int64_t v[2] = {(int64_t)e[i].weight, (int64_t)e[i].weight * period};

		pprof__add_folded(pp, e[i].stack, v, p->stacks[i].tid);
	}
	ret = pprof__write(pp, f) ? -EIO : 0;
	pprof__delete(pp);
	return ret;
}

int cpu_report__write(FILE *f, const struct cpu_profile *p, const struct comp_table *t,
		      const struct cpu_report_opts *o)
{
	struct flamegraph_entry *e;
	size_t nr, i;
	int ret = 0;

	switch (o->fmt) {
	case CPU_TEXT:
		return write_text(f, p, t, o);
	case CPU_JSON:
		return write_json(f, p, t, o);
	default:
		break;
	}
	e = folded_entries(p, &nr);
	if (o->fmt == CPU_PPROF) {
		ret = write_pprof(f, p, e, nr);
	} else if (o->fmt == CPU_FOLDED) {
		for (i = 0; i < nr; i++)
			fprintf(f, "%s %llu\n", e[i].stack, (unsigned long long)e[i].weight);
		ret = ferror(f) ? -EIO : 0;
	} else if (o->fmt == CPU_SVG) {
		struct flamegraph_opts fo = {.title = o->title ? o->title : "srvscope cpu",
					     .unit = "samples"};

		ret = flamegraph__write_svg(f, e, nr, &fo);
	} else {
		struct speedscope_opts so = {.name = o->title ? o->title : "srvscope cpu",
					     .unit = "none"};

		ret = speedscope__write(f, e, nr, &so);
	}
	free_entries(e, nr);
	return ret;
}
