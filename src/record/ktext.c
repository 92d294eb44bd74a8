/* The text of /proc/kallsyms (ktext.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/ktext.h"
#include "trace/trace.h"
#include "util/util.h"

uint64_t ktext__line_addr(const char *p, const char *end)
{
	uint64_t a = 0;
	int d;

	for (; p < end && *p != ' '; p++) {
		d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (d < 0)
			return 0;
		a = a << 4 | (uint64_t)d;
	}
	return a;
}

uint64_t ktext__find(const char *text, size_t len, const char *name)
{
	const char *end = text + len, *p = text, *line;
	size_t n = strlen(name);

	/* "ADDR T NAME\n": the name, ending its line, after a text type */
	while (n && (p = memmem(p, (size_t)(end - p), name, n))) {
		const char *after = p + n;

		if (p - text >= 3 && p[-1] == ' ' && (p[-2] == 'T' || p[-2] == 't') &&
		    p[-3] == ' ' && (after == end || *after == '\n')) {
			for (line = p - 3; line > text && line[-1] != '\n'; line--)
				;
			return ktext__line_addr(line, p - 3);
		}
		p = after;
	}
	return 0;
}

/* /proc/kallsyms read 128 KiB at a time (read by megabytes, it takes half again as long);
 * with name, only up to name's line, its address in *addr. */
static char *read_text(size_t *len, const char *name, uint64_t *addr)
{
	size_t cap = 1 << 20, n = 0, from = 0;
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC), saved;
	ssize_t got = 0;
	char *buf, *nl;

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap);
	while (!name || !*addr) {
		if (cap - n < 131072 + 1)
			buf = xrealloc(buf, cap *= 2);
		got = read(fd, buf + n, 131072);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
		/* the whole lines read so far, past those already scanned */
		if (name && (nl = memrchr(buf + from, '\n', n - from))) {
			*addr = ktext__find(buf + from, (size_t)(nl - buf) - from, name);
			from = (size_t)(nl - buf) + 1;
		}
	}
	saved = errno;
	close(fd);
	if (got < 0) {
		free(buf);
		errno = saved;
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

uint64_t ktext__lookup(const char *name)
{
	uint64_t addr = 0;
	size_t len;

	free(read_text(&len, name, &addr));
	return addr;
}

char *ktext__read(size_t *len)
{
	return read_text(len, NULL, NULL);
}

/* The reading thread to the idle priority, unless the text is awaited: a wait that comes
 * after the thread lowered itself finds it lowered (ktext__hurry raises it again); one that
 * comes between its check and its lowering is seen by the second check. */
static void lower(struct ktext_async *a)
{
	struct sched_param param = {0};

	if (__atomic_load_n(&a->hurry, __ATOMIC_SEQ_CST))
		return;
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
	if (__atomic_load_n(&a->hurry, __ATOMIC_SEQ_CST))
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &param);
}

/* The text as a zstd frame, at the thread's priority: lowered for it alone, it was not
 * written yet when a recording beside three busy loops on 2 CPUs was killed at 1.5 s, in
 * three runs of seven (kernel frames as addresses), where the writer's thread had it. */
static void pack_text(struct ktext_async *a)
{
	size_t n;
	char *z;

	z = trace__zstd_pack(a->text, a->len, &n);
	if (!z)
		return;
	free(a->text);
	a->text = z;
	a->len = n;
	a->packed = true;
}

/* own_thread: in the thread of its own; else in the caller, whose priority stays. */
static void read_all(struct ktext_async *a, bool own_thread)
{
	/* A wait for the text puts the thread back among the others first (ktext__hurry). */
	if (own_thread && a->idle)
		lower(a);
	a->text = ktext__read(&a->len);
	a->err = a->text ? 0 : errno;
	if (a->text && a->scan)
		a->scan(a->scan_arg, a->text, a->len);
	if (a->text && a->pack)
		pack_text(a);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

static void *read_thread(void *arg)
{
	read_all(arg, true);
	return NULL;
}

void ktext__read_async(struct ktext_async *a, bool idle,
		       void (*scan)(void *arg, const char *text, size_t len), void *scan_arg,
		       bool pack)
{
	memset(a, 0, sizeof(*a));
	a->idle = idle;
	a->pack = pack;
	a->scan = scan;
	a->scan_arg = scan_arg;
	a->started = !pthread_create(&a->thread, NULL, read_thread, a);
	if (!a->started)
		read_all(a, false);
}

void ktext__hurry(struct ktext_async *a)
{
	struct sched_param normal = {0};

	if (a->taken || __atomic_load_n(&a->hurry, __ATOMIC_SEQ_CST))
		return;
	/* An idle thread on CPUs kept busy would take minutes (a weight of 3 against 1024). */
	__atomic_store_n(&a->hurry, 1, __ATOMIC_SEQ_CST);
	if (a->started && a->idle && !__atomic_load_n(&a->done, __ATOMIC_ACQUIRE))
		pthread_setschedparam(a->thread, SCHED_OTHER, &normal);
}

char *ktext__take(struct ktext_async *a, bool wait, size_t *len)
{
	if (a->taken || (!wait && !__atomic_load_n(&a->done, __ATOMIC_ACQUIRE)))
		return NULL;
	ktext__hurry(a);
	if (a->started)
		pthread_join(a->thread, NULL);
	a->started = false;
	a->taken = true;
	*len = a->len;
	errno = a->err;
	return a->text;
}

int ktext__copy_read(struct ktext_copy *c)
{
	size_t len;
	char *text = ktext__read(&len);

	memset(c, 0, sizeof(*c));
	if (!text)
		return -errno;
	c->do_syscall_64 = ktext__find(text, len, "do_syscall_64");
	c->frame = trace__zstd_pack(text, len, &c->len);
	c->packed = c->frame != NULL;
	if (c->packed) {
		free(text);
	} else {
		c->frame = text;
		c->len = len;
	}
	return 0;
}

void ktext__copy_free(struct ktext_copy *c)
{
	free(c->frame);
	memset(c, 0, sizeof(*c));
}

void ktext__from_copy(struct ktext_async *a, const struct ktext_copy *c)
{
	memset(a, 0, sizeof(*a));
	a->len = c->len;
	a->text = xmalloc(a->len + 1);
	memcpy(a->text, c->frame, a->len);
	a->text[a->len] = '\0';
	a->packed = c->packed;
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}
