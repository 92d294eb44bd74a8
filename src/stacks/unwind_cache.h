/* Reuse of an unwind across samples: a thread whose registers and copied stack bytes are
 * the same as at the previous sample (a thread parked where it was) has the same stack,
 * so its return addresses are taken over instead of unwound again. For top, which samples
 * mostly idle threads many times a second, this is most of the unwinding cost. */
#ifndef SRVSCOPE_STACKS_UNWIND_CACHE_H
#define SRVSCOPE_STACKS_UNWIND_CACHE_H

#include <stdbool.h>

struct thread_sample;
struct unwind_cache;

struct unwind_cache *unwind_cache__new(void);
/* Accepts NULL. */
void unwind_cache__delete(struct unwind_cache *c);
/* Forgets everything (the process's maps changed: the same bytes may mean other code). */
void unwind_cache__clear(struct unwind_cache *c);
/* When t is unchanged since its previous sample, fills t->ips, t->nr_ips and the
 * truncation flag and returns true. */
bool unwind_cache__lookup(struct unwind_cache *c, struct thread_sample *t);
/* Remembers t (registers, stack copy, unwind result) for the next sample. Takes the stack
 * copy: t->stack_data is NULL afterwards. */
void unwind_cache__store(struct unwind_cache *c, struct thread_sample *t);
/* Ends a sample: forgets the threads that were not stored during it. */
void unwind_cache__end_sample(struct unwind_cache *c);

#endif
