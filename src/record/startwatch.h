/* The targets watched while the recorder starts: loading its programs takes the kernel's
 * verifier a third of a second and more (a second on a loaded machine), and a target that
 * dies meanwhile would be looked for only after it. */
#ifndef SRVSCOPE_RECORD_STARTWATCH_H
#define SRVSCOPE_RECORD_STARTWATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

struct startwatch {
	pthread_t main, thread;
	int *fds; /* a pidfd per target */
	size_t nr;
	bool running;
	volatile int stop, gone;
};

/* Watches pids[0..nr) from a thread: once every one has exited, the calling thread is
 * interrupted by signals (SIGURG, handled by nothing) until startwatch__end, which makes
 * the verifier give up (it returns EAGAIN to a thread with a signal pending). Does nothing
 * where pidfds are missing (Linux before 5.3). */
void startwatch__begin(struct startwatch *w, const pid_t *pids, size_t nr);
/* Stops the watch: whether every target had exited meanwhile. */
bool startwatch__end(struct startwatch *w);

#endif
