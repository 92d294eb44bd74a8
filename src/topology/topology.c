/* The topology from hwloc: the tree printed in lstopo's console format (each object
 * "Type L#logical (attributes)", a child alone on its level joined to its parent with
 * " + ", memory children before the others, two spaces per level), and as JSON. */
#include <errno.h>
#include <hwloc.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"
#include "util/util.h"

struct topo {
	hwloc_topology_t h;
};

struct topo *topo__load(void)
{
	struct topo *t = xcalloc(1, sizeof(*t));

	if (hwloc_topology_init(&t->h)) {
		free(t);
		error("cannot read the machine's topology: %s", strerror(errno));
		return NULL;
	}
	/* What lstopo shows: every CPU-side object, instruction caches included; no I/O. */
	hwloc_topology_set_all_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_io_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_NONE);
	if (hwloc_topology_load(t->h)) {
		error("cannot read the machine's topology: %s", strerror(errno));
		hwloc_topology_destroy(t->h);
		free(t);
		return NULL;
	}
	return t;
}

void topo__delete(struct topo *t)
{
	if (!t)
		return;
	hwloc_topology_destroy(t->h);
	free(t);
}

/* lstopo's size: KB below 10 MB, MB below 10 GB, GB below 10 TB, then TB, rounded to
 * the nearest. */
static void size_str(char *buf, size_t size, unsigned long long bytes)
{
	if (bytes < (10ull << 20))
		snprintf(buf, size, "%lluKB", ((bytes >> 9) + 1) >> 1);
	else if (bytes < (10ull << 30))
		snprintf(buf, size, "%lluMB", ((bytes >> 19) + 1) >> 1);
	else if (bytes < (10ull << 40))
		snprintf(buf, size, "%lluGB", ((bytes >> 29) + 1) >> 1);
	else
		snprintf(buf, size, "%lluTB", ((bytes >> 39) + 1) >> 1);
}

static void obj_str(char *buf, size_t size, hwloc_obj_t o)
{
	char type[64], sz[32];

	hwloc_obj_type_snprintf(type, sizeof(type), o, 0);
	switch (o->type) {
	case HWLOC_OBJ_MACHINE:
		size_str(sz, sizeof(sz), o->total_memory);
		snprintf(buf, size, "%s (%s total)", type, sz);
		break;
	case HWLOC_OBJ_NUMANODE:
		size_str(sz, sizeof(sz), o->attr->numanode.local_memory);
		snprintf(buf, size, "%s L#%u (P#%u %s)", type, o->logical_index, o->os_index, sz);
		break;
	case HWLOC_OBJ_PU:
		snprintf(buf, size, "%s L#%u (P#%u)", type, o->logical_index, o->os_index);
		break;
	default:
		if (hwloc_obj_type_is_cache(o->type)) {
			size_str(sz, sizeof(sz), o->attr->cache.size);
			snprintf(buf, size, "%s L#%u (%s)", type, o->logical_index, sz);
		} else {
			snprintf(buf, size, "%s L#%u", type, o->logical_index);
		}
	}
}

static void print_obj(FILE *f, hwloc_obj_t o, int indent, bool joined)
{
	char s[256];
	hwloc_obj_t c;

	obj_str(s, sizeof(s), o);
	if (joined)
		fprintf(f, " + %s", s);
	else
		fprintf(f, "%*s%s", indent, "", s);
	/* One child, no memory beside it: on the same line. */
	if (o->arity == 1 && !o->memory_arity && !o->misc_arity) {
		print_obj(f, o->children[0], indent, true);
		return;
	}
	fputc('\n', f);
	for (c = o->memory_first_child; c; c = c->next_sibling)
		print_obj(f, c, indent + 2, false);
	for (c = o->first_child; c; c = c->next_sibling)
		print_obj(f, c, indent + 2, false);
	for (c = o->misc_first_child; c; c = c->next_sibling)
		print_obj(f, c, indent + 2, false);
}

int topo__write_text(FILE *f, const struct topo *t)
{
	print_obj(f, hwloc_get_root_obj(t->h), 0, false);
	return ferror(f) ? -EIO : 0;
}

static json_t *obj_json(hwloc_obj_t o)
{
	json_t *j = json_object(), *kids = json_array();
	char type[64];
	hwloc_obj_t c;

	hwloc_obj_type_snprintf(type, sizeof(type), o, 0);
	json_object_set_new(j, "type", json_string(type));
	json_object_set_new(j, "logical_index", json_integer(o->logical_index));
	if (o->os_index != HWLOC_UNKNOWN_INDEX)
		json_object_set_new(j, "os_index", json_integer(o->os_index));
	if (hwloc_obj_type_is_cache(o->type))
		json_object_set_new(j, "size", json_integer(o->attr->cache.size));
	if (o->type == HWLOC_OBJ_NUMANODE)
		json_object_set_new(j, "memory", json_integer(o->attr->numanode.local_memory));
	if (o->type == HWLOC_OBJ_MACHINE)
		json_object_set_new(j, "memory", json_integer(o->total_memory));
	for (c = o->memory_first_child; c; c = c->next_sibling)
		json_array_append_new(kids, obj_json(c));
	for (c = o->first_child; c; c = c->next_sibling)
		json_array_append_new(kids, obj_json(c));
	if (json_array_size(kids))
		json_object_set_new(j, "children", kids);
	else
		json_decref(kids);
	return j;
}

int topo__nr_nodes(const struct topo *t)
{
	return hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_NUMANODE);
}

int topo__cpu(const struct topo *t, int cpu, struct topo_cpu *out)
{
	hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t->h, cpu), a;

	out->core = out->package = out->node = -1;
	out->nr_siblings = 1;
	if (!pu)
		return -ENOENT;
	a = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_CORE, pu);
	if (a) {
		out->core = a->logical_index;
		out->nr_siblings = hwloc_bitmap_weight(a->cpuset);
	}
	a = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_PACKAGE, pu);
	if (a)
		out->package = a->logical_index;
	/* the NUMA node whose CPUs hold this one */
	for (a = hwloc_get_next_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, NULL); a;
	     a = hwloc_get_next_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, a))
		if (hwloc_bitmap_isset(a->cpuset, cpu)) {
			out->node = a->os_index;
			break;
		}
	return 0;
}

json_t *topo__json(const struct topo *t)
{
	json_t *j = json_object(), *cpus = json_array();
	hwloc_obj_t pu = NULL;

	json_object_set_new(j, "packages",
			    json_integer(hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_PACKAGE)));
	json_object_set_new(j, "numa_nodes",
			    json_integer(hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_NUMANODE)));
	json_object_set_new(j, "cores",
			    json_integer(hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_CORE)));
	json_object_set_new(j, "pus", json_integer(hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_PU)));
	while ((pu = hwloc_get_next_obj_by_type(t->h, HWLOC_OBJ_PU, pu))) {
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t->h, HWLOC_OBJ_CORE, pu);
		json_t *sib = json_array();
		struct topo_cpu tc;
		unsigned int i;

		topo__cpu(t, pu->os_index, &tc);
		if (core)
			hwloc_bitmap_foreach_begin(i, core->cpuset)
				json_array_append_new(sib, json_integer(i));
		hwloc_bitmap_foreach_end();
		json_array_append_new(cpus, json_pack("{s:i,s:i,s:i,s:i,s:o}", "cpu", pu->os_index,
						      "core", tc.core, "package", tc.package,
						      "numa_node", tc.node, "siblings", sib));
	}
	json_object_set_new(j, "cpus", cpus);
	json_object_set_new(j, "machine", obj_json(hwloc_get_root_obj(t->h)));
	return j;
}
