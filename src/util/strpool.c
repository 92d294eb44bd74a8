/* Interned strings in an open-addressing hash table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strpool.h"
#include "util/util.h"

struct strpool {
	char **slots;
	size_t cap, nr;
};

struct strpool *strpool__new(void)
{
	struct strpool *p = xcalloc(1, sizeof(*p));

	p->cap = 256;
	p->slots = xcalloc(p->cap, sizeof(*p->slots));
	return p;
}

void strpool__delete(struct strpool *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->cap; i++)
		free(p->slots[i]);
	free(p->slots);
	free(p);
}

static char **find_slot(char **slots, size_t cap, const char *s)
{
	size_t i = fnv1a_str(s, FNV1A_INIT) & (cap - 1);

	while (slots[i] && strcmp(slots[i], s))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static void grow(struct strpool *p)
{
	size_t i, ncap = p->cap * 2;
	char **ns = xcalloc(ncap, sizeof(*ns));

	for (i = 0; i < p->cap; i++)
		if (p->slots[i])
			*find_slot(ns, ncap, p->slots[i]) = p->slots[i];
	free(p->slots);
	p->slots = ns;
	p->cap = ncap;
}

const char *strpool__intern(struct strpool *p, const char *s)
{
	char **slot;

	if (!s)
		return NULL;
	if ((p->nr + 1) * 2 > p->cap)
		grow(p);
	slot = find_slot(p->slots, p->cap, s);
	if (!*slot) {
		*slot = xstrdup(s);
		p->nr++;
	}
	return *slot;
}
