/* The SVG flame graph writer: one frame per node of the merged tree, positions as
 * fractions of the total, names escaped, the script and its controls present. */
#include <stdio.h>
#include <stdlib.h>

#include "output/flamegraph.h"
#include "unit.h"

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

int main(void)
{
	struct flamegraph_entry e[] = {
		{ "main;a;b", 30 },
		{ "main;a;c<x>", 10 },
		{ "main;d", 60 },
		{ "other", 0 },
	};
	struct flamegraph_opts o = { .title = "T & U", .unit = "us" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ok(flamegraph__write_svg(f, e, 4, &o) == 0, "writes");
	fclose(f);
	is_int(count(buf, "<g class=\"f\""), 6, "all, main, a, b, c<x>, d: one frame each");
	ok(strstr(buf, "<title>all (100 us, 100.00%)</title>") != NULL, "the root holds the total");
	ok(strstr(buf, "data-x=\"0.000000000\" data-w=\"0.400000000\" data-d=\"2\"><title>a (40 us, "
		       "40.00%)") != NULL,
	   "a frame's position and width are fractions of the total, with its depth");
	ok(strstr(buf, "data-x=\"0.300000000\" data-w=\"0.100000000\" data-d=\"3\"><title>c&lt;x&gt;") !=
		   NULL,
	   "siblings follow each other; names are escaped");
	ok(strstr(buf, "T &amp; U") != NULL, "the title is escaped");
	ok(strstr(buf, "function zoom(") && strstr(buf, "function search(") &&
		   strstr(buf, "id=\"reset\"") && strstr(buf, "id=\"search\""),
	   "the script and its controls");
	ok(!strstr(buf, "other"), "zero weights are left out");
	free(buf);
	return done_testing();
}
