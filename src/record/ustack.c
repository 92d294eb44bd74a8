/* User stack dumps unwound while recording (--call-graph=dwarf). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "bpf/record.h"
#include "record/ustack.h"
#include "snapshot/snapshot.h"
#include "unwind/unwind.h"
#include "util/util.h"

_Static_assert(REC_DUMP_HDR == offsetof(struct rec_ustack_dump, data),
	       "REC_DUMP_HDR is where a dump's stack bytes begin");

void ustacks__init(struct ustacks *us, uint64_t refresh_ns, unsigned int dump_bytes)
{
	memset(us, 0, sizeof(*us));
	us->t = xcalloc(1, sizeof(*us->t));
	us->gen_ns = refresh_ns > 1000000000ull ? refresh_ns : 1000000000ull;
	/* A read that failed within what a dump may hold may succeed with the next dump. */
	us->reads.copy_limit = dump_bytes;
}

bool ustacks__pend(struct ustacks *us, const struct rec_ustack_dump *d, size_t size)
{
	struct ustack_pending *q;

	if (us->nr_pending >= USTACKS_PENDING_MAX)
		return false;
	if (!us->pending)
		us->pending = xcalloc(USTACKS_PENDING_MAX, sizeof(*us->pending));
	q = &us->pending[us->nr_pending++];
	q->d = xmalloc(size);
	memcpy(q->d, d, size);
	q->size = size;
	return true;
}

struct ustack_pending *ustacks__take_pending(struct ustacks *us, size_t *nr)
{
	struct ustack_pending *q = us->pending;

	*nr = us->nr_pending;
	us->pending = NULL;
	us->nr_pending = 0;
	return q;
}

void ustacks__free(struct ustacks *us)
{
	size_t i;

	for (i = 0; i < us->nr_pending; i++)
		free(us->pending[i].d);
	free(us->pending);
	free(us->t);
	u64map__free(&us->ids[0]);
	u64map__free(&us->ids[1]);
	memset(us, 0, sizeof(*us));
}

unsigned int ustacks__unwind(struct ustacks *us, struct unwinder *u,
			     const struct rec_ustack_dump *d, size_t size, uint64_t *ips,
			     unsigned int max, bool *unknown_map, bool *truncated)
{
	struct thread_sample *t = us->t;
	unsigned int nr;
	int err;

	*unknown_map = false;
	*truncated = false;
	us->reads.nr = 0;
	us->reads.uncheckable = true;
	if (size < REC_DUMP_HDR || d->len > size - REC_DUMP_HDR || d->nr_regs != REC_DUMP_REGS)
		return 0;
	us->dumps++;
	/* struct pt_regs is the first 21 words of struct user_regs_struct. */
	memset(&t->regs, 0, sizeof(t->regs));
	memcpy(&t->regs, d->regs, sizeof(d->regs));
	t->tid = d->tid;
	t->flags = THREAD_HAVE_REGS;
	t->stack_addr = t->regs.rsp;
	t->stack_len = d->len;
	t->stack_data = (uint8_t *)d->data;
	unwinder__note_reads(u, &us->reads);
	err = unwinder__unwind(u, t);
	unwinder__note_reads(u, NULL);
	t->stack_data = NULL;
	*unknown_map = unwinder__bad_address(u) != 0;
	if (err < 0 || !t->nr_ips) {
		us->failed++;
		us->reads.uncheckable = true;
		return 0;
	}
	nr = t->nr_ips < max ? t->nr_ips : max;
	memcpy(ips, t->ips, nr * sizeof(*ips));
	*truncated = (t->flags & THREAD_TRUNCATED) || nr < t->nr_ips;
	return nr;
}

/* Registers a check may compare: the callee-saved ones (pt_regs words 0-5); ip and sp
 * (16, 19) are the cache's key already. */
#define CHECKABLE_REGS (((1ull << REC_CHECK_REGS) - 1) | 1ull << 16 | 1ull << 19)

bool ustacks__check(struct ustacks *us, const struct rec_ustack_dump *d, struct rec_ustack_check *c)
{
	const struct unwind_reads *r = &us->reads;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	if (r->uncheckable || r->nr > REC_CHECK_WORDS || (r->regs & ~CHECKABLE_REGS)) {
		us->unchecked++;
		return false;
	}
	for (i = 0; i < r->nr; i++) {
		if (r->off[i] > 0xffff) {
			us->unchecked++;
			return false;
		}
		c->off[i] = r->off[i];
		if (r->off[i] + 8 > c->span)
			c->span = r->off[i] + 8;
	}
	c->nr = r->nr;
	c->regs = r->regs & ((1u << REC_CHECK_REGS) - 1);
	for (i = 0; i < REC_CHECK_REGS; i++)
		if (c->regs & (1u << i))
			c->reg[i] = d->regs[i];
	c->hash = ustacks__hash(r->val, r->nr, false);
	us->checked++;
	return true;
}

uint64_t ustacks__hash(const uint64_t *ips, unsigned int nr, bool user)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= user ? 0x9e3779b97f4a7c15ull : 0;
	return h ? h : 1;
}

uint64_t ustacks__stack_id(const uint64_t *ips, unsigned int nr, bool truncated)
{
	uint64_t h = (ustacks__hash(ips, nr, true) ^ (truncated ? 0x5bd1e9955bd1e995ull : 0)) &
		     ~(1ull << 63);

	return h ? h : 1;
}

static void rotate(struct ustacks *us, uint64_t ts)
{
	if (!us->gen_start) {
		us->gen_start = ts;
		return;
	}
	if (ts - us->gen_start < us->gen_ns || ts < us->gen_start)
		return;
	u64map__free(&us->ids[1]);
	us->ids[1] = us->ids[0];
	memset(&us->ids[0], 0, sizeof(us->ids[0]));
	us->gen_start = ts;
}

uint64_t ustacks__keep_ns(const struct ustacks *us)
{
	/* An id used at L stays until the second rotation after L: at least a generation. */
	return us->gen_ns / 2;
}

void ustacks__map(struct ustacks *us, uint64_t dump_id, uint64_t stack_id, uint64_t ts)
{
	rotate(us, ts);
	u64map__put(&us->ids[0], dump_id, stack_id);
}

uint64_t ustacks__lookup(struct ustacks *us, uint64_t dump_id)
{
	uint64_t id;

	if (u64map__get(&us->ids[0], dump_id, &id))
		return id;
	if (!u64map__get(&us->ids[1], dump_id, &id))
		return 0;
	/* Still in use: keep it through the next rotation. */
	u64map__put(&us->ids[0], dump_id, id);
	return id;
}
