/* Fuzz target: the escaper of target-controlled names. Whatever the bytes, the result holds
 * no control character, no ';' and only valid UTF-8 (what jansson accepts), unescapes back
 * to the input, and a cut result never ends inside an escape. */
#include <assert.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

static size_t unescape(const char *s, unsigned char *out)
{
	size_t o = 0;

	while (*s) {
		if (*s == '\\') {
			assert(s[1] == 'x' && s[2] && s[3]);
			out[o++] = (unsigned char)strtoul((char[]){s[2], s[3], 0}, NULL, 16);
			s += 4;
		} else {
			out[o++] = (unsigned char)*s++;
		}
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = malloc(4 * size + 1), small[16];
	unsigned char *back = malloc(size + 1);
	json_t *js;
	size_t n, i;

	n = name_escape(out, 4 * size + 1, (const char *)data, size);
	assert(n == strlen(out));
	for (i = 0; i < n; i++) {
		unsigned char c = out[i];

		assert(c >= 0x20 && c != 0x7f && c != ';');
		assert(!(c == 0xc2 && (unsigned char)out[i + 1] < 0xa0));
	}
	assert(name_is_safe(out, n) == !memchr(out, '\\', n));
	js = json_string(out);
	assert(js); /* jansson accepts only valid UTF-8 */
	json_decref(js);
	assert(unescape(out, back) == size && !memcmp(back, data, size));
	assert(name_is_safe((const char *)data, size) == (n == size));

	name_escape(small, sizeof(small), (const char *)data, size);
	n = strlen(small);
	assert(n < sizeof(small) && !strncmp(small, out, n));
	for (i = n >= 3 ? n - 3 : 0; i < n; i++)
		assert(small[i] != '\\' || i + 4 <= n);
	free(out);
	free(back);
	return 0;
}
