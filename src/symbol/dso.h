/* An ELF object mapped by a process (executable, shared library, vdso), opened once and
 * shared by reference count across samples and processes. It serves the unwinder (file
 * bytes for read-only memory, .eh_frame_hdr) and the symbolizer (symbols, found in the
 * object itself or its separate debug file). */
#ifndef SRVSCOPE_SYMBOL_DSO_H
#define SRVSCOPE_SYMBOL_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry;
struct dso;

/*
 * Returns a reference to the object mapped by m in process pid, opening and caching it on
 * first use (the cache is keyed by device+inode+path, or build-id, and outlives the
 * process, so repeated samples and later processes reuse it).
 * The file is looked up as "/proc/PID/root/<path>" (containers), falling back to
 * "/proc/PID/map_files/<start>-<end>" for deleted files, then to <path> itself. "[vdso]"
 * is copied from the process's memory. pid may be 0 (the file is opened by path only:
 * used when reading trace files of processes that are gone).
 * Returns NULL (errno set) for anonymous maps and objects that are not ELF.
 */
struct dso *dso__get(pid_t pid, const struct map_entry *m);
struct dso *dso__getref(struct dso *dso);
/* Drops a reference. Accepts NULL. */
void dso__put(struct dso *dso);

const char *dso__path(const struct dso *dso);
/* Lower-case hex build-id, or NULL when the object has none. */
const char *dso__build_id(struct dso *dso);

/* Runtime address = ELF virtual address + load bias, for the mapping m of this object. */
int64_t dso__load_bias(struct dso *dso, const struct map_entry *m);

/* Copies len bytes at ELF virtual address vaddr from the file's PT_LOAD contents.
 * Returns 0, or -EFAULT when the range is not backed by file bytes. Never blocks on the
 * target: this is how read-only memory is served to the unwinder. */
int dso__read(struct dso *dso, uint64_t vaddr, void *buf, size_t len);

/* The ELF virtual address and size of .eh_frame_hdr (PT_GNU_EH_FRAME); -ENOENT if none. */
int dso__eh_frame_hdr(struct dso *dso, uint64_t *vaddr, uint64_t *size);

/*
 * The symbol covering ELF virtual address vaddr: *name is the demangled name (owned by
 * the dso, valid until the last reference is dropped), *offset the distance from the
 * symbol's start. Symbols come from the best table available: the separate debug file
 * (found by build-id under /usr/lib/debug/.build-id/, or by .gnu_debuglink next to the
 * object, in its .debug/ folder, or under /usr/lib/debug/<dir>), then .symtab, then
 * .dynsym. An address outside every sized symbol returns -ENOENT.
 */
int dso__symbolize(struct dso *dso, uint64_t vaddr, const char **name, uint64_t *offset);

/* The separate debug file symbols come from, or NULL when there is none (loads the
 * symbols if that has not happened yet). */
const char *dso__debug_path(struct dso *dso);

/* Frees every cached object that nobody references any more (they are otherwise kept for
 * reuse, up to a bound): for leak checkers at exit, or after many processes have gone. */
void dso__cache_flush(void);

#endif
