/* A streaming JSON writer for documents too large to build in memory (a report with a
 * hundred thousand episodes): values go to the FILE as they are given, the writer only
 * remembers how deep it is. Containers opened "compact" are written on one line, with
 * everything inside them; others put each member on its own indented line. */
#ifndef SRVSCOPE_OUTPUT_JSON_WRITER_H
#define SRVSCOPE_OUTPUT_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

/* NULL (errno set) when out of memory. */
struct json_writer *json_writer__new(FILE *f);
/* Returns 0, or -EIO when a write failed or the document was left unbalanced (a bug);
 * frees w (accepts NULL). */
int json_writer__delete(struct json_writer *w);

/* Inside an object, every value is preceded by json_writer__key. */
void json_writer__key(struct json_writer *w, const char *key);
void json_writer__begin_object(struct json_writer *w, bool compact);
void json_writer__end_object(struct json_writer *w);
void json_writer__begin_array(struct json_writer *w, bool compact);
void json_writer__end_array(struct json_writer *w);

void json_writer__string(struct json_writer *w, const char *s); /* NULL: null */
void json_writer__int(struct json_writer *w, int64_t v);
void json_writer__uint(struct json_writer *w, uint64_t v);
void json_writer__bool(struct json_writer *w, bool v);
void json_writer__null(struct json_writer *w);

/* key + value in one call, the common case inside objects. */
void json_writer__kv_string(struct json_writer *w, const char *key, const char *s);
void json_writer__kv_int(struct json_writer *w, const char *key, int64_t v);
void json_writer__kv_uint(struct json_writer *w, const char *key, uint64_t v);
void json_writer__kv_bool(struct json_writer *w, const char *key, bool v);
void json_writer__kv_null(struct json_writer *w, const char *key);

#endif
