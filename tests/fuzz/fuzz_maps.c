/* Fuzz target: the /proc/PID/maps parser and address lookup. */
#include <stddef.h>
#include <stdint.h>

#include "proc/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps *pm = proc_maps__parse(1, (const char *)data, size);
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		proc_maps__find(pm, pm->maps[i].start);
		proc_maps__find(pm, pm->maps[i].end - 1);
	}
	proc_maps__find(pm, 0x7fff0000ull);
	proc_maps__delete(pm);
	return 0;
}
