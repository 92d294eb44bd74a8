/* Fuzz target for the JIT perf map parser: /tmp/perf-PID.map is written by the profiled
 * program, so any bytes must parse without crashing. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbol/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap__parse((const char *)data, size);
	size_t i;

	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a, off;
		const char *name;

		memcpy(&a, data + i, 8);
		name = perfmap__find(pm, a, &off);
		if (name && off > a)
			__builtin_trap();
		/* Twice: the second answer comes from the demangled-name cache. */
		perfmap__find(pm, a, &off);
	}
	perfmap__find(pm, 0, &(uint64_t){0});
	perfmap__find(pm, UINT64_MAX, &(uint64_t){0});
	perfmap__delete(pm);
	return 0;
}
