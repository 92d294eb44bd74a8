/* External load commands (--load 'COMMAND'): their placeholders expanded from the load's
 * numbers, and the command run by /bin/sh in a process group of its own, so that it and
 * everything it started are stopped at the bound. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load/load.h"
#include "util/util.h"

/* A number as a command line wants it: whole numbers without a point. */
static int number(char *buf, size_t size, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		return snprintf(buf, size, "%.0f", v);
	return snprintf(buf, size, "%g", v);
}

int load__expand(const char *cmd, const struct load_spec *spec, char *out, size_t outlen)
{
	size_t o = 0;
	const char *p = cmd;

	while (*p) {
		char val[64];
		const char *v = NULL, *close;
		size_t n = 0, vl;

		/* {word} with a lower-case word is a placeholder; other braces ("${HOME}",
		 * awk's '{print $1}') are the shell's */
		if (*p == '{') {
			while (p[1 + n] >= 'a' && p[1 + n] <= 'z')
				n++;
		}
		close = n ? p + 1 + n : NULL;
		if (!close || *close != '}') {
			if (o + 1 >= outlen)
				return -ENAMETOOLONG;
			out[o++] = *p++;
			continue;
		}
		if (n == 5 && !strncmp(p + 1, "conns", 5))
			snprintf(val, sizeof(val), "%u", spec->conns), v = val;
		else if (n == 4 && !strncmp(p + 1, "rate", 4))
			number(val, sizeof(val), spec->rate), v = val;
		else if (n == 8 && !strncmp(p + 1, "duration", 8))
			number(val, sizeof(val), spec->duration_s), v = val;
		else if (n == 8 && !strncmp(p + 1, "requests", 8))
			number(val, sizeof(val), round(spec->rate * spec->duration_s)), v = val;
		if (!v)
			return -EINVAL;
		vl = strlen(v);
		if (o + vl >= outlen)
			return -ENAMETOOLONG;
		memcpy(out + o, v, vl);
		o += vl;
		p = close + 1;
	}
	if (o >= outlen)
		return -ENAMETOOLONG;
	out[o] = 0;
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* Waits up to until_ns for pid to end, leaving it a zombie (its pid, and so its process
 * group's id, stays taken while the group is signalled). Asleep on a pidfd, which becomes
 * readable at the exit: polling every 5 ms woke this thread 200 times a second beside the
 * server being measured (srvscope model's --load). */
static bool wait_end(pid_t pid, uint64_t until_ns)
{
	int fd = pidfd_of(pid);
	bool ended = false;

	for (;;) {
		siginfo_t si = {0};
		int r = waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT);
		uint64_t now = now_ns();

		if ((r == 0 && si.si_pid == pid) ||
		    (r < 0 && errno == ECHILD)) { /* reaped already: the caller ignores SIGCHLD */
			ended = true;
			break;
		}
		if (now >= until_ns)
			break;
		if (fd >= 0) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			uint64_t ms = (until_ns - now + 999999) / 1000000;

			poll(&p, 1, ms > 1000 ? 1000 : (int)ms);
		} else {
			sleep_ms(5); /* a kernel before 5.3 */
		}
	}
	if (fd >= 0)
		close(fd);
	return ended;
}

int load__run_command(const char *cmd, double duration_s, double grace_s, bool *stopped)
{
	uint64_t until = now_ns() + (uint64_t)((duration_s + grace_s) * 1e9);
	int status;
	pid_t pid;

	if (stopped)
		*stopped = false;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		sigset_t none;

		/* a caller that takes its signals through a signalfd has them blocked */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: the group exists before it is signalled */
	if (!wait_end(pid, until)) {
		if (stopped)
			*stopped = true;
		kill(-pid, SIGTERM);
		if (!wait_end(pid, now_ns() + 500000000ull))
			kill(-pid, SIGKILL);
	}
	/* what the command left running in its group goes with it */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
