/* ptrace-floor PID: the least a ptrace sampler can do to each thread of PID, one thread
 * after the other: PTRACE_SEIZE, PTRACE_INTERRUPT, wait for the stop, PTRACE_GETREGSET,
 * read one page of stack at the stack pointer, PTRACE_DETACH. Nothing else (no /proc
 * reads, no unwinding, no symbols): bench/stacks.sh compares srvscope's stalls with its
 * own. Built by bench/stacks.sh; not part of srvscope. */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	static char page[4096];
	struct user_regs_struct regs;
	char path[64];
	struct dirent *de;
	int done = 0, failed = 0;
	DIR *d;

	if (argc != 2) {
		fprintf(stderr, "usage: ptrace-floor PID\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%s/task", argv[1]);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "ptrace-floor: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		struct iovec iov = {&regs, sizeof(regs)}, local = {page, sizeof(page)}, remote;
		int status;

		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0 ||
		    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 ||
		    waitpid(tid, &status, __WALL) != tid) {
			failed++;
			continue;
		}
		if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) == 0) {
			remote.iov_base = (void *)regs.rsp;
			remote.iov_len = sizeof(page);
			process_vm_readv(tid, &local, 1, &remote, 1, 0);
		}
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		done++;
	}
	closedir(d);
	printf("%d threads, %d failed\n", done, failed);
	return 0;
}
