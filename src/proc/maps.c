/* Parsing of /proc/PID/maps text into sorted entries. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/maps.h"
#include "symbol/dso.h"
#include "util/util.h"

static char *slurp(const char *path, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap);
	for (;;) {
		if (n + 4096 > cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int parse_line(const char *text, size_t len, struct map_entry *m)
{
	char line[4096 + 256];
	char perms[8] = "";
	int pathpos = 0;
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	const char *path;
	size_t plen;

	/* sscanf's whitespace would run past the newline of an anonymous map's line. */
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, text, len);
	line[len] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
		   &ino, &pathpos) < 7)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = off;
	m->dev_major = maj;
	m->dev_minor = min;
	m->inode = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->shared = perms[3] == 's';
	path = pathpos ? line + pathpos : "";
	while (*path == ' ')
		path++;
	plen = strcspn(path, "\n");
	if (plen > 10 && !strncmp(path + plen - 10, " (deleted)", 10)) {
		m->deleted = true;
		plen -= 10;
	}
	if (plen)
		m->path = strndup(path, plen);
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct map_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct proc_maps *proc_maps__parse(pid_t pid, const char *text, size_t len)
{
	struct proc_maps *pm = xcalloc(1, sizeof(*pm));
	size_t cap = 0;
	const char *p, *end;

	pm->pid = pid;
	pm->text = xmalloc(len + 1);
	memcpy(pm->text, text, len);
	pm->text[len] = '\0';
	pm->text_len = len;
	p = pm->text;
	end = pm->text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		struct map_entry m;

		if (!nl)
			nl = end;
		if (parse_line(p, nl - p, &m) == 0) {
			xgrow((void **)&pm->maps, &cap, pm->nr + 1, sizeof(m));
			pm->maps[pm->nr++] = m;
		}
		p = nl + 1;
	}
	if (pm->nr) /* none for a process that exited meanwhile */
		qsort(pm->maps, pm->nr, sizeof(*pm->maps), cmp_start);
	return pm;
}

struct proc_maps *proc_maps__read(pid_t pid)
{
	char path[64];
	size_t len;
	char *text;
	struct proc_maps *pm;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	text = slurp(path, &len);
	if (!text)
		return NULL;
	pm = proc_maps__parse(pid, text, len);
	free(text);
	return pm;
}

void proc_maps__delete(struct proc_maps *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->nr; i++) {
		free(pm->maps[i].path);
		dso__put(pm->maps[i].dso);
	}
	free(pm->maps);
	free(pm->text);
	free(pm);
}

struct map_entry *proc_maps__find(const struct proc_maps *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct map_entry *m = &pm->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

static bool overlaps(const struct map_entry *a, const struct map_entry *b)
{
	return a->start < b->end && b->start < a->end;
}

/* Whether m overlaps an entry of pm (only entries with a path when named_only). */
static bool overlaps_any(const struct map_entry *maps, size_t nr, const struct map_entry *m,
			 bool named_only)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if ((!named_only || maps[i].path) && overlaps(&maps[i], m))
			return true;
	return false;
}

struct proc_maps *proc_maps__merge_stale(const struct proc_maps *cur, const struct proc_maps *old)
{
	struct proc_maps *pm = proc_maps__parse(cur->pid, cur->text, cur->text_len);
	struct map_entry *stale = NULL;
	size_t i, n = 0, nstale = 0, cap = 0;

	/* A vanished object is kept unless something named took its place; an anonymous
	 * mapping that took it (a reservation, say) is what the sample did not see. */
	for (i = 0; i < old->nr; i++) {
		struct map_entry m = old->maps[i];

		if (!m.path || overlaps_any(cur->maps, cur->nr, &m, true))
			continue;
		m.path = xstrdup(m.path);
		m.dso = NULL;
		xgrow((void **)&stale, &cap, nstale + 1, sizeof(m));
		stale[nstale++] = m;
	}
	for (i = 0; i < pm->nr; i++) {
		if (overlaps_any(stale, nstale, &pm->maps[i], false)) {
			free(pm->maps[i].path);
			continue;
		}
		pm->maps[n++] = pm->maps[i];
	}
	pm->nr = n;
	cap = n;
	for (i = 0; i < nstale; i++) {
		xgrow((void **)&pm->maps, &cap, pm->nr + 1, sizeof(*stale));
		pm->maps[pm->nr++] = stale[i];
	}
	free(stale);
	if (pm->nr)
		qsort(pm->maps, pm->nr, sizeof(*pm->maps), cmp_start);
	return pm;
}

bool proc_maps__changed(const struct proc_maps *pm)
{
	char path[64];
	size_t len;
	char *text;
	bool changed;

	snprintf(path, sizeof(path), "/proc/%d/maps", pm->pid);
	text = slurp(path, &len);
	if (!text)
		return true;
	changed = len != pm->text_len || memcmp(text, pm->text, len);
	free(text);
	return changed;
}
