/* srvscope clone --check (stub until the load clients are merged). */
#include <errno.h>

#include "clone/clone.h"
#include "util/util.h"

int clone__check(const char *path, const struct clone_model *m, const struct clone_opts *o,
		 const struct clone_check_opts *co)
{
	return error("clone: --check needs the built-in load clients"), -ENOSYS;
}
