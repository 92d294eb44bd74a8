/* Placeholder until the stack-tree clustering lands: threads grouped by name and by how
 * they mostly wait. */
#include <string.h>

#include "model/group.h"
#include "model/model.h"
#include "trace/u64map.h"
#include "util/util.h"

int model__group(const struct model *m, const struct model_item *items, size_t n, int *assign,
		 double *threshold, size_t *distinct)
{
	struct u64map idx = {0};
	size_t i;
	int nc = 0;

	for (i = 0; i < n; i++) {
		const struct model_thread *th = &m->runs[items[i].run].thr[items[i].thr];
		uint64_t h = fnv1a(th->comm, strlen(th->comm), FNV1A_INIT), *slot, best = 0;
		bool created;
		int w, wk = WK_KINDS;

		for (w = 0; w < WK_KINDS; w++)
			if (th->wait_ns[w] > best) {
				best = th->wait_ns[w];
				wk = w;
			}
		h = fnv1a(&wk, sizeof(wk), h);

		slot = u64map__slot(&idx, h, &created);
		if (created)
			*slot = nc++;
		assign[i] = (int)*slot;
	}
	*threshold = 0;
	*distinct = (size_t)nc;
	u64map__free(&idx);
	return nc;
}
