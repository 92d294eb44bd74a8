/* ELF symbol tables for address lookup: code symbols only, one symbol per address (the
 * most telling of its aliases), each with an end so gaps between functions stay unnamed. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/demangle.h"
#include "symbol/symtab.h"
#include "util/util.h"

struct sym {
	uint64_t start, end;
	const char *name; /* in the ELF string table */
	char *display;	  /* demangled / version-stripped copy, or NULL to show name */
	uint32_t rank;	  /* higher wins among aliases; see sym_rank() */
	bool sized;
	bool display_done;
};

struct symtab {
	struct sym *syms;
	size_t nr;
};

/* Among symbols at one address: a function over a bare label, a global over a weak over a
 * local alias, a sized symbol over an unsized one, then the name with fewer leading
 * underscores ("malloc" over "__libc_malloc"), and never glibc's internal "__GI_" alias
 * when the public name is there too (what gdb shows). Names break the remaining ties, so
 * the choice does not depend on table order. */
static uint32_t sym_rank(const GElf_Sym *s, const char *name)
{
	int type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
	uint32_t r = 0, us = 0;

	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		r |= 1u << 12;
	if (bind == STB_GLOBAL)
		r |= 2u << 10;
	else if (bind == STB_WEAK)
		r |= 1u << 10;
	if (s->st_size)
		r |= 1u << 9;
	if (strncmp(name, "__GI_", 5))
		r |= 1u << 8;
	while (us < 255 && name[us] == '_')
		us++;
	return r | (255 - us);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Section headers indexed by section number, to check where each symbol lives. */
static GElf_Shdr *read_shdrs(Elf *elf, size_t *nr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr *sh;

	if (elf_getshdrnum(elf, nr) < 0 || *nr == 0)
		return NULL;
	sh = xcalloc(*nr, sizeof(*sh));
	while ((scn = elf_nextscn(elf, scn))) {
		size_t i = elf_ndxscn(scn);

		if (i < *nr && !gelf_getshdr(scn, &sh[i]))
			memset(&sh[i], 0, sizeof(sh[i]));
	}
	return sh;
}

struct symtab *symtab__load(Elf *elf, uint32_t sh_type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, *shdrs;
	Elf_Data *data;
	struct symtab *t;
	size_t nshdrs, n, i, out, cap = 0;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sh_type)
			break;
	if (!scn || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)) || !data->d_buf) {
		errno = ENOENT;
		return NULL;
	}
	shdrs = read_shdrs(elf, &nshdrs);
	if (!shdrs) {
		errno = ENOENT;
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const GElf_Shdr *sec;
		const char *name;
		int type;
		struct sym *e;

		if (!gelf_getsym(data, i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= nshdrs || s.st_shndx >= SHN_LORESERVE)
			continue;
		/* Only code: data objects and labels in data sections never name a frame. A
		 * debug file's sections are NOBITS but keep their flags and addresses. */
		sec = &shdrs[s.st_shndx];
		if (!(sec->sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		xgrow((void **)&t->syms, &cap, t->nr + 1, sizeof(*t->syms));
		e = &t->syms[t->nr++];
		memset(e, 0, sizeof(*e));
		e->start = s.st_value;
		e->rank = sym_rank(&s, name);
		/* An unsized symbol (hand-written assembly) runs to the next symbol, but never
		 * past its section; the end is fixed below once the neighbours are known. */
		e->end = s.st_size ? s.st_value + s.st_size : sec->sh_addr + sec->sh_size;
		if (e->end < e->start)
			e->end = e->start;
		e->name = name;
		e->sized = s.st_size != 0;
	}
	free(shdrs);
	if (!t->nr) {
		symtab__delete(t);
		errno = ENOENT;
		return NULL;
	}

	qsort(t->syms, t->nr, sizeof(*t->syms), cmp_sym);

	/* Keep the best alias of each address. */
	for (i = 0, out = 0; i < t->nr; i++) {
		struct sym *kept = out ? &t->syms[out - 1] : NULL;

		if (kept && kept->start == t->syms[i].start) {
			/* A sized alias tells where an unsized winner really ends. */
			if (!kept->sized && t->syms[i].sized) {
				kept->end = t->syms[i].end;
				kept->sized = true;
			}
			continue;
		}
		t->syms[out++] = t->syms[i];
	}
	t->nr = out;
	for (i = 0; i < t->nr; i++) {
		struct sym *e = &t->syms[i];

		if (!e->sized && i + 1 < t->nr && t->syms[i + 1].start < e->end)
			e->end = t->syms[i + 1].start;
	}
	return t;
}

void symtab__delete(struct symtab *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr; i++)
		free(t->syms[i].display);
	free(t->syms);
	free(t);
}

size_t symtab__nr(const struct symtab *t)
{
	return t ? t->nr : 0;
}

/* What the user sees: versions dropped ("pthread_cond_wait@@GLIBC_2.3.2" is the same
 * function .dynsym calls "pthread_cond_wait"), then demangled. */
static const char *sym_display(struct sym *e)
{
	const char *at;

	if (e->display_done)
		return e->display ? e->display : e->name;
	e->display_done = true;
	at = strchr(e->name, '@');
	if (at && at != e->name) {
		char *base = strndup(e->name, at - e->name);

		if (!base)
			return e->name;
		e->display = symbol__demangle(base);
		if (e->display)
			free(base);
		else
			e->display = base;
	} else {
		e->display = symbol__demangle(e->name);
	}
	return e->display ? e->display : e->name;
}

/* How far back to look for an enclosing symbol when the nearest one below addr ends
 * before it (a small local label inside a large function). */
#define SYMTAB_ENCLOSING_SCAN 8

int symtab__find(struct symtab *t, uint64_t addr, const char **name, uint64_t *offset)
{
	size_t lo = 0, hi, k;

	if (!t || !t->nr)
		return -ENOENT;
	hi = t->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo is the first symbol above addr; walk down from the one before it. */
	for (k = 0; k < SYMTAB_ENCLOSING_SCAN && lo > 0; k++, lo--) {
		struct sym *e = &t->syms[lo - 1];

		if (addr < e->end) {
			*name = sym_display(e);
			*offset = addr - e->start;
			return 0;
		}
	}
	return -ENOENT;
}
