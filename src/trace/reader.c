/* Trace file reader: maps the file, checks every section (version 2: the CRC-32 of its
 * header and of its payload; a damaged one is listed with its type and offset and skipped,
 * the reader finding the next header by its own checksum), accepts a truncated tail, and
 * indexes events (sorted by time), stacks, thread names, maps and fd descriptions for the
 * reports. Version 1 files (no checksums) are read as well as their parsers can tell.
 * Memory: the events stay in the file, whose pages are released once read (checked, sorted,
 * then passed by a report: trace__done_before); the small sections the reports read at
 * random are copied out; kallsyms is decompressed only for a report that asks. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/escape.h"
#include "util/safefile.h"
#include "util/util.h"

_Static_assert(sizeof(struct rec) == REC_SIZE, "trace records are 64 bytes");
_Static_assert(sizeof(struct trace_file_header) == 256, "the trace header is 256 bytes");
_Static_assert(sizeof(struct trace_section) == 24, "section headers are 24 bytes");
_Static_assert(sizeof(struct rec_switch) == sizeof(struct rec_switch_v1), "switch records");

#define MAX_CPUS	 8192
#define MAX_STACK_FRAMES 1024
#define MAX_UNCOMPRESSED (512ull << 20)
/* How far an event may sit from its place in time order before a full sort is cheaper. */
#define SORT_WINDOW 256

struct run {
	const struct rec *r;
	size_t n;
	size_t last; /* index in t->ev of its last event in time order */
	size_t sec;  /* its section's index in t->secs */
};

/* A process's title as the recording first saw it (SEC_TITLE). */
struct title {
	uint32_t pid;
	const char *text; /* in the file, not NUL-terminated */
	uint32_t len;
};

struct priv {
	struct title *titles;
	size_t nr_titles, cap_titles;
	struct u64map stack_idx, thread_idx;
	void *map; /* the file, when trace__open mapped it: its pages may be released */
	size_t map_len;
	struct run *runs;
	size_t nr_runs, cap_runs;
	/* Releasing the pages of events already read (trace__done_before): the runs in the
	 * order their last events come in time, the next of them to release, and the index
	 * in t->ev from which it may be. */
	struct run **by_last;
	size_t next_release, release_at, done;
	const char *rel_lo, *rel_hi; /* read, to be released with the next batch */
	size_t cap_stacks, cap_maps, cap_fds, cap_threads;
	uint32_t cache_tid[256]; /* direct-mapped cache in front of thread_idx */
	uint32_t cache_idx[256]; /* index + 1; 0: empty */
	void **owned;		 /* decompressed sections, converted version 1 events */
	size_t nr_owned, cap_owned;
	/* The REC_WAKEUP events made of the wakings that carry them folded (version 3), in
	 * blocks that never move (t->ev points into them), each twice the last. */
	struct rec *woken;
	size_t nr_woken, cap_woken;
	struct rec *woken_blocks[48]; /* each block, for run_of; cap_woken doubles */
	size_t nr_woken_blocks;
	size_t cap_secs, cap_damage;
	uint64_t items;	      /* things read so far (events, stack entries...), per section */
	const char *kallsyms; /* in the file, zstd-compressed when kallsyms_zstd */
	size_t kallsyms_len;
	bool kallsyms_zstd;
	char *kallsyms_text; /* decompressed by trace__kallsyms, until taken */
	size_t kallsyms_text_len;
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static struct trace_thread *thread_of(struct trace *t, uint32_t tid, uint32_t pid)
{
	struct priv *p = t->priv;
	bool created;
	uint64_t *slot;
	struct trace_thread *th;

	if (p->cache_idx[tid & 255] && p->cache_tid[tid & 255] == tid) {
		th = &t->threads[p->cache_idx[tid & 255] - 1];
		if (pid)
			th->pid = pid;
		return th;
	}
	slot = u64map__slot(&p->thread_idx, tid, &created);
	if (created) {
		xgrow((void **)&t->threads, &p->cap_threads, t->nr_threads + 1,
		      sizeof(*t->threads));
		*slot = t->nr_threads;
		th = &t->threads[t->nr_threads++];
		memset(th, 0, sizeof(*th));
		th->tid = tid;
		if (!tid)
			strcpy(th->comm, "swapper");
	}
	p->cache_tid[tid & 255] = tid;
	p->cache_idx[tid & 255] = *slot + 1;
	th = &t->threads[*slot];
	if (pid)
		th->pid = pid;
	return th;
}

static void set_comm(struct trace_thread *th, const char *comm)
{
	if (!comm[0])
		return;
	size_t n = strnlen(comm, REC_COMM_LEN - 1); /* a record's array, maybe unterminated */

	memcpy(th->comm, comm, n);
	th->comm[n] = '\0';
}

static int parse_stacks(struct trace *t, const char *p, size_t size, uint64_t off, char *err,
			size_t errlen)
{
	struct priv *pr = t->priv;
	size_t pos = 0;

	while (pos < size) {
		uint64_t id;
		uint32_t head[2];
		bool created;
		uint64_t *slot;

		if (size - pos < 16)
			return fail(err, errlen, "stack entry cut short at offset %" PRIu64,
				    off + pos);
		memcpy(&id, p + pos, 8);
		memcpy(head, p + pos + 8, 8);
		if (head[0] > MAX_STACK_FRAMES || (size - pos - 16) / 8 < head[0])
			return fail(err, errlen, "stack entry with %u frames at offset %" PRIu64,
				    head[0], off + pos);
		slot = u64map__slot(&pr->stack_idx, id, &created);
		if (created) {
			struct trace_stack *s;

			xgrow((void **)&t->stacks, &pr->cap_stacks, t->nr_stacks + 1,
			      sizeof(*t->stacks));
			*slot = t->nr_stacks;
			s = &t->stacks[t->nr_stacks++];
			s->id = id;
			s->nr = head[0];
			s->user = head[1] & TRACE_STACK_USER;
			s->truncated = head[1] & TRACE_STACK_TRUNCATED;
			s->ips = (const uint64_t *)(p + pos + 16);
		}
		pos += 16 + (size_t)head[0] * 8;
		pr->items++;
	}
	return 0;
}

static int parse_fds(struct trace *t, const char *p, size_t size, uint64_t off, char *err,
		     size_t errlen)
{
	struct priv *pr = t->priv;
	size_t pos = 0;

	while (pos < size) {
		struct trace_fd_hdr h;
		struct trace_fd *f;

		if (size - pos < sizeof(h))
			return fail(err, errlen, "fd entry cut short at offset %" PRIu64,
				    off + pos);
		memcpy(&h, p + pos, sizeof(h));
		if (h.len > size - pos - sizeof(h))
			return fail(err, errlen, "fd entry of %u bytes at offset %" PRIu64, h.len,
				    off + pos);
		xgrow((void **)&t->fds, &pr->cap_fds, t->nr_fds + 1, sizeof(*t->fds));
		f = &t->fds[t->nr_fds++];
		f->ts = h.ts;
		f->pid = h.pid;
		f->fd = h.fd;
		f->desc = p + pos + sizeof(h);
		f->len = h.len;
		pos += sizeof(h) + ((h.len + 7) & ~7u);
		pr->items++;
	}
	return 0;
}

static void own(struct priv *pr, void *mem)
{
	xgrow((void **)&pr->owned, &pr->cap_owned, pr->nr_owned + 1, sizeof(*pr->owned));
	pr->owned[pr->nr_owned++] = mem;
}

/* Version 1 switch records had a 32-bit syscall, flags and priority and no runtime: the
 * section is copied with them in today's layout (runtime_ns 0: not recorded). */
static const char *events_v1(struct priv *pr, const char *p, size_t size)
{
	struct rec *out = xmalloc(size ? size : 1);
	size_t i;

	memcpy(out, p, size);
	for (i = 0; i < size / REC_SIZE; i++) {
		struct rec_switch_v1 o;
		struct rec_switch *n = &out[i].sw;

		if (out[i].h.type != REC_SWITCH)
			continue;
		memcpy(&o, p + i * REC_SIZE + sizeof(struct rec_hdr), sizeof(o));
		memset(n, 0, sizeof(*n));
		n->next_tid = o.next_tid;
		n->next_pid = o.next_pid;
		n->syscall = o.syscall >= -1 && o.syscall <= INT16_MAX ? o.syscall : -1;
		n->flags = o.flags;
		n->prev_prio = o.prev_prio >= 0 && o.prev_prio <= UINT8_MAX ? o.prev_prio : 0;
		n->fd = o.fd;
		n->kstack = o.kstack;
		n->ustack = o.ustack;
	}
	own(pr, out);
	return (const char *)out;
}

static int parse_section(struct trace *t, uint16_t type, const char *p, size_t size, uint64_t off,
			 char *err, size_t errlen)
{
	struct priv *pr = t->priv;

	switch (type) {
	case SEC_EVENTS:
		if (size % REC_SIZE)
			return fail(
				err, errlen,
				"event section of %zu bytes (not whole records) at offset %" PRIu64,
				size, off);
		if (t->hdr.version == 1)
			p = events_v1(pr, p, size);
		xgrow((void **)&pr->runs, &pr->cap_runs, pr->nr_runs + 1, sizeof(*pr->runs));
		pr->runs[pr->nr_runs].r = (const struct rec *)p;
		pr->runs[pr->nr_runs].sec = t->nr_secs - 1; /* add_sec came first */
		pr->runs[pr->nr_runs++].n = size / REC_SIZE;
		t->nr_ev += size / REC_SIZE;
		pr->items += size / REC_SIZE;
		return 0;
	case SEC_STACKS:
		return parse_stacks(t, p, size, off, err, errlen);
	case SEC_KALLSYMS:
		pr->kallsyms = p;
		pr->kallsyms_len = size;
		pr->kallsyms_zstd = false;
		t->has_kallsyms = true;
		return 0;
	case SEC_INFO:
		t->info = p;
		t->info_len = size;
		return 0;
	case SEC_MAPS: {
		struct trace_maps_hdr h;
		struct trace_maps *m;

		if (size < sizeof(h))
			return fail(err, errlen, "maps section cut short at offset %" PRIu64, off);
		memcpy(&h, p, sizeof(h));
		if ((uint64_t)h.maps_len + h.build_ids_len > size - sizeof(h))
			return fail(err, errlen, "maps section with bad lengths at offset %" PRIu64,
				    off);
		xgrow((void **)&t->maps, &pr->cap_maps, t->nr_maps + 1, sizeof(*t->maps));
		m = &t->maps[t->nr_maps++];
		m->ts = h.ts;
		m->pid = h.pid;
		m->text = p + sizeof(h);
		m->len = h.maps_len;
		m->build_ids = m->text + h.maps_len;
		m->build_ids_len = h.build_ids_len;
		pr->items++;
		return 0;
	}
	case SEC_NAMES: {
		const struct trace_name *n = (const struct trace_name *)p;
		size_t i;

		if (size % sizeof(*n))
			return fail(err, errlen, "names section of %zu bytes at offset %" PRIu64,
				    size, off);
		for (i = 0; i < size / sizeof(*n); i++) {
			struct trace_thread *th = thread_of(t, n[i].tid, n[i].pid);

			if (!th->comm[0])
				set_comm(th, n[i].comm);
		}
		pr->items += i;
		return 0;
	}
	case SEC_FDS:
		return parse_fds(t, p, size, off, err, errlen);
	case SEC_TITLE: {
		uint32_t h[4]; /* u64 ts, u32 pid, u32 len */

		memcpy(h, p, size < sizeof(h) ? 0 : sizeof(h));
		if (size < sizeof(h) || h[3] > size - sizeof(h))
			return fail(err, errlen,
				    "title section with a bad length at offset %" PRIu64, off);
		xgrow((void **)&pr->titles, &pr->cap_titles, pr->nr_titles + 1,
		      sizeof(*pr->titles));
		pr->titles[pr->nr_titles].pid = h[2];
		pr->titles[pr->nr_titles].text = p + sizeof(h);
		pr->titles[pr->nr_titles++].len = h[3];
		pr->items++;
		return 0;
	}
	case SEC_LOST: {
		uint32_t h[2];
		size_t i, r;

		if (size < 8)
			return fail(err, errlen, "lost section cut short at offset %" PRIu64, off);
		memcpy(h, p, 8);
		if (h[0] > MAX_CPUS || h[1] > 64 || (size - 8) / 8 < (uint64_t)h[0] * h[1])
			return fail(err, errlen, "lost section for %u CPUs at offset %" PRIu64,
				    h[0], off);
		free(t->lost);
		t->lost_cpus = h[0];
		t->lost = xcalloc((size_t)h[0] * LOST_REASONS + 1, sizeof(uint64_t));
		memset(t->lost_by_reason, 0, sizeof(t->lost_by_reason));
		for (i = 0; i < h[0]; i++)
			for (r = 0; r < h[1] && r < LOST_REASONS; r++) {
				uint64_t v;

				memcpy(&v, p + 8 + (i * h[1] + r) * 8, 8);
				t->lost[i * LOST_REASONS + r] = v;
				t->lost_by_reason[r] += v;
			}
		return 0;
	}
	case SEC_SYSCALL_SAMPLE: {
		struct trace_syscall_sample ss;

		if (size < sizeof(ss))
			return fail(err, errlen,
				    "syscall sample section cut short at offset %" PRIu64, off);
		memcpy(&ss, p, sizeof(ss));
		t->sc_full = ss.full;
		t->sc_out = ss.out;
		return 0;
	}
	case SEC_END: {
		struct trace_end e;

		if (size < sizeof(e))
			return fail(err, errlen, "end section cut short at offset %" PRIu64, off);
		memcpy(&e, p, sizeof(e));
		t->end_ns = e.end_ns;
		t->ended = true;
		return 0;
	}
	default:
		return 0; /* a section from a newer writer: not needed to read this one */
	}
}

/* Drops the file's pages under [lo, hi) (rounded out to whole pages) from the process's
 * memory. The mapping is private, read-only and never written, so this loses nothing: a
 * later read faults the pages back in from the page cache. It keeps a report's memory near
 * what the report holds rather than the size of the trace. Only for a file trace__open
 * mapped: a caller's buffer is not the reader's to drop.
 * A fault maps the cached pages around the one asked for too (fault-around, 64 KiB by
 * default): reading the start of the next part maps back the end of the part released
 * before it. So the range released reaches FAULT_AROUND below lo, where those are. */
#define FAULT_AROUND (64u << 10)
static void release(const struct priv *p, const void *lo, const void *hi)
{
	static uintptr_t page;
	uintptr_t base = (uintptr_t)p->map, a, b;

	if (!p->map || (uintptr_t)lo < base || (uintptr_t)hi > base + p->map_len || lo >= hi)
		return;
	if (!page)
		page = sysconf(_SC_PAGESIZE);
	a = (uintptr_t)lo - base > FAULT_AROUND ? (uintptr_t)lo - FAULT_AROUND : base;
	a &= ~(page - 1);
	b = ((uintptr_t)hi + page - 1) & ~(page - 1);
	madvise((void *)a, b - a, MADV_DONTNEED);
}

/* The same in batches of at least RELEASE_BATCH bytes: each madvise() costs a TLB flush, and
 * one per 64 KiB events section made a report of a 30 MB trace 50 ms slower. */
#define RELEASE_BATCH (512u << 10)
static void release_batched(struct priv *p, const void *lo, const void *hi)
{
	if (!p->map)
		return;
	if (!p->rel_hi || (const char *)lo < p->rel_lo)
		p->rel_lo = lo;
	if (!p->rel_hi || (const char *)hi > p->rel_hi)
		p->rel_hi = hi;
	if ((size_t)(p->rel_hi - p->rel_lo) >= RELEASE_BATCH) {
		release(p, p->rel_lo, p->rel_hi);
		p->rel_lo = p->rel_hi = NULL;
	}
}

static int cmp_last(const void *a, const void *b)
{
	const struct run *x = *(const struct run *const *)a, *y = *(const struct run *const *)b;

	return x->last < y->last ? -1 : x->last > y->last;
}

/* Which run holds event e; runs in file order, and events in time order come nearly in
 * file order, so the run of the previous event (or the next one) is nearly always it. */
static struct run *run_of(struct priv *p, const struct rec *e, size_t *hint)
{
	size_t lo = 0, hi = p->nr_runs, k;

	for (k = *hint; k < p->nr_runs && k <= *hint + 1; k++)
		if (e >= p->runs[k].r && e < p->runs[k].r + p->runs[k].n)
			return &p->runs[*hint = k];
	while (lo < hi) { /* the runs from the file lie in ascending addresses */
		size_t mid = (lo + hi) / 2;

		if (e < p->runs[mid].r)
			hi = mid;
		else if (e >= p->runs[mid].r + p->runs[mid].n)
			lo = mid + 1;
		else
			return &p->runs[*hint = mid];
	}
	for (k = 0; k < p->nr_woken_blocks; k++) /* a wake-up unfolded: in no run */
		if (e >= p->woken_blocks[k] && e < p->woken_blocks[k] + (4096ul << k))
			return NULL;
	for (k = 0; k < p->nr_runs; k++) /* a decompressed or converted run, on the heap */
		if (e >= p->runs[k].r && e < p->runs[k].r + p->runs[k].n)
			return &p->runs[*hint = k];
	return NULL;
}

/* Notes where each run of events is read for the last time in time order, for
 * trace__done_before. */
static void plan_release(struct trace *t)
{
	struct priv *p = t->priv;
	size_t i, hint = 0;

	if (!p->map || !p->nr_runs)
		return;
	for (i = 0; i < t->nr_ev; i++) {
		struct run *r = run_of(p, t->ev[i], &hint);

		if (r)
			r->last = i;
	}
	p->by_last = xmalloc(p->nr_runs * sizeof(*p->by_last));
	for (i = 0; i < p->nr_runs; i++)
		p->by_last[i] = &p->runs[i];
	qsort(p->by_last, p->nr_runs, sizeof(*p->by_last), cmp_last);
	p->release_at = p->by_last[0]->last + 1;
}

void trace__release_before(const struct trace *t, size_t i)
{
	struct priv *p = t->priv;

	if (!p->by_last)
		return;
	if (i >= p->release_at) {
		while (p->next_release < p->nr_runs && p->by_last[p->next_release]->last < i) {
			const struct run *r = p->by_last[p->next_release++];

			release_batched(p, r->r, r->r + r->n);
		}
		p->release_at = p->next_release < p->nr_runs ? p->by_last[p->next_release]->last + 1
							     : SIZE_MAX;
	} else if (i < p->done) {
		/* Another pass from the start: release again as it goes. */
		p->next_release = 0;
		p->release_at = p->by_last[0]->last + 1;
	}
	p->done = i;
}

void trace__drop_events(struct trace *t)
{
	struct priv *p = t->priv;

	free(t->ev);
	t->ev = NULL;
	t->nr_ev = 0;
	free(p->by_last);
	p->by_last = NULL;
	if (p->map)
		release(p, p->map, (const char *)p->map + p->map_len);
}

static void merge_sort(const struct rec **a, const struct rec **tmp, size_t n)
{
	size_t m = n / 2, i = 0, j = m, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, m);
	merge_sort(a + m, tmp, n - m);
	while (i < m && j < n)
		tmp[k++] = a[j]->h.ts < a[i]->h.ts ? a[j++] : a[i++];
	while (i < m)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

/* The ring buffer delivers events almost in time order (CPUs race by nanoseconds to
 * microseconds): an insertion sort with a bounded reach is linear then. Anything further
 * out of place (a corrupt or crafted file) falls back to a stable merge sort. */
static void sort_events(struct priv *p, const struct rec **ev, size_t n)
{
	size_t i, j, run = 0, behind = 0;
	const struct rec **tmp;

	for (i = 1; i < n; i++) {
		const struct rec *x = ev[i];

		/* Before it, ev[] holds the events in file order: the runs wholly behind the
		 * insertion's reach are not read again by the sort. */
		for (; run < p->nr_runs && behind + p->runs[run].n + 2 * SORT_WINDOW < i; run++) {
			release_batched(p, p->runs[run].r, p->runs[run].r + p->runs[run].n);
			behind += p->runs[run].n;
		}

		if (x->h.ts >= ev[i - 1]->h.ts)
			continue;
		for (j = i; j > 0 && ev[j - 1]->h.ts > x->h.ts; j--) {
			if (i - j >= SORT_WINDOW) {
				ev[j] = x; /* fill the hole: still a permutation */
				goto full;
			}
			ev[j] = ev[j - 1];
		}
		ev[j] = x;
	}
	return;
full:
	tmp = xmalloc(n * sizeof(*tmp));
	merge_sort(ev, tmp, n);
	free(tmp);
}

/* The REC_WAKEUP folded into waking w (rec_waking), made an event of its own in the
 * priv's blocks; NULL when w carries none. */
static const struct rec *unfold_wakeup(struct priv *p, const struct rec *w)
{
	uint32_t units = (w->h.aux >> 8) & 0xff;
	struct rec *r;

	if (w->h.type != REC_WAKING || !units)
		return NULL;
	if (p->nr_woken == p->cap_woken) {
		if (p->nr_woken_blocks == ARRAY_SIZE(p->woken_blocks))
			return NULL; /* 2^59 wake-ups: not a file of this world */
		p->cap_woken = p->cap_woken ? 2 * p->cap_woken : 4096;
		p->woken = xmalloc(p->cap_woken * sizeof(*p->woken));
		p->nr_woken = 0;
		own(p, p->woken);
		p->woken_blocks[p->nr_woken_blocks++] = p->woken;
	}
	r = &p->woken[p->nr_woken++];
	memset(r, 0, sizeof(*r));
	r->h.ts = w->h.ts + (uint64_t)(units - 1) * REC_WAKING_FOLD_NS;
	r->h.type = REC_WAKEUP;
	r->h.cpu = w->h.cpu;
	r->h.tid = w->h.tid;
	r->h.pid = w->h.pid;
	r->h.aux = w->h.aux >> 16;
	return r;
}

static void index_events(struct trace *t)
{
	struct priv *p = t->priv;
	/* folded wake-ups are a fifth of the events or so: the array grows for more */
	size_t i, k = 0, j, cap = t->nr_ev + (t->hdr.version >= 3 ? t->nr_ev / 4 : 0) + 1;

	t->ev = xmalloc(cap * sizeof(*t->ev));
	for (i = 0; i < p->nr_runs; i++)
		for (j = 0; j < p->runs[i].n; j++) {
			const struct rec *w;

			if (k + 2 > cap)
				xgrow((void **)&t->ev, &cap, k + 2, sizeof(*t->ev));
			t->ev[k++] = &p->runs[i].r[j];
			/* right after its waking, where the sort finds it in reach */
			if ((w = unfold_wakeup(p, &p->runs[i].r[j]))) {
				t->ev[k++] = w;
				if (p->runs[i].sec < t->nr_secs) /* its section gave it */
					t->secs[p->runs[i].sec].items++;
			}
		}
	t->nr_ev = k;
	sort_events(p, t->ev, t->nr_ev);
	plan_release(t);

	for (i = 0; i < t->nr_ev; i++) {
		const struct rec *r = t->ev[i];
		struct trace_thread *th;

		trace__done_before(t, i);

		switch (r->h.type) {
		case REC_SWITCH:
			thread_of(t, r->h.tid, r->h.pid);
			thread_of(t, r->sw.next_tid, r->sw.next_pid);
			break;
		case REC_WAKING:
			thread_of(t, r->h.tid, r->h.pid);
			if ((r->h.aux & 0xff) == WAKE_TASK) {
				th = thread_of(t, r->wk.waker_tid, 0);
				set_comm(th, r->wk.u.comm);
			}
			break;
		case REC_WAKEUP:
		case REC_SYSCALL:
		case REC_SAMPLE:
			thread_of(t, r->h.tid, r->h.pid);
			break;
		case REC_WAKEUP_NEW:
		case REC_FORK:
		case REC_EXEC:
		case REC_EXIT:
		case REC_COMM:
			set_comm(thread_of(t, r->h.tid, r->h.pid), r->task.comm);
			break;
		case REC_STATE:
			set_comm(thread_of(t, r->h.tid, r->h.pid), r->state.comm);
			break;
		}
	}
	t->first_ns = t->hdr.start_ns;
	if (t->nr_ev) {
		if (t->ev[0]->h.ts < t->first_ns)
			t->first_ns = t->ev[0]->h.ts;
		t->last_ns = t->ev[t->nr_ev - 1]->h.ts;
	} else {
		t->last_ns = t->first_ns;
	}
	if (!t->ended || t->end_ns < t->last_ns)
		t->end_ns = t->last_ns;
}

/* The content of a zstd frame in a fresh buffer with a NUL after it, or NULL. */
static char *unzstd(const char *p, size_t size, size_t *len)
{
	unsigned long long n = ZSTD_getFrameContentSize(p, size);
	size_t got;
	char *out;

	if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR || n > MAX_UNCOMPRESSED)
		return NULL;
	out = xmalloc(n + 1);
	got = ZSTD_decompress(out, n, p, size);
	if (ZSTD_isError(got) || got != n) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

static int parse_compressed(struct trace *t, const struct trace_section *s, const char *p,
			    uint64_t off, char *err, size_t errlen)
{
	struct priv *pr = t->priv;
	unsigned long long n = ZSTD_getFrameContentSize(p, s->size);
	size_t len;
	char *out;

	if (s->type == SEC_KALLSYMS && t->hdr.version >= 2 && n != ZSTD_CONTENTSIZE_UNKNOWN &&
	    n != ZSTD_CONTENTSIZE_ERROR && n <= MAX_UNCOMPRESSED) {
		/* Left compressed until a report asks (trace__kallsyms): its checksum has
		 * vouched for the frame. */
		pr->kallsyms = p;
		pr->kallsyms_len = s->size;
		pr->kallsyms_zstd = true;
		t->has_kallsyms = true;
		return 0;
	}
	out = unzstd(p, s->size, &len);
	if (!out)
		return fail(err, errlen, "corrupt zstd frame");
	own(pr, out);
	return parse_section(t, s->type, out, len, off, err, errlen);
}

/* The kallsyms text, decompressed, in a new buffer. */
static char *kallsyms_text(const struct priv *pr, size_t *len)
{
	char *text;

	if (!pr->kallsyms)
		return NULL;
	if (pr->kallsyms_zstd) {
		text = unzstd(pr->kallsyms, pr->kallsyms_len, len);
		release(pr, pr->kallsyms, pr->kallsyms + pr->kallsyms_len);
		return text;
	}
	text = xmalloc(pr->kallsyms_len + 1);
	memcpy(text, pr->kallsyms, pr->kallsyms_len);
	text[pr->kallsyms_len] = '\0';
	*len = pr->kallsyms_len;
	return text;
}

const char *trace__kallsyms(const struct trace *t, size_t *len)
{
	struct priv *pr = t->priv;

	if (!pr->kallsyms_text)
		pr->kallsyms_text = kallsyms_text(pr, &pr->kallsyms_text_len);
	*len = pr->kallsyms_text_len;
	return pr->kallsyms_text;
}

char *trace__kallsyms_take(const struct trace *t, size_t *len)
{
	struct priv *pr = t->priv;
	char *text = pr->kallsyms_text;

	if (!text)
		return kallsyms_text(pr, len);
	*len = pr->kallsyms_text_len;
	pr->kallsyms_text = NULL;
	return text;
}

static int cmp_fd(const void *a, const void *b)
{
	const struct trace_fd *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

bool trace_section__intact(const struct trace_section *s)
{
	return s->magic == TRACE_SECTION_MAGIC &&
	       s->header_crc == libdeflate_crc32(0, s, offsetof(struct trace_section, payload_crc));
}

static const char *section_name(uint16_t type)
{
	static const char *const names[] = {
		[SEC_EVENTS] = "events",
		[SEC_STACKS] = "stacks",
		[SEC_KALLSYMS] = "kallsyms",
		[SEC_MAPS] = "maps",
		[SEC_NAMES] = "names",
		[SEC_FDS] = "fds",
		[SEC_LOST] = "lost",
		[SEC_END] = "end",
		[SEC_INFO] = "info",
		[SEC_TITLE] = "title",
		[SEC_SYSCALL_SAMPLE] = "syscall sample",
	};

	return type < ARRAY_SIZE(names) && names[type] ? names[type] : "unknown";
}

/* What the reports miss when a section of this type is skipped. */
static const char *section_cost(uint16_t type)
{
	switch (type) {
	case SEC_EVENTS:
		return "its events are missing from every report";
	case SEC_STACKS:
		return "the episodes and samples whose stacks it held show [unknown] for them";
	case SEC_KALLSYMS:
		return "kernel frames will show as addresses";
	case SEC_MAPS:
		return "user frames of its process may show as [unknown]";
	case SEC_NAMES:
		return "some threads may have no name";
	case SEC_FDS:
		return "some fds will not be described";
	case SEC_LOST:
		return "the count of lost events may be too low";
	case SEC_END:
		return "the recording's end is taken from its last event";
	case SEC_INFO:
		return "the recording's command line and options are unknown";
	case SEC_TITLE:
		return "a process will be shown by its name instead of its command line";
	case SEC_SYSCALL_SAMPLE:
		return "the model takes the syscalls recorded for all of them";
	default:
		return "nothing a report uses";
	}
}

static struct trace_section_info *add_sec(struct trace *t, uint64_t off, uint64_t len,
					  uint16_t type)
{
	struct priv *pr = t->priv;
	struct trace_section_info *si;

	xgrow((void **)&t->secs, &pr->cap_secs, t->nr_secs + 1, sizeof(*t->secs));
	si = &t->secs[t->nr_secs++];
	memset(si, 0, sizeof(*si));
	si->off = off;
	si->len = len;
	si->type = type;
	return si;
}

static void damaged(struct trace *t, uint64_t off, uint16_t type, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void damaged(struct trace *t, uint64_t off, uint16_t type, const char *fmt, ...)
{
	struct priv *pr = t->priv;
	struct trace_damage *d;
	va_list ap;

	xgrow((void **)&t->damage, &pr->cap_damage, t->nr_damage + 1, sizeof(*t->damage));
	d = &t->damage[t->nr_damage++];
	d->off = off;
	d->type = type;
	va_start(ap, fmt);
	vsnprintf(d->line, sizeof(d->line), fmt, ap);
	va_end(ap);
}

/* Whether a section header looks whole: version 2 checks its own CRC; version 1 has only
 * the magic and a type to go by. */
static bool header_intact(const struct trace *t, const char *p)
{
	struct trace_section s;

	if (t->hdr.version == 1) {
		memcpy(&s, p, TRACE_SECTION_V1_SIZE);
		return s.magic == TRACE_SECTION_MAGIC && s.type >= SEC_EVENTS && s.type <= SEC_INFO;
	}
	memcpy(&s, p, sizeof(s));
	return trace_section__intact(&s);
}

/* The next intact section header at or after from (headers are 8-byte aligned), or len. */
static uint64_t resync(const struct trace *t, const char *buf, size_t len, uint64_t from, size_t hs)
{
	uint64_t off = (from + 7) & ~7ull;

	for (; off < len && len - off >= hs; off += 8)
		if (header_intact(t, buf + off))
			return off;
	return len;
}

/* A damaged section header at off: nothing in it can be trusted, its length least of all.
 * The reader goes on at the next header that is intact. */
static uint64_t skip_header(struct trace *t, const char *buf, size_t len, uint64_t off, size_t hs,
			    const char *why)
{
	uint64_t next = resync(t, buf, len, off + 8, hs);

	add_sec(t, off, next - off, 0)->damaged = true;
	if (next < len)
		damaged(t, off, 0,
			"section header at offset %" PRIu64 " is damaged (%s): skipped %" PRIu64
			" bytes to the next section, at offset %" PRIu64
			"; whatever that section held is missing",
			off, why, next - off, next);
	else
		damaged(t, off, 0,
			"section header at offset %" PRIu64 " is damaged (%s): no intact section "
			"after it; the last %" PRIu64 " bytes are not read",
			off, why, next - off);
	return next;
}

static int read_header(struct trace *t, const char *buf, size_t len, char *err, size_t errlen)
{
	if (len < sizeof(t->hdr))
		return fail(err, errlen, "not a srvscope trace file: only %zu bytes", len);
	memcpy(&t->hdr, buf, sizeof(t->hdr));
	if (memcmp(t->hdr.magic, TRACE_MAGIC, 8))
		return fail(err, errlen, "not a srvscope trace file: bad magic at offset 0");
	if (t->hdr.version > TRACE_VERSION)
		return fail(err, errlen,
			    "trace file version %u is not supported (this srvscope reads versions "
			    "1 to %d): read it with the srvscope that recorded it, or a newer one",
			    t->hdr.version, TRACE_VERSION);
	if (t->hdr.version < 1)
		return fail(err, errlen,
			    "trace file version %u is not supported (this srvscope reads versions "
			    "1 to %d): the header is damaged",
			    t->hdr.version, TRACE_VERSION);
	if (t->hdr.version >= 2 &&
	    t->hdr.header_crc !=
		    libdeflate_crc32(0, buf, offsetof(struct trace_file_header, header_crc))) {
		/* Every writer has written these two: the sections can still be read. */
		t->hdr.header_size = sizeof(t->hdr);
		t->hdr.record_size = REC_SIZE;
		damaged(t, 0, 0,
			"file header is damaged (checksum mismatch): read anyway; the recording's "
			"start time, host and options shown may be wrong");
	}
	if (t->hdr.header_size < sizeof(t->hdr) || t->hdr.header_size % 8 ||
	    t->hdr.header_size > len)
		return fail(err, errlen, "corrupt header: header size %u at offset 12",
			    t->hdr.header_size);
	if (t->hdr.record_size != REC_SIZE)
		return fail(err, errlen, "corrupt header: record size %u at offset 16",
			    t->hdr.record_size);
	t->hdr.host[sizeof(t->hdr.host) - 1] = '\0';
	t->hdr.kernel[sizeof(t->hdr.kernel) - 1] = '\0';
	t->hdr.machine[sizeof(t->hdr.machine) - 1] = '\0';
	return 0;
}

/* Reads the payload of one section whose header is intact; a damaged payload is listed
 * and skipped. */
static void read_section(struct trace *t, const struct trace_section *s, const char *p,
			 uint64_t off, size_t hs)
{
	struct priv *pr = t->priv;
	struct trace_section_info *si = add_sec(t, off, hs + ((s->size + 7) & ~7ull), s->type);
	uint64_t items = pr->items;
	char why[160];
	int ret;

	if (t->hdr.version >= 2 && s->payload_crc != libdeflate_crc32(0, p, s->size)) {
		si->damaged = true;
		if (s->type == SEC_EVENTS && !(s->flags & SECF_ZSTD))
			damaged(t, off, s->type,
				"events section at offset %" PRIu64
				" is damaged (checksum mismatch): "
				"skipped; its %" PRIu64 " events are missing from every report",
				off, s->size / REC_SIZE);
		else
			damaged(t, off, s->type,
				"%s section at offset %" PRIu64
				" is damaged (checksum mismatch): skipped; %s",
				section_name(s->type), off, section_cost(s->type));
		return;
	}
	if (s->flags & SECF_ZSTD) {
		ret = parse_compressed(t, s, p, off, why, sizeof(why));
	} else {
		if (pr->map && s->type != SEC_EVENTS && s->type != SEC_KALLSYMS) {
			/* Stacks, maps, names...: small, scattered through the file and read
			 * at random by the reports. A copy costs their size; pointing into
			 * the file costs the 64 KiB each read maps in around them. */
			char *copy = xmalloc(s->size ? s->size : 1);

			memcpy(copy, p, s->size);
			own(pr, copy);
			p = copy;
		}
		ret = parse_section(t, s->type, p, s->size, off, why, sizeof(why));
	}
	si->items = pr->items - items;
	if (ret) {
		si->damaged = true;
		damaged(t, off, s->type, "%s section at offset %" PRIu64 " is damaged (%s): %s; %s",
			section_name(s->type), off, why, si->items ? "read up to there" : "skipped",
			section_cost(s->type));
	}
}

static int parse(struct trace *t, const char *buf, size_t len, char *err, size_t errlen)
{
	struct priv *pr = t->priv;
	uint64_t off;
	size_t hs;
	int ret = read_header(t, buf, len, err, errlen);

	if (ret)
		return ret;
	hs = t->hdr.version == 1 ? TRACE_SECTION_V1_SIZE : sizeof(struct trace_section);
	off = t->hdr.header_size;
	while (off < len) {
		struct trace_section s = {0};
		uint64_t avail = len - off;

		if (avail < hs) {
			t->truncated = true;
			t->truncated_at = off;
			break;
		}
		memcpy(&s, buf + off, hs);
		if (!header_intact(t, buf + off)) {
			off = skip_header(t, buf, len, off, hs,
					  s.magic != TRACE_SECTION_MAGIC ? "bad magic"
									 : "checksum mismatch");
			continue;
		}
		avail -= hs;
		if (s.size > avail && s.size > TRACE_SECTION_MAX) {
			char why[96];

			snprintf(why, sizeof(why),
				 "a length of %" PRIu64 " bytes, beyond the end of the file",
				 s.size);
			off = skip_header(t, buf, len, off, hs, why);
			continue;
		}
		if (s.size > avail) {
			/* Cut off mid-write: keep the whole events that made it. */
			t->truncated = true;
			t->truncated_at = off;
			if (s.type == SEC_EVENTS && avail >= REC_SIZE && !(s.flags & SECF_ZSTD) &&
			    !parse_section(t, SEC_EVENTS, buf + off + hs, avail - avail % REC_SIZE,
					   off, err, errlen))
				pr->runs[pr->nr_runs - 1].sec = SIZE_MAX; /* listed in no section */
			break;
		}
		read_section(t, &s, buf + off + hs, off, hs);
		/* Checked and indexed: what the reports need of it comes back when they read it. */
		release_batched(pr, buf + off, buf + off + hs + s.size);
		off += hs + s.size;
		if (off & 7) {
			if (len - off < 8 - (off & 7)) {
				off = len;
				break;
			}
			off += 8 - (off & 7);
		}
	}
	if (pr->map) { /* every section checked: none of the file needs to stay */
		release(pr, pr->map, buf + len);
		pr->rel_lo = pr->rel_hi = NULL;
	}
	index_events(t);
	if (t->nr_fds)
		qsort(t->fds, t->nr_fds, sizeof(*t->fds), cmp_fd);
	return 0;
}

/* map: buf is the file, mapped by trace__open, whose pages the reader may release. */
static struct trace *open_buf(const void *buf, size_t len, void *map, char *err, size_t errlen)
{
	struct trace *t = xcalloc(1, sizeof(*t));
	struct priv *p = xcalloc(1, sizeof(*p));

	t->priv = p;
	p->map = map;
	p->map_len = map ? len : 0;
	if (parse(t, buf, len, err, errlen)) {
		p->map = NULL; /* the caller unmaps it */
		trace__close(t);
		errno = EINVAL;
		return NULL;
	}
	return t;
}

struct trace *trace__open_mem(const void *buf, size_t len, char *err, size_t errlen)
{
	return open_buf(buf, len, NULL, err, errlen);
}

struct trace *trace__open(const char *path, char *err, size_t errlen)
{
	struct trace *t;
	struct stat st;
	void *map;
	int fd = safefile__open_read(path, &st);

	if (fd < 0) {
		if (fd == -EINVAL || fd == -EISDIR)
			snprintf(err, errlen, "'%s' is %s, not a trace file", path,
				 safefile__kind(st.st_mode));
		else
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(-fd));
		errno = -fd;
		return NULL;
	}
	if (st.st_size < (off_t)sizeof(struct trace_file_header)) {
		snprintf(err, errlen, "'%s' is not a srvscope trace file: only %lld bytes", path,
			 (long long)st.st_size);
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		int e = errno;

		snprintf(err, errlen, "cannot map '%s': %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	madvise(map, st.st_size, MADV_SEQUENTIAL);
	t = open_buf(map, st.st_size, map, err, errlen);
	if (!t) {
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "'%s': %s", path, err);
		snprintf(err, errlen, "%s", tmp);
		munmap(map, st.st_size);
		errno = EINVAL;
		return NULL;
	}
	return t;
}

struct trace *trace__open_report(const char *path)
{
	char err[512], lost[512];
	struct trace *t = trace__open(path, err, sizeof(err));

	if (!t) {
		error("%s", err);
		return NULL;
	}
	for (size_t i = 0; i < t->nr_damage; i++)
		warning("'%s': %s", path, t->damage[i].line);
	if (t->truncated)
		warning("'%s' ends in the middle of a section at offset %" PRIu64
			" (the recording was killed?): reading what precedes it",
			path, t->truncated_at);
	else if (!t->ended)
		warning("'%s' has no end section (the recording was killed?): reading what is "
			"there",
			path);
	if (trace__lost_events(t))
		warning("%s", trace__lost_summary(t, lost, sizeof(lost)));
	return t;
}

void trace__close(struct trace *t)
{
	struct priv *p;

	if (!t)
		return;
	p = t->priv;
	if (p) {
		u64map__free(&p->stack_idx);
		u64map__free(&p->thread_idx);
		free(p->runs);
		free(p->by_last);
		free(p->kallsyms_text);
		free(p->titles);
		while (p->nr_owned)
			free(p->owned[--p->nr_owned]);
		free(p->owned);
		if (p->map)
			munmap(p->map, p->map_len);
		free(p);
	}
	free(t->ev);
	free(t->stacks);
	free(t->threads);
	free(t->maps);
	free(t->fds);
	free(t->lost);
	free(t->secs);
	free(t->damage);
	free(t);
}

const struct trace_stack *trace__stack(const struct trace *t, uint64_t id)
{
	const struct priv *p = t->priv;
	uint64_t i;

	if (!id || !u64map__get(&p->stack_idx, id, &i))
		return NULL;
	return &t->stacks[i];
}

const struct trace_thread *trace__thread(const struct trace *t, uint32_t tid)
{
	const struct priv *p = t->priv;
	uint64_t i;

	if (!u64map__get(&p->thread_idx, tid, &i))
		return NULL;
	return &t->threads[i];
}

bool trace__task_match(const struct trace *t, long want_pid, long want_tid, const char *want_comm,
		       uint32_t pid, uint32_t tid)
{
	const struct trace_thread *th;

	if ((want_pid && pid != (uint32_t)want_pid) || (want_tid && tid != (uint32_t)want_tid))
		return false;
	if (!want_comm)
		return true;
	th = trace__thread(t, tid);
	return th && !strcmp(th->comm, want_comm);
}

const char *trace__fd_desc(const struct trace *t, uint32_t pid, int32_t fd, uint64_t ts)
{
	size_t lo = 0, hi = t->nr_fds, best = SIZE_MAX;
	static __thread char buf[256];

	/* First entry for (pid, fd), then the one closest to ts. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct trace_fd *f = &t->fds[mid];

		if (f->pid < pid || (f->pid == pid && f->fd < fd))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < t->nr_fds && t->fds[lo].pid == pid && t->fds[lo].fd == fd; lo++) {
		if (best == SIZE_MAX || t->fds[lo].ts <= ts)
			best = lo;
		if (t->fds[lo].ts > ts)
			break;
	}
	if (best == SIZE_MAX)
		return NULL;
	/* A path the target opened: its name is the target's choice. */
	name_escape(buf, sizeof(buf), t->fds[best].desc, t->fds[best].len);
	return buf;
}

const struct trace_maps *trace__maps(const struct trace *t, uint32_t pid, uint64_t ts)
{
	const struct trace_maps *best = NULL;
	size_t i;

	for (i = 0; i < t->nr_maps; i++) {
		const struct trace_maps *m = &t->maps[i];

		if (m->pid != pid)
			continue;
		if (!best || (m->ts <= ts && (best->ts > ts || m->ts >= best->ts)))
			best = m;
	}
	return best;
}

const struct trace_maps *trace__maps_after(const struct trace *t, uint32_t pid, uint64_t ts)
{
	const struct trace_maps *best = NULL;
	size_t i;

	for (i = 0; i < t->nr_maps; i++) {
		const struct trace_maps *m = &t->maps[i];

		if (m->pid == pid && m->ts > ts && (!best || m->ts < best->ts))
			best = m;
	}
	return best;
}

/* The first title of the process: what the recording saw when it first met it. Escaped:
 * a process writes what it likes in its command line. */
const char *trace__title(const struct trace *t, uint32_t pid, char *buf, size_t size)
{
	const struct priv *pr = t->priv;
	size_t i;

	for (i = 0; i < pr->nr_titles && size; i++)
		if (pr->titles[i].pid == pid) {
			name_escape(buf, size, pr->titles[i].text, pr->titles[i].len);
			return buf;
		}
	return NULL;
}

uint64_t trace__lost_events(const struct trace *t)
{
	return t->lost_by_reason[LOST_RINGBUF] + t->lost_by_reason[LOST_STACK_RINGBUF] +
	       t->lost_by_reason[LOST_SKIPPED];
}

/* The events the kernel skipped (LOST_SKIPPED), after the n bytes of buf written so far. */
static const char *lost_skipped(char *buf, size_t n, size_t size, uint64_t skipped)
{
	if (skipped && n < size)
		snprintf(buf + n, size - n,
			 "; %" PRIu64 " event%s skipped by the kernel (one came while its "
			 "program ran on the same CPU)",
			 skipped, skipped == 1 ? "" : "s");
	return buf;
}

const char *trace_lost__format(const uint64_t *lost, uint32_t nr_cpus, char *buf, size_t size)
{
	uint64_t by_reason[LOST_REASONS] = {0};
	const char *sep = " (";
	size_t n;
	uint32_t cpu, r;

	for (cpu = 0; cpu < nr_cpus; cpu++)
		for (r = 0; r < LOST_REASONS; r++)
			by_reason[r] += lost[cpu * LOST_REASONS + r];
	n = snprintf(buf, size, "lost %" PRIu64 " event%s and %" PRIu64 " stack%s",
		     by_reason[LOST_RINGBUF], by_reason[LOST_RINGBUF] == 1 ? "" : "s",
		     by_reason[LOST_STACK_RINGBUF], by_reason[LOST_STACK_RINGBUF] == 1 ? "" : "s");
	if (!by_reason[LOST_RINGBUF] && !by_reason[LOST_STACK_RINGBUF])
		return lost_skipped(buf, n, size, by_reason[LOST_SKIPPED]);
	if (n < size)
		n += snprintf(buf + n, size - n, " to a full ring buffer");
	for (cpu = 0; cpu < nr_cpus && n < size; cpu++) {
		uint64_t e = lost[cpu * LOST_REASONS + LOST_RINGBUF] +
			     lost[cpu * LOST_REASONS + LOST_STACK_RINGBUF];

		if (!e)
			continue;
		n += snprintf(buf + n, size - n, "%scpu%u: %" PRIu64, sep, cpu, e);
		sep = ", ";
	}
	if (*sep == ',' && n < size)
		n += snprintf(buf + n, size - n, ")");
	if (n < size)
		n += snprintf(buf + n, size - n, "; record again with a larger --buffer-size");
	return lost_skipped(buf, n, size, by_reason[LOST_SKIPPED]);
}

const char *trace__lost_summary(const struct trace *t, char *buf, size_t size)
{
	static const uint64_t none[LOST_REASONS];

	return trace_lost__format(t->lost ? t->lost : none, t->lost ? t->lost_cpus : 1, buf, size);
}

/* The value of "key=" in the trace's info text, into buf ("" when absent). */
const char *trace__info_value(const struct trace *t, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	const char *p = t->info, *end = t->info + t->info_len;

	buf[0] = 0;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t len = (nl ? nl : end) - p;

		if (len > klen && !memcmp(p, key, klen) && p[klen] == '=') {
			len -= klen + 1;
			if (len >= size)
				len = size - 1;
			memcpy(buf, p + klen + 1, len);
			buf[len] = 0;
			break;
		}
		p = nl ? nl + 1 : end;
	}
	return buf;
}
