/* /proc readers for the recorder: fd descriptions with socket addresses looked up by inode
 * in the process's own network namespace tables, current syscalls, build-ids. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc/maps.h"
#include "record/procinfo.h"
#include "symbol/dso.h"
#include "util/util.h"

/* "0100007F:1F90" (IPv4) or 32 hex digits (IPv6, four host-order words) + ":port". */
static int format_addr(const char *hex, char *out, size_t size)
{
	const char *colon = strchr(hex, ':');
	unsigned int port;
	size_t n;

	if (!colon || sscanf(colon + 1, "%x", &port) != 1)
		return -1;
	n = colon - hex;
	if (n == 8) {
		struct in_addr a;
		char s[INET_ADDRSTRLEN];

		if (sscanf(hex, "%8x", &a.s_addr) != 1)
			return -1;
		inet_ntop(AF_INET, &a, s, sizeof(s));
		snprintf(out, size, "%s:%u", s, port);
		return 0;
	}
	if (n == 32) {
		struct in6_addr a;
		char s[INET6_ADDRSTRLEN];
		uint32_t w[4];
		int i;

		for (i = 0; i < 4; i++)
			if (sscanf(hex + 8 * i, "%8x", &w[i]) != 1)
				return -1;
		memcpy(&a, w, sizeof(a));
		inet_ntop(AF_INET6, &a, s, sizeof(s));
		snprintf(out, size, "[%s]:%u", s, port);
		return 0;
	}
	return -1;
}

/* Looks inode up in /proc/PID/net/<table> (tcp, tcp6, udp, udp6). */
static int inet_socket(pid_t pid, const char *table, unsigned long inode, char *buf, size_t size)
{
	const char *proto = table[0] == 't' ? "tcp" : "udp";
	char path[64], line[512];
	FILE *f;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, table);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) /* column titles */
		goto out;
	while (fgets(line, sizeof(line), f)) {
		char local[64], remote[64], l[80], r[80];
		unsigned int st;
		unsigned long ino;

		if (sscanf(line, "%*s %63s %63s %x %*s %*s %*s %*s %*s %lu", local, remote, &st,
			   &ino) != 4 ||
		    ino != inode)
			continue;
		if (format_addr(local, l, sizeof(l)) || format_addr(remote, r, sizeof(r)))
			break;

		if (table[0] == 't' && st == 0x0a) /* TCP_LISTEN */
			snprintf(buf, size, "%s %s (listening)", proto, l);
		else if (!strcmp(r, "0.0.0.0:0") || !strcmp(r, "[::]:0"))
			snprintf(buf, size, "%s %s", proto, l);
		else
			snprintf(buf, size, "%s %s -> %s", proto, l, r);
		found = 0;
		break;
	}
out:
	fclose(f);
	return found;
}

static int unix_socket(pid_t pid, unsigned long inode, char *buf, size_t size)
{
	char path[64], line[512];
	FILE *f;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/net/unix", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long ino;
		char name[256] = "";

		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &ino, name) < 1 ||
		    ino != inode)
			continue;
		snprintf(buf, size, "unix %s", name[0] ? name : "(unnamed)");
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

int procinfo__describe_fd(pid_t pid, int fd, char *buf, size_t size)
{
	static const char *const tables[] = {"tcp", "tcp6", "udp", "udp6"};
	char path[64], link[512];
	unsigned long inode;
	ssize_t n;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	if (sscanf(link, "socket:[%lu]", &inode) == 1) {
		for (i = 0; i < ARRAY_SIZE(tables); i++)
			if (!inet_socket(pid, tables[i], inode, buf, size))
				return 0;
		if (!unix_socket(pid, inode, buf, size))
			return 0;
		snprintf(buf, size, "socket [%lu]", inode);
	} else if (sscanf(link, "pipe:[%lu]", &inode) == 1) {
		snprintf(buf, size, "pipe [%lu]", inode);
	} else if (!strncmp(link, "anon_inode:", 11)) {
		const char *k = link + 11;

		if (*k == '[')
			k++;
		snprintf(buf, size, "%.*s", (int)strcspn(k, "]"), k);
	} else {
		snprintf(buf, size, "%s", link);
	}
	return 0;
}

int procinfo__syscall(pid_t pid, pid_t tid, long *nr, unsigned long args[3])
{
	char path[64], text[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	n = read_file(path, text, sizeof(text));
	if (n < 0)
		return n;
	*nr = -1;
	args[0] = args[1] = args[2] = (unsigned long)-1;
	if (!strncmp(text, "running", 7))
		return 0;
	if (sscanf(text, "%ld %lx %lx %lx", nr, &args[0], &args[1], &args[2]) < 1)
		return -EINVAL;
	return 0;
}

static int read_target(pid_t pid, unsigned long addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)addr, len};

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The same reading as the recorder's kernel side makes at each switch (polled_fd in
 * record.bpf.c), for the threads already waiting when it starts. */
int procinfo__polled_fd(pid_t pid, long nr, const unsigned long args[3], bool *more)
{
	uint64_t set = 0;
	unsigned long p;
	int fd = -1, i;

	*more = false;
	if (nr == SYS_poll || nr == SYS_ppoll) {
		if (!args[1] || read_target(pid, args[0], &fd, sizeof(fd)) || fd < 0)
			return -1;
		*more = args[1] > 1;
		return fd;
	}
	if (nr != SYS_select && nr != SYS_pselect6)
		return -1;
	p = args[1] ? args[1] : args[2];
	if (!p || read_target(pid, p, &set, sizeof(set)) || !set)
		return -1;
	for (i = 0; i < 64 && !(set & (1ull << i)); i++)
		;
	*more = (set & (set - 1)) || args[0] > 64 || (args[1] && args[2]);
	return i;
}

size_t procinfo__build_ids(pid_t pid, const struct proc_maps *maps, char **out)
{
	size_t len = 0, cap = 0, i, j;
	char *buf = NULL;

	for (i = 0; i < maps->nr; i++) {
		const struct map_entry *m = &maps->maps[i];
		const char *id;
		struct dso *dso;
		int dup = 0;

		if (!m->path || m->path[0] != '/' || !(m->prot & PROT_EXEC))
			continue;
		for (j = 0; j < i && !dup; j++)
			dup = maps->maps[j].path && (maps->maps[j].prot & PROT_EXEC) &&
			      !strcmp(maps->maps[j].path, m->path);
		if (dup)
			continue;
		dso = dso__get(pid, m);
		id = dso ? dso__build_id(dso) : NULL;
		if (id) {
			size_t need = strlen(id) + strlen(m->path) + 3;

			xgrow((void **)&buf, &cap, len + need, 1);
			len += snprintf(buf + len, need, "%s %s\n", id, m->path);
		}
		dso__put(dso);
	}
	*out = buf;
	return len;
}
