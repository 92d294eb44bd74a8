/* Placeholder for 'srvscope sched' until it lands. */
#include "cmd/cmd.h"
#include "util/util.h"

int cmd_sched(int argc, char **argv)
{
	return error("'sched' is not built yet") ? 1 : 0;
}
