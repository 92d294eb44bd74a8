/* What a recording takes from /proc while the processes are alive, for reports made after
 * they are gone: file descriptor descriptions (socket addresses, pipes, paths), thread
 * names and states at the start, and build-ids of mapped objects. */
#ifndef SRVSCOPE_RECORD_PROCINFO_H
#define SRVSCOPE_RECORD_PROCINFO_H

#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>

struct proc_maps;

/* Describes fd of pid into buf: "tcp 10.0.0.1:41234 -> 10.0.0.2:80", "tcp 0.0.0.0:80
 * (listening)", "udp ...", "unix /run/x.sock", "pipe [1234]", "epoll", or the file's
 * path. Returns 0, or -errno when the fd cannot be read (gone, closed). */
int procinfo__describe_fd(pid_t pid, int fd, char *buf, size_t size);

/* The thread's current syscall number and first three arguments from
 * /proc/PID/task/TID/syscall. Returns 0 (nr -1 when running in user space) or -errno. */
int procinfo__syscall(pid_t pid, pid_t tid, long *nr, unsigned long args[3]);

/* For a thread blocked in poll, ppoll, select or pselect6 (nr, args as above): the first
 * fd it waits on, read from its pollfd array or fd sets; *more is set when it waits on
 * others too. -1 for other syscalls or when its memory cannot be read. */
int procinfo__polled_fd(pid_t pid, long nr, const unsigned long args[3], bool *more);

/* "<hex build-id> <path>\n" for each distinct file mapped executable in maps, malloc'ed
 * into *out; returns its length (0 when none has a build-id). */
size_t procinfo__build_ids(pid_t pid, const struct proc_maps *maps, char **out);

#endif
