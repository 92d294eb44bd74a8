/* flametree: folded stacks merged into one tree whatever their order, written as the
 * report's compact JSON (names once, nodes depth-first, children by name), thin nodes
 * left out with their weight kept in their parent's. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "output/json_writer.h"
#include "report/flametree.h"
#include "unit.h"

/* The tree's JSON, parsed back. */
static json_t *tree_json(const struct flametree *ft, uint64_t min_share, size_t max_nodes,
			 size_t *written)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer *w = json_writer__new(f);
	json_t *doc;

	*written = flametree__write_json(ft, w, min_share, max_nodes);
	json_writer__delete(w);
	fclose(f);
	doc = json_loads(buf, 0, NULL);
	free(buf);
	return doc;
}

/* Node i as "name weight (parent's name)". */
static const char *node(json_t *doc, size_t i, char *buf, size_t size)
{
	json_t *names = json_object_get(doc, "names"), *nodes = json_object_get(doc, "nodes");
	json_int_t parent = json_integer_value(json_array_get(nodes, 3 * i));

	snprintf(buf, size, "%s %lld (%s)",
		 json_string_value(json_array_get(
			 names, json_integer_value(json_array_get(nodes, 3 * i + 1)))),
		 (long long)json_integer_value(json_array_get(nodes, 3 * i + 2)),
		 parent < 0 ? "-"
			    : json_string_value(json_array_get(
				      names,
				      json_integer_value(json_array_get(nodes, 3 * parent + 1)))));
	return buf;
}

int main(void)
{
	static const char *const want[] = {
		"all 1000 (-)", "t1 900 (all)", "a 850 (t1)",	"b 600 (a)",
		"c 250 (a)",	"x 50 (t1)",	"t2 100 (all)", "a 100 (t2)",
	};
	struct flametree ft;
	size_t n, i;
	json_t *doc;
	char buf[128];

	flametree__init(&ft);
	/* Not sorted, a stack given twice, a prefix of another, a name under two parents. */
	flametree__add(&ft, "t1;a;c", 250);
	flametree__add(&ft, "t2;a", 100);
	flametree__add(&ft, "t1;a;b", 500);
	flametree__add(&ft, "t1;x", 50);
	flametree__add(&ft, "t1;a;b", 100);
	doc = tree_json(&ft, 0, 100000, &n);
	ok(doc != NULL, "valid JSON");
	is_int(json_integer_value(json_object_get(doc, "total")), 1000, "total");
	is_int(n, 8, "8 nodes: the same (parent, name) is one node");
	is_int(json_array_size(json_object_get(doc, "names")), 7, "names: each once");
	for (i = 0; i < n && i < 8; i++)
		is_str(node(doc, i, buf, sizeof(buf)), want[i], "node %zu, depth-first, by name",
		       i);
	json_decref(doc);

	/* 1/25 of 1040 is 41: x (50) stays, y (40) and z go, their weight left in t1's. */
	flametree__add(&ft, "t1;y;z", 40);
	doc = tree_json(&ft, 25, 100000, &n);
	is_int(n, 8, "y (40 of 1040, under 1/25) and z left out");
	is_int(json_integer_value(json_array_get(json_object_get(doc, "nodes"), 5)), 940,
	       "t1 keeps their weight");
	is_int(json_array_size(json_object_get(doc, "names")), 7, "their names are not written");
	json_decref(doc);
	/* At most 6 nodes: lighter ones left out until it fits: 1/25 is 41 (8 nodes), then 82
	 * (x goes: 7), then 164 (t2 and its a go: 5). */
	doc = tree_json(&ft, 25, 6, &n);
	is_int(n, 5, "at most 6 nodes: x, then t2 and its a left out; c (250) stays");
	json_decref(doc);
	flametree__free(&ft);

	/* Deep stacks: no recursion. */
	flametree__init(&ft);
	{
		size_t depth = 5000, len = 0;
		char *s = malloc(depth * 8);

		for (i = 0; i < depth; i++)
			len += sprintf(s + len, "%sf%zu", i ? ";" : "", i % 7);
		flametree__add(&ft, s, 1);
		free(s);
	}
	doc = tree_json(&ft, 0, 100000, &n);
	is_int(n, 5001, "a stack 5000 frames deep: 5001 nodes");
	is_int(json_array_size(json_object_get(doc, "names")), 8, "8 names");
	json_decref(doc);
	flametree__free(&ft);
	return done_testing();
}
