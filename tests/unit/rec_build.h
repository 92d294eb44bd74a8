/* Builds small trace files for the unit tests of the trace reader and the analyses: a
 * writer on a temporary file, helpers for the common records, then the file read back. */
#ifndef SRVSCOPE_TESTS_REC_BUILD_H
#define SRVSCOPE_TESTS_REC_BUILD_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

struct tb {
	char path[64];
	struct trace_writer *w;
};

static inline void tb_open(struct tb *b)
{
	struct trace_file_header h;
	int fd;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_MAGIC, 8);
	h.version = TRACE_VERSION;
	h.header_size = sizeof(h);
	h.record_size = REC_SIZE;
	h.nr_cpus = 2;
	h.clock_id = CLOCK_MONOTONIC;
	h.start_ns = 1000;
	strcpy(h.host, "unit");
	strcpy(h.kernel, "6.18.0");
	strcpy(b->path, "/tmp/srvscope-unit.XXXXXX");
	fd = mkstemp(b->path);
	if (fd >= 0)
		close(fd);
	b->w = trace_writer__open(b->path, true, &h);
}

static inline struct trace *tb_read(struct tb *b, uint64_t end_ns)
{
	char err[256];
	struct trace *t;

	trace_writer__close(b->w, end_ns);
	t = trace__open(b->path, err, sizeof(err));
	if (!t)
		printf("# %s\n", err);
	unlink(b->path);
	return t;
}

static inline void tb_rec(struct tb *b, uint64_t ts, uint16_t type, uint32_t tid, uint32_t pid,
			  uint32_t aux, struct rec *out)
{
	memset(out, 0, sizeof(*out));
	out->h.ts = ts;
	out->h.type = type;
	out->h.tid = tid;
	out->h.pid = pid;
	out->h.aux = aux;
}

/* A switch record: prev (tid/pid) switched out in state to next; both targets unless
 * tid/pid 0; fd, stacks and runtime left 0. */
static inline void tb_switch_rec(struct tb *b, uint64_t ts, uint32_t prev, uint32_t ppid,
				 uint32_t state, uint32_t next, uint32_t npid, int32_t syscall,
				 struct rec *r)
{
	tb_rec(b, ts, REC_SWITCH, prev, ppid, state, r);
	r->sw.next_tid = next;
	r->sw.next_pid = npid;
	r->sw.syscall = syscall;
	r->sw.flags = (prev ? SWITCH_PREV_TARGET : 0) | (next ? SWITCH_NEXT_TARGET : 0) |
		      (state ? 0 : SWITCH_PREEMPT);
}

/* The same with more SWITCH_* flags (the gaps of switch windows), no fd, and prev's runtime
 * counter. */
static inline void tb_switch_flags(struct tb *b, uint64_t ts, uint32_t prev, uint32_t ppid,
				   uint32_t state, uint32_t next, uint32_t npid, int32_t syscall,
				   uint32_t flags, uint64_t runtime)
{
	struct rec r;

	tb_switch_rec(b, ts, prev, ppid, state, next, npid, syscall, &r);
	r.sw.fd = -1;
	r.sw.flags |= flags;
	r.sw.runtime_ns = runtime;
	trace_writer__add_event(b->w, &r);
}

/* prev (tid/pid) switched out in state to next, blocked on fd, with its stacks. */
static inline void tb_switch(struct tb *b, uint64_t ts, uint32_t prev, uint32_t ppid,
			     uint32_t state, uint32_t next, uint32_t npid, int32_t syscall, int32_t fd,
			     uint64_t kstack, uint64_t ustack)
{
	struct rec r;

	tb_switch_rec(b, ts, prev, ppid, state, next, npid, syscall, &r);
	r.sw.fd = fd;
	r.sw.kstack = kstack;
	r.sw.ustack = ustack;
	trace_writer__add_event(b->w, &r);
}

static inline void tb_waking_task(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid,
				  uint32_t waker, const char *comm, uint64_t kstack, uint64_t ustack)
{
	struct rec r;

	tb_rec(b, ts, REC_WAKING, tid, pid, WAKE_TASK, &r);
	r.wk.waker_tid = waker;
	strncpy(r.wk.u.comm, comm, sizeof(r.wk.u.comm) - 1);
	r.wk.kstack = kstack;
	r.wk.ustack = ustack;
	trace_writer__add_event(b->w, &r);
}

static inline void tb_waking_irq(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid,
				 uint32_t kind, uint32_t detail, uint64_t func, uint64_t kstack)
{
	struct rec r;

	tb_rec(b, ts, REC_WAKING, tid, pid, kind, &r);
	r.wk.detail = detail;
	if (kind == WAKE_HRTIMER || kind == WAKE_TIMER)
		r.wk.u.func = func;
	else if (kind == WAKE_HARDIRQ)
		strcpy(r.wk.u.irq, "eth0");
	r.wk.kstack = kstack;
	trace_writer__add_event(b->w, &r);
}

/* tid woken on cpu from an IPI handler (enum ipi_vector) entered at since. */
static inline void tb_waking_ipi(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid,
				 uint16_t cpu, uint32_t vector, uint64_t since)
{
	struct rec r;

	tb_rec(b, ts, REC_WAKING, tid, pid, WAKE_IPI | (uint32_t)cpu << 16, &r);
	r.h.cpu = cpu;
	r.wk.detail = vector;
	r.wk.u.since = since;
	trace_writer__add_event(b->w, &r);
}

/* An IPI sent from cpu to target by tid, in context ctx (enum wake_kind | detail << 8); a
 * call-function IPI when call (a callback), else a reschedule. */
static inline void tb_ipi_send(struct tb *b, uint64_t ts, uint32_t tid, uint32_t pid, uint16_t cpu,
			       uint32_t ctx, uint32_t target, bool call)
{
	struct rec r;

	tb_rec(b, ts, REC_IPI_SEND, tid, pid, ctx, &r);
	r.h.cpu = cpu;
	r.ipi.callsite = 0xffffffff81001000ull;
	r.ipi.callback = call ? 0xffffffff81002000ull : 0;
	r.ipi.cpus[target / 64] = 1ull << (target % 64);
	r.ipi.target = target;
	r.ipi.nr_targets = 1;
	trace_writer__add_event(b->w, &r);
}

static inline void tb_simple(struct tb *b, uint64_t ts, uint16_t type, uint32_t tid, uint32_t pid)
{
	struct rec r;

	tb_rec(b, ts, type, tid, pid, 0, &r);
	trace_writer__add_event(b->w, &r);
}

#endif
