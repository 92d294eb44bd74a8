/* The unwind cache: reuse only for identical registers and stack bytes, forget threads
 * that are gone, forget everything on clear. */
#include <stdlib.h>
#include <string.h>

#include "snapshot/snapshot.h"
#include "stacks/unwind_cache.h"
#include "unit.h"

static void fill(struct thread_sample *t, pid_t tid, uint8_t byte)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->flags = THREAD_HAVE_REGS;
	t->regs.rip = 0x1000 + tid;
	t->regs.rsp = 0x7000;
	t->stack_addr = 0x7000;
	t->stack_len = 64;
	t->stack_data = malloc(64);
	memset(t->stack_data, byte, 64);
}

int main(void)
{
	struct unwind_cache *c = unwind_cache__new();
	struct thread_sample t;
	pid_t tid;

	/* Sample 1: 100 threads unwound and stored. */
	for (tid = 1; tid <= 100; tid++) {
		fill(&t, tid, 1);
		if (unwind_cache__lookup(c, &t))
			break;
		t.ips[0] = 0x1000 + tid;
		t.ips[1] = 0x2000;
		t.nr_ips = 2;
		unwind_cache__store(c, &t);
		free(t.stack_data);
	}
	is_int(tid, 101, "nothing found in an empty cache");
	unwind_cache__end_sample(c);

	fill(&t, 7, 1);
	ok(unwind_cache__lookup(c, &t) && t.nr_ips == 2 && t.ips[0] == 0x1007,
	   "same registers and bytes: the stored unwind comes back");
	free(t.stack_data);

	fill(&t, 7, 2);
	ok(!unwind_cache__lookup(c, &t), "a changed stack byte: no reuse");
	free(t.stack_data);

	fill(&t, 7, 1);
	t.regs.rbp = 42;
	ok(!unwind_cache__lookup(c, &t), "a changed register: no reuse");
	free(t.stack_data);

	fill(&t, 7, 1);
	t.flags = 0;
	ok(!unwind_cache__lookup(c, &t), "no registers: no reuse");
	free(t.stack_data);

	/* Sample 2 sees only thread 5: the others are forgotten at its end. */
	fill(&t, 5, 1);
	ok(unwind_cache__lookup(c, &t), "thread 5 reused in sample 2");
	unwind_cache__store(c, &t);
	ok(t.stack_data == NULL, "store takes the stack copy");
	unwind_cache__end_sample(c);
	fill(&t, 6, 1);
	ok(!unwind_cache__lookup(c, &t), "a thread absent from the last sample is forgotten");
	free(t.stack_data);
	fill(&t, 5, 1);
	ok(unwind_cache__lookup(c, &t), "the thread seen last time is kept");
	free(t.stack_data);

	unwind_cache__clear(c);
	fill(&t, 5, 1);
	ok(!unwind_cache__lookup(c, &t), "clear forgets everything (maps changed)");
	free(t.stack_data);
	unwind_cache__delete(c);
	return done_testing();
}
