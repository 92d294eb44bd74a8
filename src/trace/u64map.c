/* Open addressing with linear probing; the capacity stays a power of two, at most
 * 70 % full. */
#include <stdlib.h>

#include "trace/u64map.h"
#include "util/util.h"

static size_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (size_t)k;
}

void u64map__free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	m->keys = m->vals = NULL;
	m->used = NULL;
	m->cap = m->nr = 0;
}

static size_t find(const struct u64map *m, uint64_t key)
{
	size_t i = hash(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = find(m, key);
	if (!m->used[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

static void grow(struct u64map *m)
{
	struct u64map n = { 0 };
	size_t i, j;

	n.cap = m->cap ? m->cap * 2 : 64;
	n.keys = xmalloc(n.cap * sizeof(*n.keys));
	n.vals = xmalloc(n.cap * sizeof(*n.vals));
	n.used = xcalloc(n.cap, 1);
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		j = find(&n, m->keys[i]);
		n.used[j] = 1;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	n.nr = m->nr;
	u64map__free(m);
	*m = n;
}

uint64_t *u64map__slot(struct u64map *m, uint64_t key, bool *created)
{
	size_t i;

	if ((m->nr + 1) * 10 > m->cap * 7)
		grow(m);
	i = find(m, key);
	if (created)
		*created = !m->used[i];
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->nr++;
	}
	return &m->vals[i];
}

void u64map__put(struct u64map *m, uint64_t key, uint64_t val)
{
	*u64map__slot(m, key, NULL) = val;
}

bool u64map__next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val)
{
	size_t i;

	for (i = *iter; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		*key = m->keys[i];
		if (val)
			*val = m->vals[i];
		*iter = i + 1;
		return true;
	}
	*iter = m->cap;
	return false;
}
