/* The filesystem root of a traced process: a prefix for the paths it names (maps, debug
 * files, JIT maps), empty when it shares srvscope's root. */
#include <stdio.h>
#include <sys/stat.h>

#include "symbol/proc_root.h"

void proc_root__prefix(pid_t pid, char *buf, size_t len)
{
	struct stat ours, theirs;

	buf[0] = '\0';
	if (pid <= 0)
		return;
	snprintf(buf, len, "/proc/%d/root", (int)pid);
	if (stat(buf, &theirs) < 0 ||
	    (stat("/", &ours) == 0 && ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino))
		buf[0] = '\0';
}
