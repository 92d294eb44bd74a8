/* Trace file writer: buffers events, stacks, names and fd descriptions, and appends them
 * as sections with one writev() per flush, so that a recording killed at any moment leaves
 * a file whose complete sections are all readable. Each section header carries a CRC-32 of
 * itself and of its payload, so a reader can skip a damaged one and read the rest. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "trace/trace.h"
#include "util/safefile.h"
#include "util/util.h"

struct buf {
	char *data;
	size_t len, cap;
};

struct trace_writer {
	int fd; /* -1 with a sink */
	const struct trace_sink *sink;
	uint64_t bytes, events;
	uint64_t synced, dropped; /* sent to the disk up to; dropped from the page cache up to */
	struct buf events_buf, stacks, names, fds;
};

static const char zeros[8];

static void buf_add(struct buf *b, const void *p, size_t n)
{
	xgrow((void **)&b->data, &b->cap, b->len + n, 1);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void buf_pad(struct buf *b)
{
	buf_add(b, zeros, (8 - (b->len & 7)) & 7);
}

static int write_all(int fd, struct iovec *iov, int n)
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

struct trace_writer *trace_writer__open(const char *path, bool force,
					const struct trace_file_header *hdr)
{
	struct trace_writer *w;
	struct trace_file_header sealed = *hdr;
	struct iovec iov = {&sealed, sizeof(sealed)};
	int fd, err;

	sealed.header_crc =
		crc32(0, (const Bytef *)hdr, offsetof(struct trace_file_header, header_crc));
	/* Written in place (not renamed at the end), so that a recording killed at any
	 * moment leaves its file: O_EXCL and O_NOFOLLOW keep that safe in a shared /tmp. */
	fd = safefile__create(path, SAFEFILE_MODE, force);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	err = write_all(fd, &iov, 1);
	if (err) {
		close(fd);
		errno = -err;
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->bytes = sizeof(*hdr);
	return w;
}

struct trace_writer *trace_writer__open_sink(const struct trace_sink *sink)
{
	struct trace_writer *w = xcalloc(1, sizeof(*w));

	w->fd = -1;
	w->sink = sink;
	return w;
}

void trace_writer__add_event(struct trace_writer *w, const struct rec *r)
{
	w->events++;
	if (w->sink) {
		if (w->sink->event)
			w->sink->event(w->sink->ctx, r);
		return;
	}
	buf_add(&w->events_buf, r, sizeof(*r));
}

void trace_writer__add_stack(struct trace_writer *w, uint64_t id, uint32_t flags,
			     const uint64_t *ips, uint32_t nr)
{
	uint32_t head[2] = {nr, flags};

	if (w->sink) {
		if (w->sink->stack)
			w->sink->stack(w->sink->ctx, id, flags, ips, nr);
		return;
	}
	buf_add(&w->stacks, &id, sizeof(id));
	buf_add(&w->stacks, head, sizeof(head));
	buf_add(&w->stacks, ips, nr * sizeof(*ips));
}

void trace_writer__add_name(struct trace_writer *w, uint32_t tid, uint32_t pid, const char *comm)
{
	struct trace_name n = {.tid = tid, .pid = pid};

	if (w->sink) {
		if (w->sink->name)
			w->sink->name(w->sink->ctx, tid, pid, comm);
		return;
	}
	strncpy(n.comm, comm, sizeof(n.comm) - 1);
	buf_add(&w->names, &n, sizeof(n));
}

void trace_writer__add_fd(struct trace_writer *w, uint64_t ts, uint32_t pid, int32_t fd,
			  const char *desc)
{
	struct trace_fd_hdr h = {.ts = ts, .pid = pid, .fd = fd, .len = strlen(desc)};

	if (w->sink)
		return;
	buf_add(&w->fds, &h, sizeof(h));
	buf_add(&w->fds, desc, h.len);
	buf_pad(&w->fds);
}

/* Appends the iovecs of one section (header, payload, padding) to iov; fills the header
 * (flags already set) with its checksums. */
static int section_iov(struct iovec *iov, struct trace_section *s, uint16_t type,
		       const void *payload, size_t len)
{
	int n = 0;

	s->magic = TRACE_SECTION_MAGIC;
	s->type = type;
	s->size = len;
	s->payload_crc = crc32(0, payload, len);
	s->header_crc = crc32(0, (const Bytef *)s, offsetof(struct trace_section, payload_crc));
	iov[n].iov_base = s;
	iov[n++].iov_len = sizeof(*s);
	if (len) {
		iov[n].iov_base = (void *)payload;
		iov[n++].iov_len = len;
	}
	if (len & 7) {
		iov[n].iov_base = (void *)zeros;
		iov[n++].iov_len = 8 - (len & 7);
	}
	return n;
}

static uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t b = 0;

	while (n-- > 0)
		b += iov[n].iov_len;
	return b;
}

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

static void stream_out(struct trace_writer *w)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (w->bytes - w->synced < STREAM_CHUNK)
		return;
	if (w->synced > w->dropped &&
	    !posix_fadvise(w->fd, (off_t)w->dropped, (off_t)(w->synced - w->dropped),
			   POSIX_FADV_DONTNEED))
		w->dropped = w->synced & ~(page - 1); /* the partial page, next time */
	sync_file_range(w->fd, (off_t)w->synced, (off_t)(w->bytes - w->synced),
			SYNC_FILE_RANGE_WRITE);
	w->synced = w->bytes;
}

int trace_writer__flush(struct trace_writer *w)
{
	static const size_t chunk = TRACE_EVENTS_PER_SECTION * REC_SIZE;
	struct buf *bufs[] = {&w->stacks, &w->names, &w->fds};
	static const uint16_t types[] = {SEC_STACKS, SEC_NAMES, SEC_FDS};
	size_t i, nr_secs = ARRAY_SIZE(bufs) + (w->events_buf.len + chunk - 1) / chunk, off;
	struct trace_section *secs;
	struct iovec *iov;
	int n = 0, err = 0;

	if (w->sink)
		return 0; /* nothing was buffered */
	secs = xcalloc(nr_secs, sizeof(*secs));
	iov = xcalloc(3 * nr_secs, sizeof(*iov));
	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		if (bufs[i]->len)
			n += section_iov(iov + n, &secs[i], types[i], bufs[i]->data, bufs[i]->len);
	/* Events in sections of TRACE_EVENTS_PER_SECTION: a damaged byte costs those only. */
	for (off = 0; off < w->events_buf.len; off += chunk, i++)
		n += section_iov(iov + n, &secs[i], SEC_EVENTS, w->events_buf.data + off,
				 w->events_buf.len - off < chunk ? w->events_buf.len - off : chunk);
	if (n) {
		w->bytes += iov_bytes(iov, n);
		err = write_all(w->fd, iov, n);
		if (!err)
			stream_out(w);
	}
	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		bufs[i]->len = 0;
	w->events_buf.len = 0;
	free(iov);
	free(secs);
	return err;
}

static int write_section(struct trace_writer *w, uint16_t type, uint16_t flags, const void *payload,
			 size_t len)
{
	struct trace_section s = {.flags = flags};
	struct iovec iov[3];
	int n, err;

	if (w->sink) {
		if (type == SEC_LOST && w->sink->lost)
			w->sink->lost(w->sink->ctx, payload, len);
		return 0;
	}
	err = trace_writer__flush(w);

	if (err)
		return err;
	if (len > TRACE_SECTION_MAX)
		return -EFBIG; /* a reader would take it for a damaged header */
	n = section_iov(iov, &s, type, payload, len);
	w->bytes += iov_bytes(iov, n);
	return write_all(w->fd, iov, n);
}

int trace_writer__section(struct trace_writer *w, uint16_t type, const void *payload, size_t len)
{
	return write_section(w, type, 0, payload, len);
}

int trace_writer__section_zstd(struct trace_writer *w, uint16_t type, const void *payload,
			       size_t len)
{
	size_t cap = ZSTD_compressBound(len), n;
	void *z;
	int err;

	if (w->sink) /* kallsyms: nobody reads it, spare the compression */
		return write_section(w, type, 0, payload, len);
	z = xmalloc(cap);
	n = ZSTD_compress(z, cap, payload, len, 3);
	if (ZSTD_isError(n))
		err = write_section(w, type, 0, payload, len);
	else
		err = write_section(w, type, SECF_ZSTD, z, n);
	free(z);
	return err;
}

int trace_writer__maps(struct trace_writer *w, uint64_t ts, uint32_t pid, const char *maps,
		       size_t maps_len, const char *build_ids, size_t build_ids_len)
{
	struct trace_maps_hdr h = {
		.ts = ts, .pid = pid, .maps_len = maps_len, .build_ids_len = build_ids_len};
	struct buf b = {0};
	int err;

	buf_add(&b, &h, sizeof(h));
	buf_add(&b, maps, maps_len);
	if (build_ids_len)
		buf_add(&b, build_ids, build_ids_len);
	err = trace_writer__section(w, SEC_MAPS, b.data, b.len);
	free(b.data);
	return err;
}

uint64_t trace_writer__bytes(const struct trace_writer *w)
{
	return w->bytes;
}

uint64_t trace_writer__events(const struct trace_writer *w)
{
	return w->events;
}

int trace_writer__close(struct trace_writer *w, uint64_t end_ns)
{
	struct trace_end end = {.end_ns = end_ns};
	int err;

	if (!w)
		return 0;
	end.nr_events = w->events;
	err = trace_writer__section(w, SEC_END, &end, sizeof(end));
	if (w->fd >= 0 && close(w->fd) && !err)
		err = -errno;
	free(w->events_buf.data);
	free(w->stacks.data);
	free(w->names.data);
	free(w->fds.data);
	free(w);
	return err;
}
