/* SPDX-License-Identifier: GPL-2.0 */
/* A process's open fds as /proc/PID/fd shows them. */
#ifndef SRVSCOPE_PROC_FDS_H
#define SRVSCOPE_PROC_FDS_H

#include <sys/types.h>

/* Calls fn for each fd of pid with what its /proc link reads ("socket:[123]", a path...),
 * never opening the file behind it. A process that is gone or hidden gives no call. */
void proc__for_each_fd(pid_t pid, void (*fn)(int fd, const char *link, void *arg), void *arg);

#endif
