/* Parsing and lookup of JIT perf maps (/tmp/perf-PID.map). The files come from the
 * profiled program, so every line is treated as untrusted and may be malformed. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/demangle.h"
#include "symbol/perfmap.h"
#include "util/safefile.h"
#include "util/util.h"

/* How many entries below a miss to check for an older, larger one covering the address. */
#define PERFMAP_OVERLAP_SCAN 16

struct perfmap_entry {
	uint64_t start, end;
	const char *name; /* in perfmap.text */
	char *display;	  /* demangled copy, once asked for */
	uint32_t line;
	bool display_done;
};

struct perfmap {
	char *text;
	struct perfmap_entry *e;
	size_t nr;
};

static const char *parse_hex(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] | 0x20) == 'x')
		p += 2;
	for (; p < end; p++, digits++) {
		char c = *p;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (digits == 16)
			return NULL;
		v = v << 4 | d;
	}
	if (!digits)
		return NULL;
	*out = v;
	return p;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line > y->line ? -1 : x->line < y->line; /* newest first */
}

static struct perfmap *parse_owned(char *text, size_t len)
{
	struct perfmap *pm = xcalloc(1, sizeof(*pm));
	char *p = text, *end = text + len;
	size_t cap = 0, i, out;
	uint32_t line = 0;

	pm->text = text;
	while (p < end) {
		char *nl = memchr(p, '\n', end - p), *name, *tail;
		const char *q;
		uint64_t start, size;
		struct perfmap_entry *e;

		if (!nl)
			nl = end;
		*nl = '\0';
		line++;
		q = p;
		while (q < nl && (*q == ' ' || *q == '\t'))
			q++;
		q = parse_hex(q, nl, &start);
		if (!q || q >= nl || (*q != ' ' && *q != '\t'))
			goto next;
		while (q < nl && (*q == ' ' || *q == '\t'))
			q++;
		q = parse_hex(q, nl, &size);
		if (!q || q >= nl || (*q != ' ' && *q != '\t'))
			goto next;
		while (q < nl && (*q == ' ' || *q == '\t'))
			q++;
		name = (char *)q;
		tail = nl;
		while (tail > name && (tail[-1] == '\r' || tail[-1] == ' ' || tail[-1] == '\t'))
			tail--;
		*tail = '\0';
		/* A name cut by a NUL byte is still a name; an empty one or no size is not. */
		if (!*name || !size || start + size < start)
			goto next;
		xgrow((void **)&pm->e, &cap, pm->nr + 1, sizeof(*pm->e));
		e = &pm->e[pm->nr++];
		memset(e, 0, sizeof(*e));
		e->start = start;
		e->end = start + size;
		e->name = name;
		e->line = line;
	next:
		p = nl + 1;
	}
	if (pm->nr)
		qsort(pm->e, pm->nr, sizeof(*pm->e), cmp_entry);
	/* Code regenerated at the same address: only the newest entry matters. */
	for (i = 0, out = 0; i < pm->nr; i++)
		if (!out || pm->e[out - 1].start != pm->e[i].start)
			pm->e[out++] = pm->e[i];
	pm->nr = out;
	return pm;
}

struct perfmap *perfmap__parse(const char *text, size_t len)
{
	char *copy = xmalloc(len + 1);

	memcpy(copy, text, len);
	copy[len] = '\0';
	return parse_owned(copy, len);
}

struct perfmap *perfmap__load(const char *path)
{
	size_t cap = 65536, len = 0;
	char *buf;
	ssize_t n;
	/* The target's own file in /tmp: it may have made it a FIFO. */
	int fd = safefile__open_read(path, NULL), err;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	buf = xmalloc(cap);
	for (;;) {
		if (cap - len < 4096) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			free(buf);
			close(fd);
			errno = err;
			return NULL;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return parse_owned(buf, len);
}

void perfmap__delete(struct perfmap *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->nr; i++)
		free(pm->e[i].display);
	free(pm->e);
	free(pm->text);
	free(pm);
}

size_t perfmap__nr(const struct perfmap *pm)
{
	return pm ? pm->nr : 0;
}

const char *perfmap__find(struct perfmap *pm, uint64_t addr, uint64_t *offset)
{
	struct perfmap_entry *best = NULL;
	size_t lo = 0, hi, k;

	if (!pm || !pm->nr)
		return NULL;
	hi = pm->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < PERFMAP_OVERLAP_SCAN && lo > 0; k++, lo--) {
		struct perfmap_entry *e = &pm->e[lo - 1];

		if (addr < e->end && (!best || e->line > best->line))
			best = e;
	}
	if (!best)
		return NULL;
	if (!best->display_done) {
		best->display_done = true;
		best->display = symbol__demangle(best->name);
	}
	*offset = addr - best->start;
	return best->display ? best->display : best->name;
}
