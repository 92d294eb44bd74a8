/* The trace file writer and reader: round trip of every section, time order, a truncated
 * tail, corrupt headers reported with their offsets, lost-event summaries. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_build.h"
#include "trace/syscalls.h"
#include "unit.h"

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
	trace_writer__section_zstd(b->w, SEC_KALLSYMS, ks, strlen(ks));
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
	ok(t->kallsyms_len > 20 && !memcmp(t->kallsyms, "ffffffff81000000 T _stext", 25),
	   "kallsyms (compressed) read back");
	ok(t->info_len == 16 && !memcmp(t->info, "srvscope=record\n", 16), "info section");
	is_int(trace__lost_events(t), 5, "lost events and stacks");
	is_str(trace__lost_summary(t, buf, sizeof(buf)),
	       "lost 4 events and 1 stacks to a full ring buffer (cpu0: 1, cpu1: 4); record "
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
	/* header 256, section header 16, 10 events of 64, end section 16 + 24 */
	is_int(len, 256 + 16 + 640 + 16 + 24, "file layout");
	cut = 256 + 16 + 64 * 6 + 10;
	t = trace__open_mem(buf, cut, err, sizeof(err));
	ok(t && t->truncated && t->truncated_at == 256 && t->nr_ev == 6 && !t->ended,
	   "a file cut inside the events keeps the whole events before the cut");
	trace__close(t);
	t = trace__open_mem(buf, 256 + 8, err, sizeof(err));
	ok(t && t->truncated && t->nr_ev == 0, "a file cut in a section header");
	trace__close(t);
	t = trace__open_mem(buf, len - 30, err, sizeof(err));
	ok(t && t->nr_ev == 10 && !t->ended && t->truncated, "a file cut in the end section");
	trace__close(t);
	free(buf);
}

static void corrupt(void)
{
	struct tb b;
	char err[256];
	struct trace *t;
	size_t len;
	char *buf;

	write_sample(&b);
	trace_writer__close(b.w, 1);
	buf = slurp(b.path, &len);
	unlink(b.path);
	ok(trace__open_mem(buf, 100, err, sizeof(err)) == NULL, "too short");
	is_str(err, "not a srvscope trace file: only 100 bytes", "says so");
	buf[0] = 'X';
	ok(!trace__open_mem(buf, len, err, sizeof(err)), "bad magic");
	is_str(err, "not a srvscope trace file: bad magic at offset 0", "says where");
	buf[0] = 'S';
	buf[8] = 9;
	ok(!trace__open_mem(buf, len, err, sizeof(err)), "a newer version");
	is_str(err, "trace file version 9 is not supported (this srvscope reads version 1)",
	       "says which");
	buf[8] = 1;
	buf[256] = 'Z';
	ok(!trace__open_mem(buf, len, err, sizeof(err)), "a damaged section header");
	is_str(err, "corrupt section header at offset 256", "says its offset");
	buf[256] = 'S';
	t = trace__open_mem(buf, len, err, sizeof(err));
	ok(t != NULL, "repaired, it reads again");
	trace__close(t);
	free(buf);

	/* An events section whose size is not whole records. */
	tb_open(&b);
	trace_writer__section(b.w, SEC_EVENTS, "0123456789", 10);
	trace_writer__close(b.w, 1);
	buf = slurp(b.path, &len);
	unlink(b.path);
	ok(!trace__open_mem(buf, len, err, sizeof(err)), "a partial record inside a section");
	is_str(err, "event section of 10 bytes (not whole records) at offset 256", "is reported");
	free(buf);
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

static void syscalls(void)
{
	char buf[32];

	is_str(syscall__name(0, buf, sizeof(buf)), "read", "syscall 0");
	is_str(syscall__name(288, buf, sizeof(buf)), "accept4", "syscall 288");
	is_str(syscall__name(9999, buf, sizeof(buf)), "syscall_9999", "unknown syscall");
	ok(syscall__has_fd(43) && !syscall__has_fd(35), "which syscalls take an fd first");
}

int main(void)
{
	round_trip();
	truncated();
	corrupt();
	far_out_of_order();
	syscalls();
	return done_testing();
}
