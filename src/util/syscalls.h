/* Names of x86-64 system calls. */
#ifndef SRVSCOPE_UTIL_SYSCALLS_H
#define SRVSCOPE_UTIL_SYSCALLS_H

/* The name of syscall nr ("read", "epoll_wait"), or NULL when unknown or nr < 0. */
const char *syscall__name(long nr);
/* The number of a syscall name, or -1. */
long syscall__number(const char *name);

#endif
