/* One ELF symbol table (.symtab or .dynsym) reduced to code symbols, sorted by address for
 * lookups. Internal to src/symbol. */
#ifndef SRVSCOPE_SYMBOL_SYMTAB_H
#define SRVSCOPE_SYMBOL_SYMTAB_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct symtab;

/* Loads the first section of type sh_type (SHT_SYMTAB or SHT_DYNSYM). Names point into
 * the ELF's string table: elf and its memory must outlive the table. Returns NULL (errno
 * ENOENT) when there is no such section or it holds no code symbol. */
struct symtab *symtab__load(Elf *elf, uint32_t sh_type);
/* Accepts NULL. */
void symtab__delete(struct symtab *t);
size_t symtab__nr(const struct symtab *t);

/* The symbol covering addr (demangled on first use; the name lives as long as the table)
 * and the offset into it. 0 or -ENOENT. */
int symtab__find(struct symtab *t, uint64_t addr, const char **name, uint64_t *offset);

#endif
