/* Per-thread memory of the last sample's registers, stack bytes and unwind result, in an
 * open-addressing table keyed by tid. */
#include <stdlib.h>
#include <string.h>

#include "snapshot/snapshot.h"
#include "stacks/unwind_cache.h"
#include "util/util.h"

struct uc_entry {
	pid_t tid; /* 0 when the slot is empty */
	unsigned int gen;
	struct user_regs_struct regs;
	uint64_t stack_addr;
	size_t stack_len;
	uint8_t *stack;
	unsigned int nr_ips;
	bool truncated;
	uint64_t *ips;
};

struct unwind_cache {
	struct uc_entry *slots;
	size_t cap, nr;
	size_t nr_current; /* entries stored during the current sample */
	unsigned int gen;
};

static void entry_free(struct uc_entry *e)
{
	free(e->stack);
	free(e->ips);
}

struct unwind_cache *unwind_cache__new(void)
{
	struct unwind_cache *c = xcalloc(1, sizeof(*c));

	c->gen = 1;
	return c;
}

void unwind_cache__clear(struct unwind_cache *c)
{
	size_t i;

	for (i = 0; i < c->cap; i++)
		entry_free(&c->slots[i]);
	free(c->slots);
	c->slots = NULL;
	c->cap = c->nr = c->nr_current = 0;
}

void unwind_cache__delete(struct unwind_cache *c)
{
	if (!c)
		return;
	unwind_cache__clear(c);
	free(c);
}

static struct uc_entry *slot_of(struct uc_entry *slots, size_t cap, pid_t tid)
{
	size_t i = ((size_t)tid * 2654435761u) & (cap - 1);

	while (slots[i].tid && slots[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Rebuilds the table with room for need entries, keeping the entries of generation
 * keep_gen (or all when keep_gen is 0) and freeing the others. */
static void rebuild(struct unwind_cache *c, size_t need, unsigned int keep_gen)
{
	size_t i, cap = 64;
	struct uc_entry *slots;

	while (cap < need * 2)
		cap *= 2;
	slots = xcalloc(cap, sizeof(*slots));
	c->nr = 0;
	for (i = 0; i < c->cap; i++) {
		struct uc_entry *e = &c->slots[i];

		if (!e->tid)
			continue;
		if (keep_gen && e->gen != keep_gen) {
			entry_free(e);
			continue;
		}
		*slot_of(slots, cap, e->tid) = *e;
		c->nr++;
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
}

bool unwind_cache__lookup(struct unwind_cache *c, struct thread_sample *t)
{
	struct uc_entry *e;

	if (!c->cap || !t->stack_data || !(t->flags & THREAD_HAVE_REGS))
		return false;
	e = slot_of(c->slots, c->cap, t->tid);
	if (!e->tid || e->stack_addr != t->stack_addr || e->stack_len != t->stack_len ||
	    memcmp(&e->regs, &t->regs, sizeof(e->regs)) ||
	    memcmp(e->stack, t->stack_data, t->stack_len))
		return false;
	memcpy(t->ips, e->ips, e->nr_ips * sizeof(*t->ips));
	t->nr_ips = e->nr_ips;
	if (e->truncated)
		t->flags |= THREAD_TRUNCATED;
	return true;
}

void unwind_cache__store(struct unwind_cache *c, struct thread_sample *t)
{
	struct uc_entry *e;

	if (!t->stack_data || !(t->flags & THREAD_HAVE_REGS))
		return;
	if ((c->nr + 1) * 2 > c->cap)
		rebuild(c, c->nr + 1, 0);
	e = slot_of(c->slots, c->cap, t->tid);
	if (!e->tid)
		c->nr++;
	if (!e->tid || e->gen != c->gen)
		c->nr_current++;
	free(e->stack);
	if (!e->ips || e->nr_ips != t->nr_ips) {
		free(e->ips);
		e->ips = xmalloc(t->nr_ips * sizeof(*e->ips));
	}
	e->tid = t->tid;
	e->gen = c->gen;
	e->regs = t->regs;
	e->stack_addr = t->stack_addr;
	e->stack_len = t->stack_len;
	e->stack = t->stack_data;
	t->stack_data = NULL;
	e->nr_ips = t->nr_ips;
	e->truncated = t->flags & THREAD_TRUNCATED;
	memcpy(e->ips, t->ips, t->nr_ips * sizeof(*t->ips));
}

void unwind_cache__end_sample(struct unwind_cache *c)
{
	/* Forget the threads that are gone; nothing to do when every one was seen. */
	if (c->nr_current < c->nr)
		rebuild(c, c->nr_current, c->gen);
	c->nr_current = 0;
	c->gen++;
}
