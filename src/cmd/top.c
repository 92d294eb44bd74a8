/* Placeholder for 'srvscope top' until it lands. */
#include "cmd/cmd.h"
#include "util/util.h"

int cmd_top(int argc, char **argv)
{
	return error("'top' is not built yet") ? 1 : 0;
}
