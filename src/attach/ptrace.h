/* ptrace helpers shared by the ptrace sampler (the sampler itself is declared in
 * stacks/stacks.h as ptrace__capture). */
#ifndef SRVSCOPE_ATTACH_PTRACE_H
#define SRVSCOPE_ATTACH_PTRACE_H

#include <signal.h>
#include <sys/types.h>

/* Set by srvscope's SIGINT/SIGTERM handler: the sampler finishes the thread in hand,
 * releases everything and returns. */
extern volatile sig_atomic_t ptrace_interrupted;

/* PTRACE_SEIZE without options. Returns 0 or -errno. */
int ptrace__seize(pid_t tid);
/* Remembers a thread left seized with a pending trap; ptrace__reap_pending releases the
 * ones that have stopped since. */
void ptrace__remember_pending(pid_t tid);
void ptrace__reap_pending(void);

#endif
