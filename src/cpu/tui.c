/* The live view of 'srvscope cpu'. */
#include "cpu/cpu.h"
#include "util/util.h"

int cpu_tui__run(struct cpu_session *s, const struct comp_table *t, long interval_ms,
		 long iterations, bool inclusive, volatile sig_atomic_t *stop)
{
	error("cpu: the live view is not built yet; use -d or pipe the output");
	return 1;
}
