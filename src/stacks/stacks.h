/* Taking stacks of every thread of a process: the samplers (ptrace, BPF "nostop") fill a
 * snapshot's raw part; a stack session keeps what does not change between samples
 * (maps, ELF objects, unwind tables, symbols) and turns raw samples into frames. */
#ifndef SRVSCOPE_STACKS_STACKS_H
#define SRVSCOPE_STACKS_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct snapshot;

enum stacks_mode {
	STACKS_MODE_AUTO,   /* nostop when the kernel allows it, else ptrace */
	STACKS_MODE_PTRACE, /* stop each thread briefly with PTRACE_INTERRUPT */
	STACKS_MODE_NOSTOP, /* BPF task iterator: never stops the target */
};

struct stacks_opts {
	enum stacks_mode mode;
	bool consistent;   /* ptrace: freeze all threads together */
	bool kernel;	   /* also take kernel stacks */
	size_t stack_size; /* bytes of user stack copied per thread (default 16 KiB) */
	bool no_symbols;   /* raw addresses only (t->ips, t->kips): no frames are named */
};

#define STACKS_DEFAULT_STACK_SIZE (16 * 1024)

/* Captures registers + stack copies of every thread of pid into snap (raw part only).
 * Returns 0 or a negative errno; on error a one-line message has been printed. The
 * target is always left running (or stopped, if it was stopped before) and untraced. */
int ptrace__capture(pid_t pid, const struct stacks_opts *opts, struct snapshot *snap);
int nostop__capture(pid_t pid, const struct stacks_opts *opts, struct snapshot *snap);
/* Whether nostop can work on this kernel; if not, why (a phrase naming what is missing). */
bool nostop__available(char *why, size_t len);

struct stacks_session;
/* Validates pid (exists, not a kernel thread, permission, not traced by another tracer),
 * prints a one-line error and returns NULL if it cannot be sampled. */
struct stacks_session *stacks_session__new(pid_t pid, const struct stacks_opts *opts);
void stacks_session__delete(struct stacks_session *s);
/* Takes one sample: capture, unwind, symbolize. Returns a snapshot owned by the caller
 * (snapshot__delete), or NULL: with errno ESRCH when the process exited (nothing
 * printed: see stacks_session__exit_status), else after printing an error.
 * Caches are kept across calls and invalidated when the target's maps change. */
struct snapshot *stacks_session__sample(struct stacks_session *s);
/* After stacks_session__sample returned NULL: the exit status of a command that has shown
 * `shown` samples. A process that exited after at least one sample ends the command
 * normally (0, with a notice); before any, or any other failure, is 1 (message printed). */
int stacks_session__exit_status(const struct stacks_session *s, unsigned long shown);
/* The mode actually used ("ptrace" or "nostop"), after auto-selection. */
const char *stacks_session__mode(const struct stacks_session *s);

#endif
