/* Addresses of one process to names: maps -> ELF object -> symbol for user code, the JIT's
 * perf map for anonymous code, kallsyms for the kernel. Every answer is cached per address
 * and its strings are interned here, so they stay valid when maps are swapped or the
 * objects behind them are dropped. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/maps.h"
#include "symbol/dso.h"
#include "symbol/perfmap.h"
#include "symbol/proc_root.h"
#include "symbol/symbolizer.h"
#include "util/escape.h"
#include "util/strpool.h"
#include "util/util.h"

struct sym_slot {
	uint64_t addr;
	const char *symbol, *module;
	uint64_t offset;
	bool used;
};

struct addr_range {
	uint64_t start, end;
};

/* A set of strings, each stored once; pointers stay valid until the symbolizer goes. */
struct symbolizer {
	pid_t pid;
	struct proc_maps *maps;

	struct sym_slot *cache; /* open addressing, power-of-two size */
	size_t cache_cap, cache_nr;
	struct strpool *pool; /* names of symbols and modules handed out */

	/* Maps whose object could not be opened, so it is not retried for every address. */
	struct addr_range *bad;
	size_t nr_bad, cap_bad;

	/* The executable under the name the process runs under, when that is a symlink to
	 * it (redis-server -> redis-check-rdb): frames of the executable show that name. */
	char *exe_path, *exe_alias;
	bool exe_tried;

	struct perfmap *perfmap;
	char *perfmap_path;	/* the file perfmap was read from */
	struct stat perfmap_st; /* its size and mtime then: reread when the JIT appends */
};

/* Process-wide: kallsyms is the same for every process and costs tens of ms to read. */
static struct ksyms *kernel_syms;
static bool kernel_syms_tried;

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static struct sym_slot *cache_find(struct symbolizer *s, uint64_t addr)
{
	size_t j;

	if (!s->cache_cap)
		return NULL;
	for (j = hash64(addr) & (s->cache_cap - 1); s->cache[j].used;
	     j = (j + 1) & (s->cache_cap - 1))
		if (s->cache[j].addr == addr)
			return &s->cache[j];
	return NULL;
}

static void cache_put(struct symbolizer *s, uint64_t addr, const struct sym_result *r)
{
	struct sym_slot *slot;
	size_t j;

	if ((s->cache_nr + 1) * 2 > s->cache_cap) {
		size_t i, ncap = s->cache_cap ? s->cache_cap * 2 : 1024;
		struct sym_slot *nc = xcalloc(ncap, sizeof(*nc));

		for (i = 0; i < s->cache_cap; i++) {
			if (!s->cache[i].used)
				continue;
			for (j = hash64(s->cache[i].addr) & (ncap - 1); nc[j].used;
			     j = (j + 1) & (ncap - 1))
				;
			nc[j] = s->cache[i];
		}
		free(s->cache);
		s->cache = nc;
		s->cache_cap = ncap;
	}
	for (j = hash64(addr) & (s->cache_cap - 1); s->cache[j].used;
	     j = (j + 1) & (s->cache_cap - 1))
		;
	slot = &s->cache[j];
	slot->used = true;
	slot->addr = addr;
	slot->symbol = r->symbol;
	slot->module = r->module;
	slot->offset = r->offset;
	s->cache_nr++;
}

static void cache_clear(struct symbolizer *s)
{
	free(s->cache);
	s->cache = NULL;
	s->cache_cap = s->cache_nr = 0;
	free(s->bad);
	s->bad = NULL;
	s->nr_bad = s->cap_bad = 0;
}

struct symbolizer *symbolizer__new(pid_t pid, struct proc_maps *maps)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->pid = pid;
	s->maps = maps;
	s->pool = strpool__new();
	return s;
}

void symbolizer__set_maps(struct symbolizer *s, struct proc_maps *maps)
{
	/* Addresses may now belong to other objects; interned strings stay valid. */
	s->maps = maps;
	cache_clear(s);
}

void symbolizer__delete(struct symbolizer *s)
{
	if (!s)
		return;
	cache_clear(s);
	strpool__delete(s->pool);
	free(s->exe_path);
	free(s->exe_alias);
	perfmap__delete(s->perfmap);
	free(s->perfmap_path);
	free(s);
}

static bool is_bad(const struct symbolizer *s, const struct map_entry *m)
{
	size_t i;

	for (i = 0; i < s->nr_bad; i++)
		if (s->bad[i].start == m->start && s->bad[i].end == m->end)
			return true;
	return false;
}

static void mark_bad(struct symbolizer *s, const struct map_entry *m)
{
	xgrow((void **)&s->bad, &s->cap_bad, s->nr_bad + 1, sizeof(*s->bad));
	s->bad[s->nr_bad].start = m->start;
	s->bad[s->nr_bad].end = m->end;
	s->nr_bad++;
}

/* The pid the process knows itself by: a JIT in a container names its map after that. */
static pid_t ns_pid(pid_t pid)
{
	char path[64], buf[4096], *p;
	long v = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return pid;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return pid;
	p += 7;
	for (;;) {
		char *end;
		long n = strtol(p, &end, 10);

		if (end == p)
			break;
		v = n;
		p = end;
	}
	return v > 0 ? (pid_t)v : pid;
}

/* Whether path (as the process sees it) is a symlink to the executable, whose identity is
 * exe_st. Only stat()ed, never opened. */
static bool links_to_exe(pid_t pid, const char *path, const struct stat *exe_st)
{
	char root[64], full[PATH_MAX + 64];
	struct stat st;

	proc_root__prefix(pid, root, sizeof(root));
	if (snprintf(full, sizeof(full), "%s%s", root, path) >= (int)sizeof(full))
		return false;
	if (lstat(full, &st) < 0 || !S_ISLNK(st.st_mode) || stat(full, &st) < 0)
		return false;
	return st.st_dev == exe_st->st_dev && st.st_ino == exe_st->st_ino;
}

/* The kernel maps a program started through a symlink under the link's target: redis-server
 * is a link to redis-check-rdb, and every frame of redis would be named after the latter.
 * The name it was started under is the main thread's comm (set from the path given to
 * execve) or argv[0]; either is taken when it is a symlink, in the executable's directory
 * or where argv[0] says, to the very same file. */
static void exe_alias_find(struct symbolizer *s)
{
	char path[64], exe[PATH_MAX], cand[2][256], alias[PATH_MAX];
	const char *base, *name;
	struct stat exe_st;
	ssize_t n;
	int i;

	s->exe_tried = true;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)s->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0 || stat(path, &exe_st) < 0)
		return;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	if (!base)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)s->pid);
	if (read_file(path, cand[0], sizeof(cand[0])) < 0)
		cand[0][0] = '\0';
	cand[0][strcspn(cand[0], "\n")] = '\0';
	/* argv[0], up to a space: a process title (redis-server 127.0.0.1:6379) overwrites it */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)s->pid);
	if (read_file(path, cand[1], sizeof(cand[1])) < 0)
		cand[1][0] = '\0';
	cand[1][strcspn(cand[1], " ")] = '\0';
	for (i = 0; i < 2; i++) {
		name = strrchr(cand[i], '/') ? strrchr(cand[i], '/') + 1 : cand[i];
		if (!*name || !strcmp(name, base + 1) || !strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (cand[i][0] == '/')
			snprintf(alias, sizeof(alias), "%s", cand[i]);
		else
			snprintf(alias, sizeof(alias), "%.*s/%s", (int)(base - exe), exe, name);
		if (links_to_exe(s->pid, alias, &exe_st)) {
			s->exe_path = xstrdup(exe);
			s->exe_alias = xstrdup(alias);
			return;
		}
	}
}

/* The module name of an object's frames: its path, or the executable's alias. */
static const char *module_name(struct symbolizer *s, const char *path)
{
	if (s->pid > 0 && !s->exe_tried)
		exe_alias_find(s);
	if (s->exe_alias && !strcmp(path, s->exe_path))
		return s->exe_alias;
	return path;
}

/* (Re)reads the JIT map when it appeared or grew since last time. */
static void perfmap_refresh(struct symbolizer *s)
{
	char root[64], cand[2][128];
	struct stat st;
	int i;

	proc_root__prefix(s->pid, root, sizeof(root));
	snprintf(cand[0], sizeof(cand[0]), "%s/tmp/perf-%d.map", root, (int)ns_pid(s->pid));
	snprintf(cand[1], sizeof(cand[1]), "/tmp/perf-%d.map", (int)s->pid);
	for (i = 0; i < 2; i++) {
		struct perfmap *pm;

		if (stat(cand[i], &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (s->perfmap && !strcmp(s->perfmap_path, cand[i]) &&
		    st.st_size == s->perfmap_st.st_size &&
		    st.st_mtim.tv_sec == s->perfmap_st.st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == s->perfmap_st.st_mtim.tv_nsec)
			return;
		pm = perfmap__load(cand[i]);
		if (!pm)
			continue;
		perfmap__delete(s->perfmap);
		free(s->perfmap_path);
		s->perfmap = pm;
		s->perfmap_path = xstrdup(cand[i]);
		s->perfmap_st = st;
		return;
	}
}

static const char *perfmap_lookup(struct symbolizer *s, uint64_t addr, uint64_t *off)
{
	const char *name;

	if (s->pid <= 0)
		return NULL;
	if (s->perfmap && (name = perfmap__find(s->perfmap, addr, off)))
		return name;
	perfmap_refresh(s);
	return perfmap__find(s->perfmap, addr, off);
}

/* The name to show for a map that is not an object: anonymous memory (no device, no
 * inode) only ever has a bracketed name like "[heap]" or "[anon:v8]"; anything else there
 * is not a file name, so it is not shown as one. */
static const char *map_name(const struct map_entry *m)
{
	if (!m->path || !m->path[0])
		return NULL;
	if (!m->inode && !m->dev_major && !m->dev_minor && m->path[0] != '[')
		return NULL;
	return m->path;
}

/* Every name handed out comes from the target (its binaries' symbols, the paths it maps,
 * its JIT's map): escaped once here, so that no output can be driven by it. */
static const char *intern_name(struct symbolizer *s, const char *name)
{
	const char *r;
	char *esc;

	if (name_is_safe(name, strlen(name)))
		return strpool__intern(s->pool, name);
	esc = name_escape_dup(name);
	r = strpool__intern(s->pool, esc);
	free(esc);
	return r;
}

static void resolve_user(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	struct map_entry *m = s->maps ? proc_maps__find(s->maps, addr) : NULL;
	const char *name;
	uint64_t off;
	struct dso *dso = NULL;

	out->symbol = NULL;
	out->kernel = false;
	if (m && m->path && (m->path[0] == '/' || !strcmp(m->path, "[vdso]"))) {
		dso = m->dso;
		if (!dso && !is_bad(s, m)) {
			dso = dso__get(s->pid, m);
			if (dso)
				m->dso = dso;
			else
				mark_bad(s, m);
		}
	}
	if (dso) {
		uint64_t vaddr = addr - (uint64_t)dso__load_bias(dso, m);

		out->module = intern_name(s, module_name(s, dso__path(dso)));
		if (dso__symbolize(dso, vaddr, &name, &off) == 0) {
			out->symbol = intern_name(s, name);
			out->offset = off;
		} else {
			out->offset = vaddr;
		}
		return;
	}
	/* Generated code: anonymous, a named anonymous region, or a memfd that is not ELF. */
	if (m && (m->prot & PROT_EXEC) && (name = perfmap_lookup(s, addr, &off))) {
		out->symbol = intern_name(s, name);
		out->module = "[jit]";
		out->offset = off;
		return;
	}
	if (m && map_name(m)) {
		out->module = intern_name(s, map_name(m));
		out->offset = addr - m->start + m->pgoff;
		return;
	}
	out->module = "[unknown]";
	out->offset = addr;
}

void symbolizer__resolve(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	struct sym_slot *slot = cache_find(s, addr);

	if (slot) {
		out->symbol = slot->symbol;
		out->module = slot->module;
		out->offset = slot->offset;
		out->kernel = false;
		return;
	}
	resolve_user(s, addr, out);
	cache_put(s, addr, out);
}

void symbolizer__set_ksyms(struct ksyms *k)
{
	ksyms__delete(kernel_syms);
	kernel_syms = k;
	kernel_syms_tried = true;
}

void symbolizer__resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	const char *module = NULL;
	uint64_t off = 0;

	if (!kernel_syms_tried) {
		kernel_syms_tried = true;
		kernel_syms = ksyms__load();
	}
	out->kernel = true;
	out->symbol = ksyms__resolve(kernel_syms, addr, &off, &module);
	if (out->symbol) {
		out->module = module;
		out->offset = off;
	} else {
		out->module = "[kernel]";
		out->offset = addr;
	}
}

void symbolizer__exit(void)
{
	ksyms__delete(kernel_syms);
	kernel_syms = NULL;
	kernel_syms_tried = false;
	dso__cache_flush();
}
