/* 'srvscope cpu TRACE': the on-CPU samples of a trace made by 'record --on-cpu'. */
#include "cpu/cpu.h"
#include "util/util.h"

int cpu_trace__report(const char *path, const struct comp_table *t, const struct cpu_report_opts *o)
{
	error("cpu: reading '%s' is not supported yet", path);
	return 1;
}
