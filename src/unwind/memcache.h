/* A small cache of 4 KiB pages read from /proc/PID/mem with pread, for memory the
 * capture did not copy and no file backs. */
#ifndef SRVSCOPE_UNWIND_MEMCACHE_H
#define SRVSCOPE_UNWIND_MEMCACHE_H

#include <stdint.h>
#include <sys/types.h>

struct memcache;

struct memcache *memcache__new(pid_t pid);
void memcache__delete(struct memcache *mc);
void memcache__flush(struct memcache *mc);
/* Reads 8 bytes at addr (any alignment). Returns 0 or -EFAULT. */
int memcache__read_word(struct memcache *mc, uint64_t addr, uint64_t *val);

#endif
