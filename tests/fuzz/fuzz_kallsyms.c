/* Fuzz target for the kallsyms parser: any text, as a trace file's kernel symbol
 * snapshot could hold, must parse without crashing and answer lookups consistently. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbol/symbolizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *k = ksyms__parse((const char *)data, size);
	uint64_t probes[] = {0, 1, 0xffffffff81000000ull, 0xffffffffc0000000ull, UINT64_MAX};
	size_t i;

	/* Addresses taken from the input itself hit real entries and their edges. */
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a, off;
		const char *mod, *name;

		memcpy(&a, data + i, 8);
		name = ksyms__resolve(k, a, &off, &mod);
		if (name && (off > a || !mod))
			__builtin_trap();
	}
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t off;
		const char *mod;

		ksyms__resolve(k, probes[i], &off, &mod);
		ksyms__resolve(k, probes[i], NULL, NULL);
	}
	ksyms__delete(k);
	return 0;
}
