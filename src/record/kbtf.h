/* The running kernel's BTF, parsed once per recording (each parse of /sys/kernel/btf/vmlinux
 * costs tens of milliseconds, and two recorders started together must start together),
 * and what the recorder reads from it. */
#ifndef SRVSCOPE_RECORD_KBTF_H
#define SRVSCOPE_RECORD_KBTF_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the kernel has the raw tracepoint name (its btf_trace_NAME typedef). */
bool kbtf__has_tracepoint(const char *name);

/* The address of a CPU's preempt count minus that of its run queue (both per-CPU
 * variables, so the same on every CPU), read from the kernel's BTF: the offsets of
 * __preempt_count (or pcpu_hot.preempt_count, Linux 6.2 to 6.14) and runqueues in its
 * .data..percpu section. 0 when the kernel's BTF does not have them (another
 * architecture, BTF without per-CPU variables). */
int64_t kbtf__preempt_count_off(void);

/* Frees the parsed BTF (the next call above parses it again). */
void kbtf__release(void);

#endif
