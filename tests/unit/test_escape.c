/* The escaper of target-chosen names on fixed cases: what is kept, what becomes \xNN. */
#include <string.h>

#include "util/escape.h"
#include "unit.h"

static const char *esc(const char *in, size_t len, size_t size)
{
	static char out[256];

	name_escape(out, size, in, len);
	return out;
}
#define ESC(s) esc(s, sizeof(s) - 1, 256)

int main(void)
{
	char comm[16] = "a\x1b[2Jb";

	is_str(ESC("worker-1"), "worker-1", "a plain name is kept");
	is_str(ESC("\x1b]0;pwned\x07"), "\\x1b]0\\x3bpwned\\x07", "ESC, BEL and ';' escaped");
	is_str(ESC("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f", "newline, tab, DEL escaped");
	is_str(ESC("C:\\x"), "C:\\x5cx", "a backslash is escaped, so no escape can be forged");
	is_str(ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7"),
	       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7",
	       "valid UTF-8 is kept (2, 3 and 4 bytes)");
	is_str(ESC("\xc2\x9b"), "\\xc2\\x9b", "a C1 control (CSI) is escaped");
	is_str(ESC("\xff\xfe"), "\\xff\\xfe", "bytes that are never UTF-8");
	is_str(ESC("\xc0\xaf"), "\\xc0\\xaf", "an overlong form");
	is_str(ESC("\xed\xa0\x80"), "\\xed\\xa0\\x80", "a surrogate");
	is_str(ESC("\xe2\x82"), "\\xe2\\x82", "a character cut short");
	is_str(ESC("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF");
	is_str(esc("ab\x01", 3, 6), "ab", "an escape that does not fit is left out whole");
	is_str(esc("\xc3\xa9\xc3\xa9", 4, 4), "\xc3\xa9", "a character is never cut either");
	ok(name_is_safe("worker", 6) && !name_is_safe("a;b", 3), "name_is_safe");
	{
		const char *plain = "mc-worker";
		char buf[COMM_ESCAPED_SIZE];

		ok(name_shown(plain, buf, sizeof(buf)) == plain,
		   "name_shown: a safe name as it is");
		is_str(name_shown("a;b\n", buf, sizeof(buf)), "a\\x3bb\\x0a",
		       "name_shown: an unsafe one escaped into the buffer");
	}
	name_escape_inplace(comm, sizeof(comm));
	is_str(comm, "a\\x1b[2Jb", "in place, within a comm's 16 bytes");
	return done_testing();
}
