/* Threads of a process as /proc shows them: listing, names and states, and the checks
 * that tell whether a process can be sampled at all. */
#ifndef SRVSCOPE_PROC_TASK_H
#define SRVSCOPE_PROC_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Lists the thread ids of pid into *tids (malloc'ed, sorted). Returns the count or -errno. */
int proc_tasks__list(pid_t pid, pid_t **tids);

struct task_stat {
	char comm[16];
	char state;
	unsigned long flags; /* PF_* */
};

/* Parses the text of a stat file. Returns 0 or -EINVAL. */
int proc_task__parse_stat(const char *buf, struct task_stat *st);
/* Reads /proc/PID/task/TID/stat. Returns 0 or -errno (-ESRCH when the thread is gone). */
int proc_task__stat(pid_t pid, pid_t tid, struct task_stat *st);

/* A thread's CPU nanoseconds so far (schedstat's runtime: exact, where stat's utime and
 * stime are clock ticks) and its voluntary switches (the times it blocked and was woken;
 * preemptions left out). Returns 0 or -ESRCH. */
int proc_task__sched(pid_t tid, uint64_t *ns, uint64_t *wakes);

/* Reads the kernel stack of a thread from /proc/PID/task/TID/stack (root only): lines
 * "[<0>] func+0x1a/0x40", innermost first (the kernel hides the addresses, not the names).
 * Returns malloc'ed text, or NULL with errno set. */
char *proc_task__kstack(pid_t pid, pid_t tid);

/* The processes of the trees rooted at roots[0..nr): the roots, then every descendant
 * (by parent pid in /proc/PID/stat), each once, into *out (malloc'ed). A root that is
 * gone is still listed. Returns the count or -errno. */
int proc__tree(const pid_t *roots, size_t nr, pid_t **out);

/* Checks that pid can be sampled: it exists, is not a kernel thread nor srvscope itself,
 * and (unless allow_traced) is not traced by another tracer. Prints a one-line error
 * saying what to do and returns -errno when not. Fills comm (16 bytes) when non-NULL. */
int proc__check_target(pid_t pid, char *comm, bool allow_traced);

/* A thread of pid that has not exited: pid itself, or another thread when the leader
 * called pthread_exit (its /proc/PID/maps, mem and root are empty then, a live thread's
 * are the process's). Returns -ESRCH when every thread has exited. */
pid_t proc__live_tid(pid_t pid);

/* Prints why the kernel denies looking at pid (no CAP_SYS_PTRACE, Yama, or a security
 * module or user namespace that protects it), in one line saying what to do. -EPERM. */
int proc__denied_error(pid_t pid);

/* The process's command line, arguments joined by spaces, or the title it set in their
 * place ("postgres: walwriter"), into buf (NUL-terminated, cut to size). Returns its
 * length (0 for a kernel thread) or -errno. */
int proc__title(pid_t pid, char *buf, size_t size);

#endif
