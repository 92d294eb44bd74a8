/* Placeholder for 'srvscope record' until it lands. */
#include "cmd/cmd.h"
#include "util/util.h"

int cmd_record(int argc, char **argv)
{
	return error("'record' is not built yet") ? 1 : 0;
}
