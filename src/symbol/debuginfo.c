/* Locating separate debug files the way gdb and Debian's -dbg packages lay them out:
 * by build-id under /usr/lib/debug/.build-id, or by the .gnu_debuglink name next to the
 * object, in .debug/ beside it, or mirrored under /usr/lib/debug. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "symbol/debuginfo.h"
#include "symbol/proc_root.h"
#include "util/util.h"

#define DEBUG_DIR "/usr/lib/debug"

uint32_t debuginfo__crc32(const void *data, size_t len)
{
	/* libdeflate's CRC-32 is zlib's (the one .gnu_debuglink holds), with the carry-less
	 * multiply where the CPU has it: a debug file of hundreds of megabytes is checked
	 * in a fraction of the time. It takes size_t lengths. */
	return libdeflate_crc32(0, data, len);
}

static int try_build_id(const char *root, const char *build_id, struct elf_image *out,
			char **path_out)
{
	char path[PATH_MAX], id[256];

	if (strlen(build_id) < 3)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%s" DEBUG_DIR "/.build-id/%.2s/%s.debug", root, build_id,
		     build_id + 2) >= (int)sizeof(path))
		return -ENOENT;
	if (elf_image__open(out, path, NULL))
		return -ENOENT;
	/* A stale file left by an older package would name the wrong functions. */
	if (elf_image__build_id(out, id, sizeof(id)) == 0 && strcmp(id, build_id)) {
		elf_image__close(out);
		return -ENOENT;
	}
	*path_out = xstrdup(path);
	return 0;
}

static int try_debuglink(const char *path, uint32_t crc, struct elf_image *out, char **path_out)
{
	if (elf_image__open(out, path, NULL))
		return -ENOENT;
	if (debuginfo__crc32(out->data, out->size) != crc) {
		elf_image__close(out);
		return -ENOENT;
	}
	*path_out = xstrdup(path);
	return 0;
}

static int try_root(const char *root, const struct elf_image *obj, const char *obj_path,
		    const char *build_id, struct elf_image *out, char **path_out)
{
	const char *link, *slash;
	char path[PATH_MAX], dir[PATH_MAX];
	uint32_t crc;
	size_t dlen;

	if (build_id && try_build_id(root, build_id, out, path_out) == 0)
		return 0;
	if (!obj_path || obj_path[0] != '/' || elf_image__debuglink(obj, &link, &crc))
		return -ENOENT;
	/* A link is a bare file name; anything else could point outside the debug dirs. */
	if (strchr(link, '/'))
		return -ENOENT;
	slash = strrchr(obj_path, '/');
	dlen = slash - obj_path;
	if (dlen >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, obj_path, dlen);
	dir[dlen] = '\0';

	/* Skipped when the link names the object itself: its CRC can never match and
	 * checksumming a large binary for nothing is slow. */
	if (strcmp(slash + 1, link) &&
	    snprintf(path, sizeof(path), "%s%s/%s", root, dir, link) < (int)sizeof(path) &&
	    try_debuglink(path, crc, out, path_out) == 0)
		return 0;
	if (snprintf(path, sizeof(path), "%s%s/.debug/%s", root, dir, link) < (int)sizeof(path) &&
	    try_debuglink(path, crc, out, path_out) == 0)
		return 0;
	if (snprintf(path, sizeof(path), "%s" DEBUG_DIR "%s/%s", root, dir, link) <
		    (int)sizeof(path) &&
	    try_debuglink(path, crc, out, path_out) == 0)
		return 0;
	return -ENOENT;
}

int debuginfo__open(const struct elf_image *obj, const char *obj_path, const char *build_id,
		    pid_t pid, struct elf_image *out, char **path_out)
{
	char root[64];

	memset(out, 0, sizeof(*out));
	*path_out = NULL;
	/* The container's own debug files first: they match its binaries. The host's are
	 * still worth a look because build-ids and CRCs guard against mismatches. */
	proc_root__prefix(pid, root, sizeof(root));
	if (root[0] && try_root(root, obj, obj_path, build_id, out, path_out) == 0)
		return 0;
	return try_root("", obj, obj_path, build_id, out, path_out);
}
