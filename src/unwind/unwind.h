/* Remote unwinding of captured threads with libunwind, through our own accessors:
 * registers and stack bytes come from the capture, read-only file-backed memory from the
 * ELF files (cached across samples), anything else from /proc/PID/mem in cached pages.
 * Never touches the target's execution: it runs after the threads were released. */
#ifndef SRVSCOPE_UNWIND_UNWIND_H
#define SRVSCOPE_UNWIND_UNWIND_H

#include <stdbool.h>
#include <sys/types.h>

struct proc_maps;
struct thread_sample;
struct unwinder;

/* An unwinder for pid over maps (borrowed; see unwinder__set_maps). NULL + errno on error. */
struct unwinder *unwinder__new(pid_t pid, struct proc_maps *maps);
/* Accepts NULL. */
void unwinder__delete(struct unwinder *u);
/* After the target's maps changed: use the new ones and flush cached unwind info. */
void unwinder__set_maps(struct unwinder *u, struct proc_maps *maps);
/* Whether memory outside the stack copy and read-only files may be read from the live
 * process (default yes). A recording, which unwinds while the thread runs on, says no:
 * what it would read has changed since the copy. */
void unwinder__set_live_memory(struct unwinder *u, bool live);
/* Forgets cached pages of writable memory (call once per sample). */
void unwinder__new_sample(struct unwinder *u);
/* Fills t->ips / t->nr_ips from t->regs and t->stack_data. Returns 0 or -errno. */
int unwinder__unwind(struct unwinder *u, struct thread_sample *t);

#endif
