/* The clone in a child process of srvscope's, started and stopped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clone/child.h"
#include "util/util.h"

/* Starts the clone in a child process (dying with this one) and waits until it listens. */
int clone_child__start(const struct clone_model *m, const struct clone_opts *o,
		       struct clone_counts *counts, pid_t *pid, int *port)
{
	struct clone_opts co = *o;
	struct pollfd pfd;
	char buf[16] = {0};
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	co.ready_fd = fds[1];
	co.quiet = true;
	if (co.port < 0)
		co.port = 0; /* a free port: the original may be listening on its own */
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(clone__run(m, &co, counts) ? 1 : 0);
	}
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) <= 0 || read(fds[0], buf, sizeof(buf) - 1) <= 0) {
		close(fds[0]);
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		return error("clone: the clone did not start"), -EIO;
	}
	close(fds[0]);
	*port = atoi(buf);
	return 0;
}

int clone_child__stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) == pid && !(WIFEXITED(status) && !WEXITSTATUS(status)))
		return -EIO;
	return 0;
}

size_t clone_child__net_tids(const struct clone_counts *counts, uint32_t *tids)
{
	size_t n = __atomic_load_n(&counts->nr_net, __ATOMIC_ACQUIRE);

	if (n > CLONE_COUNTS_TIDS)
		n = CLONE_COUNTS_TIDS;
	memcpy(tids, counts->net_tids, n * sizeof(*tids));
	return n;
}
