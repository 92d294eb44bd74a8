/* Per-CPU variables of the running kernel, located from its BTF. */
#ifndef SRVSCOPE_RECORD_PERCPU_H
#define SRVSCOPE_RECORD_PERCPU_H

#include <stdint.h>

/* The address of a CPU's preempt count minus that of its run queue (both per-CPU
 * variables, so the same on every CPU), read from the kernel's BTF: the offsets of
 * __preempt_count (or pcpu_hot.preempt_count, Linux 6.2 to 6.14) and runqueues in its
 * .data..percpu section. 0 when the kernel's BTF does not have them (another
 * architecture, BTF without per-CPU variables). */
int64_t percpu__preempt_count_off(void);

#endif
