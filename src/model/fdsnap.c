/* The fds of a server's process tree as a model run starts, from /proc (or from a trace's
 * fd descriptions): sockets resolved by inode through the tree's network namespaces'
 * tables (read once each, not once per fd: a server may hold thousands of connections),
 * epoll instances told apart across processes with kcmp (a forked worker may share its
 * parent's), and listeners' SO_REUSEPORT read from a copy of the socket. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/fds.h"
#include "model/fdsnap.h"
#include "model/model.h"
#include "proc/task.h"
#include "trace/trace.h"
#include "trace/u64map.h"
#include "util/util.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* inode -> kind | listening << 8 | port << 16, from one network namespace's tables. */
static void read_table(pid_t pid, const char *name, int kind, struct u64map *socks)
{
	char path[64], line[512];
	bool unix_table = !strcmp(name, "unix");
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char local[64];
		unsigned st = 0, port = 0;
		unsigned long long ino;
		char *colon;

		if (unix_table) {
			if (sscanf(line, "%*s %*s %*s %*s %*s %*s %llu", &ino) == 1 && ino)
				u64map__put(socks, ino, FDK_UNIX);
			continue;
		}
		if (sscanf(line, " %*d: %63s %*s %x %*s %*s %*s %*s %*s %llu", local, &st, &ino) !=
			    3 ||
		    !ino)
			continue;
		colon = strchr(local, ':');
		if (colon)
			sscanf(colon + 1, "%x", &port);
		u64map__put(socks, ino,
			    (uint64_t)kind | (uint64_t)(kind == FDK_TCP && st == 0x0A) << 8 |
				    (uint64_t)(port & 0xffff) << 16);
	}
	fclose(f);
}

/* The sockets of pid's network namespace, unless another process of the tree already
 * read that namespace's tables. */
static void read_netns(pid_t pid, struct u64map *done, struct u64map *socks)
{
	char path[64], link[64];
	unsigned long long ns = 0;
	ssize_t n;
	bool created;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		sscanf(link, "net:[%llu]", &ns);
	}
	u64map__slot(done, ns, &created);
	if (!created)
		return;
	read_table(pid, "tcp", FDK_TCP, socks);
	read_table(pid, "tcp6", FDK_TCP, socks);
	read_table(pid, "udp", FDK_UDP, socks);
	read_table(pid, "udp6", FDK_UDP, socks);
	read_table(pid, "unix", FDK_UNIX, socks);
}

static struct model_fd *add(struct model_fds *out, pid_t pid, int fd)
{
	struct model_fd *e;

	xgrow((void **)&out->fd, &out->cap, out->nr + 1, sizeof(*out->fd));
	e = &out->fd[out->nr++];
	memset(e, 0, sizeof(*e));
	e->pid = (uint32_t)pid;
	e->fd = fd;
	e->reuseport = -1;
	e->size = -1;
	return e;
}

/* O_APPEND from /proc/PID/fdinfo/FD ("flags:\t0102001", octal). */
static bool fd_append(pid_t pid, int fd)
{
	char path[64], buf[512], *p;
	unsigned long flags;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (read_file(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "flags:")))
		return false;
	flags = strtoul(p + 6, NULL, 8);
	return flags & O_APPEND;
}

/* A file fd: its path as /proc shows it, and, through the fd itself (no path walk; the
 * attributes a network file system has cached, never fetched), its type and size. */
static void file_fd(struct model_fd *e, pid_t pid, int fd, const char *link)
{
	char path[64];
	struct statx stx;

	e->kind = FDK_FILE;
	e->path = xstrdup(link);
	e->append = fd_append(pid, fd);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (!statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_SIZE | STATX_INO, &stx)) {
		e->regular = S_ISREG(stx.stx_mode);
		e->inode = stx.stx_ino;
		if (e->regular && (stx.stx_mask & STATX_SIZE))
			e->size = (int64_t)stx.stx_size;
	}
}

static void classify(struct model_fd *e, pid_t pid, int fd, const char *link)
{
	unsigned long long ino;

	if (sscanf(link, "socket:[%llu]", &ino) == 1)
		e->inode = ino; /* the kind from the tables, later */
	else if (!strncmp(link, "pipe:", 5))
		e->kind = FDK_PIPE;
	else if (!strcmp(link, "anon_inode:[eventpoll]"))
		e->kind = FDK_EPOLL;
	else if (!strcmp(link, "anon_inode:[eventfd]"))
		e->kind = FDK_EVENTFD;
	else if (!strcmp(link, "anon_inode:[timerfd]"))
		e->kind = FDK_TIMERFD;
	else if (!strcmp(link, "anon_inode:[signalfd]"))
		e->kind = FDK_SIGNALFD;
	else if (link[0] == '/')
		file_fd(e, pid, fd, link);
}

struct fd_visit {
	struct model_fds *out;
	pid_t pid;
};

static void visit_fd(int fd, const char *link, void *arg)
{
	struct fd_visit *v = arg;

	classify(add(v->out, v->pid, fd), v->pid, fd, link);
}

static void process_fds(struct model_fds *out, pid_t pid)
{
	struct fd_visit v = {out, pid};

	proc__for_each_fd(pid, visit_fd, &v);
}

/* SO_REUSEPORT of a listener, read from a copy of the socket (pidfd_getfd: the server's
 * fd and socket are untouched; closing the copy drops only our reference). */
static int8_t reuseport_of(int pidfd, int fd)
{
	int copy, v = 0;
	socklen_t len = sizeof(v);
	int8_t r = -1;

	if (pidfd < 0)
		return -1;
	copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (copy < 0)
		return -1;
	if (!getsockopt(copy, SOL_SOCKET, SO_REUSEPORT, &v, &len))
		r = v != 0;
	close(copy);
	return r;
}

/* One number per epoll instance: an epoll fd is compared (kcmp) with one fd of each
 * instance seen before; without kcmp, each (process, fd) is an instance of its own. */
static void epoll_identity(struct model_fds *out)
{
	size_t *reps = NULL, nr = 0, cap = 0, i, j;

	for (i = 0; i < out->nr; i++) {
		struct model_fd *e = &out->fd[i];

		if (e->kind != FDK_EPOLL)
			continue;
		for (j = 0; j < nr; j++) {
			const struct model_fd *r = &out->fd[reps[j]];

			if (syscall(SYS_kcmp, (pid_t)r->pid, (pid_t)e->pid, KCMP_FILE, r->fd,
				    e->fd) == 0)
				break;
		}
		if (j == nr) {
			xgrow((void **)&reps, &cap, nr + 1, sizeof(*reps));
			reps[nr++] = i;
		}
		e->epoll = (uint32_t)j + 1;
	}
	free(reps);
}

static int by_pid_fd(const void *a, const void *b)
{
	const struct model_fd *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

int model_fds__snapshot(pid_t pid, struct model_fds *out)
{
	struct u64map socks = {0}, netns = {0}, reuse = {0};
	pid_t *pids = NULL;
	int nr, i;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->live = true;
	nr = proc__tree(&pid, 1, &pids);
	if (nr < 0)
		return nr;
	for (i = 0; i < nr; i++) {
		size_t first = out->nr;
		int pidfd = -1;

		process_fds(out, pids[i]);
		if (out->nr > first)
			read_netns(pids[i], &netns, &socks);
		for (k = first; k < out->nr; k++) {
			struct model_fd *e = &out->fd[k];
			uint64_t v, r;

			if (e->kind != FDK_OTHER || !e->inode || !u64map__get(&socks, e->inode, &v))
				continue;
			e->kind = (uint8_t)(v & 0xff);
			e->listening = v >> 8 & 1;
			e->port = (uint16_t)(v >> 16);
			if (!e->listening)
				continue;
			/* once per socket: the workers of a tree inherit their parent's */
			if (u64map__get(&reuse, e->inode, &r)) {
				e->reuseport = (int8_t)((int)r - 1);
				continue;
			}
			if (pidfd < 0)
				pidfd = pidfd_of(pids[i]);
			e->reuseport = reuseport_of(pidfd, e->fd);
			u64map__put(&reuse, e->inode, (uint64_t)(e->reuseport + 1));
		}
		if (pidfd >= 0)
			close(pidfd);
	}
	epoll_identity(out);
	qsort(out->fd, out->nr, sizeof(*out->fd), by_pid_fd);
	free(pids);
	u64map__free(&socks);
	u64map__free(&netns);
	u64map__free(&reuse);
	return 0;
}

int model__kind_of_desc(const char *d, bool *listening)
{
	*listening = false;
	if (!strncmp(d, "tcp ", 4)) {
		*listening = strstr(d, "(listening)") != NULL;
		return FDK_TCP;
	}
	if (!strncmp(d, "udp ", 4))
		return FDK_UDP;
	if (!strncmp(d, "unix ", 5))
		return FDK_UNIX;
	if (!strncmp(d, "pipe ", 5))
		return FDK_PIPE;
	if (!strcmp(d, "eventpoll") || !strcmp(d, "epoll"))
		return FDK_EPOLL;
	if (!strcmp(d, "eventfd"))
		return FDK_EVENTFD;
	if (!strcmp(d, "timerfd"))
		return FDK_TIMERFD;
	if (!strcmp(d, "signalfd"))
		return FDK_SIGNALFD;
	if (d[0] == '/')
		return FDK_FILE;
	return FDK_OTHER;
}

void model_fds__from_trace(const struct trace *t, struct model_fds *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < t->nr_fds; i++) { /* sorted by pid, fd, time: the first of each */
		const struct trace_fd *tf = &t->fds[i];
		char desc[4096];
		struct model_fd *e;
		unsigned port = 0;

		if (i && tf->pid == t->fds[i - 1].pid && tf->fd == t->fds[i - 1].fd)
			continue;
		snprintf(desc, sizeof(desc), "%.*s", (int)tf->len, tf->desc);
		e = add(out, (pid_t)tf->pid, tf->fd);
		e->kind = (uint8_t)model__kind_of_desc(desc, &e->listening);
		if (e->kind == FDK_FILE) {
			e->path = xstrdup(desc);
			e->regular = true; /* a path a thread blocked on: a file, as far as known */
		} else if (e->kind == FDK_TCP || e->kind == FDK_UDP) {
			/* "tcp A:P -> B:Q" or "tcp A:P (listening)": the port ends the first word
			 */
			const char *sp = strchr(desc + 4, ' ');
			size_t n = sp ? (size_t)(sp - desc) : strlen(desc);
			const char *c = memrchr(desc, ':', n);

			if (c)
				sscanf(c + 1, "%u", &port);
		}
		e->port = (uint16_t)port;
	}
}

const struct model_fd *model_fds__find(const struct model_fds *f, uint32_t pid, int32_t fd)
{
	struct model_fd key = {.pid = pid, .fd = fd};

	if (!f || !f->nr)
		return NULL;
	return bsearch(&key, f->fd, f->nr, sizeof(*f->fd), by_pid_fd);
}

void model_fds__free(struct model_fds *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr; i++)
		free(f->fd[i].path);
	free(f->fd);
	memset(f, 0, sizeof(*f));
}
