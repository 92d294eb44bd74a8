/* The wire side of the load clients: one request of memcached text, redis RESP or
 * HTTP/1.1 written into a buffer, and the framing of one reply found in received bytes.
 * Pure functions over memory, so the parsers are unit-tested and fuzzed without a server. */
#ifndef SRVSCOPE_LOAD_PROTO_H
#define SRVSCOPE_LOAD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "load/load.h"

/* Bytes a request buffer needs beyond the value: the longest command line or HTTP head. */
#define LOAD_REQ_HEAD_MAX 2048

/* Writes one request into buf (of at least LOAD_REQ_HEAD_MAX + value_len bytes): a set of
 * key (value: value_len bytes of value) when set, else a get; HTTP always GETs t->path,
 * with "Connection: close" when !keepalive. Returns its length. */
size_t load_proto__request(const struct load_target *t, bool set, unsigned int key,
			   const char *value, size_t value_len, bool keepalive, char *buf);

struct load_reply {
	bool failed; /* an error reply: memcached ERROR/CLIENT_ERROR/SERVER_ERROR, redis -ERR,
		      * HTTP status >= 400 */
	bool closes; /* HTTP: the server closes the connection after this reply */
	int status;  /* HTTP: the status code */
};

/* Looks for one whole reply at the start of buf[0..len). eof: the server has closed (an
 * HTTP body without a length ends there). Returns the reply's length (> 0) and fills r, 0
 * when more bytes are needed, or -EPROTO when the bytes are not a reply of the protocol. */
ssize_t load_proto__reply(enum load_proto p, const char *buf, size_t len, bool eof,
			  struct load_reply *r);

#endif
