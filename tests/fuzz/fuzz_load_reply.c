/* Fuzz target: the load clients' reply framing (memcached, redis RESP, HTTP/1.1), fed as a
 * client reads: the first byte picks the protocol and whether the server has closed, the
 * rest is consumed reply after reply. A reply never claims more bytes than it was given. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum load_proto protos[] = {LOAD_MEMCACHED, LOAD_REDIS, LOAD_HTTP};
	enum load_proto p;
	bool eof;
	char *buf;
	size_t off = 0;

	if (!size)
		return 0;
	p = protos[data[0] % 3];
	eof = data[0] & 4;
	/* a copy of its own size, so that ASan sees any read past the end */
	buf = malloc(size - 1 ? size - 1 : 1);
	memcpy(buf, data + 1, size - 1);
	size--;
	while (off < size) {
		struct load_reply r;
		ssize_t n = load_proto__reply(p, buf + off, size - off, eof, &r);

		if (n <= 0)
			break;
		if ((size_t)n > size - off)
			abort();
		off += n;
	}
	free(buf);
	return 0;
}
