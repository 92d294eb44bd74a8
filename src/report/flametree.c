/* Folded stacks merged into a tree for the HTML report's flame graphs: each distinct frame
 * name is stored once, and each (parent, name) pair is one node, found through a hash so
 * that the order of the stacks does not matter. */
#include <stdlib.h>
#include <string.h>

#include "output/json_writer.h"
#include "report/flametree.h"
#include "util/util.h"

void flametree__init(struct flametree *ft)
{
	memset(ft, 0, sizeof(*ft));
	xgrow((void **)&ft->nodes, &ft->cap, 1, sizeof(*ft->nodes));
	ft->nodes[0] = (struct flametree_node){0};
	ft->nr = 1;
	/* name 0: the root's, never written */
	xgrow((void **)&ft->names, &ft->cap_names, 1, sizeof(*ft->names));
	ft->names[0] = xstrdup("all");
	ft->nr_names = 1;
}

void flametree__free(struct flametree *ft)
{
	size_t i;

	for (i = 0; i < ft->nr_names; i++)
		free(ft->names[i]);
	free(ft->names);
	free(ft->nodes);
	u64map__free(&ft->name_idx);
	u64map__free(&ft->child_idx);
	memset(ft, 0, sizeof(*ft));
}

static uint32_t name_id(struct flametree *ft, const char *s, size_t len)
{
	uint64_t h = fnv1a(s, len, FNV1A_INIT), *slot;
	bool created;

	/* A hash shared by two different names moves the second one to the next key. */
	for (;; h++) {
		slot = u64map__slot(&ft->name_idx, h, &created);
		if (created)
			break;
		if (!strncmp(ft->names[*slot], s, len) && !ft->names[*slot][len])
			return *slot;
	}
	xgrow((void **)&ft->names, &ft->cap_names, ft->nr_names + 1, sizeof(*ft->names));
	ft->names[ft->nr_names] = strndup(s, len);
	if (!ft->names[ft->nr_names])
		ft->names[ft->nr_names] =
			xstrdup(""); /* xstrdup ends srvscope when out of memory */
	*slot = ft->nr_names;
	return ft->nr_names++;
}

static uint32_t child(struct flametree *ft, uint32_t parent, uint32_t name)
{
	uint64_t key = ((uint64_t)parent << 32) | name, h = fnv1a(&key, sizeof(key), FNV1A_INIT);
	uint64_t *slot;
	struct flametree_node *n;
	bool created;

	for (;; h++) {
		slot = u64map__slot(&ft->child_idx, h, &created);
		if (created)
			break;
		n = &ft->nodes[*slot];
		if (n->parent == parent && n->name == name)
			return *slot;
	}
	*slot = ft->nr;
	xgrow((void **)&ft->nodes, &ft->cap, ft->nr + 1, sizeof(*ft->nodes));
	n = &ft->nodes[ft->nr];
	*n = (struct flametree_node){.parent = parent, .name = name};
	n->next_sibling = ft->nodes[parent].first_child;
	ft->nodes[parent].first_child = ft->nr;
	return ft->nr++;
}

void flametree__add(struct flametree *ft, const char *stack, uint64_t weight)
{
	uint32_t node = 0;
	const char *end;

	ft->nodes[0].weight += weight;
	while (*stack) {
		end = strchrnul(stack, ';');
		node = child(ft, node, name_id(ft, stack, end - stack));
		ft->nodes[node].weight += weight;
		stack = *end ? end + 1 : end;
	}
}

static const struct flametree *sort_ft;

static int by_name(const void *a, const void *b)
{
	const struct flametree_node *x = &sort_ft->nodes[*(const uint32_t *)a];
	const struct flametree_node *y = &sort_ft->nodes[*(const uint32_t *)b];

	return strcmp(sort_ft->names[x->name], sort_ft->names[y->name]);
}

/* The nodes to write, depth-first, children by name, the ones lighter than min left out.
 * Without recursion (stacks can be 127 frames deep, deeper once joined with a waker's): an
 * explicit stack of the nodes still to visit. Returns how many are in list. */
static size_t depth_first(const struct flametree *ft, uint64_t min, uint32_t *list)
{
	uint32_t *todo = xmalloc(ft->nr * sizeof(*todo)), *kids = xmalloc(ft->nr * sizeof(*kids));
	size_t top = 0, nr = 0, n, i;
	uint32_t id, c;

	todo[top++] = 0;
	sort_ft = ft;
	while (top) {
		id = todo[--top];
		list[nr++] = id;
		n = 0;
		for (c = ft->nodes[id].first_child; c; c = ft->nodes[c].next_sibling)
			if (ft->nodes[c].weight >= min)
				kids[n++] = c;
		qsort(kids, n, sizeof(*kids), by_name);
		for (i = n; i-- > 0;) /* the first name on top */
			todo[top++] = kids[i];
	}
	free(kids);
	free(todo);
	return nr;
}

size_t flametree__write_json(const struct flametree *ft, struct json_writer *w, uint64_t min_share,
			     size_t max_nodes)
{
	uint64_t total = ft->nodes[0].weight, min = min_share ? total / min_share : 0;
	uint32_t *list = xmalloc(ft->nr * sizeof(*list));
	uint32_t *pos = xmalloc(ft->nr * sizeof(*pos));			/* node -> index written */
	uint32_t *name_pos = xmalloc(ft->nr_names * sizeof(*name_pos)); /* +1; 0: unused */
	size_t nr, i, names = 0;
	const struct flametree_node *n;

	if (!min)
		min = 1;
	/* Many stacks each just over the share (deep ones, every level counts): thinner
	 * nodes left out until the tree fits. */
	while ((nr = depth_first(ft, min, list)) > max_nodes && min < total)
		min *= 2;
	memset(name_pos, 0, ft->nr_names * sizeof(*name_pos));
	json_writer__begin_object(w, true);
	json_writer__kv_uint(w, "total", total);
	/* Only the names of the nodes written, in their first node's order. */
	json_writer__key(w, "names");
	json_writer__begin_array(w, true);
	for (i = 0; i < nr; i++) {
		n = &ft->nodes[list[i]];
		pos[list[i]] = i;
		if (name_pos[n->name])
			continue;
		name_pos[n->name] = ++names;
		json_writer__string(w, ft->names[n->name]);
	}
	json_writer__end_array(w);
	json_writer__key(w, "nodes");
	json_writer__begin_array(w, true);
	for (i = 0; i < nr; i++) {
		n = &ft->nodes[list[i]];
		json_writer__int(w, i ? (int64_t)pos[n->parent] : -1);
		json_writer__uint(w, name_pos[n->name] - 1);
		json_writer__uint(w, n->weight);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	free(name_pos);
	free(pos);
	free(list);
	return nr;
}
