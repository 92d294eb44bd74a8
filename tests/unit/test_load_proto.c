/* The load clients' wire side: requests as the servers' protocols spell them, and replies
 * found whole, incomplete (at every cut) or malformed. */
#include <errno.h>
#include <stdlib.h>

#include "load/proto.h"
#include "unit.h"

/* Every strict prefix of a whole reply asks for more bytes; the whole gives its length. */
static void whole_at_every_cut(enum load_proto p, const char *reply, const char *what)
{
	size_t len = strlen(reply), cut;
	struct load_reply r;
	int bad = 0;

	for (cut = 0; cut < len; cut++)
		if (load_proto__reply(p, reply, cut, false, &r) != 0) {
			printf("#   cut at %zu of %zu\n", cut, len);
			bad++;
			break;
		}
	ok(!bad, "%s: incomplete at every cut", what);
	is_int(load_proto__reply(p, reply, len, false, &r), len, "%s: whole", what);
}

static ssize_t parse(enum load_proto p, const char *s, struct load_reply *r)
{
	return load_proto__reply(p, s, strlen(s), false, r);
}

static void requests(void)
{
	struct load_target t = {.proto = LOAD_MEMCACHED};
	char *buf = malloc(LOAD_REQ_HEAD_MAX + 8);
	size_t n;

	n = load_proto__request(&t, false, 42, "abcde", 5, true, buf);
	is_int(n, strlen("get key:42\r\n"), "memcached get: length");
	ok(!memcmp(buf, "get key:42\r\n", n), "memcached get");
	n = load_proto__request(&t, true, 7, "abcde", 5, true, buf);
	ok(n == strlen("set key:7 0 0 5\r\nabcde\r\n") &&
		   !memcmp(buf, "set key:7 0 0 5\r\nabcde\r\n", n),
	   "memcached set with its value");

	t.proto = LOAD_REDIS;
	n = load_proto__request(&t, false, 42, "abcde", 5, true, buf);
	ok(n == strlen("*2\r\n$3\r\nGET\r\n$6\r\nkey:42\r\n") &&
		   !memcmp(buf, "*2\r\n$3\r\nGET\r\n$6\r\nkey:42\r\n", n),
	   "redis GET");
	n = load_proto__request(&t, true, 1, "abcde", 5, true, buf);
	ok(n == strlen("*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$5\r\nabcde\r\n") &&
		   !memcmp(buf, "*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$5\r\nabcde\r\n", n),
	   "redis SET");

	t.proto = LOAD_HTTP;
	strcpy(t.host, "127.0.0.1");
	t.port = 8080;
	strcpy(t.path, "/a?b=1");
	n = load_proto__request(&t, true, 1, "abcde", 5, true, buf);
	buf[n] = 0;
	is_str(buf, "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: srvscope\r\n\r\n",
	       "HTTP keep-alive GET (set ignored)");
	n = load_proto__request(&t, false, 1, "", 0, false, buf);
	buf[n] = 0;
	ok(strstr(buf, "\r\nConnection: close\r\n\r\n") != NULL, "HTTP one-shot GET says close");
	free(buf);
}

static void memcached(void)
{
	struct load_reply r;

	whole_at_every_cut(LOAD_MEMCACHED, "VALUE key:1 0 5\r\nab\r\nc\r\nEND\r\n",
			   "memcached hit");
	whole_at_every_cut(LOAD_MEMCACHED, "VALUE key:1 0 3 77\r\nabc\r\nEND\r\n",
			   "memcached hit with cas");
	whole_at_every_cut(LOAD_MEMCACHED, "END\r\n", "memcached miss");
	whole_at_every_cut(LOAD_MEMCACHED, "STORED\r\n", "memcached stored");
	is_int(parse(LOAD_MEMCACHED, "STORED\r\nEND\r\n", &r), 8, "one reply at a time");
	ok(parse(LOAD_MEMCACHED, "SERVER_ERROR out of memory\r\n", &r) > 0 && r.failed,
	   "SERVER_ERROR: a reply that failed");
	ok(parse(LOAD_MEMCACHED, "ERROR\r\n", &r) > 0 && r.failed, "ERROR");
	ok(parse(LOAD_MEMCACHED, "END\r\n", &r) > 0 && !r.failed, "END did not fail");
	is_int(parse(LOAD_MEMCACHED, "HTTP/1.1 200 OK\r\n", &r), -EPROTO, "not memcached");
	is_int(parse(LOAD_MEMCACHED, "VALUE k 0 3\r\nabcXXEND\r\n", &r), -EPROTO,
	       "a value longer than said");
	is_int(parse(LOAD_MEMCACHED, "VALUE k 0 -3\r\n", &r), -EPROTO, "negative length");
	is_int(parse(LOAD_MEMCACHED, "VALUE k 0\r\n", &r), -EPROTO, "VALUE without length");
	is_int(parse(LOAD_MEMCACHED, "VALUE k 0 1\r\na\r\nSTORED\r\n", &r), -EPROTO,
	       "a get reply goes on with VALUE or END only");
	is_int(parse(LOAD_MEMCACHED, "END\n", &r), -EPROTO, "bare LF");
	is_int(load_proto__reply(LOAD_MEMCACHED, "EN", 2, true, &r), -EPROTO,
	       "cut by the server's close");
	{
		char *big = malloc(8192);

		memset(big, 'a', 8192);
		is_int(load_proto__reply(LOAD_MEMCACHED, big, 8192, false, &r), -EPROTO,
		       "a line without end is not waited for forever");
		free(big);
	}
}

static void redis(void)
{
	struct load_reply r;

	whole_at_every_cut(LOAD_REDIS, "+OK\r\n", "redis +OK");
	whole_at_every_cut(LOAD_REDIS, "$5\r\nab\r\nc\r\n", "redis bulk");
	whole_at_every_cut(LOAD_REDIS, "$-1\r\n", "redis nil");
	whole_at_every_cut(LOAD_REDIS, "*3\r\n:1\r\n$-1\r\n*1\r\n+x\r\n", "redis nested array");
	whole_at_every_cut(LOAD_REDIS, ":-12\r\n", "redis negative integer");
	ok(parse(LOAD_REDIS, "-ERR wrong\r\n", &r) > 0 && r.failed, "-ERR fails");
	ok(parse(LOAD_REDIS, "$0\r\n\r\n", &r) == 6 && !r.failed, "empty bulk");
	is_int(parse(LOAD_REDIS, "$3\r\nabcd\r\n", &r), -EPROTO, "bulk longer than said");
	is_int(parse(LOAD_REDIS, "$-2\r\n", &r), -EPROTO, "bulk of -2");
	is_int(parse(LOAD_REDIS, "STORED\r\n", &r), -EPROTO, "not RESP");
	is_int(parse(LOAD_REDIS, ":12a\r\n", &r), -EPROTO, "integer with a letter");
	is_int(parse(LOAD_REDIS, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n+x\r\n",
		     &r),
	       -EPROTO, "arrays nested too deep");
}

static void http(void)
{
	struct load_reply r;
	const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "5\r\nhello\r\na;ext=1\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";

	whole_at_every_cut(LOAD_HTTP, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n",
			   "HTTP Content-Length");
	whole_at_every_cut(LOAD_HTTP, chunked, "HTTP chunked with an extension and a trailer");
	whole_at_every_cut(LOAD_HTTP, "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
			   "HTTP 204 has no body");
	ok(parse(LOAD_HTTP, "HTTP/1.1 200 OK\r\ncontent-length:  0 \r\n\r\n", &r) > 0 && !r.closes,
	   "header names in any case, values padded");
	ok(parse(LOAD_HTTP, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
		 &r) > 0 &&
		   r.closes,
	   "Connection: close");
	ok(parse(LOAD_HTTP, "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &r) > 0 && r.closes,
	   "HTTP/1.0 closes by default");
	ok(parse(LOAD_HTTP,
		 "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
		 &r) > 0 &&
		   !r.closes,
	   "HTTP/1.0 with keep-alive");
	ok(parse(LOAD_HTTP, "HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx", &r) > 0 &&
		   r.failed && r.status == 404,
	   "404 fails, with its status");
	is_int(parse(LOAD_HTTP, "HTTP/1.1 200 OK\r\n\r\nbody", &r), 0,
	       "a body without length waits for the close");
	is_int(load_proto__reply(LOAD_HTTP, "HTTP/1.1 200 OK\r\n\r\nbody", 23, true, &r), 23,
	       "... which ends it");
	is_int(load_proto__reply(LOAD_HTTP, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nbo", 40,
				 true, &r),
	       -EPROTO, "a body cut by the close");
	is_int(parse(LOAD_HTTP, "HTTP/1.1 2x0 OK\r\n\r\n", &r), -EPROTO, "bad status");
	is_int(parse(LOAD_HTTP, "HTTP/2 200\r\n\r\n", &r), -EPROTO, "not HTTP/1");
	is_int(parse(LOAD_HTTP, "HTTP/1.1 100 Continue\r\n\r\n", &r), -EPROTO, "interim reply");
	is_int(parse(LOAD_HTTP, "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", &r), -EPROTO,
	       "bad Content-Length");
	is_int(parse(LOAD_HTTP, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", &r),
	       -EPROTO, "bad chunk size");
	is_int(parse(LOAD_HTTP, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
		     &r),
	       -EPROTO, "chunk longer than said");
}

int main(void)
{
	requests();
	memcached();
	redis();
	http();
	return done_testing();
}
