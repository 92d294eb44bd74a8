/* The trace writer's write-behind queue (see writeq.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <libdeflate.h>

#include "trace/trace.h"
#include "trace/writeq.h"
#include "util/util.h"

/* Past this many bytes waiting, the recorder waits for the disk: its rings take the load
 * from there, as they did before the queue. A few seconds of a busy recording. */
#define WQ_MAX_QUEUED (64ull << 20)
/* Jobs kept for reuse once written: their buffers' pages are already backed (filling new
 * pages is dear in a VM that backs its memory lazily). */
#define WQ_SPARE 4
/* A spare job's single-section buffer is kept up to this size. */
#define WQ_ONE_KEEP (1u << 20)

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

/* Where the file system takes it, the writer thread writes past the page cache (O_DIRECT):
 * the copy into fresh page cache pages was most of what writing cost (2.6 ns a byte in a VM
 * that backs its memory lazily), and the pages were dropped again right after. Sections
 * are staged in an aligned buffer of the writer's own (its pages used again and again) and
 * written a block-aligned megabyte at a time; the block the file ends in is written too,
 * padded, at least every STAGE_TAIL_NS (a killed recording keeps what was written until
 * then; the reports read past the padding), and the file is cut to its length at the end.
 * A file system that refuses O_DIRECT, or a write that fails with EINVAL, leaves the
 * writes buffered as before. */
#define STAGE_BLOCK   4096u
#define STAGE_BYTES   (1u << 20)
#define STAGE_TAIL_NS (500 * 1000 * 1000ull)

struct writeq {
	int fd;
	int dfd;	      /* the same file, O_DIRECT; -1: buffered writes */
	unsigned char *stage; /* STAGE_BYTES + STAGE_BLOCK, aligned */
	size_t stage_len;     /* bytes staged, from stage_off (block-aligned) on */
	uint64_t stage_off;
	uint64_t tail_ns;	  /* when the block the file ends in was last written */
	uint64_t synced, dropped; /* sent to the disk up to; dropped from the cache up to */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, room; /* a job queued or the end asked; bytes written */
	struct wq_job *head, *tail, *spare;
	int nr_spare;
	uint64_t queued; /* bytes in the jobs waiting */
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
	s->payload_crc = libdeflate_crc32(0, payload, w->len);
	s->header_crc = libdeflate_crc32(0, s, offsetof(struct trace_section, payload_crc));
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

static int pwrite_all(int fd, const unsigned char *p, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t r = pwrite(fd, p, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Back to buffered writes: what is staged written through the file's own descriptor. */
static int unstage(struct writeq *q)
{
	int err = pwrite_all(q->fd, q->stage, q->stage_len, q->stage_off);

	close(q->dfd);
	q->dfd = -1;
	q->stage_len = 0;
	return err;
}

/* Writes the whole blocks staged (tail: the last, partial one too, padded with zeros) and
 * keeps the partial block at the start of the stage. */
static int stage_write(struct writeq *q, bool tail)
{
	size_t whole = q->stage_len & ~(size_t)(STAGE_BLOCK - 1), n = whole;
	int err;

	if (tail && q->stage_len > whole) {
		n = whole + STAGE_BLOCK;
		memset(q->stage + q->stage_len, 0, n - q->stage_len);
	}
	if (!n)
		return 0;
	err = pwrite_all(q->dfd, q->stage, n, q->stage_off);
	if (err == -EINVAL)
		return unstage(q);
	if (err)
		return err;
	if (whole) {
		memmove(q->stage, q->stage + whole, q->stage_len - whole);
		q->stage_len -= whole;
		q->stage_off += whole;
	}
	if (tail)
		q->tail_ns = now_ns();
	return 0;
}

/* The pieces of one job staged (written out a megabyte at a time), the block the file ends
 * in written too when STAGE_TAIL_NS have passed; after a fall back to buffered writes, the
 * rest written through the file's descriptor at its place. */
static int write_direct(struct writeq *q, const struct iovec *iov, int n)
{
	uint64_t off = q->done;
	int i, err = 0;

	for (i = 0; i < n && !err; i++) {
		const unsigned char *p = iov[i].iov_base;
		size_t len = iov[i].iov_len;

		while (len > 0 && !err) {
			size_t room = STAGE_BYTES + STAGE_BLOCK - q->stage_len, k;

			if (q->dfd < 0) {
				err = pwrite_all(q->fd, p, len, off);
				off += len;
				break;
			}
			k = len < room ? len : room;
			memcpy(q->stage + q->stage_len, p, k);
			q->stage_len += k;
			p += k;
			len -= k;
			off += k;
			if (q->stage_len >= STAGE_BYTES)
				err = stage_write(q, false);
		}
	}
	if (!err && q->dfd >= 0 && now_ns() - q->tail_ns >= STAGE_TAIL_NS)
		err = stage_write(q, true);
	return err;
}

/* Writes one job with one system call (a few, past IOV_MAX pieces); *bytes: what it added
 * to the file (0 when the write failed). */
static int write_job(struct writeq *q, struct wq_job *j, uint64_t *bytes)
{
	size_t nr = j->nr_secs ? j->nr_secs : 1, i;
	struct trace_section *hdrs = xcalloc(nr, sizeof(*hdrs));
	struct iovec *iov = xcalloc(3 * nr, sizeof(*iov));
	int n = 0, err;

	*bytes = 0;
	for (i = 0; i < j->nr_secs; i++) {
		const struct wq_sec *s = &j->secs[i];

		n += section_iov(iov + n, &hdrs[i], s, j->bufs[s->buf].data + s->off);
		*bytes += section_bytes(s->len);
	}
	err = q->dfd >= 0 ? write_direct(q, iov, n) : writeq__write_all(q->fd, iov, n);
	if (err)
		*bytes = 0;
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
		if (j->bufs[WQ_ONE].cap > WQ_ONE_KEEP) { /* the kernel's symbols, given */
			free(j->bufs[WQ_ONE].data);
			j->bufs[WQ_ONE] = (struct buf){0};
		}
		if (q->nr_spare < WQ_SPARE) {
			j->next = q->spare;
			q->spare = j;
			q->nr_spare++;
		} else {
			job_free(j);
		}
		pthread_cond_broadcast(&q->room);
		if (bytes && q->dfd < 0) {
			pthread_mutex_unlock(&q->lock);
			stream_out(q); /* done is this thread's to change: read unlocked */
			pthread_mutex_lock(&q->lock);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* The file reopened O_DIRECT (through /proc/self/fd: the very inode) and the stage set
 * up with the done bytes already in it (head); left buffered when either cannot be had. */
static void start_direct(struct writeq *q, const void *head, uint64_t done)
{
	char self[64];
	void *stage;
	int dfd;

	q->dfd = -1;
	if (done > STAGE_BYTES || getenv("SRVSCOPE_WRITE_BUFFERED"))
		return;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", q->fd);
	dfd = open(self, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (posix_memalign(&stage, STAGE_BLOCK, STAGE_BYTES + STAGE_BLOCK)) {
		close(dfd);
		return;
	}
	memcpy(stage, head, done);
	q->stage = stage;
	q->stage_len = done;
	q->stage_off = 0;
	q->tail_ns = now_ns();
	q->dfd = dfd;
}

struct writeq *writeq__start(int fd, const void *head, uint64_t done)
{
	struct writeq *q = xcalloc(1, sizeof(*q));
	sigset_t all, old;
	int err;

	q->fd = fd;
	q->synced = q->dropped = q->done = done;
	start_direct(q, head, done);
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
		if (q->dfd >= 0)
			close(q->dfd);
		free(q->stage);
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
	/* The block the file ends in, then the file cut to its length (the padding gone). */
	if (q->stage && !q->err) {
		if (q->dfd >= 0)
			q->err = stage_write(q, true);
		if (!q->err && ftruncate(q->fd, (off_t)q->done) < 0)
			q->err = -errno;
	}
	if (q->dfd >= 0)
		close(q->dfd);
	free(q->stage);
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
