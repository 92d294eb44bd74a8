/* A user's JSON document from a regular file (jsonfile.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/jsonfile.h"
#include "util/safefile.h"

static json_t *refuse(json_error_t *err, const char *what)
{
	memset(err, 0, sizeof(*err));
	err->line = -1;
	snprintf(err->text, sizeof(err->text), "%s", what);
	return NULL;
}

json_t *jsonfile__load(const char *path, size_t max_bytes, size_t flags, json_error_t *err)
{
	char what[64];
	struct stat st;
	json_t *doc;
	int fd = safefile__open_input(path, &st);

	if (fd < 0)
		return refuse(err, safefile__strerror(fd));
	if ((size_t)st.st_size > max_bytes) {
		close(fd);
		snprintf(what, sizeof(what), "bigger than %zu bytes", max_bytes);
		return refuse(err, what);
	}
	doc = json_loadfd(fd, flags, err);
	close(fd);
	return doc;
}
