/* Page cache over /proc/PID/mem: one pread per 4 KiB page, direct-mapped slots. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/memcache.h"
#include "util/util.h"

#define MC_PAGE	 4096ul
#define MC_SLOTS 64

struct mc_slot {
	uint64_t page; /* page address + 1, 0 when empty */
	uint8_t data[MC_PAGE];
};

struct memcache {
	int fd;
	struct mc_slot *slots;
};

struct memcache *memcache__new(pid_t pid)
{
	struct memcache *mc = xcalloc(1, sizeof(*mc));
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mc->fd = open(path, O_RDONLY | O_CLOEXEC);
	mc->slots = xcalloc(MC_SLOTS, sizeof(*mc->slots));
	return mc;
}

void memcache__delete(struct memcache *mc)
{
	if (!mc)
		return;
	if (mc->fd >= 0)
		close(mc->fd);
	free(mc->slots);
	free(mc);
}

void memcache__flush(struct memcache *mc)
{
	unsigned int i;

	for (i = 0; i < MC_SLOTS; i++)
		mc->slots[i].page = 0;
}

static const uint8_t *page_of(struct memcache *mc, uint64_t page)
{
	struct mc_slot *s = &mc->slots[(page / MC_PAGE) % MC_SLOTS];

	if (s->page == page + 1)
		return s->data;
	if (mc->fd < 0 || pread(mc->fd, s->data, MC_PAGE, (off_t)page) != (ssize_t)MC_PAGE) {
		s->page = 0;
		return NULL;
	}
	s->page = page + 1;
	return s->data;
}

int memcache__read_word(struct memcache *mc, uint64_t addr, uint64_t *val)
{
	uint64_t page = addr & ~(MC_PAGE - 1), off = addr - page;
	const uint8_t *p = page_of(mc, page);

	if (!p)
		return -EFAULT;
	if (off + 8 <= MC_PAGE) {
		memcpy(val, p + off, 8);
		return 0;
	}
	/* Straddles two pages. */
	{
		uint8_t buf[8];
		size_t first = MC_PAGE - off;
		const uint8_t *q;

		memcpy(buf, p + off, first);
		q = page_of(mc, page + MC_PAGE);
		if (!q)
			return -EFAULT;
		memcpy(buf + first, q, 8 - first);
		memcpy(val, buf, 8);
	}
	return 0;
}
