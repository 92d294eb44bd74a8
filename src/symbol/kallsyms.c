/* The kernel's symbol table from /proc/kallsyms (or its text saved in a trace file): parsed
 * in place in one pass, sorted by address, one name per address. About 200k lines, so
 * no sscanf and no allocation per line. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbol/symbolizer.h"
#include "util/safefile.h"
#include "util/util.h"

/* kallsyms has no sizes: a symbol runs to the next one, except the last one of the kernel
 * or of a module, which is given at most this much. */
#define KSYM_LAST_SPAN (64u << 10)

/* 16 bytes, not 32 with pointers: a kernel has 100k+ symbols, and a report of a trace holds
 * them all. The type letter is in the text, just before the name (see parse_lines). */
struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset in ksyms.text */
	uint32_t module; /* offset of "[xfs]" in ksyms.text, or 0 for the kernel itself */
};

struct ksyms {
	char *text;
	size_t text_map; /* text is an mmap of this size (ksyms__load), else malloc'd */
	struct ksym *syms;
	size_t nr;
};

static const char kernel_module[] = "[kernel]";

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Among names of one address: code over data, global (upper case) over local, fewer
 * leading underscores ("_stext" loses to a real function), then the name. */
static int ksym_better(const char *text, const struct ksym *a, const struct ksym *b)
{
	const char *na = text + a->name, *nb = text + b->name;
	char ya = na[-1], yb = nb[-1];
	int ta = (ya | 0x20) == 't' || (ya | 0x20) == 'w';
	int tb = (yb | 0x20) == 't' || (yb | 0x20) == 'w';
	int ga = ya >= 'A' && ya <= 'Z', gb = yb >= 'A' && yb <= 'Z';
	size_t ua = strspn(na, "_"), ub = strspn(nb, "_");

	if (ta != tb)
		return ta > tb ? -1 : 1;
	if (ga != gb)
		return ga > gb ? -1 : 1;
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(na, nb);
}

/*
 * Sorts by address by merging the ascending runs already there: kallsyms lists the kernel
 * in order and appends a few out-of-order entries (BPF programs, trampolines, modules),
 * so this is a couple of linear passes where qsort would cost more than the parsing.
 */
static void sort_by_addr(struct ksym *a, size_t n)
{
	struct ksym *tmp, *src = a, *dst, *t;
	size_t *runs, nr_runs = 0, i, r, out;

	runs = xmalloc((n + 1) * sizeof(*runs));
	for (i = 0; i < n; i++)
		if (i == 0 || a[i].addr < a[i - 1].addr)
			runs[nr_runs++] = i;
	runs[nr_runs] = n;
	if (nr_runs <= 1) {
		free(runs);
		return;
	}
	tmp = xmalloc(n * sizeof(*tmp));
	dst = tmp;
	while (nr_runs > 1) {
		for (r = 0, out = 0; r < nr_runs; r += 2, out++) {
			/* runs[nr_runs] == n, so a last run without a partner copies over. */
			size_t lo = runs[r], mid = runs[r + 1];
			size_t hi = r + 2 <= nr_runs ? runs[r + 2] : n;
			size_t x = lo, y = mid, k = lo;

			/* Stable: on equal addresses the earlier entry stays first. */
			while (x < mid && y < hi)
				dst[k++] = src[y].addr < src[x].addr ? src[y++] : src[x++];
			while (x < mid)
				dst[k++] = src[x++];
			while (y < hi)
				dst[k++] = src[y++];
			runs[out] = lo;
		}
		runs[out] = n;
		nr_runs = out;
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(runs);
}

struct parser {
	struct ksyms *k;
	size_t cap;
	char *w; /* where the next kept name is written: the text is compacted as it is parsed */
	bool sorted, any_addr;
};

static void parser_init(struct parser *ps, char *text, size_t expect)
{
	ps->k = xcalloc(1, sizeof(*ps->k));
	ps->k->text = text;
	ps->w = text;
	ps->cap = 0;
	ps->sorted = true;
	ps->any_addr = false;
	/* Sized up front from kallsyms' usual line length, to avoid regrowing. */
	xgrow((void **)&ps->k->syms, &ps->cap, expect / 32 + 16, sizeof(*ps->k->syms));
}

/* Parses the lines in [p, end), in place, and compacts them: only "Tname\0" (the type letter
 * then the name) and "[module]\0" are kept, written back from the start of the text, so the
 * addresses (a third of the text) and the symbols left out cost nothing once parsed. The
 * write cursor never passes the line being read: a line has at least four bytes ("0 T ")
 * before its name, of which one is kept. */
static void parse_lines(struct parser *ps, char *p, char *end)
{
	struct ksyms *k = ps->k;

	while (p < end) {
		char *nl = memchr(p, '\n', end - p), *name, *tab, *mod = NULL;
		size_t len;
		uint64_t addr = 0;
		int digits = 0, v;
		struct ksym *s;
		char type;

		if (!nl)
			nl = end;
		*nl = '\0';
		while ((v = hexval(*p)) >= 0 && digits < 17) {
			addr = addr << 4 | v;
			p++;
			digits++;
		}
		if (!digits || digits > 16 || p[0] != ' ' || !p[1] || p[2] != ' ')
			goto next;
		type = p[1];
		name = p + 3;
		/* Absolute symbols are per-cpu offsets, not code; they would claim small
		 * addresses. */
		if (type == 'a' || type == 'A' || !*name || *name == '\t')
			goto next;
		xgrow((void **)&k->syms, &ps->cap, k->nr + 1, sizeof(*k->syms));
		s = &k->syms[k->nr];
		s->addr = addr;
		s->module = 0;
		tab = memchr(name, '\t', nl - name);
		if (tab) {
			char *close;

			*tab = '\0';
			mod = tab + 1;
			while (*mod == ' ' || *mod == '\t')
				mod++;
			close = strchr(mod, ']');
			if (*mod == '[' && close && close > mod + 1)
				close[1] = '\0';
			else
				mod = NULL;
		}
		len = strlen(name);
		*ps->w++ = type;
		memmove(ps->w, name, len + 1);
		s->name = ps->w - k->text;
		ps->w += len + 1;
		if (mod) { /* after the name: not yet overwritten */
			len = strlen(mod);
			memmove(ps->w, mod, len + 1);
			s->module = ps->w - k->text;
			ps->w += len + 1;
		}
		if (k->nr && addr < k->syms[k->nr - 1].addr)
			ps->sorted = false;
		if (addr)
			ps->any_addr = true;
		k->nr++;
	next:
		p = nl + 1;
	}
}

static struct ksyms *parser_finish(struct parser *ps)
{
	struct ksyms *k = ps->k;
	size_t i, out;

	if (k->nr && !ps->any_addr) {
		/* kptr_restrict hides addresses from unprivileged readers: all zeros. */
		ksyms__delete(k);
		errno = EPERM;
		return NULL;
	}
	if (!ps->sorted)
		sort_by_addr(k->syms, k->nr);
	/* One name per address: the best of each run of equal addresses. */
	for (i = 0, out = 0; i < k->nr; i++) {
		if (out && k->syms[out - 1].addr == k->syms[i].addr) {
			if (ksym_better(k->text, &k->syms[i], &k->syms[out - 1]) < 0)
				k->syms[out - 1] = k->syms[i];
			continue;
		}
		k->syms[out++] = k->syms[i];
	}
	k->nr = out;
	return k;
}

struct ksyms *ksyms__parse_owned(char *text, size_t len)
{
	struct parser ps;

	parser_init(&ps, text, len);
	parse_lines(&ps, text, text + len);
	/* Only the compacted names are left: give back the rest (names are offsets). */
	ps.k->text = xrealloc(text, ps.w - text + 1);
	return parser_finish(&ps);
}

struct ksyms *ksyms__parse(const char *text, size_t len)
{
	char *copy = xmalloc(len + 1);

	memcpy(copy, text, len);
	copy[len] = '\0';
	return ksyms__parse_owned(copy, len);
}

/*
 * Reading /proc/kallsyms is mostly the kernel formatting 100k+ lines (60 ms and more);
 * parsing adds a few ms. Each chunk is parsed right after it is read, while it is still
 * in the cache. The text goes into one large reserved mapping that never moves, so names
 * parsed earlier stay valid while later chunks are appended. (A reader thread overlapping
 * the two was tried: on small VMs its wake-ups cost more than the parsing it hid.)
 */
#define KALLSYMS_RESERVE (512ul << 20)
#define KALLSYMS_CHUNK	 (256u << 10)

struct ksyms *ksyms__load(void)
{
	struct parser ps;
	struct ksyms *k;
	size_t len = 0, parsed = 0, keep;
	char *buf;
	int fd, err = 0;

	fd = safefile__open_read("/proc/kallsyms", NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* Zero-filled, so the text is NUL-terminated wherever reading stops. */
	buf = mmap(NULL, KALLSYMS_RESERVE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	parser_init(&ps, buf, 6u << 20);
	for (;;) {
		size_t room = KALLSYMS_RESERVE - 1 - len;
		ssize_t n;
		char *stop;

		if (!room) {
			err = EFBIG;
			break;
		}
		n = read(fd, buf + len, room < KALLSYMS_CHUNK ? room : KALLSYMS_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : 0;
			break;
		}
		len += n;
		/* Whole lines only: the last one may continue in the next chunk. */
		stop = memrchr(buf + parsed, '\n', len - parsed);
		if (stop) {
			parse_lines(&ps, buf + parsed, stop + 1);
			parsed = stop + 1 - buf;
		}
	}
	close(fd);
	parse_lines(&ps, buf + parsed, buf + len);
	keep = (size_t)(ps.w - buf + 1 + 4095) & ~(size_t)4095; /* the compacted names */
	munmap(buf + keep, KALLSYMS_RESERVE - keep);
	k = ps.k;
	k->text = buf;
	k->text_map = keep;
	if (err) {
		ksyms__delete(k);
		errno = err;
		return NULL;
	}
	return parser_finish(&ps);
}

void ksyms__delete(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	if (k->text_map)
		munmap(k->text, k->text_map);
	else
		free(k->text);
	free(k);
}

const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset,
			   const char **module)
{
	size_t lo = 0, hi;
	const struct ksym *s, *next;
	uint64_t end;

	if (!k || !k->nr)
		return NULL;
	hi = k->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	next = lo < k->nr ? &k->syms[lo] : NULL;
	end = next ? next->addr : UINT64_MAX;
	if (!next || !s->module != !next->module ||
	    (s->module && strcmp(k->text + s->module, k->text + next->module))) {
		if (end - s->addr > KSYM_LAST_SPAN)
			end = s->addr + KSYM_LAST_SPAN;
	}
	if (addr >= end)
		return NULL;
	if (offset)
		*offset = addr - s->addr;
	if (module)
		*module = s->module ? k->text + s->module : kernel_module;
	return k->text + s->name;
}
