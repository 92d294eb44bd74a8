/* pprof's profile.proto written with protobuf-c (code generated from src/output/profile.proto
 * at build time) and gzip'd with zlib. Strings, functions, mappings, locations and samples
 * are deduplicated through one keyed table each, so a profile of a long run stays as small
 * as its distinct stacks. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/aggregate.h"
#include "output/frame.h"
#include "output/output.h"
#include "output/pprof.h"
#include "proc/maps.h"
#include "proto/profile.pb-c.h"
#include "record/procinfo.h"
#include "trace/u64map.h"
#include "util/keytab.h"
#include "util/util.h"

/* "<hex> <path>" lines of the processes a profile has frames of. */
struct build_ids {
	char *text;
	size_t len;
};

struct pprof_sample {
	uint64_t *locs; /* leaf first */
	size_t nr_locs;
	int64_t *values;
	int64_t thread; /* string index, 0: none */
	long tid;
};

struct pprof {
	size_t nr_types;
	Perftools__Profiles__ValueType *types, period_type;
	bool have_period;
	int64_t period, time_nanos, duration_nanos;

	struct keytab strs, funcs, maps, locs, samples;
	char **strings;
	size_t cap_strings;
	Perftools__Profiles__Function *functions;
	size_t cap_functions;
	Perftools__Profiles__Mapping *mappings;
	size_t cap_mappings;
	Perftools__Profiles__Location *locations;
	Perftools__Profiles__Line *lines; /* one per location */
	size_t cap_locations;
	struct pprof_sample *smp;
	size_t cap_smp;
	int64_t *comments;
	size_t nr_comments, cap_comments;
	struct build_ids bids; /* of the processes in bid_pids */
	struct u64map bid_pids;
};

static int64_t str_id(struct pprof *p, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	bool created;
	uint64_t id;

	if (!len)
		return 0;
	id = keytab__find(&p->strs, s, len, &created);
	if (created) {
		xgrow((void **)&p->strings, &p->cap_strings, id + 1, sizeof(*p->strings));
		p->strings[id] = xstrdup(s);
	}
	return (int64_t)id;
}

struct pprof *pprof__new(const struct pprof_value_type *types, size_t nr_types,
			 const struct pprof_value_type *period_type, int64_t period)
{
	struct pprof *p = xcalloc(1, sizeof(*p));
	size_t i;

	/* The string table's entry 0 is "" by the format's rule. */
	xgrow((void **)&p->strings, &p->cap_strings, 1, sizeof(*p->strings));
	p->strings[0] = xstrdup("");
	p->nr_types = nr_types;
	p->types = xcalloc(nr_types, sizeof(*p->types));
	for (i = 0; i < nr_types; i++) {
		perftools__profiles__value_type__init(&p->types[i]);
		p->types[i].type = str_id(p, types[i].type);
		p->types[i].unit = str_id(p, types[i].unit);
	}
	perftools__profiles__value_type__init(&p->period_type);
	if (period_type) {
		p->have_period = true;
		p->period_type.type = str_id(p, period_type->type);
		p->period_type.unit = str_id(p, period_type->unit);
	}
	p->period = period;
	return p;
}

void pprof__delete(struct pprof *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i <= p->strs.nr; i++)
		free(p->strings[i]);
	for (i = 0; i < p->samples.nr; i++) {
		free(p->smp[i].locs);
		free(p->smp[i].values);
	}
	keytab__free(&p->strs);
	keytab__free(&p->funcs);
	keytab__free(&p->maps);
	keytab__free(&p->locs);
	keytab__free(&p->samples);
	free(p->strings);
	free(p->functions);
	free(p->mappings);
	free(p->locations);
	free(p->lines);
	free(p->smp);
	free(p->comments);
	free(p->types);
	free(p->bids.text);
	u64map__free(&p->bid_pids);
	free(p);
}

void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void pprof__add_comment(struct pprof *p, const char *comment)
{
	xgrow((void **)&p->comments, &p->cap_comments, p->nr_comments + 1, sizeof(*p->comments));
	p->comments[p->nr_comments++] = str_id(p, comment);
}

static uint64_t function_id(struct pprof *p, const char *name, const char *file)
{
	int64_t key[2] = {str_id(p, name), str_id(p, file)};
	bool created;
	uint64_t id = keytab__find(&p->funcs, key, sizeof(key), &created);

	if (created) {
		Perftools__Profiles__Function *f;

		xgrow((void **)&p->functions, &p->cap_functions, id, sizeof(*p->functions));
		f = &p->functions[id - 1];
		perftools__profiles__function__init(f);
		f->id = id;
		f->name = f->system_name = key[0];
		f->filename = key[1];
	}
	return id;
}

/* One mapping per object (and build-id): the addresses srvscope knows are already named,
 * so the mapping carries the object's identity, not its address range. */
static uint64_t mapping_id(struct pprof *p, const char *module, const char *build_id)
{
	int64_t key[2] = {str_id(p, module), str_id(p, build_id)};
	bool created;
	uint64_t id;

	if (!key[0])
		return 0;
	id = keytab__find(&p->maps, key, sizeof(key), &created);
	if (created) {
		Perftools__Profiles__Mapping *m;

		xgrow((void **)&p->mappings, &p->cap_mappings, id, sizeof(*p->mappings));
		m = &p->mappings[id - 1];
		perftools__profiles__mapping__init(m);
		m->id = id;
		m->filename = key[0];
		m->build_id = key[1];
		/* Functions are named here: pprof must not symbolize again. */
		m->has_functions = true;
	} else if (key[1] && !p->mappings[id - 1].build_id) {
		p->mappings[id - 1].build_id = key[1];
	}
	return id;
}

static uint64_t location_id(struct pprof *p, const struct pprof_frame *fr)
{
	uint64_t key[3] = {mapping_id(p, fr->module, fr->build_id), fr->addr,
			   function_id(p, fr->function, fr->file)};
	bool created;
	uint64_t id = keytab__find(&p->locs, key, sizeof(key), &created);

	if (created) {
		Perftools__Profiles__Location *l;
		Perftools__Profiles__Line *ln;

		xgrow((void **)&p->locations, &p->cap_locations, id, sizeof(*p->locations));
		p->lines = xrealloc(p->lines, p->cap_locations * sizeof(*p->lines));
		l = &p->locations[id - 1];
		ln = &p->lines[id - 1];
		perftools__profiles__location__init(l);
		perftools__profiles__line__init(ln);
		l->id = id;
		l->mapping_id = key[0];
		l->address = key[1];
		ln->function_id = key[2];
	}
	return id;
}

static void add_locs(struct pprof *p, const uint64_t *locs, size_t n, const int64_t *values,
		     int64_t thread, long tid)
{
	size_t klen = (n + 2) * sizeof(uint64_t);
	uint64_t *key = xmalloc(klen);
	struct pprof_sample *s;
	bool created;
	uint64_t id;
	size_t i;

	memcpy(key, locs, n * sizeof(*locs));
	key[n] = (uint64_t)thread;
	key[n + 1] = (uint64_t)tid;
	id = keytab__find(&p->samples, key, klen, &created);
	free(key);
	if (created) {
		xgrow((void **)&p->smp, &p->cap_smp, id, sizeof(*p->smp));
		s = &p->smp[id - 1];
		s->locs = xmalloc((n ? n : 1) * sizeof(*locs));
		memcpy(s->locs, locs, n * sizeof(*locs));
		s->nr_locs = n;
		s->values = xcalloc(p->nr_types ? p->nr_types : 1, sizeof(*s->values));
		s->thread = thread;
		s->tid = tid;
	}
	s = &p->smp[id - 1];
	for (i = 0; i < p->nr_types; i++)
		s->values[i] += values[i];
}

void pprof__add(struct pprof *p, const struct pprof_frame *frames, size_t n, const int64_t *values,
		const struct pprof_labels *l)
{
	uint64_t *locs = xmalloc((n ? n : 1) * sizeof(*locs));
	size_t i;

	for (i = 0; i < n; i++)
		locs[i] = location_id(p, &frames[i]);
	add_locs(p, locs, n, values, l ? str_id(p, l->thread) : 0, l ? l->tid : 0);
	free(locs);
}

void pprof__add_folded(struct pprof *p, const char *stack, const int64_t *values, long tid)
{
	char *copy = xstrdup(stack), *thread = copy, *s, *next;
	struct pprof_frame *frames = NULL;
	size_t n = 0, cap = 0, i;

	s = strchr(copy, ';');
	if (s)
		*s++ = '\0';
	for (; s && *s; s = next) {
		struct pprof_frame *fr;
		size_t len;

		next = strchr(s, ';');
		if (next)
			*next++ = '\0';
		xgrow((void **)&frames, &cap, n + 1, sizeof(*frames));
		fr = &frames[n++];
		memset(fr, 0, sizeof(*fr));
		fr->function = s;
		len = strlen(s);
		if (len > 4 && !strcmp(s + len - 4, "_[k]")) {
			s[len - 4] = '\0';
			fr->module = PPROF_KERNEL_MODULE;
		}
	}
	/* Folded text is root first; a sample is leaf first. */
	for (i = 0; i < n / 2; i++) {
		struct pprof_frame t = frames[i];

		frames[i] = frames[n - 1 - i];
		frames[n - 1 - i] = t;
	}
	pprof__add(p, frames, n, values,
		   &(struct pprof_labels){.thread = thread[0] ? thread : NULL, .tid = tid});
	free(frames);
	free(copy);
}

static void build_ids__add(struct build_ids *b, pid_t pid)
{
	struct proc_maps *maps = proc_maps__read(pid);
	char *out = NULL;
	size_t len;

	if (!maps)
		return;
	len = procinfo__build_ids(pid, maps, &out);
	if (len) {
		b->text = xrealloc(b->text, b->len + len + 1);
		memcpy(b->text + b->len, out, len);
		b->len += len;
		b->text[b->len] = '\0';
	}
	free(out);
	proc_maps__delete(maps);
}

/* The build-id of the object at path, or NULL. Writes into hex. */
static const char *build_ids__find(const struct build_ids *b, const char *path, char *hex,
				   size_t size)
{
	const char *line = b->text, *end;
	size_t plen = strlen(path);

	for (; line && line < b->text + b->len; line = end + 1) {
		const char *sp = strchr(line, ' ');

		end = strchr(line, '\n');
		if (!end || !sp || sp > end)
			break;
		if ((size_t)(end - sp - 1) == plen && !memcmp(sp + 1, path, plen) &&
		    (size_t)(sp - line) < size) {
			memcpy(hex, line, sp - line);
			hex[sp - line] = '\0';
			return hex;
		}
	}
	return NULL;
}

/* The build-ids of the objects pid maps, read once per process. */
static void need_build_ids(struct pprof *p, pid_t pid)
{
	bool created;

	u64map__slot(&p->bid_pids, (uint64_t)pid, &created);
	if (created)
		build_ids__add(&p->bids, pid);
}

void pprof__add_main(struct pprof *p, pid_t pid)
{
	char exe[4096], path[64], hex[128];
	ssize_t n;

	need_build_ids(p, pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		mapping_id(p, exe, build_ids__find(&p->bids, exe, hex, sizeof(hex)));
	}
}

void pprof__add_frames(struct pprof *p, pid_t pid, const struct frame *fr, size_t nr,
		       const int64_t *values, const struct pprof_labels *l)
{
	struct pprof_frame *frames = xcalloc(nr + 1, sizeof(*frames));
	char(*names)[512] = xcalloc(nr + 1, sizeof(*names));
	char(*hex)[128] = xcalloc(nr + 1, sizeof(*hex));
	size_t n = 0, i, k;

	if (pid > 0)
		need_build_ids(p, pid);
	/* Innermost first, the user frames above the kernel's as in the folded output (the
	 * kernel frames are where the thread is now). */
	for (k = 0; k < 2; k++)
		for (i = 0; i < nr; i++) {
			struct pprof_frame *pf;

			if (fr[i].kernel != (k == 0))
				continue;
			pf = &frames[n];
			frame__name(&fr[i], names[n], sizeof(names[n]));
			pf->function = names[n];
			pf->addr = fr[i].addr;
			if (fr[i].kernel)
				pf->module = PPROF_KERNEL_MODULE;
			else if (fr[i].module && strcmp(fr[i].module, "[unknown]"))
				pf->module = fr[i].module;
			if (pf->module && pf->module[0] == '/')
				pf->build_id = build_ids__find(&p->bids, pf->module, hex[n],
							       sizeof(hex[n]));
			n++;
		}
	pprof__add(p, frames, n, values, l);
	free(hex);
	free(names);
	free(frames);
}

void pprof__add_stack_agg(struct pprof *p, const struct stack_agg *agg)
{
	size_t g, t;

	/* pprof names a profile after its first mapping: the target's executable. */
	pprof__add_main(p, agg->pid);
	for (g = 0; g < agg->nr_groups; g++) {
		const struct stack_group *grp = &agg->groups[g];

		for (t = 0; t < grp->nr_threads; t++) {
			const struct group_thread *th = &grp->threads[t];
			int64_t v = th->count;
			struct pprof_labels l = {.thread = th->name[0] ? th->name : "?",
						 .tid = th->tid};

			pprof__add_frames(p, th->pid, grp->frames, grp->nr_frames, &v, &l);
		}
	}
}

static int gzip(const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen)
{
	z_stream z = {0};
	size_t cap;
	int ret;

	/* 15 + 16: a gzip header and trailer, as pprof files have. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, inlen) + 64;
	*out = xmalloc(cap);
	z.next_in = (Bytef *)in;
	z.avail_in = inlen;
	z.next_out = *out;
	z.avail_out = cap;
	ret = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

int pprof__encode(struct pprof *p, uint8_t **buf, size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t nsmp = p->samples.nr, i;
	Perftools__Profiles__ValueType **types = xcalloc(p->nr_types + 1, sizeof(*types));
	Perftools__Profiles__Sample *smp = xcalloc(nsmp + 1, sizeof(*smp));
	Perftools__Profiles__Sample **psmp = xcalloc(nsmp + 1, sizeof(*psmp));
	Perftools__Profiles__Label *lab = xcalloc(2 * nsmp + 1, sizeof(*lab));
	Perftools__Profiles__Label **plab = xcalloc(2 * nsmp + 1, sizeof(*plab));
	Perftools__Profiles__Mapping **pmap = xcalloc(p->maps.nr + 1, sizeof(*pmap));
	Perftools__Profiles__Location **ploc = xcalloc(p->locs.nr + 1, sizeof(*ploc));
	Perftools__Profiles__Line **pline = xcalloc(p->locs.nr + 1, sizeof(*pline));
	Perftools__Profiles__Function **pfun = xcalloc(p->funcs.nr + 1, sizeof(*pfun));
	int64_t thread_key = str_id(p, "thread"), tid_key = str_id(p, "tid");
	uint8_t *raw;
	size_t rawlen, nl = 0;
	int err;

	for (i = 0; i < p->nr_types; i++)
		types[i] = &p->types[i];
	prof.n_sample_type = p->nr_types;
	prof.sample_type = types;
	for (i = 0; i < nsmp; i++) {
		const struct pprof_sample *s = &p->smp[i];

		perftools__profiles__sample__init(&smp[i]);
		smp[i].n_location_id = s->nr_locs;
		smp[i].location_id = s->locs;
		smp[i].n_value = p->nr_types;
		smp[i].value = s->values;
		smp[i].label = &plab[nl];
		if (s->thread) {
			perftools__profiles__label__init(&lab[nl]);
			lab[nl].key = thread_key;
			lab[nl].str = s->thread;
			plab[nl] = &lab[nl];
			nl++;
			smp[i].n_label++;
		}
		if (s->tid) {
			perftools__profiles__label__init(&lab[nl]);
			lab[nl].key = tid_key;
			lab[nl].num = s->tid;
			plab[nl] = &lab[nl];
			nl++;
			smp[i].n_label++;
		}
		psmp[i] = &smp[i];
	}
	prof.n_sample = nsmp;
	prof.sample = psmp;
	for (i = 0; i < p->maps.nr; i++)
		pmap[i] = &p->mappings[i];
	prof.n_mapping = p->maps.nr;
	prof.mapping = pmap;
	for (i = 0; i < p->locs.nr; i++) {
		pline[i] = &p->lines[i];
		p->locations[i].n_line = 1;
		p->locations[i].line = &pline[i];
		ploc[i] = &p->locations[i];
	}
	prof.n_location = p->locs.nr;
	prof.location = ploc;
	for (i = 0; i < p->funcs.nr; i++)
		pfun[i] = &p->functions[i];
	prof.n_function = p->funcs.nr;
	prof.function = pfun;
	prof.n_string_table = p->strs.nr + 1;
	prof.string_table = p->strings;
	prof.time_nanos = p->time_nanos;
	prof.duration_nanos = p->duration_nanos;
	if (p->have_period)
		prof.period_type = &p->period_type;
	prof.period = p->period;
	prof.n_comment = p->nr_comments;
	prof.comment = p->comments;

	rawlen = perftools__profiles__profile__get_packed_size(&prof);
	raw = xmalloc(rawlen + 1);
	perftools__profiles__profile__pack(&prof, raw);
	err = gzip(raw, rawlen, buf, len);
	free(raw);
	free(pfun);
	free(pline);
	free(ploc);
	free(pmap);
	free(plab);
	free(lab);
	free(psmp);
	free(smp);
	free(types);
	return err;
}

int pprof__write(struct pprof *p, FILE *f)
{
	uint8_t *buf;
	size_t len;
	int err = pprof__encode(p, &buf, &len);

	if (err)
		return error("cannot encode the pprof profile: %s", strerror(-err));
	if (fwrite(buf, 1, len, f) != len || fflush(f)) {
		err = -errno;
		free(buf);
		return error("cannot write the pprof profile: %s", strerror(-err));
	}
	free(buf);
	return 0;
}

int output__pprof(FILE *f, const struct stack_agg *agg, uint64_t duration_ns)
{
	static const struct pprof_value_type samples = {"samples", "count"};
	struct pprof *p = pprof__new(&samples, 1, &samples, 1);
	int err;

	pprof__set_time(p, (int64_t)(now_realtime_ns() - duration_ns), (int64_t)duration_ns);
	pprof__add_stack_agg(p, agg);
	err = pprof__write(p, f);
	pprof__delete(p);
	return err;
}
