/* The srvscope trace file: a header, then self-describing sections (events, stacks, maps,
 * kallsyms, thread names, fd descriptions, lost counters, end). Layout in
 * docs/trace-format.md. The writer appends sections as a recording goes; the reader maps
 * the file, tolerates a truncated tail (a recording killed mid-write), and skips a damaged
 * section (each one carries checksums) but reads every other one. */
#ifndef SRVSCOPE_TRACE_TRACE_H
#define SRVSCOPE_TRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/record.h"
#include "util/escape.h"

#define TRACE_MAGIC	    "SRVSCTRC"
/* 3: a REC_WAKING may carry its wake-up folded in (rec_waking); the reader makes the
 * REC_WAKEUP event of it, so analyses see version 2's events. */
#define TRACE_VERSION	    3
#define TRACE_SECTION_MAGIC 0x4b434853u /* "SHCK" little-endian */

struct trace_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* bytes before the first section, a multiple of 8 */
	uint32_t record_size; /* REC_SIZE */
	uint32_t nr_cpus;
	uint32_t clock_id; /* CLOCK_MONOTONIC: the clock of every timestamp */
	uint32_t flags;	   /* TRACE_F_* */
	uint64_t start_ns; /* on clock_id */
	uint64_t start_realtime_ns;
	char host[64];
	char kernel[64]; /* uname -r */
	char machine[16];
	uint32_t recorder_pid;
	uint32_t reserved[14];
	uint32_t header_crc; /* version 2: CRC-32 of the 252 bytes before it */
};
#define TRACE_F_SYSTEM_WIDE (1u << 0)
#define TRACE_F_STACKS	    (1u << 1)
#define TRACE_F_SYSCALLS    (1u << 2) /* every syscall of the targets has a record */
#define TRACE_F_ON_CPU	    (1u << 3)

enum trace_section_type {
	SEC_EVENTS = 1,	  /* struct rec[] */
	SEC_STACKS = 2,	  /* { u64 id; u32 nr; u32 user; u64 ips[nr]; }... */
	SEC_KALLSYMS = 3, /* /proc/kallsyms text */
	SEC_MAPS = 4,	  /* struct trace_maps_hdr, maps text, build-id lines */
	SEC_NAMES = 5,	  /* struct trace_name[] */
	SEC_FDS = 6,	  /* { struct trace_fd_hdr; char desc[len] padded to 8 }... */
	SEC_LOST = 7,	  /* u32 nr_cpus, u32 nr_reasons, u64 counts[cpu][reason]; last wins */
	SEC_END = 8,	  /* struct trace_end */
	SEC_INFO = 9,	  /* "key=value\n" text: command line, targets, options */
	SEC_TITLE = 10,	  /* { u64 ts; u32 pid; u32 len; char title[len] }: a process's command */
	SEC_SYSCALL_SAMPLE = 13, /* struct trace_syscall_sample; last wins */
};

struct trace_section {
	uint32_t magic; /* TRACE_SECTION_MAGIC */
	uint16_t type;
	uint16_t flags;	      /* SECF_* */
	uint64_t size;	      /* payload bytes, not counting the padding to 8 that follows */
	uint32_t payload_crc; /* version 2: CRC-32 of the payload as stored */
	uint32_t header_crc;  /* version 2: CRC-32 of the 16 bytes before payload_crc */
};
#define TRACE_SECTION_V1_SIZE 16	/* version 1 headers stop before the CRCs */
#define SECF_ZSTD	      (1u << 0) /* the payload is one zstd frame holding the content */
/* No writer writes a bigger section: a longer length is a damaged header, not a cut. */
#define TRACE_SECTION_MAX (1ull << 30)
/* The writer cuts events into sections of at most this many records, so that a damaged
 * byte costs at most these. */
#define TRACE_EVENTS_PER_SECTION 1024

struct trace_maps_hdr {
	uint64_t ts;
	uint32_t pid;
	uint32_t maps_len;
	uint32_t build_ids_len; /* "<hex build-id> <path>\n" lines after the maps text */
	uint32_t pad;
};

struct trace_name {
	uint32_t tid, pid;
	char comm[16];
};

struct trace_fd_hdr {
	uint64_t ts;
	uint32_t pid;
	int32_t fd;
	uint32_t len;
	uint32_t pad;
};

/* Syscall sampling (record_opts.syscall_budget): the targets' syscalls written in full
 * (REC_SYSCALL) and made between the windows (left out, or REC_SYSCALL_FD). */
struct trace_syscall_sample {
	uint64_t full, out;
	uint64_t budget;    /* full syscalls a second aimed at */
	uint64_t period_ns; /* each period starts with a window of full recording */
};

struct trace_end {
	uint64_t end_ns;
	uint64_t nr_events;
	uint32_t flags;
	uint32_t pad;
};

/* ---- writer ---- */

struct trace_writer;

/* Creates path (mode 0600, never through a symlink; an existing file is replaced only with
 * force, see safefile__create) and writes the header. NULL with errno set on failure. */
struct trace_writer *trace_writer__open(const char *path, bool force,
					const struct trace_file_header *hdr);
/* A consumer of the recording instead of a file (srvscope serve): each event, stack and
 * name is handed over as it is added, lost-event sections as they are written (the
 * SEC_LOST payload); other sections are dropped. Callbacks may be NULL. */
struct trace_sink {
	void (*event)(void *ctx, const struct rec *r);
	void (*stack)(void *ctx, uint64_t id, uint32_t flags, const uint64_t *ips, uint32_t nr);
	void (*name)(void *ctx, uint32_t tid, uint32_t pid, const char *comm);
	void (*lost)(void *ctx, const void *payload, size_t len);
	void *ctx;
};
/* A writer that writes no file and hands everything to sink (borrowed). */
struct trace_writer *trace_writer__open_sink(const struct trace_sink *sink);
/* Buffers events and stacks until the next flush. */
void trace_writer__add_event(struct trace_writer *w, const struct rec *r);
/* The flags of a stacks entry (its 'user' field). */
#define TRACE_STACK_USER      1u /* user frames, not kernel ones */
#define TRACE_STACK_TRUNCATED 2u /* the unwind stopped short of the outermost frame */
/* flags: TRACE_STACK_*. */
void trace_writer__add_stack(struct trace_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
			     uint32_t nr);
void trace_writer__add_name(struct trace_writer *w, uint32_t tid, uint32_t pid, const char *comm);
void trace_writer__add_fd(struct trace_writer *w, uint64_t ts, uint32_t pid, int32_t fd,
			  const char *desc);
/* Writes one section now (after flushing what is buffered). Returns 0 or -errno. */
int trace_writer__section(struct trace_writer *w, uint16_t type, const void *payload, size_t len);
/* One section whose payload (malloc'd) is given to the writer, which frees it, even on an
 * error: the 5 MB of the kernel's symbols copied into a fresh buffer cost 25 ms of page
 * faults on a VM. flags: SECF_*; SECF_ZSTD: payload is from trace__zstd_pack. */
int trace_writer__section_give(struct trace_writer *w, uint16_t type, uint16_t flags,
			       void *payload, size_t len);
/* content (len bytes) as one zstd frame, malloc'd; NULL when zstd fails. Any thread: the
 * recorder packs the kernel's symbols in the thread that read them. */
void *trace__zstd_pack(const void *content, size_t len, size_t *packed_len);
int trace_writer__maps(struct trace_writer *w, uint64_t ts, uint32_t pid, const char *maps,
		       size_t maps_len, const char *build_ids, size_t build_ids_len);
/* Writes the buffered sections with one system call. Returns 0 or -errno. */
int trace_writer__flush(struct trace_writer *w);
uint64_t trace_writer__bytes(const struct trace_writer *w);
uint64_t trace_writer__events(const struct trace_writer *w);
/* Flushes, writes the end section and closes. Accepts NULL. Returns 0 or -errno. */
int trace_writer__close(struct trace_writer *w, uint64_t end_ns);

/* ---- reader ---- */

struct trace_stack {
	uint64_t id;
	uint32_t nr;
	bool user;
	bool truncated;	     /* frames above the outermost were not found */
	const uint64_t *ips; /* innermost first */
};

struct trace_thread {
	uint32_t tid, pid;
	/* As recorded (15 bytes at most), then escaped in place by report_cmdline__open:
	 * room for every byte as \xNN. */
	char comm[COMM_ESCAPED_SIZE];
};

struct trace_maps {
	uint64_t ts;
	uint32_t pid;
	const char *text, *build_ids;
	size_t len, build_ids_len;
};

struct trace_fd {
	uint64_t ts;
	uint32_t pid;
	int32_t fd;
	const char *desc;
	uint32_t len;
};

/* A section as the reader found it. */
struct trace_section_info {
	uint64_t off;	/* of its header */
	uint64_t len;	/* header, payload and padding; for a damaged header, the bytes skipped */
	uint16_t type;	/* 0: unknown (its header is damaged) */
	bool damaged;	/* skipped: see the trace's damage lines */
	uint32_t items; /* events, stack entries, maps captures... it gave the reader */
};

struct trace_damage {
	uint64_t off;	/* of the section header */
	uint16_t type;	/* 0: unknown (its header is damaged) */
	char line[240]; /* for the user: which section, where, what is wrong, what it costs */
};

struct trace {
	struct trace_file_header hdr;
	const struct rec **ev; /* every event, sorted by time */
	size_t nr_ev;
	uint64_t first_ns, last_ns; /* of the events; first_ns is hdr.start_ns if earlier */
	uint64_t end_ns;	    /* from the end section, else the last event */
	bool ended;		    /* the end section was found: the recording finished */
	bool truncated;		    /* the file stops in the middle of a section */
	uint64_t truncated_at;	    /* offset of the incomplete section */
	bool has_kallsyms;	    /* see trace__kallsyms */
	const char *info;
	size_t info_len;
	uint32_t lost_cpus;
	uint64_t *lost; /* [cpu * LOST_REASONS + reason] */
	uint64_t lost_by_reason[LOST_REASONS];
	/* Syscall sampling: the syscalls written in full and made between windows; both 0
	 * when every syscall was written (no SEC_SYSCALL_SAMPLE). */
	uint64_t sc_full, sc_out;

	struct trace_stack *stacks;
	size_t nr_stacks;
	struct trace_thread *threads;
	size_t nr_threads;
	struct trace_maps *maps;
	size_t nr_maps;
	struct trace_fd *fds; /* sorted by pid, fd, time */
	size_t nr_fds;
	struct trace_section_info *secs; /* in file order */
	size_t nr_secs;
	struct trace_damage *damage; /* sections skipped, each a line for the user */
	size_t nr_damage;

	void *priv;
};

/* Maps and indexes a trace file. A damaged section is skipped and listed in t->damage; the
 * others are read. On failure (not a trace, an unknown version) returns NULL and writes a
 * one-line reason into err. */
struct trace *trace__open(const char *path, char *err, size_t errlen);
/* The same over a buffer, which must outlive the trace (fuzzing, tests). */
struct trace *trace__open_mem(const void *buf, size_t len, char *err, size_t errlen);
/* Accepts NULL. */
void trace__close(struct trace *t);
/* trace__open for the reports: prints the error, and warns about each damaged section,
 * when the file ends early (a recording that was killed) or events were lost. */
struct trace *trace__open_report(const char *path);

/* Whether a version 2 section header is intact (magic and its own checksum). */
bool trace_section__intact(const struct trace_section *s);

/* The kallsyms text saved in the trace, NUL-terminated (len: its length), or NULL when the
 * trace has none or it cannot be decompressed. Decompressed on the first call, not when the
 * trace is opened: only the reports that name kernel frames pay for its megabytes. Valid
 * until trace__close or trace__kallsyms_take. */
const char *trace__kallsyms(const struct trace *t, size_t *len);
/* The same text handed over to the caller, who frees it (and may write into it): the
 * reader forgets it, so that it is held once, by the symbol table parsed in place. */
char *trace__kallsyms_take(const struct trace *t, size_t *len);

/* The caller has read the events before t->ev[i] and will rarely come back to them: the
 * reader may drop the file's pages under them from memory, so that a report's memory does
 * not grow with the trace. They stay readable (a read brings a page back from the page
 * cache). Meant to be called for every event of a pass in time order (it acts every 1024);
 * a pass that starts again from 0 is fine. */
void trace__release_before(const struct trace *t, size_t i);
static inline void trace__done_before(const struct trace *t, size_t i)
{
	if (!(i % 1024))
		trace__release_before(t, i);
}

/* The caller is done with the events: t->ev is freed (nr_ev 0) and the file's pages
 * released. Stacks, threads, maps and the rest stay. For a report that keeps what it
 * needs from one pass and then prints for a while. */
void trace__drop_events(struct trace *t);

const struct trace_stack *trace__stack(const struct trace *t, uint64_t id);
/* The thread's last known name and process; NULL when the trace never named it. */
const struct trace_thread *trace__thread(const struct trace *t, uint32_t tid);
/* Whether thread tid of process pid passes the reports' --pid/--tid/--comm filters
 * (0 or NULL: any); the name compared is the thread's last known name. */
bool trace__task_match(const struct trace *t, long want_pid, long want_tid, const char *want_comm,
		       uint32_t pid, uint32_t tid);
/* What fd of pid was at time ts (the description observed last before ts, else the first
 * one), NULL when never described. The string is valid until the next call. */
const char *trace__fd_desc(const struct trace *t, uint32_t pid, int32_t fd, uint64_t ts);
/* The maps of pid in force at ts (the last captured before ts, else the first). */
const struct trace_maps *trace__maps(const struct trace *t, uint32_t pid, uint64_t ts);
/* The first maps of pid written after ts, or NULL. */
const struct trace_maps *trace__maps_after(const struct trace *t, uint32_t pid, uint64_t ts);
/* The command line or title of process pid ("postgres: walwriter") as the recording first
 * saw it, into buf; NULL when the trace has none. */
const char *trace__title(const struct trace *t, uint32_t pid, char *buf, size_t size);
/* Events plus stacks lost while recording. */
uint64_t trace__lost_events(const struct trace *t);
/* A one-line description of what was lost, per reason and CPU, into buf. */
const char *trace__lost_summary(const struct trace *t, char *buf, size_t size);
/* The value of "key=" in the trace's info text (section info), into buf ("" when absent). */
const char *trace__info_value(const struct trace *t, const char *key, char *buf, size_t size);
/* The same from counters indexed [cpu * LOST_REASONS + reason] (the recorder's). */
const char *trace_lost__format(const uint64_t *lost, uint32_t nr_cpus, char *buf, size_t size);

#endif
