/* speedscope's file format: {"$schema", "shared": {"frames": [{"name", "file"?}]},
 * "profiles": [{"type": "sampled", "name", "unit", "startValue", "endValue", "samples":
 * [[frame index, root first]], "weights": []}], "name", "exporter"}. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/speedscope.h"
#include "trace/u64map.h"
#include "util/util.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct ss {
	json_t *frames, *profiles;
	struct u64map frame_idx;   /* hash of a frame's text -> index + 1 in frames */
	struct u64map profile_idx; /* hash of a root -> index in profiles */
};

/* The index of the frame named by s[0..len), added on first sight. */
static json_int_t frame(struct ss *ss, const char *s, size_t len)
{
	uint64_t h = fnv1a(s, len, FNV1A_INIT), *slot;
	bool created, kernel = len > 4 && !memcmp(s + len - 4, "_[k]", 4);
	size_t nlen = len - (kernel ? 4 : 0);
	const char *name;
	json_t *fr;

	for (;; h++) {
		slot = u64map__slot(&ss->frame_idx, h, &created);
		if (created)
			break;
		fr = json_array_get(ss->frames, *slot - 1);
		name = json_string_value(json_object_get(fr, "name"));
		if ((json_object_get(fr, "file") != NULL) == kernel && strlen(name) == nlen &&
		    !memcmp(name, s, nlen))
			return (json_int_t)*slot - 1;
	}
	fr = json_object();
	json_object_set_new(fr, "name", json_stringn(s, nlen));
	if (kernel)
		json_object_set_new(fr, "file", json_string("[kernel]"));
	json_array_append_new(ss->frames, fr);
	*slot = json_array_size(ss->frames);
	return (json_int_t)*slot - 1;
}

static json_t *profile(struct ss *ss, const char *root, size_t len, const char *unit)
{
	uint64_t h = fnv1a(root, len, FNV1A_INIT), *slot;
	const char *name;
	bool created;
	json_t *p;

	for (;; h++) {
		slot = u64map__slot(&ss->profile_idx, h, &created);
		if (created)
			break;
		p = json_array_get(ss->profiles, *slot);
		name = json_string_value(json_object_get(p, "name"));
		if (strlen(name) == len && !memcmp(name, root, len))
			return p;
	}
	p = json_object();
	json_object_set_new(p, "type", json_string("sampled"));
	json_object_set_new(p, "name", json_stringn(root, len));
	json_object_set_new(p, "unit", json_string(unit));
	json_object_set_new(p, "startValue", json_integer(0));
	json_object_set_new(p, "endValue", json_integer(0));
	json_object_set_new(p, "samples", json_array());
	json_object_set_new(p, "weights", json_array());
	*slot = json_array_size(ss->profiles);
	json_array_append_new(ss->profiles, p);
	return p;
}

int speedscope__write(FILE *f, const struct flamegraph_entry *e, size_t n,
		      const struct speedscope_opts *o)
{
	struct ss ss = {.frames = json_array(), .profiles = json_array()};
	json_t *doc = json_object(), *shared = json_object();
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		const char *s = e[i].stack, *semi = strchr(s, ';');
		size_t rlen = semi ? (size_t)(semi - s) : strlen(s);
		json_t *p = profile(&ss, s, rlen, o->unit), *sample = json_array();
		json_int_t end = json_integer_value(json_object_get(p, "endValue"));

		for (s = semi; s; s = semi) {
			s++;
			semi = strchr(s, ';');
			json_array_append_new(
				sample,
				json_integer(frame(&ss, s, semi ? (size_t)(semi - s) : strlen(s))));
		}
		json_array_append_new(json_object_get(p, "samples"), sample);
		json_array_append_new(json_object_get(p, "weights"), json_integer(e[i].weight));
		json_object_set_new(p, "endValue", json_integer(end + (json_int_t)e[i].weight));
	}
	json_object_set_new(doc, "$schema", json_string(SCHEMA));
	json_object_set_new(shared, "frames", ss.frames);
	json_object_set_new(doc, "shared", shared);
	json_object_set_new(doc, "profiles", ss.profiles);
	json_object_set_new(doc, "name", json_string(o->name ? o->name : "srvscope"));
	json_object_set_new(doc, "exporter", json_string("srvscope"));
	json_object_set_new(doc, "activeProfileIndex", json_integer(0));
	err = json_dumpf(doc, f, JSON_COMPACT) ? -EIO : 0;
	fputc('\n', f);
	json_decref(doc);
	u64map__free(&ss.frame_idx);
	u64map__free(&ss.profile_idx);
	return err;
}

void output__speedscope(FILE *f, const struct stack_agg *agg, const char *name)
{
	struct speedscope_opts o = {.name = name, .unit = "none"};
	struct flamegraph_entry *e = NULL;
	size_t len = 0, n = 0, cap = 0;
	char *buf = NULL, *line, *next, *sp;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	output__folded(m, agg);
	fclose(m);
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		xgrow((void **)&e, &cap, n + 1, sizeof(*e));
		e[n].stack = line;
		e[n++].weight = strtoull(sp + 1, NULL, 10);
	}
	speedscope__write(f, e, n, &o);
	free(e);
	free(buf);
}
