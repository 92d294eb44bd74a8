/* Stand-ins for the built-in load clients (src/load/) until they are merged: weak, so the
 * real ones replace them. Only --load COMMAND works with these. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load/load.h"

__attribute__((weak)) int load__parse_url(const char *url, struct load_target *t)
{
	return -EINVAL;
}

__attribute__((weak)) int load__run(const struct load_spec *spec, struct load_result *res,
				    const volatile int *stop)
{
	snprintf(res->error, sizeof(res->error), "the built-in clients are not built in");
	return -ENOSYS;
}

__attribute__((weak)) int load__expand(const char *cmd, const struct load_spec *spec, char *out,
				       size_t outlen)
{
	if (strlen(cmd) >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, cmd);
	return 0;
}

__attribute__((weak)) int load__run_command(const char *cmd, double duration_s, double grace_s)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		return -errno;
	if (!p) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(p, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

__attribute__((weak)) void load__print_result(const struct load_result *res, FILE *f)
{
	fprintf(f, "%llu req\n", (unsigned long long)res->completed);
}
