/* Options shared by the commands that sample stacks (stacks, top): -p, --mode,
 * --consistent, --kernel, --stack-size, -q; and their signal handling. */
#ifndef SRVSCOPE_STACKS_CMDLINE_H
#define SRVSCOPE_STACKS_CMDLINE_H

#include <stdbool.h>
#include <sys/types.h>

#include "stacks/stacks.h"

struct stacks_cmdline {
	pid_t pid;
	struct stacks_opts opts;
	bool no_children; /* the process alone, not its descendants */
};

/* The getopt_long entries of the shared options, for the commands' option tables. */
/* clang-format off */
#define STACKS_CMDLINE_LONGOPTS                                                            \
	{ "pid", required_argument, NULL, 'p' },                                           \
	{ "kernel", no_argument, NULL, 'k' },                                              \
	{ "mode", required_argument, NULL, 'M' },                                          \
	{ "stack-size", required_argument, NULL, 'S' },                                    \
	{ "quiet", no_argument, NULL, 'q' },                                               \
	{ "help", no_argument, NULL, 'h' },                                                \
	{ "no-children", no_argument, NULL, 'N' }
/* clang-format on */

void stacks_cmdline__init(struct stacks_cmdline *cl);
/* Handles one getopt_long result: 'p', 'k', 'q', 'M' (--mode), 'C' (--consistent),
 * 'S' (--stack-size), 'N' (--no-children). Returns 1 when handled, -1 on a bad value (message
 * printed), 0 when the option is not one of these. */
int stacks_cmdline__option(struct stacks_cmdline *cl, int c, const char *arg);
/* Checks that -p was given and no stray arguments remain. Returns 0 or -1. */
int stacks_cmdline__finish(struct stacks_cmdline *cl, int argc, char **argv, int optind);
/* SIGINT/SIGTERM/SIGHUP set ptrace_interrupted: the sample in hand finishes cleanly. */
void stacks_cmdline__trap_signals(void);
/* Sleeps, returning early when interrupted. */
void stacks_cmdline__sleep_ms(long ms);

#endif
