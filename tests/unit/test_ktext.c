/* record/ktext.h: the kallsyms text read once for several recordings (ktext_copy), as
 * srvscope model reads it before its runs, against the text each recording reads itself. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "record/ktext.h"
#include "unit.h"

int main(void)
{
	struct ktext_copy c;
	struct ktext_async a, b;
	size_t len, tlen, ulen;
	char *text, *t1, *t2, *un;
	uint64_t addr;

	is_int(ktext__copy_read(&c), 0, "/proc/kallsyms read and kept");
	ok(c.packed && c.frame && c.len > 0, "kept as a zstd frame (%zu bytes)", c.len);
	addr = ktext__lookup("do_syscall_64");
	/* Addresses read as 0 without CAP_SYSLOG; both reads then agree on 0. */
	is_int((long long)c.do_syscall_64, (long long)addr,
	       "do_syscall_64's address as a read up to its line gives it");
	if (geteuid() == 0)
		ok(c.do_syscall_64 != 0, "do_syscall_64 found (root)");

	text = ktext__read(&tlen);
	ulen = ZSTD_getFrameContentSize(c.frame, c.len);
	un = malloc(ulen + 1);
	ok(text && un && ZSTD_decompress(un, ulen, c.frame, c.len) == ulen,
	   "the frame unpacks whole (%zu bytes)", ulen);
	/* The programs loaded meanwhile (none here) are the only lines that may differ. */
	ok(text && un && ulen > tlen / 2 && !memcmp(un, text, 4096),
	   "to the text a read gives now");

	ktext__from_copy(&a, &c);
	ktext__from_copy(&b, &c);
	t1 = ktext__take(&a, false, &len);
	ok(t1 && a.packed && len == c.len && !memcmp(t1, c.frame, len) && a.taken,
	   "a recording's copy: the frame, taken without a wait");
	t2 = ktext__take(&b, true, &len);
	ok(t2 && t2 != t1 && t2 != c.frame && len == c.len, "each recording its own copy");
	ok(!ktext__take(&a, true, &len), "taken once");
	free(t1);
	free(t2);
	free(un);
	free(text);
	ktext__copy_free(&c);
	ok(!c.frame && !c.len, "freed");
	return done_testing();
}
