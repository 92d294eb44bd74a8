/* Placeholder for 'srvscope blocking' until it lands. */
#include "cmd/cmd.h"
#include "util/util.h"

int cmd_blocking(int argc, char **argv)
{
	return error("'blocking' is not built yet") ? 1 : 0;
}
