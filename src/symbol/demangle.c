/* C++ demangling: libiberty's cplus_demangle with the flags c++filt uses by default, plus
 * c++filt's handling of ELF symbol versions, so names match what users see elsewhere. */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* Not util.h: libiberty defines its own ARRAY_SIZE. */
#include "symbol/demangle.h"

char *symbol__demangle(const char *name)
{
	const char *at;
	char *base, *dm, *out;
	size_t blen, dlen, vlen;

	/* Cheap filter: Itanium C++ and Rust symbols start with _Z or _R; C symbols then
	 * never pay for the demangler's allocation. */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	at = strchr(name, '@');
	if (!at)
		return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);

	/* "name@@VERSION": the demangler rejects the suffix, c++filt demangles the part
	 * before it and keeps the version. */
	blen = at - name;
	base = strndup(name, blen);
	if (!base)
		return NULL;
	dm = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
	free(base);
	if (!dm)
		return NULL;
	dlen = strlen(dm);
	vlen = strlen(at);
	out = realloc(dm, dlen + vlen + 1);
	if (!out) {
		free(dm);
		return NULL;
	}
	memcpy(out + dlen, at, vlen + 1);
	return out;
}
