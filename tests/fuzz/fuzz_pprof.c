/* Fuzz target: the pprof writer fed folded stacks (what 'flame' and 'cpu' hand it), then
 * serve's aggregate fed the same bytes as a stream of records and lost-count sections.
 * Whatever the bytes: the profile decodes back (gunzip, protobuf-c) with every sample's
 * values and every location, function and string it refers to; the aggregate's metrics
 * are written without a crash and with one line per series. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bpf/record.h"
#include "output/pprof.h"
#include "proto/profile.pb-c.h"
#include "serve/agg.h"

static void check_profile(const uint8_t *gz, size_t len, size_t lines)
{
	size_t cap = 1 << 20, i, j;
	uint8_t *raw = malloc(cap);
	z_stream z = {0};
	Perftools__Profiles__Profile *p;
	int ret;

	assert(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = len;
	for (;;) {
		z.next_out = raw + z.total_out;
		z.avail_out = cap - z.total_out;
		ret = inflate(&z, Z_FINISH);
		if (ret == Z_STREAM_END)
			break;
		assert(ret == Z_BUF_ERROR || ret == Z_OK);
		cap *= 2;
		raw = realloc(raw, cap);
	}
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	assert(p);
	assert(p->n_string_table >= 1 && !p->string_table[0][0]);
	assert(p->n_sample <= lines);
	for (i = 0; i < p->n_sample; i++) {
		assert(p->sample[i]->n_value == p->n_sample_type);
		for (j = 0; j < p->sample[i]->n_location_id; j++)
			assert(p->sample[i]->location_id[j] >= 1 &&
			       p->sample[i]->location_id[j] <= p->n_location);
		for (j = 0; j < p->sample[i]->n_label; j++)
			assert(p->sample[i]->label[j]->key < (int64_t)p->n_string_table &&
			       p->sample[i]->label[j]->str < (int64_t)p->n_string_table);
	}
	for (i = 0; i < p->n_location; i++) {
		assert(p->location[i]->id == i + 1 && p->location[i]->n_line == 1);
		assert(p->location[i]->line[0]->function_id >= 1 &&
		       p->location[i]->line[0]->function_id <= p->n_function);
		assert(p->location[i]->mapping_id <= p->n_mapping);
	}
	for (i = 0; i < p->n_function; i++)
		assert(p->function[i]->name < (int64_t)p->n_string_table &&
		       p->function[i]->filename < (int64_t)p->n_string_table);
	perftools__profiles__profile__free_unpacked(p, NULL);
	inflateEnd(&z);
	free(raw);
}

static void fuzz_pprof(const uint8_t *data, size_t size)
{
	static const struct pprof_value_type types[] = {{"samples", "count"},
							{"cpu", "nanoseconds"}};
	struct pprof *p = pprof__new(types, 2, &types[1], 10101010);
	char *text = malloc(size + 1), *line, *save = NULL;
	size_t lines = 0, len;
	uint8_t *gz;
	int64_t v[2];

	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		v[0] = (int64_t)strlen(line);
		v[1] = v[0] * 10101010;
		pprof__add_folded(p, line, v, (long)lines);
		lines++;
	}
	assert(!pprof__encode(p, &gz, &len));
	check_profile(gz, len, lines);
	free(gz);
	pprof__delete(p);
	free(text);
}

static void fuzz_agg(const uint8_t *data, size_t size)
{
	struct serve_limits lim = {.threads = 16, .series = 32, .stacks = 8, .entries = 8};
	struct serve_agg *a = serve_agg__new(&lim);
	struct serve_window *w = serve_agg__window_open(a, SERVE_WINDOW_OFF);
	struct serve_window *on = serve_agg__window_open(a, SERVE_WINDOW_ON);
	char *m = NULL;
	size_t off, mlen = 0;
	uint64_t ips[8];
	int user, trunc;
	FILE *f;

	for (off = 0; off + sizeof(struct rec) <= size; off += sizeof(struct rec)) {
		struct rec r;

		memcpy(&r, data + off, sizeof(r));
		/* A few record types only, so that most inputs mean something. */
		r.h.type = (r.h.type % 12) + 1;
		r.h.tid %= 24;
		r.h.pid %= 24;
		if (r.h.type == REC_SWITCH) {
			r.sw.next_tid %= 24;
			r.sw.kstack %= 12;
			r.sw.ustack %= 12;
		}
		serve_agg__event(a, &r);
		serve_agg__stack(a, r.h.ts % 12, r.h.aux, (const uint64_t *)(data + off),
				 sizeof(r) / 8);
		serve_agg__lost(a, data + off, r.h.cpu % sizeof(r));
	}
	serve_agg__window_close(a, w);
	serve_agg__window_close(a, on);
	assert(w->nr <= lim.entries && on->nr <= lim.entries);
	for (off = 0; off < w->nr; off++)
		serve_agg__stack_copy(a, w->e[off].ustack, ips, 8, &user, &trunc);
	f = open_memstream(&m, &mlen);
	serve_agg__metrics(a, f);
	fclose(f);
	assert(mlen && m[mlen - 1] == '\n');
	free(m);
	serve_window__free(w);
	serve_window__free(on);
	serve_agg__delete(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_pprof(data, size);
	fuzz_agg(data, size);
	return 0;
}
