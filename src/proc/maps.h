/* A process's memory map, from /proc/PID/maps or from text saved in a trace file. */
#ifndef SRVSCOPE_PROC_MAPS_H
#define SRVSCOPE_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dso;

struct map_entry {
	uint64_t start, end, pgoff;
	uint32_t prot; /* PROT_READ | PROT_WRITE | PROT_EXEC */
	bool shared;
	bool deleted; /* the path ended in " (deleted)"; path has that suffix removed */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char *path;	 /* NULL when anonymous; "[stack]", "[vdso]", "/usr/lib/..." otherwise */
	struct dso *dso; /* filled lazily by the symbol layer, reference owned by this entry */
};

struct proc_maps {
	pid_t pid;
	struct map_entry *maps; /* sorted by start */
	size_t nr;
	char *text; /* the text as read: compared to detect changes, saved into trace files */
	size_t text_len;
};

/* Reads /proc/PID/maps. Returns NULL and sets errno on failure. */
struct proc_maps *proc_maps__read(pid_t pid);
/* Parses maps text (as in /proc/PID/maps); text is copied. */
struct proc_maps *proc_maps__parse(pid_t pid, const char *text, size_t len);
/* Frees the maps and drops the dso references of its entries. Accepts NULL. */
void proc_maps__delete(struct proc_maps *maps);
/* The entry containing addr, or NULL. */
struct map_entry *proc_maps__find(const struct proc_maps *maps, uint64_t addr);
/* A copy of cur plus the entries of old that overlap none of cur's: what was mapped
 * while a sample was taken, when a library was unmapped between the sample and the
 * reading of the new maps. The text is cur's, so change detection follows cur. */
struct proc_maps *proc_maps__merge_stale(const struct proc_maps *cur, const struct proc_maps *old);
/* True when the process's current maps text differs from the one held (or cannot be read). */
bool proc_maps__changed(const struct proc_maps *maps);

#endif
