/* One symbolizer per maps snapshot saved in the trace, created on first use; every answer
 * cached by (snapshot, address). An object whose build-id differs from the recorded one is
 * reported once: its frames may be misnamed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proc/maps.h"
#include "symbol/dso.h"
#include "symbol/symbolizer.h"
#include "trace/symbols.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/escape.h"
#include "util/util.h"

struct snap {
	struct proc_maps *maps;
	struct symbolizer *sym;
	bool tried;
};

struct trace_symbols {
	const struct trace *t;
	struct snap *snaps; /* parallel to t->maps */
	struct ksyms *ksyms;
	bool ksyms_tried;
	struct u64map cache; /* hash of (snapshot, address) -> index in names */
	char **names;
	size_t nr_names, cap_names;
	uint64_t *keys_snap, *keys_addr; /* to tell hash collisions apart */
	struct u64map warned;		 /* paths whose build-id changed, reported once */
};

struct trace_symbols *trace_symbols__new(const struct trace *t)
{
	struct trace_symbols *s = xcalloc(1, sizeof(*s));

	s->t = t;
	s->snaps = xcalloc(t->nr_maps + 1, sizeof(*s->snaps));
	return s;
}

void trace_symbols__delete(struct trace_symbols *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->t->nr_maps; i++) {
		symbolizer__delete(s->snaps[i].sym);
		proc_maps__delete(s->snaps[i].maps);
	}
	for (i = 0; i < s->nr_names; i++)
		free(s->names[i]);
	free(s->names);
	free(s->keys_snap);
	free(s->keys_addr);
	free(s->snaps);
	ksyms__delete(s->ksyms);
	u64map__free(&s->cache);
	u64map__free(&s->warned);
	free(s);
}

static void check_build_ids(struct trace_symbols *s, const struct trace_maps *tm,
			    struct proc_maps *maps)
{
	const char *p = tm->build_ids, *end = tm->build_ids + tm->build_ids_len;
	size_t i;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *sp;
		char id[128], path[4096];

		if (!nl)
			break;
		sp = memchr(p, ' ', nl - p);
		if (sp && sp - p < (long)sizeof(id) && nl - sp - 1 < (long)sizeof(path)) {
			memcpy(id, p, sp - p);
			id[sp - p] = '\0';
			memcpy(path, sp + 1, nl - sp - 1);
			path[nl - sp - 1] = '\0';
			for (i = 0; i < maps->nr; i++) {
				const char *now;
				struct dso *d;
				bool created;

				if (!maps->maps[i].path || strcmp(maps->maps[i].path, path))
					continue;
				d = dso__get(0, &maps->maps[i]);
				now = d ? dso__build_id(d) : NULL;
				if (now && strcmp(now, id)) {
					u64map__slot(&s->warned, fnv1a_str(path, FNV1A_INIT),
						     &created);
					if (created) {
						char *shown = name_escape_dup(path);

						warning("%s changed since the recording (build-id "
							"%s, recorded %s): its frames may be "
							"misnamed",
							shown, now, id);
						free(shown);
					}
				}
				dso__put(d);
				break;
			}
		}
		p = nl + 1;
	}
}

static struct snap *snap_of(struct trace_symbols *s, const struct trace_maps *tm, uint32_t pid,
			    size_t *idx)
{
	struct snap *sn;

	if (!tm)
		return NULL;
	*idx = tm - s->t->maps;
	sn = &s->snaps[*idx];
	if (!sn->tried) {
		sn->tried = true;
		sn->maps = proc_maps__parse(pid, tm->text, tm->len);
		if (sn->maps) {
			sn->sym = symbolizer__new(0, sn->maps);
			check_build_ids(s, tm, sn->maps);
		}
	}
	return sn->sym ? sn : NULL;
}

static struct snap *snap_for(struct trace_symbols *s, uint32_t pid, uint64_t ts, size_t *idx)
{
	return snap_of(s, trace__maps(s->t, pid, ts), pid, idx);
}

/* Whether the maps of sn had code at addr. */
static bool executable(const struct snap *sn, uint64_t addr)
{
	const struct map_entry *m = proc_maps__find(sn->maps, addr);

	return m && (m->prot & PROT_EXEC);
}

static const char *intern(struct trace_symbols *s, uint64_t snap, uint64_t addr, const char *name)
{
	uint64_t key = (snap * 0x9e3779b97f4a7c15ull) ^ addr;

	for (;;) {
		bool created;
		uint64_t *slot = u64map__slot(&s->cache, key, &created);

		if (created) {
			xgrow((void **)&s->names, &s->cap_names, s->nr_names + 1,
			      sizeof(*s->names));
			s->keys_snap = xrealloc(s->keys_snap, s->cap_names * sizeof(uint64_t));
			s->keys_addr = xrealloc(s->keys_addr, s->cap_names * sizeof(uint64_t));
			*slot = s->nr_names;
			s->names[s->nr_names] = xstrdup(name);
			s->keys_snap[s->nr_names] = snap;
			s->keys_addr[s->nr_names] = addr;
			return s->names[s->nr_names++];
		}
		if (s->keys_snap[*slot] == snap && s->keys_addr[*slot] == addr)
			return s->names[*slot];
		key++;
	}
}

static const char *lookup(struct trace_symbols *s, uint64_t snap, uint64_t addr)
{
	uint64_t key = (snap * 0x9e3779b97f4a7c15ull) ^ addr, i;

	while (u64map__get(&s->cache, key, &i)) {
		if (s->keys_snap[i] == snap && s->keys_addr[i] == addr)
			return s->names[i];
		key++;
	}
	return NULL;
}

const char *trace_symbols__user(struct trace_symbols *s, uint32_t pid, uint64_t ts, uint64_t addr)
{
	struct sym_result r;
	struct snap *sn;
	size_t idx = 0;
	const char *name, *base;
	char buf[512];

	sn = snap_for(s, pid, ts, &idx);
	if (!sn)
		return "[unknown]";
	name = lookup(s, idx + 1, addr);
	if (name)
		return name;
	symbolizer__resolve(sn->sym, addr, &r);
	if (!executable(sn, addr)) {
		/* Code ran there, so it was mapped after these maps were read (a dlopen
		 * between two readings): the next reading of the process's maps has it. */
		const struct trace_maps *tm = trace__maps_after(s->t, pid, s->t->maps[idx].ts);
		size_t next;
		struct snap *nsn = snap_of(s, tm, pid, &next);

		if (nsn && executable(nsn, addr))
			symbolizer__resolve(nsn->sym, addr, &r);
	}
	if (r.symbol) {
		name = r.symbol;
	} else if (r.module && strcmp(r.module, "[unknown]")) {
		base = strrchr(r.module, '/');
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base ? base + 1 : r.module, r.offset);
		name = buf;
	} else {
		name = "[unknown]";
	}
	return intern(s, idx + 1, addr, name);
}

const char *trace_symbols__kernel(struct trace_symbols *s, uint64_t addr)
{
	const char *name;
	char buf[32];

	name = lookup(s, 0, addr);
	if (name)
		return name;
	if (!s->ksyms_tried) {
		size_t len;
		char *text = trace__kallsyms_take(s->t, &len);

		s->ksyms_tried = true;
		if (text)
			s->ksyms = ksyms__parse_owned(text, len);
	}
	name = s->ksyms ? ksyms__resolve(s->ksyms, addr, NULL, NULL) : NULL;
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		name = buf;
	}
	/* The names come from the file, which anyone may have written: escaped like the
	 * target's own names (the user-space ones are, by the symbolizer). */
	if (!name_is_safe(name, strlen(name))) {
		char *shown = name_escape_dup(name);
		const char *r = intern(s, 0, addr, shown);

		free(shown);
		return r;
	}
	return intern(s, 0, addr, name);
}

bool trace_symbols__is_tracing(const char *name)
{
	static const char *const prefixes[] = {"bpf_prog_",    "bpf_trace_run", "__traceiter_",
					       "__bpf_trace_", "bpf_get_stack", "perf_trace_"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool trace_symbols__is_irq_entry(const char *name)
{
	return !strncmp(name, "asm_", 4) || !strcmp(name, "handle_softirqs") ||
	       !strcmp(name, "__do_softirq") || !strcmp(name, "run_ksoftirqd");
}
