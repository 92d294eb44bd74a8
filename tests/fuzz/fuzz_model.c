/* Fuzz target: the model's analysis (connections, roles, network model, profile, cycle)
 * and its JSON over whatever the trace reader accepts. Frames are not named (that would
 * open the files a fuzzed trace names). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct trace *t = trace__open_mem(data, size, err, sizeof(err));
	struct model m;
	FILE *f;

	if (!t)
		return 0;
	memset(&m, 0, sizeof(m));
	m.runs = calloc(1, sizeof(*m.runs));
	m.nr_runs = 1;
	if (!model__analyze(t, 0, &m.runs[0]) && !model__build(&m)) {
		f = fopen("/dev/null", "w");
		if (f) {
			model__write_json(&m, f);
			model__print_summary(&m, f);
			fclose(f);
		}
	}
	model__free(&m);
	trace__close(t);
	return 0;
}
