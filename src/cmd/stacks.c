/* Placeholder for 'srvscope stacks' until it lands. */
#include "cmd/cmd.h"
#include "util/util.h"

int cmd_stacks(int argc, char **argv)
{
	return error("'stacks' is not built yet") ? 1 : 0;
}
