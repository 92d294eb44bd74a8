/* Output format names. */
#include <string.h>

#include "output/output.h"
#include "util/util.h"

int output__parse_format(const char *s, enum output_format *fmt)
{
	static const struct {
		const char *name;
		enum output_format fmt;
	} formats[] = {
		{"text", OUTPUT_TEXT},
		{"raw", OUTPUT_RAW},
		{"folded", OUTPUT_FOLDED},
		{"json", OUTPUT_JSON},
		{"speedscope", OUTPUT_SPEEDSCOPE},
		{"pprof", OUTPUT_PPROF},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		if (!strcmp(s, formats[i].name)) {
			*fmt = formats[i].fmt;
			return 0;
		}
	}
	return error("unknown format '%s': use text, raw, folded, json, speedscope or pprof", s);
}
