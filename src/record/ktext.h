/* The text of /proc/kallsyms as the recorder reads it: its start before the programs
 * load, for the address they need, and all of it once they run (the programs' own
 * symbols with the rest), for the trace's kallsyms section. */
#ifndef SRVSCOPE_RECORD_KTEXT_H
#define SRVSCOPE_RECORD_KTEXT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The address at the start of the line at p (hex), 0 if none. */
uint64_t ktext__line_addr(const char *p, const char *end);

/* The address of the kernel's own text symbol name (type T or t, not a module's), 0 when
 * it has none. A scan of the text, not a parse of its symbols. */
uint64_t ktext__find(const char *text, size_t len, const char *name);

/* The address of the kernel's own text symbol name in /proc/kallsyms, read only up to its
 * line; 0 when it has none. */
uint64_t ktext__lookup(const char *name);

/* /proc/kallsyms, read whole into a new buffer (NUL-terminated); NULL and errno set when
 * it cannot be read. */
char *ktext__read(size_t *len);

/* /proc/kallsyms read by a thread of its own: the kernel takes a fifth of a second to
 * print it, which the recorder's loop spends draining the rings instead. */
struct ktext_async {
	pthread_t thread;
	bool started, taken;
	bool idle; /* read at the scheduler's idle priority */
	bool pack; /* the text packed (trace__zstd_pack) by the thread, after the scan */
	/* run by the thread on the text once read (NULL: none), before it is taken */
	void (*scan)(void *arg, const char *text, size_t len);
	void *scan_arg;
	char *text; /* the text, or once packed its zstd frame */
	size_t len;
	bool packed;	   /* text is the zstd frame */
	int err;	   /* errno of a failed read */
	volatile int done; /* the thread has finished (atomic) */
	int hurry;	   /* the text is awaited: the thread keeps the normal priority (atomic) */
};

/* Starts the read; the text is read at once, in the caller, when no thread can start.
 * pack: the thread then compresses it for the trace (trace__zstd_pack), not the writer's
 * thread, which writes the events meanwhile.
 * idle: the thread runs only on CPUs nothing else wants (SCHED_IDLE), where the text is not
 * awaited: the kernel's print of 200 thousand symbols costs 60 ms of CPU at the start of
 * each recording, beside the server it watches. scan (with scan_arg): what to find in the
 * text, by the thread that wrote it (the loop's scan of it took 9 to 11 ms as the first
 * to read it in that thread, 2.5 ms after a copy of it there: on a VM, another thread's
 * first reads of 5 MB cost). */
void ktext__read_async(struct ktext_async *a, bool idle,
		       void (*scan)(void *arg, const char *text, size_t len), void *scan_arg,
		       bool pack);
/* The text is awaited: the thread goes back to the normal priority (at once, or before it
 * would lower itself). Does not wait. */
void ktext__hurry(struct ktext_async *a);
/* The text once read (wait: until it is), the thread joined; NULL with errno when the
 * read failed or (wait false) is not over. Once only: then a->taken. The caller frees it.
 * a->packed: it is a zstd frame of the text, len long. */
char *ktext__take(struct ktext_async *a, bool wait, size_t *len);

/* The text read once for several recordings in a row (srvscope model's runs), before any
 * of them starts: each then has its kallsyms section without the kernel printing it again
 * (60 ms of CPU and more) and its packing, beside the server while it is recorded. Kernel
 * stacks never hold the recorder's own programs (they are cut off), so the programs loaded
 * later are not missed. Only the packed frame is kept (the text is 5 MB and more, which a
 * VM's page faults make costly to hold beside the next allocations). */
struct ktext_copy {
	char *frame; /* a zstd frame of the text (trace__zstd_pack), else the text */
	size_t len;
	bool packed;
	uint64_t do_syscall_64; /* ktext__find's, read with it */
};

/* Reads and packs; 0 or -errno (c is then empty). */
int ktext__copy_read(struct ktext_copy *c);
void ktext__copy_free(struct ktext_copy *c);
/* a as ktext__read_async leaves it once its thread is done (with no scan), from c
 * (unchanged): what ktext__take gives is a copy of c's frame. */
void ktext__from_copy(struct ktext_async *a, const struct ktext_copy *c);

#endif
