// SPDX-License-Identifier: GPL-2.0
#include "proc/fds.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void proc__for_each_fd(pid_t pid, void (*fn)(int fd, const char *link, void *arg), void *arg)
{
	char path[64], fdpath[320], link[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		ssize_t n;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || fd < 0 || fd > INT32_MAX)
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		fn((int)fd, link, arg);
	}
	closedir(d);
}
