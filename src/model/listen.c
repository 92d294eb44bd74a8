/* The TCP ports a server's process tree listens on: the sockets in its processes' fd
 * tables that /proc/PID/net/tcp{,6} (the server's network namespace) shows listening. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/listen.h"
#include "proc/fds.h"
#include "trace/u64map.h"

static void add_socket(int fd, const char *link, void *inodes)
{
	(void)fd;
	if (!strncmp(link, "socket:[", 8))
		u64map__put(inodes, strtoull(link + 8, NULL, 10), 1);
}

/* Adds the socket inodes of pid's fds to inodes. */
static void socket_inodes(pid_t pid, struct u64map *inodes)
{
	proc__for_each_fd(pid, add_socket, inodes);
}

/* The processes whose parent is in the set, added to it (one level per call). */
static void add_children(struct u64map *pids)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300], buf[512], *p;
		FILE *f;
		long ppid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && sscanf(p + 2, "%*c %ld", &ppid) == 1 && u64map__get(pids, ppid, NULL))
			u64map__put(pids, strtoul(de->d_name, NULL, 10), 1);
	}
	closedir(d);
}

static void parse_table(pid_t pid, const char *file, bool v6, const struct u64map *inodes,
			struct model_listen *out, size_t max, size_t *nr)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, file);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char local[64];
		unsigned st, port;
		unsigned long long ino;
		struct model_listen *l;
		char *colon;

		if (sscanf(line, " %*d: %63s %*s %x %*s %*s %*s %*s %*s %llu", local, &st, &ino) !=
			    3 ||
		    st != 0x0A || !u64map__get(inodes, ino, NULL) || *nr >= max)
			continue;
		colon = strchr(local, ':');
		if (!colon || sscanf(colon + 1, "%x", &port) != 1)
			continue;
		*colon = '\0';
		l = &out[(*nr)++];
		l->port = (uint16_t)port;
		l->v6 = v6;
		l->inode = ino;
		if (!v6) {
			unsigned a = (unsigned)strtoul(local, NULL, 16);

			snprintf(l->addr, sizeof(l->addr), "%u.%u.%u.%u", a & 0xff, a >> 8 & 0xff,
				 a >> 16 & 0xff, a >> 24);
		} else {
			/* four 32-bit words, each in host order */
			unsigned w[4], i;
			char *p = l->addr;

			for (i = 0; i < 4; i++) {
				char word[9];

				memcpy(word, local + 8 * i, 8);
				word[8] = '\0';
				w[i] = (unsigned)strtoul(word, NULL, 16);
			}
			for (i = 0; i < 8; i++) {
				unsigned x = w[i / 2] >> (i % 2 ? 16 : 0) & 0xffff;

				x = (x & 0xff) << 8 | x >> 8;
				p += sprintf(p, "%s%x", i ? ":" : "", x);
			}
		}
	}
	fclose(f);
}

size_t model__listeners(pid_t pid, struct model_listen *out, size_t max)
{
	struct u64map pids = {0}, inodes = {0};
	size_t nr = 0, i, before;
	uint64_t k, v;

	u64map__put(&pids, (uint64_t)pid, 1);
	do { /* the whole tree: every level of children */
		before = pids.nr;
		add_children(&pids);
	} while (pids.nr != before);
	for (i = 0; u64map__next(&pids, &i, &k, &v);)
		socket_inodes((pid_t)k, &inodes);
	parse_table(pid, "tcp", false, &inodes, out, max, &nr);
	parse_table(pid, "tcp6", true, &inodes, out, max, &nr);
	u64map__free(&pids);
	u64map__free(&inodes);
	return nr;
}
