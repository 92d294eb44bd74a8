/* --call-graph=dwarf while recording: the BPF programs send a thread's user registers and
 * the top of its user stack (struct rec_ustack_dump); they are unwound here with the
 * objects' DWARF CFI while the process lives, and the events that refer to a dump get the
 * id of its frames instead, so the trace file holds ordinary stacks. */
#ifndef SRVSCOPE_RECORD_USTACK_H
#define SRVSCOPE_RECORD_USTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/u64map.h"
#include "unwind/unwind.h"

struct rec_ustack_check;
struct rec_ustack_dump;
struct thread_sample;
struct unwinder;

struct ustacks {
	struct thread_sample *t; /* scratch for the unwinder */
	/* dump id -> stack id, in two generations: the BPF programs reuse a dump's id for
	 * up to --stack-refresh, so a generation lives at least that long. */
	struct u64map ids[2];
	uint64_t gen_ns, gen_start;
	uint64_t dumps, failed;
	uint64_t checked, unchecked; /* unwinds a check could / could not be made for */
	struct unwind_reads reads;   /* of the last unwind */
	/* Copies to unwind again once every ring is drained (ustacks__pend). */
	struct ustack_pending *pending;
	size_t nr_pending;
};

/* A stack copy whose unwind met a frame in no known mapping while the process's maps
 * could not be read again (a process that has just exec'ed or dlopen'ed): the copy, to be
 * unwound once more after every ring is drained, before the events naming it are
 * written (they wait 20 ms). */
struct ustack_pending {
	struct rec_ustack_dump *d;
	size_t size;
};
#define USTACKS_PENDING_MAX 64

/* Keeps a copy of d (size bytes) for ustacks__take_pending; false when USTACKS_PENDING_MAX
 * copies wait already. */
bool ustacks__pend(struct ustacks *us, const struct rec_ustack_dump *d, size_t size);
/* The copies kept, handed over (the caller frees each d and the array); *nr: how many. */
struct ustack_pending *ustacks__take_pending(struct ustacks *us, size_t *nr);

/* dump_bytes: the most a dump holds (--call-graph=dwarf,SIZE). */
void ustacks__init(struct ustacks *us, uint64_t refresh_ns, unsigned int dump_bytes);
void ustacks__free(struct ustacks *us);

/* Unwinds the dump (size bytes as received) with the process's unwinder into
 * ips (innermost first, at most max). Returns the number of frames, 0 when the dump is
 * malformed. *truncated is set when the unwind stopped short of the outermost frame;
 * *unknown_map when it stopped at an address outside every executable mapping of the
 * unwinder's maps (the process may have mapped something since its maps were read: read
 * them, set them in the unwinder and unwind again). */
unsigned int ustacks__unwind(struct ustacks *us, struct unwinder *u,
			     const struct rec_ustack_dump *d, size_t size, uint64_t *ips,
			     unsigned int max, bool *unknown_map, bool *truncated);
/* After ustacks__unwind of d: the check that tells a later task state unwinds the same
 * (struct rec_ustack_check). Returns false when none can be made. */
bool ustacks__check(struct ustacks *us, const struct rec_ustack_dump *d,
		    struct rec_ustack_check *c);

/* The id the BPF programs give a stack of these frames (take_stack in record.bpf.c). */
uint64_t ustacks__hash(const uint64_t *ips, unsigned int nr, bool user);
/* The id of a stack of user frames unwound here: never 0, never with the top bit (a
 * dump's) set; a truncated stack's differs from a whole one with the same frames. */
uint64_t ustacks__stack_id(const uint64_t *ips, unsigned int nr, bool truncated);

/* Remembers that the dump's frames have stack_id; ts: the dump's time (trace clock). */
/* How long after its last use a dump's stack id is surely still known (ustacks__lookup):
 * half a generation; the BPF programs take a dump unused for longer again. */
uint64_t ustacks__keep_ns(const struct ustacks *us);
void ustacks__map(struct ustacks *us, uint64_t dump_id, uint64_t stack_id, uint64_t ts);
/* The stack id of a dump's frames, 0 when unknown (its dump was lost or malformed). */
uint64_t ustacks__lookup(struct ustacks *us, uint64_t dump_id);

#endif
