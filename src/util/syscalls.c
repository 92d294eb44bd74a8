/* Syscall number <-> name, the table generated from the kernel's unistd_64.h. */
#include <string.h>

#include "util/syscalls.h"
#include "util/util.h"

static const char *const names[] = {
#include "syscall_names.h"
};

const char *syscall__name(long nr)
{
	if (nr < 0 || (unsigned long)nr >= ARRAY_SIZE(names))
		return NULL;
	return names[nr];
}

long syscall__number(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return -1;
}
