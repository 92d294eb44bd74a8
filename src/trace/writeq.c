/* The trace writer's write-behind queue (see writeq.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "trace/trace.h"
#include "trace/writeq.h"
#include "util/util.h"

/* Past this many bytes waiting, the recorder waits for the disk: its rings take the load
 * from there, as they did before the queue. A few seconds of a busy recording. */
#define WQ_MAX_QUEUED (64ull << 20)
/* Jobs kept for reuse once written: their buffers' pages are already backed (filling new
 * pages is dear in a VM that backs its memory lazily). */
#define WQ_SPARE 4

/* What flushes wrote is sent to the disk a megabyte at a time (STREAM_CHUNK) and dropped
 * from the page cache a chunk later, written by then: a recording streams megabytes a
 * second, which left in the cache would push out the pages of the server it looks at (a
 * database's), and new pages are dear to fill: in a VM that backs its memory lazily, the
 * copy into them took most of the recorder's CPU time (2.6 ns a byte, against 0.2 into
 * pages used before). A chunk rather than each flush: every write-back started is an I/O
 * submitted and a virtual disk's doorbell rung (a VM exit), which at each 20 ms drain were
 * a tenth of the recorder's CPU under memcached at full speed. For a pipe both calls fail,
 * harmlessly. */
#define STREAM_CHUNK (1u << 20)

struct writeq {
	int fd;
	uint64_t synced, dropped; /* sent to the disk up to; dropped from the cache up to */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, room; /* a job queued or the end asked; bytes written */
	struct wq_job *head, *tail, *spare;
	int nr_spare;
	uint64_t queued; /* bytes in the jobs waiting (zstd sections counted whole) */
	uint64_t done;	 /* bytes written (the writer thread's alone to change) */
	bool ending;
	int err;
};

static const char zeros[8];

void buf_add(struct buf *b, const void *p, size_t n)
{
	xgrow((void **)&b->data, &b->cap, b->len + n, 1);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

int writeq__write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t r = writev(fd, iov, n > IOV_MAX ? IOV_MAX : n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= r;
		}
	}
	return 0;
}

static uint64_t section_bytes(size_t len)
{
	return sizeof(struct trace_section) + ((len + 7) & ~(size_t)7);
}

uint64_t writeq__add(struct wq_job *j, uint16_t type, uint16_t flags, int buf, size_t off,
		     size_t len)
{
	struct wq_sec *s;

	xgrow((void **)&j->secs, &j->cap_secs, j->nr_secs + 1, sizeof(*j->secs));
	s = &j->secs[j->nr_secs++];
	*s = (struct wq_sec){.type = type, .flags = flags, .buf = buf, .off = off, .len = len};
	s->zstd = false;
	j->bytes += section_bytes(len);
	return section_bytes(len);
}

/* Appends the iovecs of one section (header, payload, padding) to iov; fills the header
 * with its checksums. */
static int section_iov(struct iovec *iov, struct trace_section *s, const struct wq_sec *w,
		       const void *payload)
{
	int n = 0;

	*s = (struct trace_section){
		.magic = TRACE_SECTION_MAGIC, .type = w->type, .flags = w->flags, .size = w->len};
	s->payload_crc = crc32(0, payload, w->len);
	s->header_crc = crc32(0, (const Bytef *)s, offsetof(struct trace_section, payload_crc));
	iov[n].iov_base = s;
	iov[n++].iov_len = sizeof(*s);
	if (w->len) {
		iov[n].iov_base = (void *)payload;
		iov[n++].iov_len = w->len;
	}
	if (w->len & 7) {
		iov[n].iov_base = (void *)zeros;
		iov[n++].iov_len = 8 - (w->len & 7);
	}
	return n;
}

static void stream_out(struct writeq *q)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (q->done - q->synced < STREAM_CHUNK)
		return;
	if (q->synced > q->dropped &&
	    !posix_fadvise(q->fd, (off_t)q->dropped, (off_t)(q->synced - q->dropped),
			   POSIX_FADV_DONTNEED))
		q->dropped = q->synced & ~(page - 1); /* the partial page, next time */
	sync_file_range(q->fd, (off_t)q->synced, (off_t)(q->done - q->synced),
			SYNC_FILE_RANGE_WRITE);
	q->synced = q->done;
}

void writeq__zstd(struct wq_job *j)
{
	j->secs[j->nr_secs - 1].zstd = true;
}

/* A section's payload compressed with zstd (level 3) into *z (freed by the caller): the
 * section then says so. Left as it is when zstd fails. */
static const void *zstd_payload(struct wq_sec *s, const void *payload, void **z)
{
	size_t cap = ZSTD_compressBound(s->len), n;

	*z = xmalloc(cap);
	n = ZSTD_compress(*z, cap, payload, s->len, 3);
	if (ZSTD_isError(n))
		return payload;
	s->len = n;
	s->flags |= SECF_ZSTD;
	return *z;
}

/* Writes one job with one system call (a few, past IOV_MAX pieces); *bytes: what it added
 * to the file (0 when the write failed). */
static int write_job(struct writeq *q, struct wq_job *j, uint64_t *bytes)
{
	size_t nr = j->nr_secs ? j->nr_secs : 1, i;
	struct trace_section *hdrs = xcalloc(nr, sizeof(*hdrs));
	struct iovec *iov = xcalloc(3 * nr, sizeof(*iov));
	void **z = xcalloc(nr, sizeof(*z));
	int n = 0, err;

	*bytes = 0;
	for (i = 0; i < j->nr_secs; i++) {
		struct wq_sec *s = &j->secs[i];
		const void *p = j->bufs[s->buf].data + s->off;

		if (s->zstd)
			p = zstd_payload(s, p, &z[i]);
		n += section_iov(iov + n, &hdrs[i], s, p);
		*bytes += section_bytes(s->len);
	}
	err = writeq__write_all(q->fd, iov, n);
	if (err)
		*bytes = 0;
	for (i = 0; i < j->nr_secs; i++)
		free(z[i]);
	free(z);
	free(iov);
	free(hdrs);
	return err;
}

static void job_free(struct wq_job *j)
{
	int i;

	for (i = 0; i < WQ_BUFS; i++)
		free(j->bufs[i].data);
	free(j->secs);
	free(j);
}

static void *writer_main(void *arg)
{
	struct writeq *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct wq_job *j = q->head;
		uint64_t bytes = 0;
		int err = 0;

		if (!j) {
			if (q->ending)
				break;
			pthread_cond_wait(&q->work, &q->lock);
			continue;
		}
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		if (!q->err) {
			pthread_mutex_unlock(&q->lock);
			err = write_job(q, j, &bytes);
			pthread_mutex_lock(&q->lock);
		}
		if (err && !q->err)
			q->err = err;
		q->queued -= j->bytes;
		q->done += bytes; /* with queued: writeq__bytes counts each job once */
		if (q->nr_spare < WQ_SPARE) {
			j->next = q->spare;
			q->spare = j;
			q->nr_spare++;
		} else {
			job_free(j);
		}
		pthread_cond_broadcast(&q->room);
		if (bytes) {
			pthread_mutex_unlock(&q->lock);
			stream_out(q); /* done is this thread's to change: read unlocked */
			pthread_mutex_lock(&q->lock);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct writeq *writeq__start(int fd, uint64_t done)
{
	struct writeq *q = xcalloc(1, sizeof(*q));
	sigset_t all, old;
	int err;

	q->fd = fd;
	q->synced = q->dropped = q->done = done;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->room, NULL);
	/* Signals are the recorder's to take (SIGINT ends a recording), not this thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&q->thread, NULL, writer_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&q->room);
		pthread_cond_destroy(&q->work);
		pthread_mutex_destroy(&q->lock);
		free(q);
		errno = err;
		return NULL;
	}
	pthread_setname_np(q->thread, "srvscope-write");
	return q;
}

struct wq_job *writeq__job(struct writeq *q)
{
	struct wq_job *j;
	int i;

	pthread_mutex_lock(&q->lock);
	while (q->queued > WQ_MAX_QUEUED && !q->err)
		pthread_cond_wait(&q->room, &q->lock);
	j = q->spare;
	if (j) {
		q->spare = j->next;
		q->nr_spare--;
	}
	pthread_mutex_unlock(&q->lock);
	if (!j)
		return xcalloc(1, sizeof(*j));
	for (i = 0; i < WQ_BUFS; i++)
		j->bufs[i].len = 0;
	j->nr_secs = 0;
	j->bytes = 0;
	j->next = NULL;
	return j;
}

void writeq__submit(struct writeq *q, struct wq_job *j)
{
	pthread_mutex_lock(&q->lock);
	j->next = NULL;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	q->queued += j->bytes;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
}

uint64_t writeq__bytes(struct writeq *q)
{
	uint64_t b;

	pthread_mutex_lock(&q->lock);
	b = q->done + q->queued;
	pthread_mutex_unlock(&q->lock);
	return b;
}

int writeq__error(struct writeq *q)
{
	int err;

	pthread_mutex_lock(&q->lock);
	err = q->err;
	pthread_mutex_unlock(&q->lock);
	return err;
}

int writeq__finish(struct writeq *q)
{
	int err;

	pthread_mutex_lock(&q->lock);
	q->ending = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	err = q->err;
	while (q->spare) {
		struct wq_job *j = q->spare;

		q->spare = j->next;
		job_free(j);
	}
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}
