/* SPDX-License-Identifier: GPL-2.0 */
/* The recorder's ring buffers, one per CPU, drained and merged by time.
 *
 * A ring shared by all CPUs made every record cost a lock and a few cache lines taken
 * from the other CPU; with one ring per CPU a program only touches its own. Records then
 * come out CPU by CPU, so they are queued here and handed on in time order: a record is
 * handed on once every ring has been drained past its time (plus a slack for programs
 * that stamp their time before walking a stack and reserve after). Stack and stack-copy
 * records carry no time: they are handed on as they come, before the events that refer
 * to them. */
#ifndef SRVSCOPE_RECORD_RINGS_H
#define SRVSCOPE_RECORD_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_map;
struct ring_buffer;
struct rec_ring;

/* Handed each record in time order; a negative return stops the hand-over (the records
 * left stay queued for the next call) and is returned. */
typedef int (*rec_rings_fn)(void *ctx, void *data, size_t size);

struct rec_rings {
	struct ring_buffer *rb;
	struct rec_ring *ring; /* nr of them */
	int nr;
	uint64_t size; /* bytes per ring */
	int *heap;     /* rings by their first queued record's time */
	int nr_heap;
	rec_rings_fn fn;
	void *ctx;
	/* Optional: called with ctx once every ring is drained, before records are handed on
	 * (what the stack records just drained left to do, before the events naming them). */
	void (*drained)(void *ctx);
	uint64_t until; /* a drain hands control back at this time (monotonic ns) */
	int flush_fd;	/* the program that sends a CPU's batch of records (-1: none) */
	/* Optional: when each CPU's batch got its oldest record (0: empty), read in place;
	 * CPUs from nr_since on are flushed at every drain. */
	const volatile uint64_t *batch_since;
	int nr_since;
	unsigned since_clock;
	/* The last drain: when (monotonic ns), how long after the one before, and the most
	 * bytes one ring held (rec_rings__poll's pace). */
	uint64_t last_drain, last_span, last_bytes;
};

/* Before the BPF object is loaded: one ring per possible CPU, made for map (an array of
 * ring buffers); total bytes split among the CPUs online (a power of two each, a page at
 * least), a page for each CPU offline. rr->size: an online CPU's ring. */
int rec_rings__prepare(struct rec_rings *rr, struct bpf_map *map, uint64_t total);
/* After it is loaded: the rings are put in place and read into fn. 0 or -errno. */
int rec_rings__open(struct rec_rings *rr, struct bpf_map *map, rec_rings_fn fn, void *ctx);
/* Whether the program flush_fd can be run on a CPU (BPF_PROG_TEST_RUN_ON_CPU): without,
 * the programs must send each record alone (record.bpf.c no_batch). */
bool rec_rings__can_flush(int flush_fd, int nr_cpus);
/* Waits up to timeout_ms for data (timeout_ms after the last drain at the earliest,
 * unless a ring fills fast), drains every ring and hands on what is final. */
int rec_rings__poll(struct rec_rings *rr, int timeout_ms);
/* Drains every ring and hands on everything queued (the sources are stopped). */
int rec_rings__drain(struct rec_rings *rr);
void rec_rings__close(struct rec_rings *rr);

#endif
