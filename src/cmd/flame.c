/* Placeholder for 'srvscope flame' until it lands. */
#include "cmd/cmd.h"
#include "util/util.h"

int cmd_flame(int argc, char **argv)
{
	return error("'flame' is not built yet") ? 1 : 0;
}
