/* The page: the template (assets/report.html) with the style sheet, the script and the
 * JSON documents put in place of its @@MARKERS@@. Nothing from a trace is ever written as
 * HTML: it goes into JSON inside <script type="application/json">, made safe there, and the
 * script shows it as text. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_writer.h"
#include "report/assets.h"
#include "report/data.h"
#include "report/report.h"
#include "trace/trace.h"
#include "util/escape.h"
#include "util/jsonfile.h"
#include "util/util.h"

/* JSON as the text of a <script> element: '<' could close it ("</script>") or open a
 * comment that changes how it ends ("<!--"), and U+2028/U+2029 end a line inside a string
 * for some JavaScript parsers; '>' and '&' go too, for good measure. All of them can only
 * stand inside JSON strings, where \uXXXX means the same character. */
static void write_script_json(FILE *f, const char *s, size_t len)
{
	const char *p = s, *end = s + len;

	for (; s < end; s++) {
		const char *esc = NULL;

		switch (*s) {
		case '<':
			esc = "\\u003c";
			break;
		case '>':
			esc = "\\u003e";
			break;
		case '&':
			esc = "\\u0026";
			break;
		case '\xe2':
			if (end - s >= 3 && s[1] == '\x80' && (s[2] == '\xa8' || s[2] == '\xa9'))
				esc = s[2] == '\xa8' ? "\\u2028" : "\\u2029";
			break;
		}
		if (!esc)
			continue;
		fwrite(p, 1, s - p, f);
		fputs(esc, f);
		if (*s == '\xe2')
			s += 2;
		p = s + 1;
	}
	fwrite(p, 1, end - p, f);
}

/* The traces' document, built in memory (a few megabytes at most): *buf malloc'ed. */
static int traces_json(char *const *paths, size_t n, const struct report_opts *o, char **buf,
		       size_t *len)
{
	FILE *m = open_memstream(buf, len);
	struct json_writer *w;
	struct trace *t;
	size_t i, j;
	int err = 0;

	if (!m)
		return error("out of memory");
	w = json_writer__new(m);
	if (!w) {
		fclose(m);
		free(*buf);
		return error("out of memory");
	}
	json_writer__begin_object(w, false);
	json_writer__kv_uint(w, "version", 1);
	json_writer__key(w, "traces");
	json_writer__begin_array(w, false);
	for (i = 0; i < n && !err; i++) {
		t = trace__open_report(paths[i]);
		if (!t) {
			err = -1;
			break;
		}
		/* Thread names are the recorded processes' to choose: escaped once, here. */
		for (j = 0; j < t->nr_threads; j++)
			name_escape_inplace(t->threads[j].comm, sizeof(t->threads[j].comm));
		report_data__trace(w, t, paths[i], o);
		trace__close(t);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	if (json_writer__delete(w) && !err)
		err = error("cannot build the report: out of memory");
	if (fclose(m) && !err)
		err = error("cannot build the report: out of memory");
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/* A document given on the command line (--model, --critical-path), checked and written
 * compact; "null" without one. */
static int document_json(const char *path, const char *what, char **buf)
{
	json_error_t jerr;
	json_t *doc;

	if (!path) {
		*buf = xstrdup("null");
		return 0;
	}
	doc = jsonfile__load(path, 64 << 20, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc && jerr.line > 0)
		return error("cannot read the %s '%s': %s (line %d)", what, path, jerr.text,
			     jerr.line);
	if (!doc)
		return error("cannot read the %s '%s': %s", what, path, jerr.text);
	*buf = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(doc);
	if (!*buf)
		return error("out of memory");
	return 0;
}

/* The page's own parts must not end their element early: a bug, caught before writing. */
static int check_asset(const char *text, const char *close)
{
	if (strcasestr(text, close))
		return error("internal error: the report's assets contain '%s'", close);
	return 0;
}

int report__write_html(FILE *f, char *const *paths, size_t n, const struct report_opts *o)
{
	char *data = NULL, *model = NULL, *critical = NULL;
	size_t data_len;
	const char *p = report_asset_html, *m, *e;
	int err;

	if (check_asset(report_asset_js, "</script") || check_asset(report_asset_css, "</style"))
		return -1;
	err = document_json(o->model, "model", &model);
	if (!err)
		err = document_json(o->critical, "critical path", &critical);
	if (!err)
		err = traces_json(paths, n, o, &data, &data_len);
	if (err)
		goto out;
	/* The template, with each @@NAME@@ replaced. */
	while ((m = strstr(p, "@@"))) {
		fwrite(p, 1, m - p, f);
		e = strstr(m + 2, "@@");
		if (!e) {
			p = m;
			break;
		}
		if (!strncmp(m, "@@CSS@@", e + 2 - m))
			fputs(report_asset_css, f);
		else if (!strncmp(m, "@@JS@@", e + 2 - m))
			fputs(report_asset_js, f);
		else if (!strncmp(m, "@@DATA@@", e + 2 - m))
			write_script_json(f, data, data_len);
		else if (!strncmp(m, "@@MODEL@@", e + 2 - m))
			write_script_json(f, model, strlen(model));
		else if (!strncmp(m, "@@CRITICAL@@", e + 2 - m))
			write_script_json(f, critical, strlen(critical));
		else
			fwrite(m, 1, e + 2 - m, f);
		p = e + 2;
	}
	fputs(p, f);
	if (fflush(f) || ferror(f))
		err = error("cannot write the report: %s", strerror(errno));
out:
	free(data);
	free(model);
	free(critical);
	return err;
}
