/* The TCP ports a server listens on, read from /proc (listen.c). */
#ifndef SRVSCOPE_MODEL_LISTEN_H
#define SRVSCOPE_MODEL_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct model_listen {
	char addr[48];
	uint16_t port;
	bool v6;
	uint64_t inode;
};

/* The listening TCP sockets of pid's process tree, at most max into out; returns how many. */
size_t model__listeners(pid_t pid, struct model_listen *out, size_t max);

#endif
