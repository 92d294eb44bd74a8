/* Stacks of a whole process tree: one stack session per process (the root, then every
 * descendant it has at each sample, unless children are not wanted), their samples merged
 * into one snapshot whose threads carry their process's pid. */
#ifndef SRVSCOPE_STACKS_TREE_H
#define SRVSCOPE_STACKS_TREE_H

#include <stdbool.h>
#include <sys/types.h>

#include "stacks/stacks.h"

struct stacks_tree;

/* The tree rooted at pid (the root alone when !children). The root is validated as
 * stacks_session__new does (one-line error, NULL when it cannot be sampled); a
 * descendant that cannot be sampled (it exited, another tracer holds it) is left out
 * without a word. */
struct stacks_tree *stacks_tree__new(pid_t pid, const struct stacks_opts *opts, bool children);
/* Accepts NULL. */
void stacks_tree__delete(struct stacks_tree *t);
/* One sample of every process of the tree, merged (snap->pid is the root's, each thread
 * has its own process's pid): the descendants are listed again first, so new children
 * join and exited ones leave. NULL when the root cannot be sampled, as
 * stacks_session__sample says. The frames' strings stay valid until the next call but one. */
struct snapshot *stacks_tree__sample(struct stacks_tree *t);
/* After stacks_tree__sample returned NULL: the exit status, as stacks_session__exit_status
 * gives it for the root. */
int stacks_tree__exit_status(const struct stacks_tree *t, unsigned long shown);
/* The mode used ("ptrace" or "nostop"). */
const char *stacks_tree__mode(const struct stacks_tree *t);

#endif
