/* The load clients' requests and reply framing: memcached text protocol (protocol.txt of
 * memcached), redis RESP2 and HTTP/1.1 (RFC 9112: Content-Length, chunked, or a body that
 * ends with the connection). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "load/proto.h"

/* Longest line (memcached reply line, RESP header, HTTP head) before the bytes are taken
 * for something other than the protocol. */
#define LINE_MAX_LEN   4096
#define HEAD_MAX_LEN   65536
#define RESP_MAX_DEPTH 8

size_t load_proto__request(const struct load_target *t, bool set, unsigned int key,
			   const char *value, size_t value_len, bool keepalive, char *buf)
{
	char k[32];
	int kl, n;

	if (t->proto == LOAD_HTTP)
		return (size_t)snprintf(
			buf, LOAD_REQ_HEAD_MAX,
			"GET %s HTTP/1.1\r\nHost: %s:%u\r\nUser-Agent: srvscope\r\n%s\r\n", t->path,
			t->host, t->port, keepalive ? "" : "Connection: close\r\n");
	kl = snprintf(k, sizeof(k), "key:%u", key);
	if (t->proto == LOAD_MEMCACHED) {
		if (!set)
			return (size_t)snprintf(buf, LOAD_REQ_HEAD_MAX, "get %s\r\n", k);
		n = snprintf(buf, LOAD_REQ_HEAD_MAX, "set %s 0 0 %zu\r\n", k, value_len);
	} else {
		if (!set)
			return (size_t)snprintf(buf, LOAD_REQ_HEAD_MAX,
						"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", kl, k);
		n = snprintf(buf, LOAD_REQ_HEAD_MAX, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%zu\r\n", kl,
			     k, value_len);
	}
	memcpy(buf + n, value, value_len);
	memcpy(buf + n + value_len, "\r\n", 2);
	return n + value_len + 2;
}

/* The length of the line at buf (up to and without its CRLF) in *ll; returns the offset
 * past the CRLF, 0 when the line is not complete, -EPROTO when it is too long or has a bare
 * LF. */
static ssize_t line(const char *buf, size_t len, size_t *ll)
{
	const char *nl = memchr(buf, '\n', len < LINE_MAX_LEN ? len : LINE_MAX_LEN);

	if (!nl)
		return len >= LINE_MAX_LEN ? -EPROTO : 0;
	if (nl == buf || nl[-1] != '\r')
		return -EPROTO;
	*ll = nl - 1 - buf;
	return nl + 1 - buf;
}

/* Reads s[0..len) as a whole decimal number (a leading '-' allowed) into *v. */
static bool number(const char *s, size_t len, long long *v)
{
	bool neg = false;
	size_t i = 0;

	*v = 0;
	if (len && s[0] == '-')
		neg = true, i = 1;
	if (i == len || len - i > 15)
		return false;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	if (neg)
		*v = -*v;
	return true;
}

static bool starts(const char *s, size_t len, const char *word)
{
	size_t wl = strlen(word);

	return len >= wl && !memcmp(s, word, wl);
}

static ssize_t memcached_reply(const char *buf, size_t len, struct load_reply *r)
{
	size_t off = 0, ll;
	ssize_t n;

	for (;;) {
		const char *s = buf + off, *sp;
		long long bytes;

		n = line(s, len - off, &ll);
		if (n <= 0)
			return n;
		if (ll == 3 && !memcmp(s, "END", 3))
			return off + n;
		if (!starts(s, ll, "VALUE ")) {
			if (off)
				return -EPROTO; /* a get's reply goes on with VALUE or END */
			if ((ll == 6 && !memcmp(s, "STORED", 6)) ||
			    (ll == 10 && !memcmp(s, "NOT_STORED", 10)) ||
			    (ll == 6 && !memcmp(s, "EXISTS", 6)) ||
			    (ll == 9 && !memcmp(s, "NOT_FOUND", 9)))
				return n;
			if ((ll == 5 && !memcmp(s, "ERROR", 5)) || starts(s, ll, "CLIENT_ERROR ") ||
			    starts(s, ll, "SERVER_ERROR ")) {
				r->failed = true;
				return n;
			}
			return -EPROTO;
		}
		/* VALUE <key> <flags> <bytes> [<cas>] */
		sp = memchr(s + 6, ' ', ll - 6);
		sp = sp ? memchr(sp + 1, ' ', s + ll - sp - 1) : NULL;
		if (!sp)
			return -EPROTO;
		{
			const char *e = memchr(sp + 1, ' ', s + ll - sp - 1);
			if (!number(sp + 1, (e ? e : s + ll) - sp - 1, &bytes))
				return -EPROTO;
		}
		if (bytes < 0)
			return -EPROTO;
		if (len - off - n < (size_t)bytes + 2)
			return 0;
		if (memcmp(s + n + bytes, "\r\n", 2))
			return -EPROTO;
		off += n + bytes + 2;
	}
}

/* One RESP value at buf; returns its length, 0 when incomplete, -EPROTO. */
static ssize_t resp_value(const char *buf, size_t len, int depth, bool *err)
{
	size_t ll, off;
	long long v, i;
	ssize_t n;

	if (!len)
		return 0;
	n = line(buf, len, &ll);
	if (n <= 0)
		return n;
	switch (buf[0]) {
	case '-':
		*err = true;
		/* fall through */
	case '+':
		return n;
	case ':':
		return number(buf + 1, ll - 1, &v) ? n : -EPROTO;
	case '$':
		if (!number(buf + 1, ll - 1, &v) || v < -1)
			return -EPROTO;
		if (v == -1) /* nil */
			return n;
		if (len - n < (size_t)v + 2)
			return 0;
		return memcmp(buf + n + v, "\r\n", 2) ? -EPROTO : (ssize_t)(n + v + 2);
	case '*':
		if (!number(buf + 1, ll - 1, &v) || v < -1)
			return -EPROTO;
		if (v == -1)
			return n;
		if (depth >= RESP_MAX_DEPTH)
			return -EPROTO;
		off = n;
		for (i = 0; i < v; i++) {
			bool e = false;
			ssize_t m = resp_value(buf + off, len - off, depth + 1, &e);

			if (m <= 0)
				return m;
			off += m;
		}
		return off;
	default:
		return -EPROTO;
	}
}

/* Whether the header line h[0..len) is "name: value" with value (case-insensitive, after
 * optional spaces) starting with want; want NULL: just the name. */
static const char *header(const char *h, size_t len, const char *name)
{
	size_t nl = strlen(name);

	if (len <= nl || strncasecmp(h, name, nl) || h[nl] != ':')
		return NULL;
	h += nl + 1;
	while (*h == ' ' || *h == '\t')
		h++;
	return h;
}

static bool value_is(const char *v, const char *end, const char *want)
{
	size_t wl = strlen(want);

	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return (size_t)(end - v) == wl && !strncasecmp(v, want, wl);
}

/* The chunked body at buf: its length with the trailers, 0, -EPROTO. */
static ssize_t chunked_body(const char *buf, size_t len)
{
	size_t off = 0, ll;
	ssize_t n;

	for (;;) {
		unsigned long long sz = 0;
		size_t i, digits = 0;

		n = line(buf + off, len - off, &ll);
		if (n <= 0)
			return n;
		for (i = 0; i < ll; i++) {
			char c = buf[off + i];
			int d = c >= '0' && c <= '9'   ? c - '0'
				: c >= 'a' && c <= 'f' ? c - 'a' + 10
				: c >= 'A' && c <= 'F' ? c - 'A' + 10
						       : -1;
			if (d < 0)
				break;
			if (++digits > 15)
				return -EPROTO;
			sz = sz * 16 + d;
		}
		if (!digits || (i < ll && buf[off + i] != ';' && buf[off + i] != ' '))
			return -EPROTO;
		off += n;
		if (!sz)
			break;
		if (len - off < sz + 2)
			return 0;
		if (memcmp(buf + off + sz, "\r\n", 2))
			return -EPROTO;
		off += sz + 2;
	}
	for (;;) { /* trailers up to an empty line */
		n = line(buf + off, len - off, &ll);
		if (n <= 0)
			return n;
		off += n;
		if (!ll)
			return off;
	}
}

static ssize_t http_reply(const char *buf, size_t len, bool eof, struct load_reply *r)
{
	const char *end, *p, *v;
	long long clen = -1, code;
	bool chunked = false, http10;
	size_t head, ll;
	ssize_t n, body;
	int minor;

	end = memmem(buf, len < HEAD_MAX_LEN ? len : HEAD_MAX_LEN, "\r\n\r\n", 4);
	if (!end)
		return len >= HEAD_MAX_LEN || (eof && len) ? -EPROTO : 0;
	head = end + 4 - buf;
	/* HTTP/1.x NNN reason */
	if (head < 14 || memcmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') ||
	    buf[8] != ' ')
		return -EPROTO;
	minor = buf[7] - '0';
	if (!number(buf + 9, 3, &code) || code < 100 || (buf[12] != ' ' && buf[12] != '\r'))
		return -EPROTO;
	r->status = (int)code;
	http10 = minor == 0;
	r->closes = http10;
	p = buf;
	for (;;) {
		n = line(p, buf + head - p, &ll);
		if (n <= 0)
			return -EPROTO;
		if (!ll)
			break;
		if (p != buf) {
			if ((v = header(p, ll, "Content-Length"))) {
				while (p + ll > v && (p[ll - 1] == ' ' || p[ll - 1] == '\t'))
					ll--;
				if (!number(v, p + ll - v, &clen) || clen < 0)
					return -EPROTO;
			} else if ((v = header(p, ll, "Transfer-Encoding"))) {
				chunked = value_is(v, p + ll, "chunked");
			} else if ((v = header(p, ll, "Connection"))) {
				if (value_is(v, p + ll, "close"))
					r->closes = true;
				else if (value_is(v, p + ll, "keep-alive"))
					r->closes = false;
			}
		}
		p += n;
	}
	if (r->status < 200) /* an interim reply (100 Continue): not ours to wait for */
		return -EPROTO;
	r->failed = r->status >= 400;
	if (r->status == 204 || r->status == 304)
		return head;
	if (chunked) {
		body = chunked_body(buf + head, len - head);
		if (!body && eof)
			return -EPROTO;
		return body <= 0 ? body : (ssize_t)head + body;
	}
	if (clen >= 0) {
		if (len - head >= (size_t)clen)
			return head + clen;
		return eof ? -EPROTO : 0;
	}
	r->closes = true; /* the body ends with the connection */
	return eof ? (ssize_t)len : 0;
}

ssize_t load_proto__reply(enum load_proto p, const char *buf, size_t len, bool eof,
			  struct load_reply *r)
{
	ssize_t n;

	memset(r, 0, sizeof(*r));
	switch (p) {
	case LOAD_MEMCACHED:
		n = memcached_reply(buf, len, r);
		break;
	case LOAD_REDIS:
		n = resp_value(buf, len, 0, &r->failed);
		break;
	case LOAD_HTTP:
		return http_reply(buf, len, eof, r);
	default:
		return -EINVAL;
	}
	/* a reply cut by the server's close is no reply */
	return !n && eof && len ? -EPROTO : n;
}
