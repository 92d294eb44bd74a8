/* The clone's protocols: just enough of memcached's text protocol, redis RESP and HTTP/1.1
 * to frame requests and answer them at the modelled response sizes, so the load client
 * that drove the original drives the clone. No data is kept: a get answers a value of the
 * size the model says, made of filler bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clone/clone.h"

static const char *find_crlf(const char *buf, size_t len)
{
	const char *p = buf;

	while ((p = memchr(p, '\r', len - (p - buf)))) {
		if ((size_t)(p - buf) + 1 >= len)
			return NULL;
		if (p[1] == '\n')
			return p;
		p++;
	}
	return NULL;
}

/* The n-th space-separated word of line [s, e), or NULL. */
static const char *word(const char *s, const char *e, unsigned n, size_t *wlen)
{
	while (s < e) {
		const char *w;

		while (s < e && *s == ' ')
			s++;
		w = s;
		while (s < e && *s != ' ')
			s++;
		if (s > w && !n--) {
			*wlen = s - w;
			return w;
		}
	}
	return NULL;
}

static int parse_memcached(const char *buf, size_t len, struct clone_req *r)
{
	const char *eol = find_crlf(buf, len), *w, *key;
	size_t wl, kl, line;
	char num[24];
	unsigned long long bytes;

	if (!eol)
		return len > 8192 ? -EPROTO : 0;
	line = eol - buf + 2;
	w = word(buf, eol, 0, &wl);
	key = word(buf, eol, 1, &kl);
	r->key = key;
	r->keylen = key ? kl : 0;
	r->len = line;
	r->kind = CLONE_REQ_OTHER;
	if (!w)
		return 1;
	if ((wl == 3 && !memcmp(w, "get", 3)) || (wl == 4 && !memcmp(w, "gets", 4))) {
		r->kind = key ? CLONE_REQ_GET : CLONE_REQ_OTHER;
	} else if (wl == 4 && !memcmp(w, "quit", 4)) {
		r->kind = CLONE_REQ_QUIT;
	} else if ((wl == 3 && (!memcmp(w, "set", 3) || !memcmp(w, "add", 3))) ||
		   (wl == 7 && !memcmp(w, "replace", 7))) {
		const char *b = word(buf, eol, 4, &wl);

		if (!b || wl >= sizeof(num))
			return 1; /* answered ERROR, as memcached does */
		memcpy(num, b, wl);
		num[wl] = 0;
		bytes = strtoull(num, NULL, 10);
		if (bytes > CLONE_MAX_SIZE)
			return -EPROTO;
		if (len < line + bytes + 2)
			return 0;
		r->len = line + bytes + 2;
		r->kind = CLONE_REQ_SET;
		r->close = word(buf, eol, 5, &wl) != NULL; /* noreply: no answer */
	}
	return 1;
}

/* "$LEN\r\n" or "*N\r\n" at buf: the number, and *used bytes; 0 when incomplete. */
static int resp_num(const char *buf, size_t len, char type, long long *n, size_t *used)
{
	const char *eol;
	char *end;

	if (!len)
		return 0;
	if (buf[0] != type)
		return -EPROTO;
	eol = find_crlf(buf, len);
	if (!eol)
		return len > 64 ? -EPROTO : 0;
	*n = strtoll(buf + 1, &end, 10);
	if (end != eol || *n < -1 || *n > CLONE_MAX_SIZE)
		return -EPROTO;
	*used = eol - buf + 2;
	return 1;
}

static int parse_redis(const char *buf, size_t len, struct clone_req *r)
{
	long long argc, i, alen;
	size_t used, off;
	const char *cmd = NULL;
	size_t cmdlen = 0;
	int ret;

	r->kind = CLONE_REQ_OTHER;
	r->key = NULL;
	r->keylen = 0;
	if (len && buf[0] != '*') { /* an inline command: one line */
		const char *eol = find_crlf(buf, len);
		size_t wl;

		if (!eol)
			return len > 65536 ? -EPROTO : 0;
		r->len = eol - buf + 2;
		cmd = word(buf, eol, 0, &wl);
		if (cmd && wl == 4 && !strncasecmp(cmd, "quit", 4))
			r->kind = CLONE_REQ_QUIT;
		return 1;
	}
	ret = resp_num(buf, len, '*', &argc, &used);
	if (ret <= 0)
		return ret;
	if (argc > 1024 * 1024)
		return -EPROTO;
	off = used;
	for (i = 0; i < argc; i++) {
		ret = resp_num(buf + off, len - off, '$', &alen, &used);
		if (ret <= 0)
			return ret;
		if (alen < 0)
			return -EPROTO;
		off += used;
		if (len - off < (size_t)alen + 2)
			return 0;
		if (i == 0) {
			cmd = buf + off;
			cmdlen = alen;
		} else if (i == 1) {
			r->key = buf + off;
			r->keylen = alen;
		}
		off += alen + 2;
	}
	r->len = off;
	if (cmd && cmdlen == 3 && !strncasecmp(cmd, "get", 3) && argc == 2)
		r->kind = CLONE_REQ_GET;
	else if (cmd && cmdlen == 3 && !strncasecmp(cmd, "set", 3))
		r->kind = CLONE_REQ_SET;
	else if (cmd && cmdlen == 4 && !strncasecmp(cmd, "quit", 4))
		r->kind = CLONE_REQ_QUIT;
	else if (cmd && cmdlen == 4 && !strncasecmp(cmd, "ping", 4))
		r->close = true; /* reused as "answer PONG" */
	return 1;
}

/* The value of header name (with its ':') in the head [buf, end), or NULL. */
static const char *header(const char *buf, const char *end, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = buf, *eol;

	while (p < end && (eol = find_crlf(p, end - p + 2))) {
		if ((size_t)(eol - p) > nl && !strncasecmp(p, name, nl)) {
			p += nl;
			while (p < eol && *p == ' ')
				p++;
			*vlen = eol - p;
			return p;
		}
		p = eol + 2;
	}
	return NULL;
}

static int parse_http(const char *buf, size_t len, struct clone_req *r)
{
	const char *end = NULL, *p = buf, *v;
	size_t vl, head;
	unsigned long long body = 0;

	while ((p = memchr(p, '\r', len - (p - buf)))) {
		if ((size_t)(p - buf) + 4 > len)
			break;
		if (!memcmp(p, "\r\n\r\n", 4)) {
			end = p;
			break;
		}
		p++;
	}
	if (!end)
		return len > 65536 ? -EPROTO : 0;
	head = end - buf + 4;
	v = header(buf, end, "content-length:", &vl);
	if (v) {
		char num[24];

		if (vl >= sizeof(num))
			return -EPROTO;
		memcpy(num, v, vl);
		num[vl] = 0;
		body = strtoull(num, NULL, 10);
		if (body > CLONE_MAX_SIZE)
			return -EPROTO;
	}
	if (len < head + body)
		return 0;
	r->len = head + body;
	r->kind = CLONE_REQ_GET;
	r->key = NULL;
	r->keylen = 0;
	v = header(buf, end, "connection:", &vl);
	if (v)
		r->close = vl == 5 && !strncasecmp(v, "close", 5);
	else
		r->close = memmem(buf, end - buf, "HTTP/1.0\r\n", 10) != NULL;
	return 1;
}

int clone_proto__parse(enum clone_proto p, const char *buf, size_t len, uint64_t raw_size,
		       struct clone_req *r)
{
	memset(r, 0, sizeof(*r));
	switch (p) {
	case CLONE_MEMCACHED:
		return parse_memcached(buf, len, r);
	case CLONE_REDIS:
		return parse_redis(buf, len, r);
	case CLONE_HTTP:
		return parse_http(buf, len, r);
	case CLONE_LINE: {
		const char *nl = memchr(buf, '\n', len);

		if (!nl)
			return len > 65536 ? -EPROTO : 0;
		r->len = nl - buf + 1;
		r->kind = CLONE_REQ_OTHER;
		return 1;
	}
	case CLONE_RAW:
		if (!raw_size)
			raw_size = 1;
		if (len < raw_size)
			return 0;
		r->len = raw_size;
		r->kind = CLONE_REQ_OTHER;
		return 1;
	}
	return -EPROTO;
}

static size_t fill(char *out, size_t at, size_t n, size_t outlen)
{
	if (at + n > outlen)
		n = at < outlen ? outlen - at : 0;
	memset(out + at, 'x', n);
	return at + n;
}

static size_t put(char *out, size_t at, const char *s, size_t n, size_t outlen)
{
	if (at + n > outlen)
		n = at < outlen ? outlen - at : 0;
	memcpy(out + at, s, n);
	return at + n;
}

static size_t answer_memcached(const struct clone_req *r, uint64_t want, char *out, size_t outlen)
{
	char head[320];
	size_t hl, at, n, k = r->keylen > 250 ? 250 : r->keylen;
	switch (r->kind) {
	case CLONE_REQ_SET:
		return r->close ? 0 : put(out, 0, "STORED\r\n", 8, outlen);
	case CLONE_REQ_GET:
		/* VALUE key 0 N\r\n + N + \r\nEND\r\n: N so that the whole is want */
		hl = strlen("VALUE ") + k + strlen(" 0 ") + 2 + 7;
		if (want < hl + 2)
			return put(out, 0, "END\r\n", 5, outlen);
		n = want - hl - 1;
		while (n && n + hl + (size_t)snprintf(head, sizeof(head), "%zu", n) > want)
			n--;
		hl = snprintf(head, sizeof(head), "VALUE %.*s 0 %zu\r\n", (int)k, r->key, n);
		at = put(out, 0, head, hl, outlen);
		at = fill(out, at, n, outlen);
		return put(out, at, "\r\nEND\r\n", 7, outlen);
	case CLONE_REQ_QUIT:
		return 0;
	default:
		return put(out, 0, "ERROR\r\n", 7, outlen);
	}
}

static size_t answer_redis(const struct clone_req *r, uint64_t want, char *out, size_t outlen)
{
	char head[32];
	size_t hl, at, n;

	switch (r->kind) {
	case CLONE_REQ_GET:
		/* $N\r\n + N + \r\n */
		if (want < 6)
			return put(out, 0, "$-1\r\n", 5, outlen);
		n = want - 5;
		while (n && n + snprintf(head, sizeof(head), "%zu", n) + 5 > want)
			n--;
		hl = snprintf(head, sizeof(head), "$%zu\r\n", n);
		at = put(out, 0, head, hl, outlen);
		at = fill(out, at, n, outlen);
		return put(out, at, "\r\n", 2, outlen);
	default:
		if (r->close)
			return put(out, 0, "+PONG\r\n", 7, outlen);
		return put(out, 0, "+OK\r\n", 5, outlen);
	}
}

static size_t http_head(char *head, size_t size, size_t body, bool close)
{
	return snprintf(head, size,
			"HTTP/1.1 200 OK\r\nServer: srvscope-clone\r\n"
			"Content-Type: text/plain\r\nContent-Length: %zu\r\n"
			"Connection: %s\r\n\r\n",
			body, close ? "close" : "keep-alive");
}

static size_t answer_http(const struct clone_req *r, uint64_t want, char *out, size_t outlen)
{
	char head[256];
	size_t hl = 0, body = 0;
	int i;

	/* the head's length depends on the body's digits: settle in a few rounds */
	for (i = 0; i < 3; i++) {
		hl = http_head(head, sizeof(head), body, r->close);
		body = want > hl ? want - hl : 0;
	}
	hl = http_head(head, sizeof(head), body, r->close);
	hl = put(out, 0, head, hl, outlen);
	return fill(out, hl, body, outlen);
}

size_t clone_proto__answer(enum clone_proto p, const struct clone_req *r, uint64_t want, char *out,
			   size_t outlen)
{
	switch (p) {
	case CLONE_MEMCACHED:
		return answer_memcached(r, want, out, outlen);
	case CLONE_REDIS:
		return answer_redis(r, want, out, outlen);
	case CLONE_HTTP:
		return answer_http(r, want, out, outlen);
	case CLONE_RAW:
		return fill(out, 0, want, outlen);
	case CLONE_LINE:
		want = want ? want : 1;
		fill(out, 0, want - 1, outlen);
		return put(out, want - 1, "\n", 1, outlen);
	}
	return 0;
}
