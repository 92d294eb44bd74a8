/* The one escaper of target-controlled names (see escape.h). */
#include <stdint.h>
#include <string.h>

#include "util/escape.h"
#include "util/util.h"

size_t utf8_char_len(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* The length of the character at s (at most len bytes) that may be printed, or 0 when the
 * byte at s must be escaped: a control or special ASCII byte, a C1 control (U+0080..U+009F,
 * the two bytes 0xc2 0x80..0x9f), or a byte that does not start a valid character. */
static size_t safe_char(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return c < 0x20 || c == 0x7f || c == ';' || c == '\\' ? 0 : 1;
	if (c == 0xc2 && len >= 2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 0;
	return utf8_char_len((const char *)s, len);
}

bool name_is_safe(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = safe_char(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

size_t name_escape(char *out, size_t size, const char *in, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0, o = 0, n;

	while (i < len) {
		n = safe_char(p + i, len - i);
		if (n) {
			if (o + n >= size)
				break;
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
			continue;
		}
		if (o + 4 >= size)
			break;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[p[i] >> 4];
		out[o++] = hex[p[i] & 15];
		i++;
	}
	out[o] = '\0';
	return o;
}

void name_escape_inplace(char *s, size_t size)
{
	size_t len = strnlen(s, size);
	char tmp[256];

	if (name_is_safe(s, len))
		return;
	if (len > sizeof(tmp) / 4 - 1)
		len = sizeof(tmp) / 4 - 1;
	memcpy(tmp, s, len);
	name_escape(s, size, tmp, len);
}

const char *name_shown(const char *s, char *buf, size_t size)
{
	size_t len = strlen(s);

	if (name_is_safe(s, len))
		return s;
	name_escape(buf, size, s, len);
	return buf;
}

char *name_escape_dup(const char *s)
{
	size_t len = strlen(s);
	char *out = xmalloc(4 * len + 1);

	name_escape(out, 4 * len + 1, s, len);
	return out;
}
