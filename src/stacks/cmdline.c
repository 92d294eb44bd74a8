/* Option parsing and signal handling shared by stacks and top. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "attach/ptrace.h"
#include "stacks/cmdline.h"
#include "util/util.h"

void stacks_cmdline__init(struct stacks_cmdline *cl)
{
	memset(cl, 0, sizeof(*cl));
	cl->pid = -1;
	cl->opts.mode = STACKS_MODE_AUTO;
	cl->opts.stack_size = STACKS_DEFAULT_STACK_SIZE;
}

int stacks_cmdline__option(struct stacks_cmdline *cl, int c, const char *arg)
{
	long v;

	switch (c) {
	case 'p':
		if (parse_long("-p", arg, 1, 0x7fffffff, &v))
			return -1;
		cl->pid = v;
		return 1;
	case 'k':
		cl->opts.kernel = true;
		return 1;
	case 'q':
		util_quiet = true;
		return 1;
	case 'C':
		cl->opts.consistent = true;
		return 1;
	case 'N':
		cl->no_children = true;
		return 1;
	case 'S':
		if (parse_long("--stack-size", arg, 1024, 1 << 20, &v))
			return -1;
		cl->opts.stack_size = v;
		return 1;
	case 'M':
		if (!strcmp(arg, "auto"))
			cl->opts.mode = STACKS_MODE_AUTO;
		else if (!strcmp(arg, "ptrace"))
			cl->opts.mode = STACKS_MODE_PTRACE;
		else if (!strcmp(arg, "nostop"))
			cl->opts.mode = STACKS_MODE_NOSTOP;
		else
			return error("invalid value '%s' for --mode: use auto, ptrace or nostop",
				     arg);
		return 1;
	}
	return 0;
}

int stacks_cmdline__finish(struct stacks_cmdline *cl, int argc, char **argv, int optind)
{
	if (optind < argc)
		return error("unexpected argument '%s' (the pid goes after -p)", argv[optind]);
	if (cl->pid < 0)
		return error("which process? give its pid with -p PID");
	if (cl->opts.consistent && cl->opts.mode == STACKS_MODE_NOSTOP)
		return error("--consistent needs --mode=ptrace: nostop never freezes threads");
	return 0;
}

static void on_signal(int sig)
{
	ptrace_interrupted = 1;
}

void stacks_cmdline__trap_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void stacks_cmdline__sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (!ptrace_interrupted && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
