/* The pprof writer: folded stacks in, profile.proto out (gunzip'd and decoded with
 * protobuf-c): sample types and period, leaf-first locations, kernel frames in their
 * mapping without the _[k] suffix, labels, identical stacks added up, strings shared. */
#include <stdlib.h>
#include <zlib.h>

#include "output/pprof.h"
#include "proto/profile.pb-c.h"
#include "unit.h"

static Perftools__Profiles__Profile *decode(struct pprof *p)
{
	static uint8_t raw[1 << 16];
	uLongf rawlen = sizeof(raw);
	z_stream z = {0};
	uint8_t *gz;
	size_t len;

	if (pprof__encode(p, &gz, &len))
		return NULL;
	ok(len > 18 && gz[0] == 0x1f && gz[1] == 0x8b, "gzip'd (%zu bytes)", len);
	inflateInit2(&z, 15 + 16);
	z.next_in = gz;
	z.avail_in = len;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	if (inflate(&z, Z_FINISH) != Z_STREAM_END)
		rawlen = 0;
	else
		rawlen = z.total_out;
	inflateEnd(&z);
	free(gz);
	return perftools__profiles__profile__unpack(NULL, rawlen, raw);
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

/* The name of the function at sample s's location i (leaf first). */
static const char *frame(const Perftools__Profiles__Profile *p, size_t s, size_t i)
{
	uint64_t loc = p->sample[s]->location_id[i];
	uint64_t fn = p->location[loc - 1]->line[0]->function_id;

	return str(p, p->function[fn - 1]->name);
}

static const char *mapping(const Perftools__Profiles__Profile *p, size_t s, size_t i)
{
	uint64_t loc = p->sample[s]->location_id[i];
	uint64_t m = p->location[loc - 1]->mapping_id;

	return m ? str(p, p->mapping[m - 1]->filename) : "";
}

int main(void)
{
	static const struct pprof_value_type types[] = {{"samples", "count"},
							{"cpu", "nanoseconds"}};
	struct pprof *p = pprof__new(types, 2, &types[1], 10000000);
	Perftools__Profiles__Profile *d;
	int64_t v1[2] = {3, 30000000}, v2[2] = {2, 20000000}, v3[2] = {1, 10000000};

	pprof__set_time(p, 1700000000000000000ll, 5000000000ll);
	pprof__add_folded(p, "worker;main;run;read;do_syscall_64_[k];vfs_read_[k]", v1, 0);
	pprof__add_folded(p, "worker;main;run;read;do_syscall_64_[k];vfs_read_[k]", v2, 0);
	pprof__add_folded(p, "acceptor;main;accept_loop", v3, 4242);
	pprof__add_comment(p, "a test");
	d = decode(p);
	if (!ok(d != NULL, "decodes"))
		return done_testing();
	is_int(d->n_sample_type, 2, "two sample types");
	is_str(str(d, d->sample_type[0]->type), "samples", "samples/");
	is_str(str(d, d->sample_type[0]->unit), "count", "count");
	is_str(str(d, d->sample_type[1]->type), "cpu", "cpu/");
	is_str(str(d, d->period_type->unit), "nanoseconds", "period type cpu/nanoseconds");
	is_int(d->period, 10000000, "period");
	is_int(d->duration_nanos, 5000000000ll, "duration");
	is_str(str(d, d->comment[0]), "a test", "comment");
	is_str(d->string_table[0], "", "string 0 is empty");
	is_int(d->n_sample, 2, "identical stacks and labels add up: two samples");
	is_int(d->sample[0]->value[0], 5, "3 + 2 samples");
	is_int(d->sample[0]->value[1], 50000000, "30 + 20 ms");
	is_int(d->sample[0]->n_location_id, 5, "five frames (the thread name is a label)");
	is_str(frame(d, 0, 0), "vfs_read", "leaf first, _[k] dropped");
	is_str(mapping(d, 0, 0), PPROF_KERNEL_MODULE, "kernel frames in [kernel.kallsyms]");
	is_str(frame(d, 0, 2), "read", "then the user frames");
	is_str(mapping(d, 0, 2), "", "without a mapping (folded text has none)");
	is_str(frame(d, 0, 4), "main", "root last");
	is_int(d->sample[0]->n_label, 1, "no tid: one label");
	is_str(str(d, d->sample[0]->label[0]->key), "thread", "label thread");
	is_str(str(d, d->sample[0]->label[0]->str), "worker", "= worker");
	is_int(d->sample[1]->n_label, 2, "thread and tid");
	is_str(str(d, d->sample[1]->label[1]->key), "tid", "label tid");
	is_int(d->sample[1]->label[1]->num, 4242, "= 4242");
	ok(d->sample[1]->location_id[1] == d->sample[0]->location_id[4], "main is one location");
	is_int(d->n_mapping, 1, "one mapping");
	ok(d->mapping[0]->has_functions, "functions are named: pprof does not symbolize");
	perftools__profiles__profile__free_unpacked(d, NULL);
	pprof__delete(p);
	return done_testing();
}
