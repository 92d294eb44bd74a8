/* Where a process's files are: its root directory as seen from srvscope, so objects, debug
 * files and JIT maps of processes in containers are found. Internal to src/symbol. */
#ifndef SRVSCOPE_SYMBOL_PROC_ROOT_H
#define SRVSCOPE_SYMBOL_PROC_ROOT_H

#include <stddef.h>
#include <sys/types.h>

/* Writes "/proc/PID/root" to buf when the process sees a different root than srvscope,
 * else "" (pid 0, same root, or the process is gone): a prefix for absolute paths, so
 * lookups in the common case do not probe every path twice. */
void proc_root__prefix(pid_t pid, char *buf, size_t len);

#endif
