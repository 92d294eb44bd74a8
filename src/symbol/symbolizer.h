/* Turns addresses of one process into names: user addresses through its maps and ELF
 * objects (and JIT maps in /tmp/perf-PID.map), kernel addresses through kallsyms. */
#ifndef SRVSCOPE_SYMBOL_SYMBOLIZER_H
#define SRVSCOPE_SYMBOL_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_maps;

struct sym_result {
	const char *symbol; /* demangled name, NULL when unknown; owned by the symbolizer */
	const char *module; /* path of the object as the process sees it, "[vdso]", "[kernel]",
			     * a module name like "[xfs]", "[jit]", or "[unknown]" */
	uint64_t offset;    /* from the symbol's start, or from the module's load address
			     * (ELF vaddr) when symbol is NULL */
	bool kernel;
};

struct symbolizer;

/* A symbolizer over the given maps, which it borrows (they must outlive it; the caller
 * may swap them with symbolizer__set_maps after a map change). pid may be 0 for a
 * process that is gone (trace files). */
struct symbolizer *symbolizer__new(pid_t pid, struct proc_maps *maps);
void symbolizer__set_maps(struct symbolizer *s, struct proc_maps *maps);
/* Accepts NULL. */
void symbolizer__delete(struct symbolizer *s);

/* Resolves a user-space address. Always fills *out (unknown frames get module+offset,
 * or "[unknown]" + the absolute address). Results are cached per address. */
void symbolizer__resolve(struct symbolizer *s, uint64_t addr, struct sym_result *out);
/* Resolves a kernel address from /proc/kallsyms (loaded once per srvscope run). */
void symbolizer__resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out);

/* Kernel symbol table, shared by everything in the process: loads /proc/kallsyms once
 * (or, for trace files, the snapshot text given). */
struct ksyms;
struct ksyms *ksyms__load(void);
struct ksyms *ksyms__parse(const char *text, size_t len);
/* The same over text[0..len], NUL-terminated at len, which the table takes over (and
 * frees): no copy. */
struct ksyms *ksyms__parse_owned(char *text, size_t len);
void ksyms__delete(struct ksyms *k);
/* Name of the kernel symbol containing addr and the offset into it; NULL if none.
 * *module is "[kernel]" or the module in brackets, e.g. "[xfs]". offset and module may
 * be NULL. */
const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset,
			   const char **module);

/* Makes k (taken over) the table symbolizer__resolve_kernel uses, e.g. one parsed from a
 * trace file's snapshot instead of this machine's /proc/kallsyms. */
void symbolizer__set_ksyms(struct ksyms *k);
/* Frees the process-wide tables (kallsyms, unreferenced ELF objects); call after the last
 * symbolizer is deleted, so leak checkers see a clean exit. */
void symbolizer__exit(void);

#endif
