// SPDX-License-Identifier: GPL-2.0
/* The recorder's per-CPU ring buffers and their merge by time (see rings.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/record.h"
#include "record/rings.h"
#include "util/util.h"

#define RING_MIN 4096u
#define KEY_NONE UINT64_MAX /* above every time */
/* A program stamps its time when it starts and reserves its record last, after a stack
 * walk or copy (tens of microseconds at worst): a record older than this, not yet
 * drained, is not expected. One that comes later still is handed on late, out of order,
 * and the trace reader's sort puts it back in place. */
#define SLACK_NS (20 * 1000 * 1000ull)
/* A drain ends after this long even while records keep coming (libbpf consumes a ring
 * until it finds it empty), so that the recorder's loop sees its deadline and its
 * signals: a target that makes records as fast as they are read would hold it there. */
#define DRAIN_NS   (50 * 1000 * 1000ull)
#define STOP_DRAIN (-EBUSY) /* from on_sample: enough for this drain */
/* A CPU's batch is sent at a drain once its oldest record is this old (flush_batches). */
#define BATCH_AGE_NS (SLACK_NS / 2)

/* A queued record: its time, then its bytes (8-byte aligned). */
struct entry {
	uint64_t key;
	uint32_t size;
	uint32_t pad;
	unsigned char data[];
};

struct rec_ring {
	struct rec_rings *rr;
	uint64_t drained; /* bytes taken from this ring at the drain under way */
	int fd;
	unsigned char *buf;
	size_t head, tail, cap;
};

static size_t entry_bytes(uint32_t size)
{
	return (sizeof(struct entry) + size + 7) & ~(size_t)7;
}

static struct entry *at(const struct rec_ring *q, size_t off)
{
	return (struct entry *)(q->buf + off);
}

/* Stacks and stack copies carry no time; every other record starts with rec_hdr. */
static bool timed(const void *data, size_t size)
{
	uint16_t type;

	if (size < sizeof(struct rec_hdr))
		return false;
	memcpy(&type, (const char *)data + offsetof(struct rec_hdr, type), sizeof(type));
	return type != REC_STACK && type != REC_USTACK_DUMP;
}

static int reserve(struct rec_ring *q, size_t need)
{
	size_t cap;
	void *p;

	if (q->tail + need <= q->cap)
		return 0;
	if (q->head) { /* what was handed on makes room first */
		memmove(q->buf, q->buf + q->head, q->tail - q->head);
		q->tail -= q->head;
		q->head = 0;
		/* Half free at least: else the records waiting (20 ms of them) would be moved
		 * again and again for a few bytes of room each time. */
		if (q->tail + need <= q->cap / 2)
			return 0;
	}
	cap = q->cap ? q->cap : 1 << 16;
	while (cap < 2 * (q->tail + need))
		cap *= 2;
	p = realloc(q->buf, cap);
	if (!p)
		return -ENOMEM;
	q->buf = p;
	q->cap = cap;
	return 0;
}

static int queue(struct rec_ring *q, void *data, size_t size);

/* A batch of one CPU's records (struct rec_batch_hdr): each queued as if drained alone. */
static int queue_batch(struct rec_ring *q, unsigned char *data, size_t size)
{
	struct rec_batch_hdr h;
	size_t i;
	int err;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.n > (size - sizeof(h)) / sizeof(struct rec))
		return 0; /* not what the programs write: dropped */
	for (i = 0; i < h.n; i++)
		if ((err = queue(q, data + sizeof(h) + i * sizeof(struct rec), sizeof(struct rec))))
			return err;
	return 0;
}

/* A record drained from ring q: queued, with its time as key. Stacks and stack copies are
 * handed on at once: events refer to them, so they must come first, and a copy's unwind
 * lets the programs reuse it sooner. */
static int queue(struct rec_ring *q, void *data, size_t size)
{
	size_t need = entry_bytes(size);
	struct entry *e;
	uint16_t type;

	if (size >= sizeof(struct rec_hdr)) {
		memcpy(&type, (const char *)data + offsetof(struct rec_hdr, type), sizeof(type));
		if (type == REC_BATCH)
			return queue_batch(q, data, size);
	}
	if (!timed(data, size))
		return q->rr->fn(q->rr->ctx, data, size);
	if (size > UINT32_MAX || reserve(q, need))
		return -ENOMEM;
	e = at(q, q->tail);
	memcpy(&e->key, data, sizeof(e->key));
	e->size = size;
	e->pad = 0;
	memcpy(e->data, data, size);
	q->tail += need;
	return 0;
}

/* libbpf counts the record consumed whatever this returns. */
static int on_sample(void *ctx, void *data, size_t size)
{
	struct rec_ring *q = ctx;
	struct rec_rings *rr = q->rr;
	int err = queue(q, data, size);

	q->drained += size + 8; /* and its 8-byte header in the ring */
	if (err)
		return err;
	if (++rr->since_clock >= 1024) {
		rr->since_clock = 0;
		if (now_ns() >= rr->until)
			return STOP_DRAIN;
	}
	return 0;
}

/* Every ring drained, or DRAIN_NS spent on it. Records left in a ring then are handed on
 * after the newer ones merged now: late, which the trace reader's sort mends. */
static int consume(struct rec_rings *rr)
{
	int err;

	rr->until = now_ns() + DRAIN_NS;
	rr->since_clock = 0;
	err = ring_buffer__consume(rr->rb);
	return err == STOP_DRAIN ? 0 : err;
}

/* The most any ring held at the drain just made, in bytes, and each ring's count reset. */
static uint64_t fullest(struct rec_rings *rr)
{
	uint64_t most = 0;
	int i;

	for (i = 0; i < rr->nr; i++) {
		if (rr->ring[i].drained > most)
			most = rr->ring[i].drained;
		rr->ring[i].drained = 0;
	}
	return most;
}

/* Drains are paced, timeout_ms apart at least: the rings' descriptors are polled level
 * by level, so while the targets write faster than the rings are read a poll returns at
 * once, and the recorder would drain without pause, in small drains that each pay for
 * the batches' flush (an interrupt on every CPU), a poll and a wake-up. The pause is cut
 * short when the fullest ring took in more than an eighth of its size since the last
 * drain (a quarter wakes the recorder: struct rec_rings.size), in proportion. */
static void pace(struct rec_rings *rr, int timeout_ms)
{
	uint64_t now = now_ns(), gap = timeout_ms * 1000000ull, since, wait;
	struct timespec ts;

	if (!rr->last_drain || timeout_ms <= 0)
		return;
	since = now - rr->last_drain;
	if (since >= gap || rr->last_bytes >= rr->size / 8)
		return;
	wait = gap - since;
	/* at the last drain's rate, half the time to an eighth of the ring */
	if (rr->last_bytes && rr->last_span &&
	    (double)rr->size / 16 / rr->last_bytes * rr->last_span < wait)
		wait = (uint64_t)((double)rr->size / 16 / rr->last_bytes * rr->last_span);
	ts.tv_sec = wait / 1000000000ull;
	ts.tv_nsec = wait % 1000000000ull;
	nanosleep(&ts, NULL); /* a signal ends it early: the loop looks at it */
}

static uint64_t head_key(const struct rec_ring *q)
{
	return q->head < q->tail ? at(q, q->head)->key : KEY_NONE;
}

static bool heap_less(const struct rec_rings *rr, int a, int b)
{
	return head_key(&rr->ring[rr->heap[a]]) < head_key(&rr->ring[rr->heap[b]]);
}

static void heap_swap(struct rec_rings *rr, int a, int b)
{
	int t = rr->heap[a];

	rr->heap[a] = rr->heap[b];
	rr->heap[b] = t;
}

static void sift_down(struct rec_rings *rr, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;

		if (l < rr->nr_heap && heap_less(rr, l, m))
			m = l;
		if (l + 1 < rr->nr_heap && heap_less(rr, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		heap_swap(rr, i, m);
		i = m;
	}
}

/* Hands on, in time order, every queued record older than limit. */
static int merge(struct rec_rings *rr, uint64_t limit)
{
	int i, err = 0;

	rr->nr_heap = 0;
	for (i = 0; i < rr->nr; i++)
		if (head_key(&rr->ring[i]) < limit)
			rr->heap[rr->nr_heap++] = i;
	for (i = rr->nr_heap / 2 - 1; i >= 0; i--)
		sift_down(rr, i);
	while (rr->nr_heap && !err) {
		struct rec_ring *q = &rr->ring[rr->heap[0]];
		struct entry *e = at(q, q->head);

		err = rr->fn(rr->ctx, e->data, e->size);
		q->head += entry_bytes(e->size);
		if (q->head == q->tail)
			q->head = q->tail = 0;
		if (head_key(q) >= limit)
			rr->heap[0] = rr->heap[--rr->nr_heap];
		sift_down(rr, 0);
	}
	return err < 0 ? err : 0;
}

/* Marks in online[] (nr entries) the CPUs /sys lists as online; all of them when it
 * cannot be read. */
static void online_cpus(bool *online, int nr)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int a, b, i, n = 0;
	char sep;

	for (i = 0; i < nr; i++)
		online[i] = !f;
	while (f && fscanf(f, "%d", &a) == 1) {
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-' && fscanf(f, "%d", &b) == 1)
			sep = (char)fgetc(f);
		for (i = a; i <= b && i < nr; i++)
			if (i >= 0 && !online[i]) {
				online[i] = true;
				n++;
			}
		if (sep != ',')
			break;
	}
	if (f)
		fclose(f);
	for (i = 0; f && !n && i < nr; i++)
		online[i] = true;
}

int rec_rings__prepare(struct rec_rings *rr, struct bpf_map *map, uint64_t total)
{
	int i, nr = libbpf_num_possible_cpus(), nr_online = 0;
	uint64_t per = RING_MIN;
	bool *online;

	memset(rr, 0, sizeof(*rr));
	rr->flush_fd = -1;
	if (nr <= 0)
		return nr ? nr : -EINVAL;
	rr->ring = calloc(nr, sizeof(*rr->ring));
	rr->heap = calloc(nr, sizeof(*rr->heap));
	online = calloc(nr, sizeof(*online));
	if (!rr->ring || !rr->heap || !online) {
		free(online);
		return -ENOMEM;
	}
	/* The CPUs online now share the size; one brought online later gets a page. */
	online_cpus(online, nr);
	for (i = 0; i < nr; i++)
		nr_online += online[i];
	while (per * 2 <= total / (nr_online ? nr_online : 1))
		per *= 2;
	rr->nr = nr;
	rr->size = per;
	for (i = 0; i < nr; i++)
		rr->ring[i].fd = -1;
	for (i = 0; i < nr; i++) {
		rr->ring[i].rr = rr;
		rr->ring[i].fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "srvscope_ring", 0, 0,
						online[i] ? per : RING_MIN, NULL);
		if (rr->ring[i].fd < 0) {
			free(online);
			return -errno;
		}
	}
	free(online);
	/* A ring is the pattern the map's entries must match (ring buffers of any size do). */
	if (bpf_map__set_max_entries(map, nr) || bpf_map__set_inner_map_fd(map, rr->ring[0].fd))
		return -EINVAL;
	return 0;
}

/* The rings into the map. Each update of a map of maps waits for a grace period (so that
 * programs see the new entry): one batch waits once where the kernel batches them (6.8
 * on), else the entries go one by one. */
static int put_rings(struct rec_rings *rr, int fd)
{
	uint32_t *keys = calloc(rr->nr, sizeof(*keys)), count = rr->nr;
	int *fds = calloc(rr->nr, sizeof(*fds)), i, err = 0;

	if (!keys || !fds) {
		free(keys);
		free(fds);
		return -ENOMEM;
	}
	for (i = 0; i < rr->nr; i++) {
		keys[i] = i;
		fds[i] = rr->ring[i].fd;
	}
	if (bpf_map_update_batch(fd, keys, fds, &count, NULL))
		for (i = 0; i < rr->nr && !err; i++)
			if (bpf_map_update_elem(fd, &keys[i], &fds[i], BPF_ANY))
				err = -errno;
	free(keys);
	free(fds);
	return err;
}

int rec_rings__open(struct rec_rings *rr, struct bpf_map *map, rec_rings_fn fn, void *ctx)
{
	int i, err;

	rr->fn = fn;
	rr->ctx = ctx;
	if ((err = put_rings(rr, bpf_map__fd(map))))
		return err;
	for (i = 0; i < rr->nr; i++) {
		struct rec_ring *q = &rr->ring[i];

		if (!i)
			rr->rb = ring_buffer__new(q->fd, on_sample, q, NULL);
		else if ((err = ring_buffer__add(rr->rb, q->fd, on_sample, q)))
			return err;
		if (!rr->rb)
			return -errno;
	}
	return 0;
}

/* flush_fd's program run on that CPU: 0, or -errno (-ENXIO: the CPU is offline). */
static int run_on_cpu(int flush_fd, int cpu)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

	return bpf_prog_test_run_opts(flush_fd, &o);
}

/* Has the CPUs send the records their programs hold back (flush_fd: record.bpf.c
 * flush_batch, run there through BPF_PROG_TEST_RUN), before the rings are read: every CPU
 * (all), or those whose oldest record held is BATCH_AGE_NS old (now: CLOCK_MONOTONIC, the
 * programs' clock). A record younger than that is flushed at the next drain at the latest,
 * still younger than the merge's SLACK_NS: it is merged in order. */
static void flush_batches(struct rec_rings *rr, bool all, uint64_t now)
{
	int i;

	for (i = 0; rr->flush_fd >= 0 && i < rr->nr; i++) {
		if (!all && rr->batch_since && i < rr->nr_since) {
			uint64_t since = rr->batch_since[i];

			if (!since || since + BATCH_AGE_NS > now)
				continue;
		}
		run_on_cpu(rr->flush_fd, i); /* an offline CPU holds nothing */
	}
}

bool rec_rings__can_flush(int flush_fd, int nr_cpus)
{
	int i, err = -ENXIO;

	for (i = 0; i < nr_cpus && err == -ENXIO; i++)
		err = run_on_cpu(flush_fd, i); /* past offline CPUs, to one that answers */
	return !err;
}

int rec_rings__poll(struct rec_rings *rr, int timeout_ms)
{
	uint64_t now;
	int err;

	pace(rr, timeout_ms);
	rr->until = now_ns() + timeout_ms * 1000000ull + DRAIN_NS;
	rr->since_clock = 0;
	err = ring_buffer__poll(rr->rb, timeout_ms);
	if (err < 0 && err != -EINTR && err != STOP_DRAIN)
		return err;
	now = now_ns();
	flush_batches(rr, false, now);
	err = consume(rr);
	if (err < 0)
		return err;
	rr->last_span = rr->last_drain ? now - rr->last_drain : 0;
	rr->last_drain = now;
	rr->last_bytes = fullest(rr);
	if (rr->drained)
		rr->drained(rr->ctx);
	return merge(rr, now > SLACK_NS ? now - SLACK_NS : 0);
}

int rec_rings__drain(struct rec_rings *rr)
{
	int err, err2;

	/* The sources are stopped: what is in the rings and the batches is all there is. */
	flush_batches(rr, true, 0);
	rr->until = UINT64_MAX;
	do
		err = ring_buffer__consume(rr->rb);
	while (err == STOP_DRAIN);
	if (rr->drained)
		rr->drained(rr->ctx);
	err2 = merge(rr, KEY_NONE);
	return err < 0 ? err : err2;
}

void rec_rings__close(struct rec_rings *rr)
{
	int i;

	ring_buffer__free(rr->rb);
	for (i = 0; rr->ring && i < rr->nr; i++) {
		if (rr->ring[i].fd >= 0)
			close(rr->ring[i].fd);
		free(rr->ring[i].buf);
	}
	free(rr->ring);
	free(rr->heap);
	memset(rr, 0, sizeof(*rr));
}
