/* Frame and thread-state naming shared by the output formats. */
#include <stdio.h>
#include <string.h>

#include "output/frame.h"
#include "trace/syscalls.h"

const char *frame__module_base(const struct frame *f)
{
	const char *slash;

	if (!f->module)
		return "[unknown]";
	slash = strrchr(f->module, '/');
	return slash ? slash + 1 : f->module;
}

const char *frame__name(const struct frame *f, char *buf, size_t len)
{
	if (f->symbol)
		snprintf(buf, len, "%s", f->symbol);
	else if (f->module && strcmp(f->module, "[unknown]"))
		snprintf(buf, len, "%s+0x%llx", frame__module_base(f),
			 (unsigned long long)f->offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)f->addr);
	return buf;
}

const char *frame__thread_state(char state, long syscall, char *buf, size_t len)
{
	char tmp[32];

	if (syscall >= 0)
		snprintf(buf, len, "%c %s", state ? state : '?',
			 syscall__name((int)syscall, tmp, sizeof(tmp)));
	else
		snprintf(buf, len, "%c", state ? state : '?');
	return buf;
}
