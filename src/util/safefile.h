/* Opening files safely as root beside other users' files: output files that never follow a
 * planted symlink nor replace an existing file unasked, and input paths that are refused at
 * once unless they are regular files (a FIFO or a device never hangs or wakes up). */
#ifndef SRVSCOPE_SAFEFILE_H
#define SRVSCOPE_SAFEFILE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The mode of every file srvscope writes: traces hold kernel addresses (kallsyms, which
 * root alone may read) and the memory maps of every recorded process. */
#define SAFEFILE_MODE 0600

/* Creates path for writing (O_WRONLY) and returns its fd, or -errno. Never follows a
 * symlink at path. Without force, anything already at path (file, symlink, directory) is
 * left alone: -EEXIST. With force, the new file is created beside it under a temporary
 * name and renamed over it, so a symlink at path is replaced, never followed, and the
 * file at path is the new one as soon as this returns (a trace written in place stays
 * readable while a long recording runs). force replaces only a regular file or a symlink
 * that does not name something else (a device, a FIFO, ...): -ENOTSUP otherwise. */
int safefile__create(const char *path, mode_t mode, bool force);

/* Opens path read-only (O_CLOEXEC) if it is a regular file, and returns the fd or -errno:
 * -EISDIR for a directory, -EINVAL for a FIFO, socket or device. Nothing but a regular
 * file is ever opened (the path is looked at through O_PATH first), so a FIFO cannot block
 * the open nor a device see an open. st, if not NULL, receives the file's status (also
 * when it is refused). */
int safefile__open_read(const char *path, struct stat *st);

/* An input the user names on the command line: standard input ("-" or /dev/stdin) or a
 * stream a shell hands over (/dev/fd/N, /proc/self/fd/N: its <(...)) is opened as it is,
 * since reading a pipe is then the point; any other path as safefile__open_read (a FIFO
 * planted where a file was expected is refused, never waited on). st as there (for a
 * stream: its status once open). */
int safefile__open_input(const char *path, struct stat *st);

/* What went wrong, for a message: like strerror, but says "not a regular file" for the
 * -EINVAL of safefile__open_read and the -ENOTSUP of safefile__create, and what to do for
 * the -EEXIST of safefile__create. err
 * is a positive or negative errno. */
const char *safefile__strerror(int err);

/* "a FIFO", "a directory", "a character device", ... for a message. */
const char *safefile__kind(mode_t mode);

#endif
