/* The clone's protocol framing and answers: whole requests found (and partial ones waited
 * for), answers framed as the protocol says and of the size asked where it can vary. */
#include <errno.h>
#include <stdlib.h>

#include "clone/clone.h"
#include "unit.h"

static int parse(enum clone_proto p, const char *s, struct clone_req *r)
{
	return clone_proto__parse(p, s, strlen(s), 0, r);
}

int main(void)
{
	struct clone_req r;
	char out[4096];
	size_t n;
	const char *set = "set k1 0 0 5\r\nhello\r\nget k1\r\n";

	is_int(parse(CLONE_MEMCACHED, "get k", &r), 0, "memcached: a cut line waits");
	is_int(parse(CLONE_MEMCACHED, set, &r), 1, "memcached: a set is found");
	ok(r.kind == CLONE_REQ_SET && r.len == 21, "memcached: the set with its data block (%zu)",
	   r.len);
	is_int(clone_proto__parse(CLONE_MEMCACHED, set, 18, 0, &r), 0,
	       "memcached: a set without all its data waits");
	is_int(parse(CLONE_MEMCACHED, set + 21, &r), 1, "memcached: the pipelined get after it");
	ok(r.kind == CLONE_REQ_GET && r.keylen == 2 && !memcmp(r.key, "k1", 2), "the get's key");
	n = clone_proto__answer(CLONE_MEMCACHED, &r, 1050, out, sizeof(out));
	is_int(n, 1050, "memcached: a get answered at the size asked");
	ok(!memcmp(out, "VALUE k1 0 ", 11) && !memcmp(out + n - 7, "\r\nEND\r\n", 7),
	   "memcached: VALUE ... END framing");
	{
		char *e;
		unsigned long len = strtoul(out + 11, &e, 10);

		is_int(len + (e - out) + 2 + 7, 1050, "memcached: the length it states is right");
	}
	is_int(clone_proto__answer(CLONE_MEMCACHED, &r, 5, out, sizeof(out)), 5,
	       "memcached: a get too small for a value is a miss (END)");

	is_int(parse(CLONE_REDIS, "*2\r\n$3\r\nGET\r\n$2\r\nk", &r), 0, "redis: a cut bulk waits");
	is_int(parse(CLONE_REDIS, "*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n", &r), 1, "redis: a GET");
	ok(r.kind == CLONE_REQ_GET && r.len == 21, "redis: GET, all of it");
	n = clone_proto__answer(CLONE_REDIS, &r, 1033, out, sizeof(out));
	ok(n == 1033 && !memcmp(out, "$1024\r\n", 7), "redis: $1024 bulk of 1033 bytes");
	is_int(parse(CLONE_REDIS, "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n", &r), 1,
	       "redis: SET");
	n = clone_proto__answer(CLONE_REDIS, &r, 1033, out, sizeof(out));
	ok(n == 5 && !memcmp(out, "+OK\r\n", 5), "redis: SET answered +OK");
	is_int(parse(CLONE_REDIS, "*1\r\n$-5\r\n", &r), -EPROTO, "redis: a bad length refused");

	is_int(parse(CLONE_HTTP, "GET / HTTP/1.1\r\nHost: a\r\n", &r), 0, "http: a cut head waits");
	is_int(parse(CLONE_HTTP, "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", &r), 0,
	       "http: a cut body waits");
	is_int(parse(CLONE_HTTP, "POST / HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc", &r), 1,
	       "http: a body of Content-Length");
	ok(!r.close, "http/1.1 keeps the connection");
	is_int(parse(CLONE_HTTP, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &r), 1,
	       "http: Connection: close");
	ok(r.close, "http: ... closes after the answer");
	n = clone_proto__answer(CLONE_HTTP, &r, 153, out, sizeof(out));
	out[n] = 0;
	ok(n == 153 && strstr(out, "Connection: close\r\n"), "http: answered at 153 bytes");
	{
		char *b = strstr(out, "\r\n\r\n") + 4;

		is_int(atoi(strstr(out, "Content-Length: ") + 16), n - (b - out),
		       "http: Content-Length is the body's length");
	}
	is_int(clone_proto__parse(CLONE_RAW, "abcdef", 6, 4, &r), 1, "raw: a request of 4 bytes");
	is_int(r.len, 4, "raw: 4 bytes taken");
	return done_testing();
}
