/* The trace file writer and reader: round trip of every section, time order, a truncated
 * tail, damaged sections skipped and reported with their offsets while the others are
 * read, version 1 files, lost-event summaries. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rec_build.h"
#include "trace/syscalls.h"
#include "unit.h"
#include "util/util.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n);
	*len = fread(buf, 1, n, f);
	fclose(f);
	return buf;
}

/* A kallsyms section as the recorder writes it: the text packed, the frame given. */
static void kallsyms_zstd(struct trace_writer *w, const char *ks, size_t len)
{
	size_t n;
	void *z = trace__zstd_pack(ks, len, &n);

	trace_writer__section_give(w, SEC_KALLSYMS, SECF_ZSTD, z, n);
}

static void write_sample(struct tb *b)
{
	static const char ks[] = "ffffffff81000000 T _stext\nffffffff81000100 T do_nanosleep\n";
	static const char maps1[] = "1000-2000 r-xp 00000000 08:01 7 /bin/a\n";
	static const char maps2[] = "1000-3000 r-xp 00000000 08:01 7 /bin/b\n";
	uint64_t ips[3] = {0x10, 0x20, 0x30};
	uint64_t lost[1 + 2 * LOST_REASONS];
	uint32_t h[2] = {2, LOST_REASONS};

	tb_open(b);
	trace_writer__section(b->w, SEC_INFO, "srvscope=record\n", 16);
	kallsyms_zstd(b->w, ks, strlen(ks));
	trace_writer__maps(b->w, 1000, 7, maps1, strlen(maps1), "abc /bin/a\n", 11);
	trace_writer__maps(b->w, 5000, 7, maps2, strlen(maps2), NULL, 0);
	trace_writer__add_name(b->w, 7, 7, "main");
	trace_writer__add_name(b->w, 8, 7, "worker");
	trace_writer__add_stack(b->w, 0xabc, true, ips, 3);
	trace_writer__add_stack(b->w, 0xdef, false, ips, 1);
	trace_writer__add_stack(b->w, 0xc07, TRACE_STACK_USER | TRACE_STACK_TRUNCATED, ips, 2);
	trace_writer__add_fd(b->w, 1000, 7, 3, "pipe [1]");
	trace_writer__add_fd(b->w, 4000, 7, 3, "tcp 1.2.3.4:5 -> 6.7.8.9:10");
	/* Slightly out of order, as CPUs race to the ring buffer. */
	tb_simple(b, 3000, REC_WAKEUP, 8, 7);
	tb_simple(b, 2000, REC_WAKEUP, 8, 7);
	tb_switch(b, 2500, 8, 7, 1, 0, 0, 0, 3, 0xdef, 0xabc);
	trace_writer__flush(b->w);
	tb_simple(b, 2900, REC_WAKEUP, 7, 7);
	memcpy(lost, h, 8);
	memset(lost + 1, 0, sizeof(lost) - 8);
	lost[1 + LOST_REASONS + LOST_RINGBUF] = 4;
	lost[1 + LOST_STACK_RINGBUF] = 1;
	trace_writer__flush(b->w);
	trace_writer__section(b->w, SEC_LOST, lost, sizeof(lost));
}

static void round_trip(void)
{
	struct tb b;
	struct trace *t;
	const struct trace_stack *st;
	const struct trace_maps *m;
	char buf[256];

	write_sample(&b);
	t = tb_read(&b, 9000);
	if (!ok(t != NULL, "a written trace reads back"))
		return;
	is_str(t->hdr.host, "unit", "header: host");
	is_int(t->hdr.nr_cpus, 2, "header: CPUs");
	is_int(t->nr_ev, 4, "every event");
	ok(t->ev[0]->h.ts == 2000 && t->ev[1]->h.ts == 2500 && t->ev[2]->h.ts == 2900 &&
		   t->ev[3]->h.ts == 3000,
	   "events come sorted by time");
	ok(t->ended && t->end_ns == 9000 && !t->truncated, "the end section");
	st = trace__stack(t, 0xabc);
	ok(st && st->nr == 3 && st->user && st->ips[2] == 0x30, "a user stack by id");
	ok(trace__stack(t, 0xdef) && !trace__stack(t, 0xdef)->user, "a kernel stack by id");
	ok(st && !st->truncated && !trace__stack(t, 0xdef)->truncated, "whole stacks");
	st = trace__stack(t, 0xc07);
	ok(st && st->nr == 2 && st->user && st->truncated, "a truncated user stack: bit 1 of user");
	ok(!trace__stack(t, 0) && !trace__stack(t, 0x999), "unknown stack ids");
	is_str(trace__thread(t, 8)->comm, "worker", "thread names");
	is_int(trace__thread(t, 8)->pid, 7, "thread's process");
	ok(!trace__thread(t, 99), "unknown thread");
	is_str(trace__fd_desc(t, 7, 3, 2000), "pipe [1]", "fd as it was then");
	is_str(trace__fd_desc(t, 7, 3, 4500), "tcp 1.2.3.4:5 -> 6.7.8.9:10", "fd after a change");
	is_str(trace__fd_desc(t, 7, 3, 10), "pipe [1]", "fd before any description: the first");
	ok(!trace__fd_desc(t, 7, 4, 2000), "fd never described");
	m = trace__maps(t, 7, 2000);
	ok(m && m->len == 39 && !memcmp(m->text + 36, "/a\n", 3) && m->build_ids_len == 11,
	   "maps in force at a time, with build-ids");
	m = trace__maps(t, 7, 6000);
	ok(m && strstr(m->text, "/bin/b"), "later maps");
	m = trace__maps_after(t, 7, 1000);
	ok(m && m->ts == 5000, "the maps read next after a time");
	ok(!trace__maps_after(t, 7, 5000) && !trace__maps_after(t, 8, 0),
	   "none after the last, none of another process");
	{
		size_t klen = 0;
		const char *ktext = trace__kallsyms(t, &klen);
		char *taken = trace__kallsyms_take(t, &klen);

		ok(t->has_kallsyms && ktext && klen > 20 && strlen(ktext) == klen &&
			   !memcmp(ktext, "ffffffff81000000 T _stext", 25),
		   "kallsyms (compressed) read back, NUL-terminated");
		ok(taken == ktext, "kallsyms: the text decompressed once, then handed over");
		free(taken);
		taken = trace__kallsyms_take(t, &klen);
		ok(taken && klen > 20 && !memcmp(taken, "ffffffff81000000 T _stext", 25),
		   "kallsyms: taken again, decompressed again");
		free(taken);
	}
	ok(t->info_len == 16 && !memcmp(t->info, "srvscope=record\n", 16), "info section");
	is_int(trace__lost_events(t), 5, "lost events and stacks");
	is_str(trace__lost_summary(t, buf, sizeof(buf)),
	       "lost 4 events and 1 stack to a full ring buffer (cpu0: 1, cpu1: 4); record "
	       "again with a larger --buffer-size",
	       "lost summary per CPU");
	trace__close(t);
}

static void truncated(void)
{
	struct tb b;
	char err[256];
	struct trace *t;
	size_t len, cut;
	char *buf;
	int i;

	tb_open(&b);
	for (i = 0; i < 10; i++)
		tb_simple(&b, 100 + i, REC_WAKEUP, 1, 1);
	trace_writer__flush(b.w);
	trace_writer__close(b.w, 500);
	buf = slurp(b.path, &len);
	unlink(b.path);
	/* header 256, section header 24, 10 events of 64, end section 24 + 24 */
	is_int(len, 256 + 24 + 640 + 24 + 24, "file layout");
	cut = 256 + 24 + 64 * 6 + 10;
	t = trace__open_mem(buf, cut, err, sizeof(err));
	ok(t && t->truncated && t->truncated_at == 256 && t->nr_ev == 6 && !t->ended,
	   "a file cut inside the events keeps the whole events before the cut");
	trace__close(t);
	t = trace__open_mem(buf, 256 + 8, err, sizeof(err));
	ok(t && t->truncated && t->nr_ev == 0, "a file cut in a section header");
	trace__close(t);
	t = trace__open_mem(buf, len - 30, err, sizeof(err));
	ok(t && t->nr_ev == 10 && !t->ended && t->truncated && !t->nr_damage,
	   "a file cut in the end section");
	trace__close(t);
	free(buf);
}

static char *sample_file(size_t *len)
{
	struct tb b;
	char *buf;

	write_sample(&b);
	trace_writer__close(b.w, 1);
	buf = slurp(b.path, len);
	unlink(b.path);
	return buf;
}

/* The offset of the first section of this type. */
static size_t find_sec(const char *buf, size_t len, uint16_t type)
{
	size_t off = 256;

	while (off + 24 <= len) {
		struct trace_section s;

		memcpy(&s, buf + off, sizeof(s));
		if (s.type == type)
			return off;
		off += 24 + ((s.size + 7) & ~7ull);
	}
	return 0;
}

static void corrupt(void)
{
	struct tb b;
	char err[256], line[256];
	struct trace *t;
	size_t len, off;
	char *buf;

	buf = sample_file(&len);
	ok(trace__open_mem(buf, 100, err, sizeof(err)) == NULL, "too short");
	is_str(err, "not a srvscope trace file: only 100 bytes", "says so");
	buf[0] = 'X';
	ok(!trace__open_mem(buf, len, err, sizeof(err)), "bad magic");
	is_str(err, "not a srvscope trace file: bad magic at offset 0", "says where");
	buf[0] = 'S';
	buf[8] = 9;
	ok(!trace__open_mem(buf, len, err, sizeof(err)), "a newer version");
	snprintf(line, sizeof(line),
		 "trace file version 9 is not supported (this srvscope reads versions 1 to %d): "
		 "read it with the srvscope that recorded it, or a newer one",
		 TRACE_VERSION);
	is_str(err, line, "says which");
	buf[8] = TRACE_VERSION;

	/* The first section (info) with a damaged magic: the next one is found by its CRC. */
	buf[256] = 'Z';
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 4 && t->nr_stacks == 3 && t->nr_maps == 2 && t->has_kallsyms &&
		   !t->info,
	   "a damaged section header: only that section is lost");
	ok(t && t->nr_damage == 1 && t->damage[0].off == 256 && t->damage[0].type == 0,
	   "it is listed");
	if (t && t->nr_damage)
		is_str(t->damage[0].line,
		       "section header at offset 256 is damaged (bad magic): skipped 40 bytes to "
		       "the next section, at offset 296; whatever that section held is missing",
		       "says where and what it costs");
	trace__close(t);
	buf[256] = 'S';

	/* A byte of the section's length: the header's own checksum fails. */
	buf[256 + 12] ^= 0x40;
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 4 && t->nr_damage == 1 && !t->info &&
		   strstr(t->damage[0].line, "(checksum mismatch)"),
	   "a damaged length: skipped by the header's checksum");
	trace__close(t);
	buf[256 + 12] ^= 0x40;

	/* One byte of a stack entry: the stacks are lost, nothing else. */
	off = find_sec(buf, len, SEC_STACKS);
	buf[off + 24 + 9] ^= 1;
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 4 && t->nr_stacks == 0 && t->nr_maps == 2 && t->nr_threads >= 2 &&
		   t->nr_fds == 2 && t->ended,
	   "a damaged stacks section: the rest is read");
	snprintf(line, sizeof(line),
		 "stacks section at offset %zu is damaged (checksum mismatch): skipped; the "
		 "episodes and samples whose stacks it held show [unknown] for them",
		 off);
	if (ok(t && t->nr_damage == 1, "one damage line"))
		is_str(t->damage[0].line, line, "which section, where, what it costs");
	trace__close(t);
	buf[off + 24 + 9] ^= 1;

	/* The compressed kallsyms. */
	off = find_sec(buf, len, SEC_KALLSYMS);
	buf[off + 24 + 20] ^= 0x80;
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && !t->has_kallsyms && t->nr_ev == 4 && t->nr_stacks == 3 && t->nr_damage == 1 &&
		   strstr(t->damage[0].line, "kallsyms section at offset"),
	   "damaged kallsyms: kernel names lost, nothing else");
	trace__close(t);
	buf[off + 24 + 20] ^= 0x80;

	/* A length of 2^63 with a valid checksum (crafted, or a writer bug): named. */
	off = find_sec(buf, len, SEC_INFO);
	{
		struct trace_section s;

		memcpy(&s, buf + off, sizeof(s));
		s.size = 1ull << 63;
		s.header_crc = crc32(0, (const Bytef *)&s, 16);
		memcpy(buf + off, &s, sizeof(s));
	}
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 4 && !t->truncated && t->nr_damage == 1 &&
		   strstr(t->damage[0].line, "(a length of 9223372036854775808 bytes, beyond the "
					     "end of the file)"),
	   "a length beyond the file is an error that says so, not a cut");
	trace__close(t);
	free(buf);

	/* The file header: its checksum fails, the sections are still read. */
	buf = sample_file(&len);
	buf[33] ^= 4;
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 4 && t->nr_damage == 1 && t->damage[0].off == 0 &&
		   strstr(t->damage[0].line, "file header is damaged"),
	   "a damaged file header is reported, its sections read");
	trace__close(t);
	free(buf);

	/* An events section whose size is not whole records (intact checksums). */
	tb_open(&b);
	trace_writer__section(b.w, SEC_EVENTS, "0123456789", 10);
	tb_simple(&b, 100, REC_WAKEUP, 1, 1);
	trace_writer__close(b.w, 1);
	buf = slurp(b.path, &len);
	unlink(b.path);
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 1 && t->nr_damage == 1, "a partial record inside a section");
	if (t && t->nr_damage)
		is_str(t->damage[0].line,
		       "events section at offset 256 is damaged (event section of 10 bytes (not "
		       "whole records) at offset 256): skipped; its events are missing from every "
		       "report",
		       "is reported");
	trace__close(t);
	free(buf);
}

/* Events go in sections of TRACE_EVENTS_PER_SECTION: a damaged byte costs those only. */
static void events_sections(void)
{
	struct tb b;
	struct trace *t;
	char err[256], *buf;
	size_t len, i, nr = 0;

	tb_open(&b);
	for (i = 0; i < 2500; i++)
		tb_simple(&b, 100 + i, REC_WAKEUP, 1, 1);
	trace_writer__close(b.w, 5000);
	buf = slurp(b.path, &len);
	unlink(b.path);
	t = trace__open_mem(buf, len, err, sizeof(err));
	for (i = 0; t && i < t->nr_secs; i++)
		nr += t->secs[i].type == SEC_EVENTS;
	ok(t && nr == 3 && t->nr_ev == 2500 && t->secs[0].items == 1024,
	   "2500 events in sections of 1024, 1024 and 452");
	trace__close(t);
	buf[256 + 24 + 1024 * 64 + 24 + 5] ^= 0x10; /* in the second one */
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t && t->nr_ev == 2500 - 1024 && t->nr_damage == 1 && t->secs[1].damaged,
	   "a damaged byte in the second: its 1024 events are lost, the others read");
	if (t && t->nr_damage)
		is_str(t->damage[0].line,
		       "events section at offset 65816 is damaged (checksum mismatch): skipped; "
		       "its "
		       "1024 events are missing from every report",
		       "says how many");
	trace__close(t);
	free(buf);
}

/* The writer thread writes what flushes hand it in their order: 400 flushes of 250 events
 * (more than the writer keeps spare buffers for), a zstd section among them, then the
 * events all there, in order, and the file's size what trace_writer__bytes said. */
static void many_flushes(void)
{
	static const char ks[] = "ffffffff81000000 T _stext\nffffffff81000100 T do_nanosleep\n";
	struct tb b;
	struct trace *t;
	struct stat st;
	uint64_t bytes;
	size_t i, ordered = 0;
	char err[256];

	tb_open(&b);
	for (i = 0; i < 100000; i++) {
		tb_simple(&b, 100 + i, REC_WAKEUP, 1 + i % 7, 1);
		if (i % 250 == 249)
			trace_writer__flush(b.w);
		if (i == 50000)
			kallsyms_zstd(b.w, ks, sizeof(ks) - 1);
	}
	trace_writer__flush(b.w);
	bytes = trace_writer__bytes(b.w);
	trace_writer__close(b.w, 200000);
	ok(!stat(b.path, &st) && (uint64_t)st.st_size + 200 >= bytes &&
		   (uint64_t)st.st_size <= bytes + 200,
	   "the file's size is what the writer counted, the end section aside");
	t = trace__open(b.path, err, sizeof(err));
	unlink(b.path);
	for (i = 1; t && i < t->nr_ev; i++)
		ordered += t->ev[i]->h.ts == t->ev[i - 1]->h.ts + 1;
	ok(t && t->nr_ev == 100000 && ordered == 99999 && t->has_kallsyms && !t->nr_damage,
	   "100000 events over 400 flushes, in order, and the kallsyms section");
	trace__close(t);
}

/* A version 1 file, as srvscope wrote them before checksums: 16-byte section headers and
 * the old switch record. Read, converted. */
static void version1(void)
{
	char buf[256 + 16 + 64 + 16 + 24 + 16], err[256];
	struct trace_file_header h = {0};
	struct trace_section s = {0};
	struct rec r = {0};
	struct rec_switch_v1 o = {0};
	struct trace_end e = {.end_ns = 9000};
	struct trace *t;
	size_t off = 0;

	memcpy(h.magic, TRACE_MAGIC, 8);
	h.version = 1;
	h.header_size = 256;
	h.record_size = REC_SIZE;
	memcpy(buf, &h, 256);
	off = 256;
	s.magic = TRACE_SECTION_MAGIC;
	s.type = SEC_EVENTS;
	s.size = 64;
	memcpy(buf + off, &s, 16);
	off += 16;
	r.h.ts = 2000;
	r.h.type = REC_SWITCH;
	r.h.tid = 7;
	r.h.pid = 7;
	r.h.aux = 1;
	o.next_tid = 8;
	o.next_pid = 8;
	o.syscall = 0;
	o.fd = 3;
	o.kstack = 0x11;
	o.ustack = 0x22;
	o.flags = SWITCH_PREV_TARGET | SWITCH_NEXT_TARGET;
	o.prev_prio = 120;
	memcpy(r.raw, &o, sizeof(o));
	memcpy(buf + off, &r, 64);
	off += 64;
	s.type = SEC_END;
	s.size = sizeof(e);
	memcpy(buf + off, &s, 16);
	memcpy(buf + off + 16, &e, sizeof(e));
	off += 16 + sizeof(e);
	t = trace__open_mem(buf, off, err, sizeof(err));
	if (!ok(t != NULL, "a version 1 file is read"))
		return;
	ok(t->nr_ev == 1 && t->ended && t->end_ns == 9000 && !t->nr_damage, "its sections");
	ok(t->ev[0]->sw.next_tid == 8 && t->ev[0]->sw.syscall == 0 && t->ev[0]->sw.fd == 3 &&
		   t->ev[0]->sw.kstack == 0x11 && t->ev[0]->sw.ustack == 0x22 &&
		   t->ev[0]->sw.flags == (SWITCH_PREV_TARGET | SWITCH_NEXT_TARGET) &&
		   t->ev[0]->sw.prev_prio == 120 && t->ev[0]->sw.runtime_ns == 0,
	   "its switch records in today's layout, without a runtime");
	trace__close(t);
	/* Without checksums a damaged header is found by its magic and type. */
	buf[256] = 'Z';
	t = trace__open_mem(buf, off, err, sizeof(err));
	ok(t && t->nr_ev == 0 && t->ended && t->nr_damage == 1, "version 1: resynchronized");
	trace__close(t);
}

static void far_out_of_order(void)
{
	struct tb b;
	struct trace *t;
	size_t i;
	bool sorted = true;

	tb_open(&b);
	for (i = 0; i < 2000; i++)
		tb_simple(&b, (i * 7919) % 2000, REC_WAKEUP, 1, 1);
	t = tb_read(&b, 0);
	for (i = 1; t && i < t->nr_ev; i++)
		sorted &= t->ev[i - 1]->h.ts <= t->ev[i]->h.ts;
	ok(t && t->nr_ev == 2000 && sorted, "events far out of order are sorted");
	trace__close(t);
}

/* Version 3: a waking with its wake-up folded in gives both events, the wake-up at its
 * time and CPU, in time order among the others; one without gives the waking alone. */
static void folded_wakeups(void)
{
	struct tb b;
	struct trace *t;
	struct rec r;
	size_t i, wakeups = 0;
	bool sorted = true;

	tb_open(&b);
	tb_rec(&b, 5000, REC_WAKING, 7, 7, WAKE_TASK | (3u << 8) | (1u << 16), &r);
	r.h.cpu = 0;
	r.wk.waker_tid = 9;
	trace_writer__add_event(b.w, &r);
	tb_simple(&b, 5100, REC_SAMPLE, 9, 9);	      /* between the waking and its wake-up */
	tb_waking_task(&b, 6000, 8, 8, 9, "w", 0, 0); /* nothing folded */
	tb_simple(&b, 6500, REC_WAKEUP, 8, 8);
	t = tb_read(&b, 0);
	if (!ok(t && t->nr_ev == 5, "a folded wake-up is an event of its own (%zu events)",
		t ? t->nr_ev : 0))
		goto out;
	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *e = t->ev[i];

		if (i)
			sorted &= t->ev[i - 1]->h.ts <= e->h.ts;
		if (e->h.type != REC_WAKEUP)
			continue;
		wakeups++;
		if (e->h.tid == 7)
			ok(e->h.ts == 5000 + 2 * REC_WAKING_FOLD_NS && e->h.aux == 1 &&
				   e->h.pid == 7,
			   "at the waking's time + its units, on the CPU it names (%" PRIu64
			   ", cpu %u)",
			   (uint64_t)e->h.ts, e->h.aux);
	}
	ok(wakeups == 2 && sorted, "both wake-ups, in time order");
	ok(t->ev[1]->h.type == REC_SAMPLE && t->ev[2]->h.type == REC_WAKEUP,
	   "the sample between the waking and its wake-up stays between them");
out:
	trace__close(t);
}

static void syscalls(void)
{
	char buf[32];

	is_str(syscall__name(0, buf, sizeof(buf)), "read", "syscall 0");
	is_str(syscall__name(288, buf, sizeof(buf)), "accept4", "syscall 288");
	is_str(syscall__name(9999, buf, sizeof(buf)), "syscall_9999", "unknown syscall");
	ok(syscall__has_fd(43) && !syscall__has_fd(35), "which syscalls take an fd first");
}

/* The lost section with the events the kernel skipped (reason 3), and as files written
 * before it existed have it (3 reasons). */
static void lost_skipped(void)
{
	uint64_t now[1 + 2 * 4] = {0}, before[1 + 2 * 3] = {0};
	uint32_t h[2] = {2, 4};
	struct trace *t;
	char buf[256];
	struct tb b;

	tb_open(&b);
	memcpy(now, h, 8);
	now[1 + 3] = 7;		       /* skipped, in the first CPU's count */
	now[1 + 4 + LOST_RINGBUF] = 2; /* cpu1 */
	tb_simple(&b, 2000, REC_WAKEUP, 8, 7);
	trace_writer__section(b.w, SEC_LOST, now, sizeof(now));
	t = tb_read(&b, 5000);
	is_int(t ? trace__lost_events(t) : 0, 9, "lost: the skipped events count as lost");
	is_str(t ? trace__lost_summary(t, buf, sizeof(buf)) : "",
	       "lost 2 events and 0 stacks to a full ring buffer (cpu1: 2); record again with a "
	       "larger --buffer-size; 7 events skipped by the kernel (one came while its program "
	       "ran on the same CPU)",
	       "lost: the summary says which were skipped");
	if (t)
		trace__close(t);

	tb_open(&b);
	h[1] = 3;
	memcpy(before, h, 8);
	before[1 + 3 + LOST_STACK_RINGBUF] = 1;
	tb_simple(&b, 2000, REC_WAKEUP, 8, 7);
	trace_writer__section(b.w, SEC_LOST, before, sizeof(before));
	t = tb_read(&b, 5000);
	is_int(t ? trace__lost_events(t) : 0, 1, "lost: a file with 3 reasons read as before");
	is_int(t ? t->lost_by_reason[LOST_SKIPPED] : 1, 0, "lost: and nothing skipped");
	if (t)
		trace__close(t);
}

int main(void)
{
	lost_skipped();
	round_trip();
	truncated();
	corrupt();
	events_sections();
	many_flushes();
	version1();
	far_out_of_order();
	folded_wakeups();
	syscalls();
	return done_testing();
}
