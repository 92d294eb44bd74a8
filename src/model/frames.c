/* A thread's stack as the model names it: user frames then kernel frames, outermost
 * first, the tracing machinery at the top of the kernel stack left out. */
#include "model/frames.h"
#include "trace/symbols.h"
#include "trace/trace.h"

size_t model__frames(const struct trace *t, struct trace_symbols *sym, uint32_t pid, uint64_t ts,
		     uint64_t ustack, uint64_t kstack, const char **out, size_t max)
{
	const struct trace_stack *us = ustack ? trace__stack(t, ustack) : NULL;
	const struct trace_stack *ks = kstack ? trace__stack(t, kstack) : NULL;
	size_t n = 0, i;

	for (i = us ? us->nr : 0; i-- > 0 && n < max;)
		out[n++] = trace_symbols__user(sym, pid, ts, us->ips[i]);
	for (i = ks ? ks->nr : 0; i-- > 0 && n < max;) {
		const char *name = trace_symbols__kernel(sym, ks->ips[i]);

		if (trace_symbols__is_tracing(name))
			break; /* the machinery that took the stack, above the thread's frames */
		out[n++] = name;
	}
	return n;
}
