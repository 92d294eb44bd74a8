/* Safe creation of output files and safe opening of input paths (see safefile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safefile.h"
#include "util/util.h"

/* A temporary file beside path (same directory, so rename() is atomic), created with
 * O_EXCL by mkostemp. Returns the fd and fills tmp, or -errno. */
static int create_beside(const char *path, char *tmp, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	int fd;

	if (snprintf(tmp, len, "%.*s.%s.XXXXXX", dlen, path, slash ? slash + 1 : path) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Whether path's directory is in /proc, or path is a symlink into it: /dev/stdout,
 * /dev/stderr and /dev/fd/N name a process's open files, whatever those are. */
static bool in_proc(const char *path, const struct stat *st)
{
	char dir[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
	const char *slash = strrchr(path, '/');
	ssize_t n;

	if (S_ISLNK(st->st_mode) && (n = readlink(path, link, sizeof(link) - 1)) > 0) {
		link[n] = '\0';
		if (!strncmp(link, "/proc/", 6))
			return true;
	}
	if (!slash)
		return false;
	if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return false;
	return realpath(slash == path ? "/" : dir, real) &&
	       (!strcmp(real, "/proc") || !strncmp(real, "/proc/", 6));
}

/* What --force may replace (0), or why not (-errno): nothing there, a regular file, or a
 * symbolic link (planted or not: it is replaced, never written through) that names a
 * regular file or nothing. Not a directory (-EISDIR), nor a device, a FIFO, a socket, a
 * link to one or into /proc (-ENOTSUP): 'record -o /dev/null --force' replaced the
 * machine's /dev/null with a trace, and /dev/stdout (a link to the process's standard
 * output) went the same way. */
static int replaceable(const char *path)
{
	struct stat st, target;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (in_proc(path, &st))
		return -ENOTSUP;
	if (S_ISREG(st.st_mode))
		return 0;
	if (!S_ISLNK(st.st_mode))
		return -ENOTSUP;
	if (stat(path, &target) < 0 || S_ISREG(target.st_mode))
		return 0;
	return S_ISDIR(target.st_mode) ? -EISDIR : -ENOTSUP;
}

int safefile__create(const char *path, mode_t mode, bool force)
{
	char tmp[PATH_MAX];
	int fd, err;

	if (!force) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		return fd < 0 ? -errno : fd;
	}
	if ((err = replaceable(path)) < 0)
		return err;
	fd = create_beside(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	if (fchmod(fd, mode) < 0 || rename(tmp, path) < 0) {
		err = -errno;
		unlink(tmp);
		close(fd);
		return err;
	}
	return fd;
}

int safefile__open_read(const char *path, struct stat *st)
{
	struct stat sb, *s = st ? st : &sb;
	char self[64];
	int pfd, fd;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, s) < 0) {
		fd = -errno;
		goto out;
	}
	if (!S_ISREG(s->st_mode)) {
		fd = S_ISDIR(s->st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	/* Reopening the O_PATH descriptor opens the very inode checked above, whatever
	 * happened to the path since. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		/* No /proc mounted: open the path again, without blocking, and check it is
		 * still the same file. */
		struct stat again;

		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && (fstat(fd, &again) < 0 || again.st_dev != s->st_dev ||
				again.st_ino != s->st_ino)) {
			close(fd);
			fd = -1;
			errno = EAGAIN;
		}
	}
	if (fd < 0)
		fd = -errno;
out:
	close(pfd);
	return fd;
}

int safefile__open_input(const char *path, struct stat *st)
{
	struct stat own;
	int fd;

	if (strcmp(path, "-") && strcmp(path, "/dev/stdin") && strncmp(path, "/dev/fd/", 8) &&
	    strncmp(path, "/proc/self/fd/", 14))
		return safefile__open_read(path, st);
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st ? st : &own)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

const char *safefile__strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == EINVAL)
		return "not a regular file";
	if (err == EISDIR)
		return "not a regular file (a directory)";
	if (err == EEXIST)
		return "it already exists (not replaced: add --force to replace it)";
	if (err == ENOTSUP)
		return "not a regular file (--force replaces only a regular file, or a symbolic "
		       "link to one)";
	return strerror(err);
}

const char *safefile__kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFLNK:
		return "a symbolic link";
	}
	return "not a regular file";
}
