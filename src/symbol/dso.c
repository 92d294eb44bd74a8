/* ELF objects mapped by processes: opened once per (device, inode, path), shared by
 * reference count, kept a while after the last user so later samples and processes reuse
 * them. Serves PT_LOAD bytes to the unwinder and loads symbols only when asked. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/maps.h"
#include "symbol/debuginfo.h"
#include "symbol/dso.h"
#include "symbol/elf_image.h"
#include "symbol/symtab.h"
#include "util/util.h"

/* How many objects nobody references are kept open for reuse. */
#define DSO_UNUSED_MAX	 256
#define BUILD_ID_HEX_MAX 129 /* 64 bytes, the most any linker writes, in hex, plus NUL */

struct dso_seg {
	uint64_t vaddr, memsz; /* as in the program header */
	uint64_t offset, filesz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

struct dso {
	int refcnt;
	bool not_elf; /* negative entry: the file is not ELF, do not open it again */
	bool is_vdso;
	char *path; /* as the process sees it */
	uint32_t dev_major, dev_minor;
	uint64_t inode;

	struct elf_image img;
	struct dso_seg *segs; /* sorted by vaddr */
	size_t nr_segs;
	size_t last_seg; /* dso__read's last hit: frames cluster in one segment */
	bool has_eh_frame_hdr;
	uint64_t eh_vaddr, eh_size;
	char build_id[BUILD_ID_HEX_MAX];
	bool has_build_id;

	pid_t root_pid; /* whose root to search for debug files when symbols load */
	bool syms_loaded;
	struct symtab *syms;
	struct elf_image debug; /* the separate debug file, kept while syms point into it */
	char *debug_path;

	struct dso *hnext;		       /* hash chain */
	struct dso *unused_prev, *unused_next; /* LRU of refcnt == 0 entries, oldest first */
};

static struct {
	struct dso **buckets;
	size_t nr_buckets, nr;
	struct dso *unused_head, *unused_tail;
	size_t nr_unused;
} cache;

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = sysconf(_SC_PAGESIZE);
	return ps;
}

static uint64_t key_hash(uint32_t maj, uint32_t min, uint64_t ino, const char *path)
{
	uint64_t h =
		fnv1a_str(path, FNV1A_INIT ^ ino ^ ((uint64_t)maj << 40) ^ ((uint64_t)min << 20));

	return h ^ (h >> 29);
}

static size_t dso_bucket(const struct dso *d)
{
	return key_hash(d->dev_major, d->dev_minor, d->inode, d->path) & (cache.nr_buckets - 1);
}

static void cache_insert(struct dso *d)
{
	size_t b;

	if (cache.nr + 1 > cache.nr_buckets) {
		size_t i, n = cache.nr_buckets ? cache.nr_buckets * 2 : 64;
		struct dso **old = cache.buckets;
		size_t nold = cache.nr_buckets;

		cache.buckets = xcalloc(n, sizeof(*cache.buckets));
		cache.nr_buckets = n;
		for (i = 0; i < nold; i++) {
			struct dso *e = old[i], *next;

			for (; e; e = next) {
				next = e->hnext;
				b = dso_bucket(e);
				e->hnext = cache.buckets[b];
				cache.buckets[b] = e;
			}
		}
		free(old);
	}
	b = dso_bucket(d);
	d->hnext = cache.buckets[b];
	cache.buckets[b] = d;
	cache.nr++;
}

static void cache_remove(struct dso *d)
{
	struct dso **pp = &cache.buckets[dso_bucket(d)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == d) {
			*pp = d->hnext;
			cache.nr--;
			return;
		}
	}
}

static void unused_unlink(struct dso *d)
{
	if (d->unused_prev)
		d->unused_prev->unused_next = d->unused_next;
	else
		cache.unused_head = d->unused_next;
	if (d->unused_next)
		d->unused_next->unused_prev = d->unused_prev;
	else
		cache.unused_tail = d->unused_prev;
	d->unused_prev = d->unused_next = NULL;
	cache.nr_unused--;
}

static void unused_append(struct dso *d)
{
	d->unused_prev = cache.unused_tail;
	d->unused_next = NULL;
	if (cache.unused_tail)
		cache.unused_tail->unused_next = d;
	else
		cache.unused_head = d;
	cache.unused_tail = d;
	cache.nr_unused++;
}

static void dso_free(struct dso *d)
{
	symtab__delete(d->syms);
	elf_image__close(&d->debug);
	elf_image__close(&d->img);
	free(d->debug_path);
	free(d->segs);
	free(d->path);
	free(d);
}

static void unused_trim(size_t keep)
{
	while (cache.nr_unused > keep) {
		struct dso *d = cache.unused_head;

		unused_unlink(d);
		cache_remove(d);
		dso_free(d);
	}
}

void dso__cache_flush(void)
{
	unused_trim(0);
	if (!cache.nr) {
		free(cache.buckets);
		cache.buckets = NULL;
		cache.nr_buckets = 0;
	}
}

static struct dso *cache_find(const struct map_entry *m)
{
	struct dso *d;

	if (!cache.nr_buckets)
		return NULL;
	d = cache.buckets[key_hash(m->dev_major, m->dev_minor, m->inode, m->path) &
			  (cache.nr_buckets - 1)];
	for (; d; d = d->hnext)
		if (d->inode == m->inode && d->dev_major == m->dev_major &&
		    d->dev_minor == m->dev_minor && !d->is_vdso && !strcmp(d->path, m->path))
			return d;
	return NULL;
}

static struct dso *take_ref(struct dso *d)
{
	if (d->refcnt++ == 0)
		unused_unlink(d);
	return d;
}

struct dso *dso__getref(struct dso *dso)
{
	if (dso)
		take_ref(dso);
	return dso;
}

void dso__put(struct dso *dso)
{
	if (!dso || --dso->refcnt > 0)
		return;
	unused_append(dso);
	unused_trim(DSO_UNUSED_MAX);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct dso_seg *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Reads the program headers: loadable segments (clamped to the file, so dso__read can
 * trust them) and .eh_frame_hdr. */
static int dso_read_phdrs(struct dso *d)
{
	size_t i, nr;

	if (elf_getphdrnum(d->img.elf, &nr) < 0)
		return -ENOEXEC;
	d->segs = xcalloc(nr ? nr : 1, sizeof(*d->segs));
	for (i = 0; i < nr; i++) {
		GElf_Phdr ph;
		struct dso_seg *s;

		if (!gelf_getphdr(d->img.elf, i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			d->has_eh_frame_hdr = true;
			d->eh_vaddr = ph.p_vaddr;
			d->eh_size = ph.p_memsz;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		s = &d->segs[d->nr_segs++];
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->flags = ph.p_flags;
		if (s->offset > d->img.size)
			s->offset = d->img.size;
		if (s->filesz > d->img.size - s->offset)
			s->filesz = d->img.size - s->offset;
	}
	if (!d->nr_segs)
		return -ENOEXEC;
	qsort(d->segs, d->nr_segs, sizeof(*d->segs), cmp_seg);
	return 0;
}

static struct dso *dso_new(const struct map_entry *m, pid_t pid)
{
	struct dso *d = xcalloc(1, sizeof(*d));

	d->path = xstrdup(m->path);
	d->dev_major = m->dev_major;
	d->dev_minor = m->dev_minor;
	d->inode = m->inode;
	d->root_pid = pid;
	return d;
}

/* Finishes a dso whose image is open; on failure frees it and returns NULL with errno. */
static struct dso *dso_setup(struct dso *d)
{
	int err = dso_read_phdrs(d);

	if (err) {
		dso_free(d);
		errno = -err;
		return NULL;
	}
	d->has_build_id = elf_image__build_id(&d->img, d->build_id, sizeof(d->build_id)) == 0;
	d->refcnt = 1;
	cache_insert(d);
	return d;
}

/* Opens path if it is the file the map names: a file replaced since (a package upgrade)
 * has another inode and would give wrong bytes and symbols. */
static int open_checked(struct dso *d, const char *path, const struct map_entry *m, bool check)
{
	struct stat st;
	int err = elf_image__open(&d->img, path, &st);

	if (err)
		return err;
	if (check && m->inode && st.st_ino != m->inode) {
		elf_image__close(&d->img);
		return -ESTALE;
	}
	return 0;
}

static struct dso *file_get(pid_t pid, const struct map_entry *m)
{
	char path[PATH_MAX + 64];
	struct dso *d;
	int err = -ENOENT, e;

	d = cache_find(m);
	if (d) {
		if (d->not_elf) {
			/* Refresh its place in the LRU: it is still in use by someone's maps. */
			unused_unlink(d);
			unused_append(d);
			errno = ENOEXEC;
			return NULL;
		}
		/* Symbols not loaded yet: a live process is the best root to find them in. */
		if (pid && !d->syms_loaded)
			d->root_pid = pid;
		return take_ref(d);
	}

	d = dso_new(m, pid);
	if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
		err = open_checked(d, path, m, true);
		if (err && err != -ENOEXEC) {
			snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
				 (int)pid, m->start, m->end);
			e = open_checked(d, path, m, false);
			if (e != -ENOENT)
				err = e;
		}
		if (err && err != -ENOEXEC) {
			e = open_checked(d, m->path, m, true);
			if (e != -ENOENT)
				err = e;
		}
	} else {
		err = open_checked(d, m->path, m, false);
	}
	if (err == -ENOEXEC) {
		/* Remember it: the symbolizer and unwinder would otherwise reopen the file for
		 * every address that falls in it. */
		elf_image__close(&d->img);
		d->not_elf = true;
		cache_insert(d);
		unused_append(d);
		unused_trim(DSO_UNUSED_MAX);
		errno = ENOEXEC;
		return NULL;
	}
	if (err) {
		dso_free(d);
		errno = -err;
		return NULL;
	}
	return dso_setup(d);
}

/* Size of the in-memory ELF image at base (the vdso), from its program headers. */
static size_t image_extent(const unsigned char *base)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	const ElfW(Phdr) *ph = (const void *)(base + eh->e_phoff);
	size_t i, end = 0;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return 0;
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end;
}

/* The vdso has no file: its bytes come from the process. With no process (trace files)
 * or one that is gone, srvscope's own vdso stands in, which is the same image for every
 * 64-bit process of the running kernel; the map's size must agree. */
static void *vdso_copy(pid_t pid, const struct map_entry *m, size_t *size)
{
	size_t len = m->end - m->start;
	unsigned char *buf, *own;
	char path[64];
	int fd;

	if (!len || len > (64u << 20))
		return NULL;
	buf = xmalloc(len);
	if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = pread(fd, buf, len, m->start);

			close(fd);
			if (n == (ssize_t)len) {
				*size = len;
				return buf;
			}
		}
	}
	own = (unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (own) {
		size_t ext = image_extent(own);
		size_t ps = page_size();

		/* Our own mapping is as long (whole pages): copy all of it, as from a
		 * process; the section headers (and so the symbols) lie past the loaded
		 * extent. */
		if (ext && ((ext + ps - 1) & ~(ps - 1)) == len) {
			memcpy(buf, own, len);
			*size = len;
			return buf;
		}
	}
	free(buf);
	return NULL;
}

static struct dso *vdso_get(pid_t pid, const struct map_entry *m)
{
	size_t size, i;
	void *buf = vdso_copy(pid, m, &size);
	struct dso *d;
	int err;

	if (!buf) {
		errno = ENOENT;
		return NULL;
	}
	/* Every process shares the kernel's image: reuse an identical one. */
	for (i = 0; i < cache.nr_buckets; i++)
		for (d = cache.buckets[i]; d; d = d->hnext)
			if (d->is_vdso && d->img.size == size && !memcmp(d->img.data, buf, size)) {
				free(buf);
				return take_ref(d);
			}
	d = dso_new(m, 0);
	d->is_vdso = true;
	err = elf_image__from_memory(&d->img, buf, size);
	if (err) {
		dso_free(d);
		errno = -err;
		return NULL;
	}
	return dso_setup(d);
}

struct dso *dso__get(pid_t pid, const struct map_entry *m)
{
	if (!m || !m->path || !m->path[0]) {
		errno = ENOENT;
		return NULL;
	}
	if (!strcmp(m->path, "[vdso]"))
		return vdso_get(pid, m);
	if (m->path[0] != '/') {
		errno = ENOENT; /* [stack], [heap], [anon:...] */
		return NULL;
	}
	return file_get(pid, m);
}

const char *dso__path(const struct dso *dso)
{
	return dso->path;
}

const char *dso__build_id(struct dso *dso)
{
	return dso->has_build_id ? dso->build_id : NULL;
}

/*
 * The segment whose file pages the map shows, then bias = where the kernel put that page
 * minus the page's ELF address. Several segments can share a file page (binaries linked
 * without -z separate-code), so an exact page match and matching permissions win.
 */
int64_t dso__load_bias(struct dso *dso, const struct map_entry *m)
{
	uint64_t mask = ~(uint64_t)(page_size() - 1);
	const struct dso_seg *best = NULL;
	int best_score = -1;
	size_t i;

	for (i = 0; i < dso->nr_segs; i++) {
		const struct dso_seg *s = &dso->segs[i];
		uint64_t off = s->offset & mask;
		int score = 0;

		if (m->pgoff < off || m->pgoff >= s->offset + (s->filesz ? s->filesz : 1))
			continue;
		if (m->pgoff == off)
			score += 4;
		if (!!(s->flags & PF_X) == !!(m->prot & PROT_EXEC))
			score += 2;
		if (!!(s->flags & PF_W) == !!(m->prot & PROT_WRITE))
			score += 1;
		if (score > best_score) {
			best = s;
			best_score = score;
		}
	}
	if (!best) /* a map of no loadable part: assume the first segment's layout */
		best = &dso->segs[0];
	return (int64_t)(m->start - ((best->vaddr & mask) + (m->pgoff - (best->offset & mask))));
}

/* Hot: the unwinder calls this for every word it reads from read-only memory. Writable
 * segments are refused because relocations and stores make memory differ from the file. */
int dso__read(struct dso *dso, uint64_t vaddr, void *buf, size_t len)
{
	const struct dso_seg *s;
	size_t i;

	if (!dso || !dso->nr_segs)
		return -EFAULT;
	s = &dso->segs[dso->last_seg];
	if (vaddr - s->vaddr >= s->filesz) {
		for (i = 0; i < dso->nr_segs; i++) {
			s = &dso->segs[i];
			if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
				break;
		}
		if (i == dso->nr_segs)
			return -EFAULT;
		dso->last_seg = i;
	}
	if (vaddr < s->vaddr || (s->flags & PF_W) || len > s->filesz - (vaddr - s->vaddr))
		return -EFAULT;
	memcpy(buf, (const char *)dso->img.data + s->offset + (vaddr - s->vaddr), len);
	return 0;
}

int dso__eh_frame_hdr(struct dso *dso, uint64_t *vaddr, uint64_t *size)
{
	if (!dso || !dso->has_eh_frame_hdr)
		return -ENOENT;
	*vaddr = dso->eh_vaddr;
	*size = dso->eh_size;
	return 0;
}

/* The best table available, in the order the header promises: debug file's .symtab,
 * the object's .symtab, then .dynsym (all stripped objects keep that one). */
static void dso_load_symbols(struct dso *d)
{
	d->syms_loaded = true;
	if (debuginfo__open(&d->img, d->is_vdso ? NULL : d->path,
			    d->has_build_id ? d->build_id : NULL, d->root_pid, &d->debug,
			    &d->debug_path) == 0) {
		d->syms = symtab__load(d->debug.elf, SHT_SYMTAB);
		if (!d->syms) {
			elf_image__close(&d->debug);
			free(d->debug_path);
			d->debug_path = NULL;
		}
	}
	if (!d->syms)
		d->syms = symtab__load(d->img.elf, SHT_SYMTAB);
	if (!d->syms)
		d->syms = symtab__load(d->img.elf, SHT_DYNSYM);
}

int dso__symbolize(struct dso *dso, uint64_t vaddr, const char **name, uint64_t *offset)
{
	if (!dso)
		return -ENOENT;
	if (!dso->syms_loaded)
		dso_load_symbols(dso);
	return symtab__find(dso->syms, vaddr, name, offset);
}

const char *dso__debug_path(struct dso *dso)
{
	if (!dso->syms_loaded)
		dso_load_symbols(dso);
	return dso->debug_path;
}
