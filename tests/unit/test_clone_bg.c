/* A background cluster's wake-ups that follow the load: the clone reads the model's runs
 * (work.per_run at runs[].throughput_rps), merges runs of one rate, and picks the period
 * and CPU per wake-up for the rate it is driven at; a bad entry is refused in one line. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "clone/clone.h"
#include "unit.h"

/* tests/fixtures/models/memcached.json with runs at 100, 500, 2000 and 2050 requests/s and
 * the LRU maintainer's wake-ups in each (edit: a change to make before parsing) */
static int parse(const char *edit, struct clone_model *m, char *err, size_t errlen)
{
	static const double rps[] = {100, 500, 2000, 2050}, wps[] = {20, 100, 950, 970},
			    cpu[] = {40, 24, 20, 22};
	char path[4096], *text;
	json_t *root, *runs, *pr, *cl;
	size_t i;
	int ret;

	root = json_load_file(unit_fixture(path, sizeof(path), "models/memcached.json"), 0, NULL);
	if (!root)
		return -ENOENT;
	runs = json_array();
	pr = json_array();
	for (i = 0; i < 4; i++) {
		json_array_append_new(runs,
				      json_pack("{s:i, s:i, s:f, s:f, s:i, s:f}", "index", (int)i,
						"conns", 8, "rate", rps[i], "duration_s", 3.0,
						"requests", 300, "throughput_rps", rps[i]));
		json_array_append_new(pr, json_pack("{s:i, s:f, s:f, s:f}", "run", (int)i,
						    "wakes_per_s", wps[i], "period_ms",
						    1000 / wps[i], "on_cpu_us", cpu[i]));
	}
	json_object_set_new(root, "runs", runs);
	json_array_foreach(json_object_get(root, "clusters"), i, cl)
	{
		if (strcmp(json_string_value(json_object_get(cl, "name")), "mc-lrumaint"))
			continue;
		json_object_set_new(json_object_get(cl, "work"), "per_run", pr);
		if (edit && !strcmp(edit, "no such run"))
			json_object_set_new(json_array_get(pr, 1), "run", json_integer(7));
		if (edit && !strcmp(edit, "negative"))
			json_object_set_new(json_array_get(pr, 2), "wakes_per_s", json_real(-1));
		if (edit && !strcmp(edit, "none"))
			json_object_del(json_object_get(cl, "work"), "per_run");
		if (edit && !strcmp(edit, "unrecorded")) { /* the last run's, 8 us below */
			json_object_set_new(json_array_get(pr, 3), "on_cpu_us_unrecorded",
					    json_real(14));
			json_object_set_new(json_object_get(cl, "work"), "on_cpu_us_unrecorded",
					    json_real(14));
		}
	}
	text = json_dumps(root, 0);
	ret = clone_model__parse(text, strlen(text), m, err, errlen);
	free(text);
	json_decref(root);
	return ret;
}

static const struct clone_bg *lru(const struct clone_model *m)
{
	unsigned i;

	for (i = 0; i < m->nbg; i++)
		if (!strcmp(m->bg[i].name, "mc-lrumaint"))
			return &m->bg[i];
	return NULL;
}

static bool near(double got, double want)
{
	return fabs(got - want) <= fabs(want) * 0.01 + 1e-9;
}

int main(void)
{
	static struct clone_model m;
	const struct clone_bg *bg;
	double period, cpu;
	char err[256];

	is_int(parse(NULL, &m, err, sizeof(err)), 0, "the model with per-run wake-ups parses");
	bg = lru(&m);
	ok(bg != NULL, "the LRU maintainer is a background cluster");
	if (!bg)
		return done_testing();
	is_int(bg->nruns, 3, "3 points: the runs at 2000 and 2050 requests/s are one");
	ok(near(bg->run[2].rps, 2025) && near(bg->run[2].wakes_per_s, 960) &&
		   near(bg->run[2].on_cpu_us, 21),
	   "the merged point is their mean (%g req/s, %g wake-ups/s, %g us)", bg->run[2].rps,
	   bg->run[2].wakes_per_s, bg->run[2].on_cpu_us);
	clone_bg__at(bg, 100, &period, &cpu);
	ok(near(period, 50) && near(cpu, 40), "at a run's rate, its figures (%g ms, %g us)", period,
	   cpu);
	clone_bg__at(bg, 300, &period, &cpu);
	ok(near(period, 1000 / 60.0) && near(cpu, 32),
	   "between two runs, on their line (%g ms, %g us)", period, cpu);
	clone_bg__at(bg, 50, &period, &cpu);
	ok(near(period, 100) && near(cpu, 40),
	   "below the slowest: fewer wake-ups, toward none on the line (%g ms), its CPU (%g us)",
	   period, cpu);
	clone_bg__at(bg, 0, &period, &cpu);
	is_int(period, 0, "no load: the line reaches no wake-up at all (0 ms: never)");
	clone_bg__at(bg, 50000, &period, &cpu);
	ok(near(period, 1000 / 960.0) && near(cpu, 21), "above the fastest, the fastest's (%g ms)",
	   period);

	/* Measured without the recorder at the last run's rate: 14 us where 22 were recorded.
	 * The other runs lose the 8 us the probes added; the last one is 14. */
	is_int(parse("unrecorded", &m, err, sizeof(err)), 0, "a model with on_cpu_us_unrecorded");
	bg = lru(&m);
	ok(bg && bg->nruns == 3 && near(bg->run[0].on_cpu_us, 32) &&
		   near(bg->run[1].on_cpu_us, 16) && near(bg->run[2].on_cpu_us, 13),
	   "each run's CPU per wake-up less the probes' 8 us, the last one's unrecorded (%g, %g, "
	   "%g us: 2000 and 2050 merged)",
	   bg ? bg->run[0].on_cpu_us : 0, bg ? bg->run[1].on_cpu_us : 0,
	   bg ? bg->run[2].on_cpu_us : 0);
	ok(bg && near(bg->on_cpu_us, 14), "the cluster's figure is the unrecorded one (%g us)",
	   bg ? bg->on_cpu_us : 0);

	is_int(parse("none", &m, err, sizeof(err)), 0, "a model without per_run parses");
	bg = lru(&m);
	ok(bg && bg->nruns == 0, "no points");
	if (bg) {
		clone_bg__at(bg, 100, &period, &cpu);
		ok(period == bg->period_ms && cpu == bg->on_cpu_us,
		   "its period_ms and on_cpu_us at any rate (%g ms)", period);
	}

	is_int(parse("no such run", &m, err, sizeof(err)), -EINVAL, "a run that is not there");
	ok(strstr(err, "per_run[1].run is 7: the model has no such run") != NULL, "it says so: %s",
	   err);
	is_int(parse("negative", &m, err, sizeof(err)), -EINVAL, "negative wake-ups");
	ok(strstr(err, "per_run[2].wakes_per_s is -1") != NULL, "it says so: %s", err);
	return done_testing();
}
