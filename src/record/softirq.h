/* Softirq vectors of wakers taken from their kernel stacks, and softirq_entry left off once
 * it is needed no more (record.bpf.c softirq_vec_from_stack): the program runs at every
 * softirq on the machine (125 thousand a second under a loopback load), for a vector the
 * waker's stack tells as well. */
#ifndef SRVSCOPE_RECORD_SOFTIRQ_H
#define SRVSCOPE_RECORD_SOFTIRQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record_bpf;

/* From the kallsyms text, each vector's action function (net_rx_action, ...) into the
 * programs' softirq_fn and softirq_fn_end, and the vectors taken from stacks from then
 * on. Does nothing where wakers' stacks are not taken. */
void record_softirq__vectors(struct record_bpf *skel, const char *kallsyms, size_t len);
/* Detaches softirq_entry once every online CPU's preempt count is found (the programs
 * then tell a softirq from it) and the vectors come from stacks. True once done, or when
 * it was never attached. */
bool record_softirq__entry_off(struct record_bpf *skel);
/* Whether the vectors are to come from the kernel's symbols (record_softirq__vectors) as
 * soon as they are read: softirq_entry runs until then. */
bool record_softirq__wants_text(const struct record_bpf *skel);

#endif
