/* Remote unwinding of captured threads with libunwind, through our own accessors:
 * registers and stack bytes come from the capture, read-only file-backed memory from the
 * ELF files (cached across samples), anything else from /proc/PID/mem in cached pages.
 * Never touches the target's execution: it runs after the threads were released. */
#ifndef SRVSCOPE_UNWIND_UNWIND_H
#define SRVSCOPE_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
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
/* Fills t->ips / t->nr_ips from t->regs and t->stack_data. Returns 0 or -errno. The
 * stack ends, with THREAD_TRUNCATED, at a frame whose address is outside every executable
 * mapping or whose CFA does not grow: garbage is never returned as a frame. */
int unwinder__unwind(struct unwinder *u, struct thread_sample *t);
/* The address that ended the last unwind because no executable mapping holds it, 0 when
 * none did (a caller whose maps may be stale reads them again and retries). */
uint64_t unwinder__bad_address(const struct unwinder *u);

/* What an unwind read from the stack copy and the registers, to tell later whether the
 * same registers and stack would unwind the same way (the recorder's stack cache). */
#define UNWIND_READS_MAX 128
struct unwind_reads {
	unsigned int nr;     /* words read from the copy, in order, repeats left out */
	bool uncheckable;    /* more than UNWIND_READS_MAX, or a read from elsewhere that
			      * a check of the copy cannot cover */
	uint64_t regs;	     /* registers read: bit i for word i of user_regs_struct */
	uint64_t copy_limit; /* reads that failed below stack_addr + copy_limit (what a copy
			      * may hold) make the unwind uncheckable: another copy may hold
			      * them */
	uint64_t off[UNWIND_READS_MAX], val[UNWIND_READS_MAX];
};
/* Starts (r) or stops (NULL) noting the reads of the unwinds that follow into r; each
 * unwind starts r afresh (copy_limit is kept). */
void unwinder__note_reads(struct unwinder *u, struct unwind_reads *r);

#endif
