/* The files a server's network threads use while serving (files.c): each use of a file
 * followed from its open (or from the start of the run, for a file held open before it) to
 * its close, then summed into its file (model_file in model.h): by path when /proc or the
 * trace named it, else by the shape of the use (a file served per request, whose path the
 * syscall records do not hold). */
#ifndef SRVSCOPE_MODEL_FILES_H
#define SRVSCOPE_MODEL_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/u64map.h"

struct model_run;
struct file_use;

struct model_file_walk {
	struct u64map use; /* (pid, fd) -> index + 1 into u */
	struct file_use *u;
	size_t nr, cap;
};

struct model_file_call {
	int nr;
	int64_t ret;
	uint64_t ts;
	bool read, write, positional, off_known;
	uint64_t off;
};

/* A network thread opened fd with syscall nr (with O_APPEND or not). sampled: false when
 * the open was made between the windows of a sampled recording: the use is not counted
 * (its calls were not all written), nor is one closed between them. */
void files__open(struct model_file_walk *fw, struct model_run *run, uint32_t pid, int32_t fd,
		 int nr, bool append, bool sampled);
/* A network thread's syscall on fd, a file. */
void files__call(struct model_file_walk *fw, struct model_run *run, uint32_t pid, int32_t fd,
		 const struct model_file_call *c);
/* fd closed (by any thread): its use, if one was under way, is summed into its file. */
void files__close(struct model_file_walk *fw, struct model_run *run, uint32_t pid, int32_t fd,
		  bool sampled);
/* The end of the run: the uses still under way are summed; the walk's memory freed. */
void files__end(struct model_file_walk *fw, struct model_run *run);
void files__walk_free(struct model_file_walk *fw);

#endif
