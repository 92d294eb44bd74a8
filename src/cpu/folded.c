/* Folded stacks read into a profile ("root;...;leaf COUNT" per line, kernel frames
 * suffixed "_[k]", as 'cpu -f folded', FlameGraph's stackcollapse scripts and 'perf
 * report' reduced to its leaves give them): the component table applied to another
 * profiler's samples, so both can be compared with the same rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "util/util.h"

int cpu_profile__parse_folded(struct cpu_profile *p, const char *name, const char *text, size_t len,
			      char *err, size_t size)
{
	uint32_t *frames = NULL;
	size_t cap = 0, pos = 0;
	char *buf = NULL;
	size_t bcap = 0;
	int lineno = 0, ret = 0;

	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos, sp, i, start;
		unsigned long long count;
		uint32_t nr = 0;
		char *end;

		pos += ll + (nl != NULL);
		lineno++;
		while (ll && (line[ll - 1] == '\r' || line[ll - 1] == ' '))
			ll--;
		if (!ll)
			continue;
		for (sp = ll; sp > 0 && line[sp - 1] != ' '; sp--)
			;
		xgrow((void **)&buf, &bcap, ll + 1, 1);
		memcpy(buf, line, ll);
		buf[ll] = 0;
		errno = 0;
		count = sp ? strtoull(buf + sp, &end, 10) : 0;
		if (!sp || sp == 1 || errno || *end || end == buf + sp || buf[sp] == '-' ||
		    memchr(buf, 0, ll)) {
			snprintf(err, size, "%s:%d: expected 'frame;frame;... COUNT'", name,
				 lineno);
			ret = -EINVAL;
			break;
		}
		buf[sp - 1] = 0;
		/* frames root first in the file, leaf first in the profile */
		for (i = 0, start = 0; i <= sp - 1; i++) {
			if (i < sp - 1 && buf[i] != ';')
				continue;
			if (i > start) {
				char *f = buf + start;
				size_t fl = i - start;
				bool kernel = fl > 4 && !memcmp(f + fl - 4, "_[k]", 4);

				f[fl - (kernel ? 4 : 0)] = 0;
				xgrow((void **)&frames, &cap, nr + 1, sizeof(*frames));
				frames[nr++] =
					cpu_profile__func(p, f, kernel ? "[kernel]" : "", kernel);
			}
			start = i + 1;
		}
		for (i = 0; i < nr / 2; i++) {
			uint32_t x = frames[i];

			frames[i] = frames[nr - 1 - i];
			frames[nr - 1 - i] = x;
		}
		if (nr)
			cpu_profile__add(p, 0, 0, NULL, frames, nr, count, -1);
	}
	free(frames);
	free(buf);
	return ret;
}
