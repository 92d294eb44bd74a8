/* Open addressing over FNV-1a hashes, doubling at half full. */
#include <stdlib.h>
#include <string.h>

#include "util/keytab.h"
#include "util/util.h"

static size_t keytab__slot(const struct keytab *t, uint64_t h, const void *key, size_t len)
{
	size_t i;

	for (i = h & (t->cap - 1); t->slots[i].key; i = (i + 1) & (t->cap - 1)) {
		const struct keyslot *s = &t->slots[i];

		if (s->hash == h && s->len == len && !memcmp(s->key, key, len))
			break;
	}
	return i;
}

uint64_t keytab__get(const struct keytab *t, const void *key, size_t len)
{
	uint64_t h = fnv1a(key, len, FNV1A_INIT);

	if (!t->cap)
		return 0;
	return t->slots[keytab__slot(t, h, key, len)].id;
}

uint64_t keytab__find(struct keytab *t, const void *key, size_t len, bool *created)
{
	uint64_t h = fnv1a(key, len, FNV1A_INIT);
	size_t i;

	if ((t->nr + 1) * 2 > t->cap) {
		struct keyslot *old = t->slots;
		size_t oldcap = t->cap, j;

		t->cap = t->cap ? t->cap * 2 : 64;
		t->slots = xcalloc(t->cap, sizeof(*t->slots));
		for (j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			for (i = old[j].hash & (t->cap - 1); t->slots[i].key;
			     i = (i + 1) & (t->cap - 1))
				;
			t->slots[i] = old[j];
		}
		free(old);
	}
	i = keytab__slot(t, h, key, len);
	if (t->slots[i].key) {
		*created = false;
		return t->slots[i].id;
	}
	t->slots[i].hash = h;
	t->slots[i].key = xmalloc(len + 1); /* +1: a zero-length key is still non-NULL */
	memcpy(t->slots[i].key, key, len);
	t->slots[i].len = len;
	t->slots[i].id = ++t->nr;
	*created = true;
	return t->slots[i].id;
}

void keytab__free(struct keytab *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
