/* Reading threads, names and states from /proc, and target validation. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/task.h"
#include "util/escape.h"
#include "util/util.h"

#define PF_KTHREAD 0x00200000

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int proc_tasks__list(pid_t pid, pid_t **out)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		xgrow((void **)&tids, &cap, n + 1, sizeof(*tids));
		tids[n++] = atoi(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(tids, n, sizeof(*tids), cmp_pid);
	*out = tids;
	return n;
}

/* Parses the text of a stat file: "tid (comm) S ppid ...". The comm may contain spaces
 * and parentheses, so the state follows the last ')'. */
int proc_task__parse_stat(const char *buf, struct task_stat *st)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	size_t len;
	int field;
	const char *p;

	if (!open || !close || close < open || !close[1] || !close[2])
		return -EINVAL;
	len = close - open - 1;
	if (len > sizeof(st->comm) - 1)
		len = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, len);
	st->comm[len] = '\0';
	st->state = close[2];
	/* flags is field 9; the state is field 3. */
	p = close + 2;
	for (field = 3; field < 9 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	st->flags = p ? strtoul(p, NULL, 10) : 0;
	return 0;
}

int proc_task__stat(pid_t pid, pid_t tid, struct task_stat *st)
{
	char path[64], buf[512];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	n = read_file(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return -ESRCH;
	if (n < 0)
		return n;
	return proc_task__parse_stat(buf, st);
}

char *proc_task__kstack(pid_t pid, pid_t tid)
{
	char path[64], buf[8192];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	len = read_file(path, buf, sizeof(buf));
	if (len < 0) {
		errno = -len;
		return NULL;
	}
	return xstrdup(buf);
}

/* The parent pid of a process, from the field after the state in /proc/PID/stat. */
static pid_t read_ppid(pid_t pid)
{
	char path[64], buf[512];
	const char *close;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	close = strrchr(buf, ')');
	if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

int proc__tree(const pid_t *roots, size_t nr, pid_t **out)
{
	pid_t *all = NULL, *tree = NULL;
	int *parent = NULL;
	size_t n = 0, cap = 0, nt = 0, capt = 0, i, j;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	/* Every process and its parent, then the trees grown from the roots breadth first:
	 * one pass over /proc whatever the depth. */
	while ((de = readdir(d))) {
		pid_t pid, ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = atoi(de->d_name);
		ppid = read_ppid(pid);
		if (ppid <= 0)
			continue;
		xgrow((void **)&all, &cap, n + 1, sizeof(*all));
		parent = xrealloc(parent, cap * sizeof(*parent));
		all[n] = pid;
		parent[n++] = ppid;
	}
	closedir(d);
	for (i = 0; i < nr; i++) {
		for (j = 0; j < nt && tree[j] != roots[i]; j++)
			;
		if (j < nt)
			continue;
		xgrow((void **)&tree, &capt, nt + 1, sizeof(*tree));
		tree[nt++] = roots[i];
	}
	for (i = 0; i < nt; i++)
		for (j = 0; j < n; j++) {
			size_t k;

			if (parent[j] != tree[i])
				continue;
			for (k = 0; k < nt && tree[k] != all[j]; k++)
				;
			if (k < nt)
				continue;
			xgrow((void **)&tree, &capt, nt + 1, sizeof(*tree));
			tree[nt++] = all[j];
		}
	free(all);
	free(parent);
	*out = tree;
	return nt;
}

static void read_tracer(pid_t pid, pid_t *tracer)
{
	char path[64], buf[4096], *p;

	*tracer = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return;
	p = strstr(buf, "\nTracerPid:");
	if (p)
		*tracer = atoi(p + 11);
}

pid_t proc__live_tid(pid_t pid)
{
	struct task_stat st;
	pid_t *tids = NULL, found = -ESRCH;
	int n, i;

	if (proc_task__stat(pid, pid, &st) == 0 && st.state != 'Z' && st.state != 'X')
		return pid;
	n = proc_tasks__list(pid, &tids);
	for (i = 0; i < n && found < 0; i++)
		if (proc_task__stat(pid, tids[i], &st) == 0 && st.state != 'Z' && st.state != 'X')
			found = tids[i];
	free(tids);
	return found;
}

static unsigned long long read_caps(pid_t pid, const char *field)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, field)))
		return 0;
	return strtoull(p + strlen(field), NULL, 16);
}

#define CAP_SYS_PTRACE_BIT 19

int proc__denied_error(pid_t pid)
{
	unsigned long long mine = read_caps(getpid(), "\nCapEff:");
	unsigned long long missing = read_caps(pid, "\nCapPrm:") & ~mine;
	char scope[16] = "", lsm[128] = "";
	struct task_stat st = {.comm = "?"};

	proc_task__stat(pid, pid, &st);
	if (!(mine >> CAP_SYS_PTRACE_BIT & 1)) {
		if (geteuid() == 0 && missing)
			return error("cannot look at %d (%s): srvscope runs without "
				     "CAP_SYS_PTRACE, "
				     "and the target holds capabilities it lacks (mask %llx); run "
				     "it "
				     "with CAP_SYS_PTRACE (e.g. outside this container)",
				     pid, st.comm, missing),
			       -EPERM;
		return error("cannot look at %d (%s): permission denied (run as root or grant "
			     "CAP_SYS_PTRACE)",
			     pid, st.comm),
		       -EPERM;
	}
	if (read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope)) > 0 &&
	    atoi(scope) == 3)
		return error("cannot look at %d (%s): the kernel forbids all tracing "
			     "(kernel.yama.ptrace_scope = 3, which only a reboot undoes)",
			     pid, st.comm),
		       -EPERM;
	/* With CAP_SYS_PTRACE only a security module or a user namespace we hold no
	 * capability over can refuse (a sandbox or container manager guarding its agent). */
	if (read_file("/sys/kernel/security/lsm", lsm, sizeof(lsm)) > 0)
		lsm[strcspn(lsm, "\n")] = '\0';
	return error("cannot look at %d (%s): the kernel refuses even with CAP_SYS_PTRACE: a "
		     "security module%s%s%s or a user namespace outside ours protects it; "
		     "pick another process, or run srvscope where that policy allows it",
		     pid, st.comm, lsm[0] ? " (" : "", lsm, lsm[0] ? " are active)" : ""),
	       -EPERM;
}

int proc__check_target(pid_t pid, char *comm, bool allow_traced)
{
	struct task_stat st;
	pid_t tracer;
	char path[64], tcomm[64] = "?", name[COMM_ESCAPED_SIZE], tname[COMM_ESCAPED_SIZE];
	int err;

	if (pid <= 0)
		return error("invalid pid %d: give the pid of a running process", pid), -EINVAL;
	err = proc_task__stat(pid, pid, &st);
	if (err == -ESRCH)
		return error("no such process %d: check the pid (ps -e, pgrep)", pid), -ESRCH;
	if (err)
		return error("cannot read /proc/%d/stat: %s", pid, strerror(-err)), err;
	if (comm)
		memcpy(comm, st.comm, sizeof(st.comm));
	/* The name is the process's own choice: escaped before it reaches a terminal. */
	name_escape(name, sizeof(name), st.comm, strlen(st.comm));
	if (st.flags & PF_KTHREAD)
		return error("%d (%s) is a kernel thread: it has no user-space stack to show; "
			     "pick a user process",
			     pid, name),
		       -EINVAL;
	if (pid == getpid())
		return error("%d is srvscope itself: pick another process", pid), -EINVAL;
	/* A leader that called pthread_exit is a zombie while its other threads run on. */
	if ((st.state == 'Z' || st.state == 'X') && proc__live_tid(pid) < 0)
		return error("%d (%s) has exited (zombie): nothing to sample", pid, name),
		       -ESRCH;
	read_tracer(pid, &tracer);
	if (tracer && tracer != getpid() && !allow_traced) {
		snprintf(path, sizeof(path), "/proc/%d/comm", tracer);
		if (read_file(path, tcomm, sizeof(tcomm)) > 0)
			tcomm[strcspn(tcomm, "\n")] = '\0';
		name_escape(tname, sizeof(tname), tcomm, strlen(tcomm));
		return error("%d (%s) is already traced by %d (%s): detach that tracer "
			     "(quit gdb/strace) and try again, or use --mode=nostop",
			     pid, name, tracer, tname),
		       -EBUSY;
	}
	return 0;
}

int proc__title(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_file(path, buf, size);
	if (n < 0)
		return (int)n;
	/* The arguments are NUL-separated; a title set in place of them (postgres, nginx)
	 * is padded with NULs or spaces. */
	for (i = 0; i < (size_t)n; i++)
		if (buf[i] == '\0' || buf[i] == '\n' || buf[i] == '\t')
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return (int)n;
}

int proc_task__sched(pid_t tid, uint64_t *ns, uint64_t *wakes)
{
	unsigned long long v, w = 0;
	char path[64], line[128];
	bool found;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -ESRCH;
	found = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!found || !(f = fopen(path, "r")))
		return -ESRCH;
	found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "voluntary_ctxt_switches: %llu", &w) == 1;
	fclose(f);
	if (!found)
		return -ESRCH;
	*ns = v;
	*wakes = w;
	return 0;
}
