/* safefile: creation never follows a symlink nor replaces a file unless forced; reading
 * refuses FIFOs, devices and directories without blocking or opening them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safefile.h"
#include "unit.h"

static char dir[64];

static const char *at(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static int entries(void)
{
	char cmd[128];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

int main(void)
{
	struct stat st;
	int fd;

	strcpy(dir, "/tmp/srvscope-safefile.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	umask(022);

	fd = safefile__create(at("new"), SAFEFILE_MODE, false);
	ok(fd >= 0, "a new file is created");
	ok(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600, "with mode 0600");
	close(fd);

	put(at("target"), "keep");
	symlink(at("target"), at("link"));
	put(at("existing"), "mine");
	is_int(safefile__create(at("link"), SAFEFILE_MODE, false), -EEXIST,
	       "a symlink at the path: EEXIST");
	is_str(get(at("target")), "keep", "its target is untouched");
	symlink(at("nowhere"), at("dangling"));
	is_int(safefile__create(at("dangling"), SAFEFILE_MODE, false), -EEXIST,
	       "a dangling symlink: EEXIST, nothing created where it points");
	ok(access(at("nowhere"), F_OK) < 0, "no file where the dangling link points");
	is_int(safefile__create(at("existing"), SAFEFILE_MODE, false), -EEXIST,
	       "an existing file: EEXIST");
	is_str(get(at("existing")), "mine", "it is untouched");

	fd = safefile__create(at("link"), SAFEFILE_MODE, true);
	ok(fd >= 0 && write(fd, "new", 3) == 3, "forced over a symlink");
	close(fd);
	is_str(get(at("target")), "keep", "the symlink's target is still untouched");
	ok(lstat(at("link"), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
	   "the symlink was replaced by a 0600 file");
	is_str(get(at("link")), "new", "which holds what was written");
	fd = safefile__create(at("existing"), SAFEFILE_MODE, true);
	ok(fd >= 0, "forced over an existing file");
	close(fd);
	is_str(get(at("existing")), "", "which is replaced");
	mkdir(at("dir"), 0755);
	is_int(safefile__create(at("dir"), SAFEFILE_MODE, true), -EISDIR,
	       "never over a directory, even forced");
	is_int(entries(), 6, "no temporary file left behind");

	mkfifo(at("fifo"), 0600);
	is_int(safefile__create(at("fifo"), SAFEFILE_MODE, true), -ENOTSUP,
	       "never over a FIFO, even forced");
	ok(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "which is left as it was");
	symlink("/proc/self/fd/1", at("stdout"));
	is_int(safefile__create(at("stdout"), SAFEFILE_MODE, true), -ENOTSUP,
	       "never over a link into /proc (/dev/stdout's kind), even forced");
	ok(lstat(at("stdout"), &st) == 0 && S_ISLNK(st.st_mode), "which is left as it was");
	is_str(safefile__strerror(-ENOTSUP),
	       "not a regular file (--force replaces only a regular file, or a symbolic link to "
	       "one)",
	       "and why, in words");
	is_int(safefile__open_read(at("fifo"), &st), -EINVAL, "a FIFO is refused, at once");
	ok(S_ISFIFO(st.st_mode), "and its kind is told");
	is_str(safefile__strerror(-EINVAL), "not a regular file", "in words");
	is_int(safefile__open_read(at("dir"), NULL), -EISDIR, "a directory is refused");
	is_int(safefile__open_read("/dev/null", &st), -EINVAL, "a device is refused");
	is_str(safefile__kind(st.st_mode), "a character device", "named");
	is_int(safefile__open_read(at("absent"), NULL), -ENOENT, "a missing file: ENOENT");
	fd = safefile__open_read(at("link"), &st);
	ok(fd >= 0 && read(fd, (char[4]){0}, 4) == 3, "a regular file is read");
	ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK), "in blocking mode");
	close(fd);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			return 1;
	}
	return done_testing();
}
