/* Trace file writer: buffers events, stacks, names and fd descriptions, and appends them
 * as sections with one writev() per flush (by a thread of their own: writeq.h), so that a
 * recording killed at any moment leaves a file whose complete sections are all readable. Each
 * section header carries a CRC-32 of itself and of its payload, so a reader can skip a damaged one
 * and read the rest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include "trace/trace.h"
#include "trace/writeq.h"
#include "util/safefile.h"
#include "util/util.h"

struct trace_writer {
	int fd; /* -1 with a sink */
	const struct trace_sink *sink;
	struct writeq *q; /* NULL with a sink */
	uint64_t events;
	struct buf events_buf, stacks, names, fds;
};

static const char zeros[8];

static void buf_pad(struct buf *b)
{
	buf_add(b, zeros, (8 - (b->len & 7)) & 7);
}

struct trace_writer *trace_writer__open(const char *path, bool force,
					const struct trace_file_header *hdr)
{
	struct trace_writer *w;
	struct trace_file_header sealed = *hdr;
	struct iovec iov = {&sealed, sizeof(sealed)};
	int fd, err;

	sealed.header_crc =
		libdeflate_crc32(0, hdr, offsetof(struct trace_file_header, header_crc));
	/* Written in place (not renamed at the end), so that a recording killed at any
	 * moment leaves its file: O_EXCL and O_NOFOLLOW keep that safe in a shared /tmp. */
	fd = safefile__create(path, SAFEFILE_MODE, force);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	err = writeq__write_all(fd, &iov, 1);
	if (err) {
		close(fd);
		errno = -err;
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->q = writeq__start(fd, &sealed, sizeof(sealed));
	if (!w->q) {
		err = errno;
		close(fd);
		free(w);
		errno = err;
		return NULL;
	}
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

static void swap_buf(struct buf *a, struct buf *b)
{
	struct buf t = *a;

	*a = *b;
	*b = t;
}

/* Hands what is buffered to the writer thread (its buffers swapped for a written job's
 * empty ones). */
int trace_writer__flush(struct trace_writer *w)
{
	static const size_t chunk = TRACE_EVENTS_PER_SECTION * REC_SIZE;
	struct buf *mine[] = {&w->events_buf, &w->stacks, &w->names, &w->fds};
	static const uint16_t types[] = {SEC_EVENTS, SEC_STACKS, SEC_NAMES, SEC_FDS};
	struct wq_job *j;
	size_t off;
	int i;

	if (w->sink)
		return 0; /* nothing was buffered */
	if (!w->events_buf.len && !w->stacks.len && !w->names.len && !w->fds.len)
		return writeq__error(w->q);
	j = writeq__job(w->q);
	for (i = WQ_EVENTS; i <= WQ_FDS; i++)
		swap_buf(&j->bufs[i], mine[i]);
	for (i = WQ_STACKS; i <= WQ_FDS; i++)
		if (j->bufs[i].len)
			writeq__add(j, types[i], 0, i, 0, j->bufs[i].len);
	/* Events in sections of TRACE_EVENTS_PER_SECTION: a damaged byte costs those only. */
	for (off = 0; off < j->bufs[WQ_EVENTS].len; off += chunk)
		writeq__add(j, SEC_EVENTS, 0, WQ_EVENTS, off,
			    j->bufs[WQ_EVENTS].len - off < chunk ? j->bufs[WQ_EVENTS].len - off
								 : chunk);
	writeq__submit(w->q, j);
	return writeq__error(w->q);
}

/* give: payload (malloc'd) is the writer's from here on, freed by it, not copied. */
static int write_section(struct trace_writer *w, uint16_t type, uint16_t flags, const void *payload,
			 size_t len, bool give)
{
	struct wq_job *j;
	int err;

	if (w->sink) {
		if (type == SEC_LOST && w->sink->lost)
			w->sink->lost(w->sink->ctx, payload, len);
		if (give)
			free((void *)payload);
		return 0;
	}
	err = trace_writer__flush(w);
	if (!err && len > TRACE_SECTION_MAX)
		err = -EFBIG; /* a reader would take it for a damaged header */
	if (err) {
		if (give)
			free((void *)payload);
		return err;
	}
	j = writeq__job(w->q);
	if (give) {
		free(j->bufs[WQ_ONE].data);
		j->bufs[WQ_ONE] = (struct buf){(char *)payload, len, len};
	} else {
		buf_add(&j->bufs[WQ_ONE], payload, len);
	}
	writeq__add(j, type, flags, WQ_ONE, 0, len);
	writeq__submit(w->q, j);
	return writeq__error(w->q);
}

int trace_writer__section(struct trace_writer *w, uint16_t type, const void *payload, size_t len)
{
	return write_section(w, type, 0, payload, len, false);
}

/* Level 1: the kernel's symbols, 5.4 MB, in 18 to 20 ms of CPU where level 3 took 22 to
 * 25, to a file 1 % smaller. */
void *trace__zstd_pack(const void *content, size_t len, size_t *packed_len)
{
	size_t cap = ZSTD_compressBound(len), n;
	void *z = xmalloc(cap);

	n = ZSTD_compress(z, cap, content, len, 1);
	if (ZSTD_isError(n)) {
		free(z);
		return NULL;
	}
	*packed_len = n;
	return z;
}

int trace_writer__section_give(struct trace_writer *w, uint16_t type, uint16_t flags,
			       void *payload, size_t len)
{
	return write_section(w, type, flags, payload, len, true);
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
	return w->q ? writeq__bytes(w->q) : 0;
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
	if (w->q) {
		int err2 = writeq__finish(w->q); /* everything queued, written */

		if (!err)
			err = err2;
	}
	if (w->fd >= 0 && close(w->fd) && !err)
		err = -errno;
	free(w->events_buf.data);
	free(w->stacks.data);
	free(w->names.data);
	free(w->fds.data);
	free(w);
	return err;
}
