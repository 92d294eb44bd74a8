/* Frame names for the stacks of a trace file, resolved after the fact: user addresses
 * through the maps saved in the file (and the ELF objects, which must still be there),
 * kernel addresses through the file's kallsyms snapshot. */
#ifndef SRVSCOPE_TRACE_SYMBOLS_H
#define SRVSCOPE_TRACE_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

struct trace;
struct trace_symbols;

struct trace_symbols *trace_symbols__new(const struct trace *t);
/* Accepts NULL. */
void trace_symbols__delete(struct trace_symbols *s);
/* "function", "libfoo.so+0x1234" when the object has no symbol there, or "[unknown]".
 * The string lives as long as s. */
const char *trace_symbols__user(struct trace_symbols *s, uint32_t pid, uint64_t ts, uint64_t addr);
/* "function", or the address in hex. */
const char *trace_symbols__kernel(struct trace_symbols *s, uint64_t addr);
/* Whether a kernel frame of that name belongs to the tracing machinery that took the stack
 * (BPF programs, tracepoint glue): reports skip those at the top of a kernel stack. */
bool trace_symbols__is_tracing(const char *name);
/* Whether a kernel frame of that name is where an interrupt's or a softirq's own frames
 * end: below it is whatever was interrupted. */
bool trace_symbols__is_irq_entry(const char *name);

#endif
