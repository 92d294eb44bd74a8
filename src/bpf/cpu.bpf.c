// SPDX-License-Identifier: GPL-2.0
/* Kernel side of 'srvscope cpu': a cpu-clock sample of a target thread adds one to the
 * count of its (thread, kernel stack, user stack) and of its (thread, CPU); user space
 * reads and clears the counts every interval. Nothing is sent per sample, so the cost is
 * the stack walk, its hash and a few hash map updates. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cpu.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool filter_all = false; /* -a: every task but the idle ones */
const volatile __u32 self_tgid = 0;	/* srvscope itself is never sampled */

/* The target processes, one bit per tgid (PID_MAX_LIMIT is 4M), set through the mapped
 * .bss: a process tree that grows is followed without reloading. */
#define TARGET_WORDS (4194304 / 64)
__u64 target_bits[TARGET_WORDS];

/* The stacks, by the hash of their frames. Not a STACK_TRACE map: that one is a table
 * without chaining whose ids are buckets, so a new stack whose bucket another stack holds
 * is lost (1-12 % of the samples with -a), and an id user space deletes after reading it may
 * be counted again meanwhile and then be gone. Here a stack is lost only when the map is
 * full, and its name stays valid after user space has read and deleted it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct cpu_stack_ips);
} stacks SEC(".maps");

/* where a stack is taken before it is hashed: too big for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_stack_ips);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cpu_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cpu_where);
	__type(value, __u64);
} where SEC(".maps");

/* [0] samples taken, [1] samples not counted (a full counts map), [2] stacks lost (a full
 * stacks map) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void add(void *map, const void *key)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, key);

	if (v)
		__sync_fetch_and_add(v, 1);
	else if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST))
		/* another CPU created it meanwhile, or the map is full */
		if ((v = bpf_map_lookup_elem(map, key)))
			__sync_fetch_and_add(v, 1);
}

static __always_inline void count_stat(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &i);

	if (v)
		(*v)++;
}

/* The name of the current kernel or user stack (flags: 0 or BPF_F_USER_STACK), its frames
 * stored under it when new. */
static __always_inline __u64 take_stack(struct bpf_perf_event_data *ctx, __u64 flags)
{
	__u32 zero = 0, i, nr;
	struct cpu_stack_ips *sc = bpf_map_lookup_elem(&scratch, &zero);
	__u64 h = 0xcbf29ce484222325ull ^ flags;
	long n;

	if (!sc)
		return CPU_STACK_LOST;
	n = bpf_get_stack(ctx, sc->ips, sizeof(sc->ips), flags);
	if (n <= 0)
		return CPU_STACK_NONE; /* no frames, or none to take (-EFAULT) */
	nr = n / sizeof(__u64);
	sc->nr = nr;
	for (i = 0; i < CPU_MAX_DEPTH; i++) {
		if (i >= nr)
			break;
		h = (h ^ sc->ips[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	if (h <= CPU_STACK_LOST)
		h += 2;
	/* An update may fail with the stack there after all (-EEXIST: another CPU stored it
	 * first), or not there: user space deleted it in between, having read it, or the
	 * bucket's lock gave up (since 6.15 they do rather than deadlock). One more try; after
	 * it, the map is taken as full. */
	for (i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(&stacks, &h) ||
		    !bpf_map_update_elem(&stacks, &h, sc, BPF_NOEXIST))
			return h;
	}
	count_stat(2);
	return CPU_STACK_LOST;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct cpu_key k = {};
	struct cpu_where w = {};
	__u64 *v;

	if (!tid || tgid == self_tgid)
		return 0; /* idle */
	if (!filter_all) {
		/* masked: the verifier must see the index bounded (TARGET_WORDS is 2^16) */
		if (!(target_bits[(tgid / 64) & (TARGET_WORDS - 1)] & (1ull << (tgid % 64))) ||
		    tgid >= TARGET_WORDS * 64)
			return 0;
	}
	count_stat(0);
	k.tgid = tgid;
	k.tid = tid;
	k.kstack = take_stack(ctx, 0);
	k.ustack = take_stack(ctx, BPF_F_USER_STACK);
	v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
	} else {
		__u64 one = 1;

		if (bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST)) {
			v = bpf_map_lookup_elem(&counts, &k);
			if (v)
				__sync_fetch_and_add(v, 1);
			else
				count_stat(1);
		}
	}
	w.tid = tid;
	w.cpu = bpf_get_smp_processor_id();
	add(&where, &w);
	return 0;
}
