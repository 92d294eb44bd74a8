/* The trace writer's write-behind queue: sections are checksummed and written to the file,
 * in the order they were submitted, by a thread of their own, so that the recorder that
 * fills them goes back to its rings at once. A disk that stalls (write-back throttling, a
 * slow or remote file system, a full device queue) holds the writer thread, not the
 * draining of the rings: their records would be lost, where queued sections only wait.
 * Internal to trace/writer.c. */
#ifndef SRVSCOPE_TRACE_WRITEQ_H
#define SRVSCOPE_TRACE_WRITEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len, cap;
};

void buf_add(struct buf *b, const void *p, size_t n);

struct iovec;
/* writev() until all of iov is written; 0 or -errno. */
int writeq__write_all(int fd, struct iovec *iov, int n);

/* The payload buffers of a job: a flush hands over its four, a single section is copied
 * into WQ_ONE. */
enum { WQ_EVENTS, WQ_STACKS, WQ_NAMES, WQ_FDS, WQ_ONE, WQ_BUFS };

struct wq_sec {
	uint16_t type, flags;
	int buf; /* WQ_* */
	size_t off, len;
};

struct wq_job {
	struct wq_job *next;
	struct buf bufs[WQ_BUFS]; /* emptied when the job is handed out, capacity kept */
	struct wq_sec *secs;
	size_t nr_secs, cap_secs;
	uint64_t bytes; /* in the file, headers and padding included */
};

struct writeq;

/* Starts the writer thread for fd (borrowed; the done bytes at head already in the file,
 * from its start). NULL with errno set if the thread cannot start. */
struct writeq *writeq__start(int fd, const void *head, uint64_t done);
/* An empty job to fill, its buffers' capacity reused from jobs written before. Waits
 * while more than WQ_MAX_QUEUED bytes wait to be written. */
struct wq_job *writeq__job(struct writeq *q);
/* Adds a section whose payload is len bytes at off in the job's buffer buf; returns the
 * bytes it takes in the file. */
uint64_t writeq__add(struct wq_job *j, uint16_t type, uint16_t flags, int buf, size_t off,
		     size_t len);
/* Queues the job (owned by the queue from then on): written after those before it. */
void writeq__submit(struct writeq *q, struct wq_job *j);
/* The bytes in the file once every job queued is written (a section to compress counted
 * whole until it is). */
uint64_t writeq__bytes(struct writeq *q);
/* The first error a write met (-errno), or 0. Jobs submitted after it are dropped. */
int writeq__error(struct writeq *q);
/* Waits for every job to be written, ends the thread and frees q. Returns the first
 * error. The file descriptor is left open. */
int writeq__finish(struct writeq *q);

#endif
