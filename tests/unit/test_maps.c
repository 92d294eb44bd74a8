/* The /proc/PID/maps parser on fixed text and on our own process. */
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/maps.h"
#include "unit.h"

static const char text[] =
	"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
	"00e03000-00e24000 rw-p 00000000 00:00 0           [heap]\n"
	"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
	"7f2c4f000000-7f2c4f200000 r-xp 00028000 fd:01 42  /tmp/lib with space.so (deleted)\n"
	"7ffc1a000000-7ffc1a021000 rw-p 00000000 00:00 0   [stack]\n"
	"garbage line\n"
	"7fff00000000-7fff00002000 r-xs 00001000 00:05 7";

int main(void)
{
	struct proc_maps *pm = proc_maps__parse(7, text, sizeof(text) - 1), *self;
	struct map_entry *m;

	is_int(pm->nr, 6, "six entries, garbage skipped");
	is_str(pm->maps[0].path, "/usr/bin/dbus-daemon", "path");
	ok(pm->maps[0].prot == (PROT_READ | PROT_EXEC), "permissions");
	is_str(pm->maps[2].path, NULL, "anonymous map has no path (not the next line)");
	is_str(pm->maps[3].path, "/tmp/lib with space.so", "spaces kept, (deleted) removed");
	ok(pm->maps[3].deleted, "deleted flagged");
	is_int(pm->maps[3].pgoff, 0x28000, "offset");
	is_int(pm->maps[3].dev_major, 0xfd, "device");
	is_int(pm->maps[3].inode, 42, "inode");
	ok(pm->maps[5].shared && pm->maps[5].path == NULL, "last line without newline, shared");
	m = proc_maps__find(pm, 0x7f2c4f000123);
	ok(m == &pm->maps[3], "lookup inside a map");
	ok(proc_maps__find(pm, 0x00452000) == NULL, "end is exclusive");
	ok(proc_maps__find(pm, 0x00400000) == &pm->maps[0], "start is inclusive");
	{
		static const char now[] =
			"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
			"7f2c4f100000-7f2c4f110000 r-xp 00000000 fd:01 43  /tmp/new.so\n"
			"7ffc1a000000-7ffc1a021000 ---p 00000000 00:00 0\n";
		struct proc_maps *cur = proc_maps__parse(7, now, sizeof(now) - 1);
		struct proc_maps *merged = proc_maps__merge_stale(cur, pm);

		/* Kept: the unmapped library and the stack; dropped: what overlaps new maps
		 * (the old library's range now holds new.so) and anonymous entries. */
		m = proc_maps__find(merged, 0x7ffc1a000100);
		ok(m && m->path && !strcmp(m->path, "[stack]"),
		   "stale named entry kept over the anonymous mapping that replaced it");
		m = proc_maps__find(merged, 0x7f2c4f100100);
		ok(m && !strcmp(m->path, "/tmp/new.so"), "current entry wins where they overlap");
		ok(proc_maps__find(merged, 0x7f2c4f000100) == NULL,
		   "stale entry overlapping a current one dropped");
		ok(proc_maps__find(merged, 0x7f0000000100) == NULL,
		   "anonymous stale entry dropped");
		ok(merged->text_len == cur->text_len &&
			   !memcmp(merged->text, cur->text, cur->text_len),
		   "merged maps carry the current text");
		proc_maps__delete(merged);
		proc_maps__delete(cur);
	}
	proc_maps__delete(pm);

	self = proc_maps__read(getpid());
	ok(self && self->nr > 5, "own maps read");
	m = self ? proc_maps__find(self, (uint64_t)(uintptr_t)&main) : NULL;
	ok(m && (m->prot & PROT_EXEC) && m->path, "main is in an executable file map");
	{
		/* A child that only sleeps keeps its maps (our own may move under a
		 * sanitizer's allocator). */
		pid_t child = fork();
		struct proc_maps *cm;

		if (child == 0) {
			pause();
			_exit(0);
		}
		usleep(50000);
		cm = proc_maps__read(child);
		ok(cm && !proc_maps__changed(cm), "unchanged maps detected as unchanged");
		proc_maps__delete(cm);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	{
		void *p = mmap(NULL, 4096 * 3, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ok(self && proc_maps__changed(self), "a new mapping is a change");
		munmap(p, 4096 * 3);
	}
	proc_maps__delete(self);
	return done_testing();
}
