/* Fuzz target: the trace file reader (header, sections, truncated tails, compressed
 * sections, damaged sections), then every report's analysis over whatever it accepted.
 * Then the damage property: the input's checksums (version 2 on) are set right, and if that
 * makes a clean trace, flipping any one byte must lose at most the section holding it
 * (events, stacks and maps of every other section are still read); it aborts otherwise. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/blocking.h"
#include "analysis/flame.h"
#include "analysis/sched.h"
#include "critical/critical.h"
#include "trace/trace.h"
#include "util/util.h"

#define FLIPS 4 /* bytes flipped (one at a time) per clean input */

static const char *fake_user(void *ctx, uint32_t pid, uint64_t ts, uint64_t addr)
{
	return (addr & 1) ? "odd;name" : "even";
}

static const char *fake_kernel(void *ctx, uint64_t addr)
{
	return (addr & 2) ? "bpf_prog_x" : "asm_sysvec";
}

/* The critical path of the first threads over their lives, and what each segment says. */
static void critical(struct trace *t)
{
	struct crit_graph g;
	char buf[256];
	size_t i, k;

	if (crit_graph__build(&g, &t, 1, buf, sizeof(buf)))
		return;
	for (i = 0; i < g.hosts[0].nr_threads && i < 4; i++) {
		uint32_t tid = g.hosts[0].threads[i].tid;
		struct crit_path p;
		int64_t a, b;

		if (!crit_graph__thread_span(&g, 0, tid, &a, &b) ||
		    crit_graph__path(&g, 0, tid, a, b, &p))
			continue;
		for (k = 0; k < p.nr; k++)
			crit_segment__what(&g, &p.segs[k], buf, sizeof(buf));
		crit_path__free(&p);
	}
	crit_graph__free(&g);
}

static void analyze(struct trace *t)
{
	struct flame_namer n = {.user = fake_user, .kernel = fake_kernel};
	struct sched_report sr;
	struct block_report br;
	struct flame fl;
	char buf[512];
	size_t i;

	for (i = 0; i < t->nr_ev; i++) {
		trace__thread(t, t->ev[i]->h.tid);
		trace__stack(t, t->ev[i]->sw.kstack);
		trace__fd_desc(t, t->ev[i]->h.pid, t->ev[i]->sw.fd, t->ev[i]->h.ts);
		trace__maps(t, t->ev[i]->h.pid, t->ev[i]->h.ts);
		if (i < 16) /* walks every section: a few are enough */
			trace__title(t, t->ev[i]->h.pid, buf, sizeof(buf));
	}
	trace__lost_summary(t, buf, sizeof(buf));
	sched__analyze(t, &sr);
	sched_report__free(&sr);
	blocking__analyze(t, NULL, &br);
	block_report__free(&br);
	for (i = 0; i < 3; i++) {
		flame__build(t, (enum flame_kind)i, NULL, &n, &fl);
		flame__free(&fl);
	}
	critical(t);
}

/* Sets the checksums of a version 2 or later file's header and of every section that the walk from
 * the first one reaches, as a writer would have. */
static void set_checksums(uint8_t *b, size_t len)
{
	struct trace_file_header h;
	uint64_t off;

	memcpy(&h, b, sizeof(h));
	if (memcmp(h.magic, TRACE_MAGIC, 8) || h.version < 2)
		return;
	h.header_crc = crc32(0, (const Bytef *)&h, offsetof(struct trace_file_header, header_crc));
	memcpy(b, &h, sizeof(h));
	for (off = h.header_size; off % 8 == 0 && off < len && len - off >= 24;) {
		struct trace_section s;

		memcpy(&s, b + off, sizeof(s));
		if (s.magic != TRACE_SECTION_MAGIC || s.size > len - off - 24)
			break;
		s.payload_crc = crc32(0, b + off + 24, s.size);
		s.header_crc =
			crc32(0, (const Bytef *)&s, offsetof(struct trace_section, payload_crc));
		memcpy(b + off, &s, sizeof(s));
		off += 24 + ((s.size + 7) & ~7ull);
	}
}

/* Whether an intact section header sits anywhere but at the start of a section: inside a
 * payload, it is found when the reader resynchronizes after a damaged header, and a crafted
 * one can swallow the sections after it. The property holds for files a writer wrote. */
static bool has_stowaway(const struct trace *t, const uint8_t *b, size_t len)
{
	size_t off, i = 0;

	for (off = 8; off + 24 <= len; off += 8) {
		struct trace_section s;

		while (i < t->nr_secs && t->secs[i].off < off)
			i++;
		if (i < t->nr_secs && t->secs[i].off == off)
			continue;
		memcpy(&s, b + off, sizeof(s));
		if (trace_section__intact(&s))
			return true;
	}
	return false;
}

static void flip_one(const struct trace *t0, uint8_t *b, size_t len, size_t pos, uint8_t bit)
{
	uint64_t ev = 0, st = 0, mp = 0;
	struct trace *t1;
	char err[256];
	size_t i;

	if (pos < 12 || (t0->truncated && pos >= t0->truncated_at))
		return; /* magic, version: not a trace any more; a cut tail: not a section */
	for (i = 0; i < t0->nr_secs; i++) {
		const struct trace_section_info *s = &t0->secs[i];

		if (pos < s->off || pos - s->off >= s->len)
			continue;
		ev = s->type == SEC_EVENTS ? s->items : 0;
		st = s->type == SEC_STACKS ? s->items : 0;
		mp = s->type == SEC_MAPS ? s->items : 0;
	}
	b[pos] ^= bit;
	t1 = trace__open_mem(b, len, err, sizeof(err));
	if (!t1 || t1->nr_ev + ev < t0->nr_ev || t1->nr_stacks + st < t0->nr_stacks ||
	    t1->nr_maps + mp < t0->nr_maps) {
		fprintf(stderr,
			"flipping bit %#x of byte %zu lost more than its section (of %zu events, "
			"%zu stacks, %zu maps, it may lose %" PRIu64 ", %" PRIu64 ", %" PRIu64
			"): %s\n",
			bit, pos, t0->nr_ev, t0->nr_stacks, t0->nr_maps, ev, st, mp,
			t1 ? "read fewer" : err);
		abort();
	}
	trace__close(t1);
	b[pos] ^= bit;
}

static void damage_property(const uint8_t *data, size_t size)
{
	uint8_t *b;
	struct trace *t0;
	char err[256];
	uint64_t h;
	int i;

	if (size < sizeof(struct trace_file_header))
		return;
	b = xmalloc(size);
	memcpy(b, data, size);
	set_checksums(b, size);
	t0 = trace__open_mem(b, size, err, sizeof(err));
	if (t0 && !t0->nr_damage && t0->hdr.version >= 2 && !has_stowaway(t0, b, size)) {
		h = fnv1a(data, size, FNV1A_INIT);
		for (i = 0; i < FLIPS; i++, h = h * 0x9e3779b97f4a7c15ull + 1)
			flip_one(t0, b, size, (h >> 8) % size, 1u << (h & 7));
	}
	trace__close(t0);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace *t;
	char err[256];

	t = trace__open_mem(data, size, err, sizeof(err));
	if (t) {
		analyze(t);
		trace__close(t);
	}
	damage_property(data, size);
	return 0;
}
