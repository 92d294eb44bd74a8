/* Naming a thread's stacks for the model (frames.c). */
#ifndef SRVSCOPE_MODEL_FRAMES_H
#define SRVSCOPE_MODEL_FRAMES_H

#include <stddef.h>
#include <stdint.h>

struct trace;
struct trace_symbols;

#define MODEL_MAX_FRAMES 256

/* The frames of a user and a kernel stack of t (ids, 0 for none), outermost first: the
 * user ones, then the kernel ones; at most max into out. The names live as long as sym.
 * Returns how many. */
size_t model__frames(const struct trace *t, struct trace_symbols *sym, uint32_t pid, uint64_t ts,
		     uint64_t ustack, uint64_t kstack, const char **out, size_t max);

#endif
