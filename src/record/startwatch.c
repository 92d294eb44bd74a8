/* The targets watched while the recorder starts (startwatch.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/startwatch.h"
#include "util/util.h"

static void on_urg(int sig)
{
	(void)sig; /* the interruption is the point */
}

static void *watch(void *arg)
{
	struct startwatch *w = arg;
	struct pollfd *p = xcalloc(w->nr, sizeof(*p));
	struct timespec pause = {0, 5 * 1000 * 1000};
	size_t i, dead;

	for (i = 0; i < w->nr; i++) {
		p[i].fd = w->fds[i];
		p[i].events = POLLIN; /* readable once the process has exited */
	}
	while (!w->stop && !w->gone) {
		if (poll(p, w->nr, 20) < 0 && errno != EINTR)
			break;
		for (i = 0, dead = 0; i < w->nr; i++)
			dead += p[i].fd < 0 || (p[i].revents & (POLLIN | POLLHUP | POLLERR));
		if (dead == w->nr)
			w->gone = 1;
	}
	/* Again and again: libbpf retries a load that returned EAGAIN. */
	while (w->gone && !w->stop) {
		pthread_kill(w->main, SIGURG);
		nanosleep(&pause, NULL);
	}
	free(p);
	return NULL;
}

void startwatch__begin(struct startwatch *w, const pid_t *pids, size_t nr)
{
	struct sigaction sa = {.sa_handler = on_urg}; /* no SA_RESTART */
	size_t i;

	memset(w, 0, sizeof(*w));
	if (!nr)
		return;
	w->fds = xcalloc(nr, sizeof(*w->fds));
	for (i = 0; i < nr; i++) {
		w->fds[i] = pidfd_of(pids[i]);
		if (w->fds[i] < 0 && errno != ESRCH) { /* no pidfds: no watch */
			while (i)
				close(w->fds[--i]);
			free(w->fds);
			w->fds = NULL;
			return;
		}
	}
	w->nr = nr;
	w->main = pthread_self();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGURG, &sa, NULL);
	w->running = !pthread_create(&w->thread, NULL, watch, w);
}

bool startwatch__end(struct startwatch *w)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	size_t i;

	if (w->running) {
		w->stop = 1;
		pthread_join(w->thread, NULL);
		sigemptyset(&sa.sa_mask);
		sigaction(SIGURG, &sa, NULL);
	}
	for (i = 0; i < w->nr; i++)
		if (w->fds[i] >= 0)
			close(w->fds[i]);
	free(w->fds);
	w->fds = NULL;
	return w->gone;
}
