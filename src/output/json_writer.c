/* The streaming JSON writer of json_writer.h: a stack of open containers (whether each has
 * a member yet, whether it is compact), commas and indentation from it, and the string
 * escapes of RFC 8259. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_writer.h"
#include "util/escape.h"

#define MAX_DEPTH 64

struct level {
	bool object, compact, has_member;
};

struct json_writer {
	FILE *f;
	int depth;
	bool after_key; /* a key was written: the value follows it directly */
	bool broken;	/* unbalanced or too deep */
	struct level lv[MAX_DEPTH];
};

struct json_writer *json_writer__new(FILE *f)
{
	struct json_writer *w = calloc(1, sizeof(*w));

	if (w)
		w->f = f;
	return w;
}

int json_writer__delete(struct json_writer *w)
{
	int ret;

	if (!w)
		return 0;
	if (!w->depth)
		fputc('\n', w->f);
	ret = w->broken || w->depth || fflush(w->f) || ferror(w->f) ? -EIO : 0;
	free(w);
	return ret;
}

static void newline(struct json_writer *w, int depth)
{
	fputc('\n', w->f);
	for (int i = 0; i < depth; i++)
		fputs("  ", w->f);
}

/* Before any value or key: the separator the enclosing container wants. */
static void separate(struct json_writer *w)
{
	struct level *l;

	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->depth)
		return;
	l = &w->lv[w->depth - 1];
	if (l->has_member)
		fputc(',', w->f);
	l->has_member = true;
	if (!l->compact)
		newline(w, w->depth);
}

/* Strings from outside (paths, process titles) need not be UTF-8: a byte that does not
 * start a valid sequence is written as U+FFFD, so the document stays valid JSON. */
static void put_string(FILE *f, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t left = strlen(s), n;

	fputc('"', f);
	for (; *c; c++, left--) {
		if (*c >= 0x80) {
			n = utf8_char_len((const char *)c, left);
			if (n)
				fwrite(c, 1, n, f), c += n - 1, left -= n - 1;
			else
				fputs("\\ufffd", f);
			continue;
		}
		switch (*c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*c < 0x20)
				fprintf(f, "\\u%04x", *c);
			else
				fputc(*c, f);
		}
	}
	fputc('"', f);
}

void json_writer__key(struct json_writer *w, const char *key)
{
	separate(w);
	put_string(w->f, key);
	fputc(':', w->f);
	if (!w->depth || !w->lv[w->depth - 1].compact)
		fputc(' ', w->f);
	w->after_key = true;
}

static void begin(struct json_writer *w, bool object, bool compact)
{
	bool parent_compact = w->depth && w->lv[w->depth - 1].compact;

	separate(w);
	fputc(object ? '{' : '[', w->f);
	if (w->depth == MAX_DEPTH) {
		w->broken = true;
		return;
	}
	w->lv[w->depth++] = (struct level){object, compact || parent_compact, false};
}

static void end(struct json_writer *w, bool object)
{
	struct level *l;

	if (!w->depth || w->lv[w->depth - 1].object != object) {
		w->broken = true;
		return;
	}
	l = &w->lv[--w->depth];
	if (!l->compact && l->has_member)
		newline(w, w->depth);
	fputc(object ? '}' : ']', w->f);
}

void json_writer__begin_object(struct json_writer *w, bool compact)
{
	begin(w, true, compact);
}

void json_writer__end_object(struct json_writer *w)
{
	end(w, true);
}

void json_writer__begin_array(struct json_writer *w, bool compact)
{
	begin(w, false, compact);
}

void json_writer__end_array(struct json_writer *w)
{
	end(w, false);
}

void json_writer__string(struct json_writer *w, const char *s)
{
	separate(w);
	if (s)
		put_string(w->f, s);
	else
		fputs("null", w->f);
}

void json_writer__int(struct json_writer *w, int64_t v)
{
	separate(w);
	fprintf(w->f, "%" PRId64, v);
}

void json_writer__uint(struct json_writer *w, uint64_t v)
{
	separate(w);
	fprintf(w->f, "%" PRIu64, v);
}

void json_writer__bool(struct json_writer *w, bool v)
{
	separate(w);
	fputs(v ? "true" : "false", w->f);
}

void json_writer__null(struct json_writer *w)
{
	separate(w);
	fputs("null", w->f);
}

void json_writer__kv_string(struct json_writer *w, const char *key, const char *s)
{
	json_writer__key(w, key);
	json_writer__string(w, s);
}

void json_writer__kv_int(struct json_writer *w, const char *key, int64_t v)
{
	json_writer__key(w, key);
	json_writer__int(w, v);
}

void json_writer__kv_uint(struct json_writer *w, const char *key, uint64_t v)
{
	json_writer__key(w, key);
	json_writer__uint(w, v);
}

void json_writer__kv_bool(struct json_writer *w, const char *key, bool v)
{
	json_writer__key(w, key);
	json_writer__bool(w, v);
}

void json_writer__kv_null(struct json_writer *w, const char *key)
{
	json_writer__key(w, key);
	json_writer__null(w);
}
