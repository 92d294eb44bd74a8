/* x86-64 system call names, and which calls take a file descriptor first. */
#ifndef SRVSCOPE_TRACE_SYSCALLS_H
#define SRVSCOPE_TRACE_SYSCALLS_H

#include <stddef.h>

/* The syscall's name, or "syscall_N" written into buf when unknown. */
const char *syscall__name(int nr, char *buf, size_t size);
/* 1 when the first argument of syscall nr is a file descriptor. */
int syscall__has_fd(int nr);
/* The syscall a restart_syscall carries on, from the kernel function that restarts it
 * (hrtimer_nanosleep_restart: clock_nanosleep); -1 when name is not one of those. */
int syscall__restarted_by(const char *name);

#endif
