/* Softirq vectors from wakers' stacks; softirq_entry detached (softirq.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/record.h"
#include "record.skel.h"
#include "record/ktext.h"
#include "record/softirq.h"
#include "util/util.h"

/* Each vector's action, as the kernel names it (kernel/softirq.c open_softirq calls);
 * SCHED's was run_rebalance_domains before Linux 6.10. */
static const char *const actions[REC_SOFTIRQS][2] = {
	{"tasklet_hi_action", NULL},   {"run_timer_softirq", NULL},
	{"net_tx_action", NULL},       {"net_rx_action", NULL},
	{"blk_done_softirq", NULL},    {"irq_poll_softirq", NULL},
	{"tasklet_action", NULL},      {"sched_balance_softirq", "run_rebalance_domains"},
	{"hrtimer_run_softirq", NULL}, {"rcu_core_si", NULL},
};

/* Which action the line's name is ("ADDR TYPE NAME[\t[module]]"), -1 none; -2 a module's
 * (after the kernel's own: the scan ends there). A scan of the text, not a parse of its 200
 * thousand symbols: the recorder reads it while events flow. The names' lengths first: a
 * line is let go at a compare of lengths, mostly. */
static int line_action(const char *p, const char *end)
{
	static size_t lens[REC_SOFTIRQS][2];
	const char *name = memchr(p, ' ', (size_t)(end - p));
	size_t n;
	int v, i;

	if (!lens[0][0])
		for (v = 0; v < REC_SOFTIRQS; v++)
			for (i = 0; i < 2 && actions[v][i]; i++)
				lens[v][i] = strlen(actions[v][i]);
	if (!name || end - name < 4)
		return -1;
	name += 3; /* " T " */
	n = (size_t)(end - name);
	if (memchr(name, '\t', n))
		return -2;
	for (v = 0; v < REC_SOFTIRQS; v++)
		for (i = 0; i < 2 && actions[v][i]; i++)
			if (lens[v][i] == n && !memcmp(name, actions[v][i], n))
				return v;
	return -1;
}

bool record_softirq__wants_text(const struct record_bpf *skel)
{
	return skel->rodata->want_stacks && skel->rodata->want_waker_stacks &&
	       skel->rodata->preempt_count_off && skel->links.softirq_entry;
}

void record_softirq__vectors(struct record_bpf *skel, const char *kallsyms, size_t len)
{
	const char *p = kallsyms, *end = kallsyms + len, *nl;
	int v, pending = -1;

	if (!skel->rodata->want_stacks || !skel->rodata->want_waker_stacks ||
	    !skel->rodata->preempt_count_off)
		return;
	/* The kernel's own symbols come in address order: an action ends where the next
	 * line's symbol starts. */
	for (; p < end; p = nl + 1) {
		uint64_t a;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (pending >= 0 &&
		    (a = ktext__line_addr(p, end)) > skel->bss->softirq_fn[pending]) {
			skel->bss->softirq_fn_end[pending] = a;
			pending = -1;
		}
		v = line_action(p, nl);
		if (v == -2 && pending < 0)
			break;
		if (v >= 0 && (a = ktext__line_addr(p, end)) && !skel->bss->softirq_fn[v]) {
			skel->bss->softirq_fn[v] = a;
			pending = v;
		}
	}
	for (v = 0; v < REC_SOFTIRQS; v++) /* no end found: the function alone is not known */
		if (!skel->bss->softirq_fn_end[v])
			skel->bss->softirq_fn[v] = 0;
	/* NET_RX at least: the vector that wakes servers */
	if (!skel->bss->softirq_fn[3])
		return;
	/* tests: every vector from the stacks, softirq_entry's ignored from the start */
	if (getenv("SRVSCOPE_SOFTIRQ_FROM_STACK"))
		skel->bss->softirq_entry_off = 1;
	__atomic_store_n(&skel->bss->softirq_vec_from_stack, 1, __ATOMIC_SEQ_CST);
}

bool record_softirq__entry_off(struct record_bpf *skel)
{
	long online;

	/* Not attached (a floor mode, a recording without wakers), or detached already. The
	 * CPUs online are read after: sysconf opens a file in /sys at each call, and this runs
	 * at each of the recorder's drains until it returns true. */
	if (!skel->links.softirq_entry)
		return true;
	if (!skel->bss->softirq_vec_from_stack || skel->bss->pc_failed)
		return false;
	online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online <= 0 || skel->bss->pc_found_cpus < online)
		return false;
	bpf_link__destroy(skel->links.softirq_entry);
	skel->links.softirq_entry = NULL;
	__atomic_store_n(&skel->bss->softirq_entry_off, 1, __ATOMIC_SEQ_CST);
	return true;
}
