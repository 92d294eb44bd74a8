/* The streaming JSON writer: a nested document with every kind of value and strings that
 * need escapes parses back (with jansson) to what was written, compact containers stay on
 * one line, and an unbalanced document is reported. */
#include <jansson.h>
#include <stdlib.h>

#include "output/json_writer.h"
#include "unit.h"

int main(void)
{
	static const char nasty[] = "quote \" backslash \\ tab \t nl \n ctl \x01 utf-8 \xc3\xa9";
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer *w = json_writer__new(f);
	json_error_t jerr;
	json_t *doc, *v;
	int lines = 0;

	json_writer__begin_object(w, false);
	json_writer__kv_uint(w, "big", UINT64_C(18446744073709551615) / 2);
	json_writer__kv_int(w, "neg", -42);
	json_writer__kv_bool(w, "yes", true);
	json_writer__kv_null(w, "nothing");
	json_writer__kv_string(w, "nasty", nasty);
	json_writer__kv_string(w, "null string", NULL);
	json_writer__kv_string(w, "latin1", "caf\xe9 \xff");
	json_writer__key(w, "rows");
	json_writer__begin_array(w, false);
	for (int i = 0; i < 3; i++) {
		json_writer__begin_object(w, true);
		json_writer__kv_int(w, "i", i);
		json_writer__key(w, "inner");
		json_writer__begin_array(w, false); /* inside a compact one: compact too */
		json_writer__int(w, i);
		json_writer__string(w, "x");
		json_writer__end_array(w);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__key(w, "empty");
	json_writer__begin_object(w, false);
	json_writer__end_object(w);
	json_writer__end_object(w);
	is_int(json_writer__delete(w), 0, "a balanced document is written");
	fclose(f);

	doc = json_loads(buf, 0, &jerr);
	ok(doc != NULL, "jansson parses it (%s)", doc ? "ok" : jerr.text);
	is_int(json_integer_value(json_object_get(doc, "big")), 9223372036854775807LL, "uint");
	is_int(json_integer_value(json_object_get(doc, "neg")), -42, "negative int");
	ok(json_is_true(json_object_get(doc, "yes")), "bool");
	ok(json_is_null(json_object_get(doc, "nothing")), "null");
	is_str(json_string_value(json_object_get(doc, "nasty")), nasty, "escapes round-trip");
	ok(json_is_null(json_object_get(doc, "null string")), "a NULL string is null");
	is_str(json_string_value(json_object_get(doc, "latin1")), "caf\xef\xbf\xbd \xef\xbf\xbd",
	       "bytes that are not UTF-8 become U+FFFD");
	v = json_array_get(json_object_get(doc, "rows"), 2);
	is_int(json_integer_value(json_object_get(v, "i")), 2, "third row");
	is_str(json_string_value(json_array_get(json_object_get(v, "inner"), 1)), "x",
	       "nested array in a compact row");
	ok(json_is_object(json_object_get(doc, "empty")) &&
		   !json_object_size(json_object_get(doc, "empty")),
	   "empty object");
	for (line = buf; (line = strchr(line, '\n')); line++)
		lines++;
	/* a newline before each of the 9 members, the 3 rows, "]" and the last "}", and at the end
	 */
	is_int(lines, 15, "one line per member, a compact row per line");
	ok(strstr(buf, "{\"i\":1,\"inner\":[1,\"x\"]}") != NULL, "a compact row has no spaces");
	json_decref(doc);
	free(buf);

	/* An encoded surrogate (U+D800) is not UTF-8 either: jansson would refuse the whole
	 * document. */
	f = open_memstream(&buf, &len);
	w = json_writer__new(f);
	json_writer__begin_array(w, true);
	json_writer__string(w, "a\xed\xa0\x80"
			       "b");
	json_writer__end_array(w);
	json_writer__delete(w);
	fclose(f);
	doc = json_loads(buf, 0, &jerr);
	is_str(doc ? json_string_value(json_array_get(doc, 0)) : jerr.text,
	       "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	       "b",
	       "an encoded surrogate becomes U+FFFD");
	json_decref(doc);
	free(buf);

	f = open_memstream(&buf, &len);
	w = json_writer__new(f);
	json_writer__begin_array(w, false);
	json_writer__end_object(w);
	ok(json_writer__delete(w) < 0, "closing an array as an object is an error");
	fclose(f);
	free(buf);
	return done_testing();
}
