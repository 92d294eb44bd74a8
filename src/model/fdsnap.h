/* What a server's file descriptors are as a model run starts (fdsnap.c): the fds opened
 * before the recording, which its syscall records cannot name (sockets and their ports,
 * listeners and SO_REUSEPORT, pipes, epoll instances shared across processes, files and
 * their paths). Read from /proc of a live tree, or from a trace's fd descriptions. */
#ifndef SRVSCOPE_MODEL_FDSNAP_H
#define SRVSCOPE_MODEL_FDSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct trace;

struct model_fd {
	uint32_t pid;
	int32_t fd;
	uint8_t kind;	  /* enum fd_kind (model.h) */
	bool listening;	  /* a TCP socket in the LISTEN state */
	int8_t reuseport; /* listeners: SO_REUSEPORT set 1, not set 0, not known -1 */
	bool append;	  /* opened with O_APPEND */
	bool regular;	  /* a regular file */
	uint16_t port;	  /* sockets: the local port */
	uint32_t epoll;	  /* epoll fds: one number per epoll instance, the same in every
			   * process that holds it (1, 2, ...); 0 for other fds */
	uint64_t inode;	  /* sockets: the socket's inode; files: the file's */
	int64_t size;	  /* regular files: the size, -1 when not known */
	char *path;	  /* files: the path /proc shows, NULL for other fds */
};

struct model_fds {
	struct model_fd *fd;
	size_t nr, cap;
	bool live; /* read from /proc (SO_REUSEPORT and epoll identity known) */
};

/* The fds of pid's whole process tree, from /proc: nothing is opened but /proc's own
 * files (a path is read with readlink and looked at through the fd with statx, never
 * walked), and a listener's SO_REUSEPORT is read from a copy of the socket taken with
 * pidfd_getfd (the server's own fd is left alone). Returns 0 or -errno (the tree is gone);
 * an fd that cannot be read is left out. */
int model_fds__snapshot(pid_t pid, struct model_fds *out);

/* The fds a trace describes (the recorder's fd descriptions: the fds threads blocked on),
 * each as first described: kinds, listeners and paths; reuseport and epoll identity are
 * not known. */
void model_fds__from_trace(const struct trace *t, struct model_fds *out);

/* The kind (enum fd_kind) of an fd from the recorder's description of it ("tcp
 * 127.0.0.1:80 (listening)", "pipe [123]", "eventpoll", a path...); *listening set for a
 * listener. */
int model__kind_of_desc(const char *desc, bool *listening);

const struct model_fd *model_fds__find(const struct model_fds *f, uint32_t pid, int32_t fd);
void model_fds__free(struct model_fds *f);

#endif
