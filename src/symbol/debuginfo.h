/* Finding an object's separate debug file (by build-id, then by .gnu_debuglink with its
 * CRC checked), under the process's root first. Internal to src/symbol. */
#ifndef SRVSCOPE_SYMBOL_DEBUGINFO_H
#define SRVSCOPE_SYMBOL_DEBUGINFO_H

#include <sys/types.h>

#include "symbol/elf_image.h"

/*
 * Opens the debug file of obj (whose path as the process sees it is obj_path and whose
 * build-id is build_id, either may be NULL). Looks, under "/proc/PID/root" for pid and
 * then under srvscope's own root, at:
 *   /usr/lib/debug/.build-id/xx/rest.debug             (build-id must match if present)
 *   <dir>/<debuglink>, <dir>/.debug/<debuglink>, /usr/lib/debug/<dir>/<debuglink>
 *                                                      (CRC32 must match)
 * Returns 0 with *out open and *path_out a malloc'd path, or -ENOENT.
 */
int debuginfo__open(const struct elf_image *obj, const char *obj_path, const char *build_id,
		    pid_t pid, struct elf_image *out, char **path_out);

/* The CRC32 used by .gnu_debuglink (zlib's) over len bytes. */
uint32_t debuginfo__crc32(const void *data, size_t len);

#endif
