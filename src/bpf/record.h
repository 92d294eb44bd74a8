/* Records shared by the 'record' BPF program (record.bpf.c) and user space. The fixed-size
 * event records are written verbatim into trace files (docs/trace-format.md), so their
 * layout is part of the file format: change it only together with TRACE_VERSION. */
#ifndef SRVSCOPE_BPF_RECORD_H
#define SRVSCOPE_BPF_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define REC_SIZE       64
#define REC_COMM_LEN   16
#define REC_MAX_FRAMES 127

enum rec_type {
	REC_SWITCH = 1,	    /* tid/pid: the task switched out */
	REC_WAKING = 2,	    /* tid/pid: the task woken; carries the waker's context */
	REC_WAKEUP = 3,	    /* the woken task was put on a run queue (aux: its CPU) */
	REC_WAKEUP_NEW = 4, /* a new task became runnable for the first time */
	REC_FORK = 5,	    /* tid/pid: the child; aux: the parent's tid */
	REC_EXEC = 6,
	REC_EXIT = 7,
	REC_COMM = 8,	 /* the task renamed itself */
	REC_SYSCALL = 9, /* one syscall, written at its exit; aux: its number */
	REC_SAMPLE = 10, /* an on-CPU sample (cpu-clock) */
	REC_STATE = 11,	 /* written by user space at the start: a task's state then */
	REC_NET_TX = 12, /* record --net: a TCP segment queued to a device (net_dev_queue) */
	REC_NET_RX = 13, /* record --net: a TCP segment received (netif_receive_skb) */
	/* record --ipi (or --net): an inter-processor interrupt sent (ipi:ipi_send_cpu,
	 * ipi_send_cpumask); tid/pid: the task running on the sending CPU. */
	REC_IPI_SEND = 14,
	/* --syscall-args: what a REC_SYSCALL of the same task does not hold, for the syscalls
	 * listed at struct rec_sysargs; its time is the syscall's entry; aux: its number. */
	REC_SYSCALL_ARGS = 20,
	/* Syscall sampling: a syscall that gives out, changes or takes back an fd, made
	 * between the windows in which every syscall is written (REC_SYSCALL's layout). */
	REC_SYSCALL_FD = 21,
	/* record --net: the addresses of an IPv6 segment, written just before its REC_NET_TX
	 * or REC_NET_RX (same time and CPU), whose record has no room for them. */
	REC_NET6 = 22,
	REC_STACK = 100,       /* ring buffer only: a stack seen for the first time */
	REC_USTACK_DUMP = 101, /* ring buffer only: user registers + stack bytes to unwind */
	REC_BATCH = 102,       /* ring buffer only: struct rec_batch, records of one CPU */
	REC_TYPE_MAX = 103,
};

/* Softirq vectors (the kernel's NR_SOFTIRQS), and a REC_WAKING's detail when its vector is
 * not known (a softirq waker whose kernel stack names no softirq's action). */
#define REC_SOFTIRQS	    10
#define REC_SOFTIRQ_UNKNOWN 10

/* The waker's context in a REC_WAKING record (low byte of aux). */
enum wake_kind {
	WAKE_TASK = 0,
	WAKE_HARDIRQ = 1,
	WAKE_SOFTIRQ = 2,
	WAKE_HRTIMER = 3,
	WAKE_TIMER = 4, /* a timer_list callback */
	WAKE_IPI = 5,	/* an x86 system vector's handler (detail: enum ipi_vector) */
};

/* The system vectors whose handlers are a waker's context (WAKE_IPI's detail). On x86 they
 * are not hard irqs (no irq_handler_entry): each has its own irq_vectors tracepoints. */
enum ipi_vector {
	IPI_IRQ_WORK = 0,	      /* irq_work raised on this CPU (perf, BPF ring buffers) */
	IPI_CALL_FUNCTION = 1,	      /* smp_call_function to several CPUs */
	IPI_CALL_FUNCTION_SINGLE = 2, /* smp_call_function_single, remote irq_work */
	IPI_RESCHEDULE = 3,
	IPI_PLATFORM = 4, /* x86_platform_ipi (a hypervisor's, posted interrupts) */
	IPI_VECTORS = 5,
};

/* Syscall sampling: the per-CPU counters of the targets' syscalls (map sys_counts). */
enum syscall_count {
	SYSCNT_FULL = 0, /* written as REC_SYSCALL */
	SYSCNT_OUT = 1,	 /* made between windows (left out, or a REC_SYSCALL_FD) */
	SYSCNT_KINDS = 2,
};

/* REC_SWITCH flags. */
#define SWITCH_PREEMPT	   (1u << 0)
#define SWITCH_PREV_TARGET (1u << 1)
#define SWITCH_NEXT_TARGET (1u << 2)
/* poll, ppoll, select, pselect6: fd is the first fd waited on (read from the caller's
 * pollfd array or fd set), and there are more when SWITCH_MORE_FDS. */
#define SWITCH_POLLED_FD (1u << 3)
#define SWITCH_MORE_FDS	 (1u << 4)
/* Switch windows (record_opts.switch_windows): the previous (next) task's switches were
 * left out since its last record, between syscall windows: what it did meanwhile is not
 * known (a wait that seems to span the gap did not). */
#define SWITCH_PREV_GAP (1u << 5)
#define SWITCH_NEXT_GAP (1u << 6)

/* Why an event or a stack was not recorded: per-CPU counters, kept in the file. */
enum lost_reason {
	LOST_RINGBUF = 0,	/* an event found the ring buffer full */
	LOST_STACK_RINGBUF = 1, /* a new stack found the ring buffer full */
	LOST_STACK_FAILED = 2,	/* the kernel could not take a stack (not counted as lost) */
	/* the kernel skipped a program: it fired while the same program ran on that CPU
	 * (its recursion_misses, counted by program, not by CPU: user space puts the sum
	 * in the first CPU's count) */
	LOST_SKIPPED = 3,
	LOST_REASONS = 4,
};

/* What the stack caches did, per CPU (map cache_stats; srvscope record --cost prints them
 * in this order). */
enum cache_stat {
	CS_KCHECK,	/* kernel stacks checked for reuse */
	CS_KREUSED,	/* ... and reused */
	CS_KTAKEN,	/* kernel stacks walked */
	CS_KFILL_WORDS, /* stack words scanned for return addresses */
	CS_UREUSED,	/* user stacks reused */
	CS_UTAKEN,	/* user stacks walked or dumped */
	CS_UPENDING,	/* user stacks not taken (ring_half_full); counted without --cost too */
	CS_SWKEPT,	/* switch windows: switches written between the windows */
	CS_SWLEFT,	/* ... and left out */
	CS_NR
};

struct rec_hdr {
	__u64 ts; /* CLOCK_MONOTONIC ns */
	__u16 type;
	__u16 cpu;
	__u32 tid;
	__u32 pid; /* thread group id */
	__u32 aux; /* meaning depends on type */
};

struct rec_switch { /* aux: prev_state as the kernel reports it, 0 when preempted */
	__u32 next_tid, next_pid;
	__s16 syscall;	      /* the syscall the switched-out task is in, -1 when none */
	__u8 flags;	      /* SWITCH_* */
	__u8 prev_prio;	      /* 0-139, as the kernel's task_struct.prio */
	__s32 fd;	      /* its first argument when that fits an int, else -1 */
	__u64 kstack, ustack; /* stack ids of the switched-out task, 0 when none */
	/* The switched-out task's se.sum_exec_runtime: the CPU time the kernel has charged it
	 * since it was created, up to this switch. 0 in version 1 files (not recorded). */
	__u64 runtime_ns;
};
/* Version 1 (TRACE_VERSION 1) files hold this layout; the reader converts it. */
struct rec_switch_v1 {
	__u32 next_tid, next_pid;
	__s32 syscall;
	__s32 fd;
	__u64 kstack, ustack;
	__u32 flags;
	__s32 prev_prio;
};

/* A REC_WAKING's aux: its wake_kind in the low byte; when bits 8-15 are not zero, the
 * wake-up that followed (the REC_WAKEUP it would have had, version 3 files) is folded in:
 * at the waking's time + (bits 8-15 - 1) * REC_WAKING_FOLD_NS, on the CPU in bits 16-31
 * (the REC_WAKEUP's aux). The reader makes the REC_WAKEUP event of it. */
#define REC_WAKING_FOLD_NS  64
#define REC_WAKING_FOLD_MAX 255 /* units: up to 16.3 us after the waking */
struct rec_waking {
	__u32 waker_tid; /* the task that was running (for interrupts: the interrupted one) */
	__u32 detail;	 /* irq number, softirq vector */
	union {
		char comm[REC_COMM_LEN]; /* WAKE_TASK: the waker's name */
		char irq[REC_COMM_LEN];	 /* WAKE_HARDIRQ: the handler's name */
		__u64 func;		 /* WAKE_HRTIMER, WAKE_TIMER: the callback */
		__u64 since;		 /* WAKE_IPI: when the vector's handler was entered */
	} u;
	__u64 kstack, ustack; /* the waker's (kernel only in an interrupt), 0 when none */
};

struct rec_task { /* FORK (aux: parent tid), EXEC, EXIT (aux: exit code), COMM, WAKEUP_NEW */
	char comm[REC_COMM_LEN];
	__u32 parent_pid; /* FORK */
	__u32 flags;	  /* EXIT: 1 when the whole thread group is gone */
	char file[16];	  /* EXEC: the last bytes of the file name */
};

struct rec_syscall { /* aux: syscall number */
	__s64 ret;
	__u64 enter_ts;
	__u64 args[3];
};

/* REC_SYSCALL_ARGS: the fourth argument, and values read from the caller's memory:
 * readv, writev, preadv, pwritev: the iovec lengths (the first 7; nr_vals: the iovec
 * count); sendmsg, recvmsg: the same from the msghdr's iovec; epoll_ctl: the event's
 * flags (vals[0]); accept4, sendto, recvfrom, epoll_wait, epoll_pwait, pread64, pwrite64:
 * arg3 only. */
#define REC_SYSARGS_VALS 7
struct rec_sysargs {
	__u64 arg3;
	__u32 nr_vals;
	__u32 vals[REC_SYSARGS_VALS];
};

struct rec_sample {
	__u64 kstack, ustack;
};

struct rec_state { /* aux: the state letter as in /proc/PID/stat | SWITCH_* flags << 8 */
	__s32 syscall;
	__s32 fd;
	char comm[REC_COMM_LEN];
	__u64 kstack, ustack; /* where it was blocked then (nostop snapshot), 0 when unknown */
};

/* REC_NET_TX, REC_NET_RX (aux: the device's ifindex). tid/pid: the task running then (the
 * sender of a TX in a task's context; for an RX, or a TX sent from a softirq, whoever it
 * interrupted). Addresses and ports in network byte order as on the wire. An IPv6 segment
 * (family REC_NET_IPV6) has the XOR of each address's four words in saddr and daddr, and
 * its addresses whole in the REC_NET6 record written just before it; family 0 (as every
 * record had before IPv6 was recorded) is IPv4. */
#define REC_NET_IPV6 6
struct rec_net {
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u32 seq, ack;
	__u16 len;     /* TCP payload bytes */
	__u8 flags;    /* TCP flags byte (FIN 1, SYN 2, RST 4, PSH 8, ACK 16) */
	__u8 family;   /* 0: IPv4, REC_NET_IPV6 */
	__u32 netns;   /* the device's network namespace (its inode number) */
	__u64 softirq; /* which softirq run it happened in (per CPU), 0 in a task's context */
};

/* REC_NET6: the IPv6 addresses of the segment recorded next on this CPU, with the same time;
 * its ports and sequence number, which tie the two. */
struct rec_net6 {
	__u8 saddr[16], daddr[16];
	__u16 sport, dport;
	__u32 seq;
};

/* REC_IPI_SEND (aux: the sender's context, enum wake_kind, | its detail << 8). */
#define REC_IPI_CPUS 128
struct rec_ipi {
	__u64 callsite; /* the kernel function that sent it (its return address) */
	__u64 callback; /* what the target runs: the generic call-function handler, or 0 */
	__u64 cpus[REC_IPI_CPUS / 64]; /* the target CPUs below 128, a bit each */
	__u32 target;		       /* the lowest target CPU */
	__u32 nr_targets;	       /* all of them, those above 127 too */
};

struct rec {
	struct rec_hdr h;
	union {
		struct rec_switch sw;
		struct rec_waking wk;
		struct rec_task task;
		struct rec_syscall sc;
		struct rec_sysargs sa;
		struct rec_sample sample;
		struct rec_state state;
		struct rec_net net;
		struct rec_net6 net6;
		struct rec_ipi ipi;
		__u8 raw[REC_SIZE - sizeof(struct rec_hdr)];
	};
};

/* Records of one CPU, in the order they were made, sent through its ring buffer together:
 * a reservation and a commit cost most of what a record does (100 ns or so in a VM, where
 * their spinlock's irqsave is dear), once per batch instead of once per record. The type
 * field sits where rec_hdr.type does (zero before it: no time). */
#define REC_BATCH_RECS 8
/* CPUs whose batches' ages user space reads (record.bpf.c batch_since); a power of two.
 * CPUs from there on are flushed at every drain. */
#define REC_BATCH_CPUS 1024
struct rec_batch_hdr {
	__u64 zero;
	__u16 type; /* REC_BATCH */
	__u16 n;    /* records that follow */
	__u32 pad;
};

/* A stack sent once through the ring buffer; events refer to it by id. The id is a hash
 * of the frames, never 0; the type field sits where rec_hdr.type does. */
struct rec_stack {
	__u64 id;
	__u16 type; /* REC_STACK */
	__u16 user;
	__u32 nr;
	__u32 pid; /* the process whose stack it was first seen in (user stacks) */
	__u32 pad;
	__u64 ips[REC_MAX_FRAMES];
};
#define REC_STACK_HDR 24

/* --call-graph=dwarf: instead of walking frame pointers in the kernel, the user registers
 * and the top of the user stack are sent, and user space unwinds them with the objects'
 * DWARF CFI (as perf does with --call-graph=dwarf). Events carry the dump's id as their
 * ustack; user space writes the unwound frames as a REC_STACK and rewrites the ids, so a
 * trace file never holds dumps. The id has the top bit set, the CPU and the time. */
#define REC_DUMP_MAX  65536 /* bytes of stack, at most */
#define REC_DUMP_PAGE 4096
#define REC_DUMP_REGS 21 /* struct pt_regs, which is user_regs_struct's first 21 words */
struct rec_ustack_dump {
	__u64 id;
	__u16 type; /* REC_USTACK_DUMP */
	__u16 nr_regs;
	__u32 len; /* bytes of stack in data, from regs' sp up */
	__u32 tid, pid;
	/* Kernel side, while copying (in the map value, where the verifier does not track
	 * them value by value): the length up to the last page read, missing pages in a row. */
	__u32 good, missing;
	__u64 regs[REC_DUMP_REGS];
	/* The slack page lets the verifier prove a page copy at any offset below the maximum
	 * stays inside the value. */
	__u8 data[REC_DUMP_MAX + REC_DUMP_PAGE];
};
#define REC_DUMP_HDR (32 + 8 * REC_DUMP_REGS)

/* What makes a reused dump id right: the words of the user stack the unwinder read when
 * it unwound the dump, and the registers it read. User space publishes this (map
 * ustack_checks, by dump id) once it has unwound the dump; a task found at the same place
 * again reuses the dump's id only when they are all as they were, so the same frames
 * follow. Without it (not unwound yet, or unwound with reads a check cannot cover) the
 * stack is dumped afresh. */
#define REC_CHECK_WORDS 128
#define REC_CHECK_REGS	6 /* pt_regs words 0-5: r15 r14 r13 r12 bp bx (ip, sp: the key) */
struct rec_ustack_check {
	__u32 nr;		   /* words to compare */
	__u32 regs;		   /* bit i: pt_regs word i (< REC_CHECK_REGS) is compared */
	__u64 reg[REC_CHECK_REGS]; /* their values */
	__u64 hash;		   /* of the words' values in order (ustacks__hash) */
	__u32 span;		   /* bytes from sp that hold them all */
	__u32 pad;
	__u16 off[REC_CHECK_WORDS]; /* each word's offset from sp, in bytes */
};

#endif
