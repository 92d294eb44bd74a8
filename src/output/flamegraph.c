/* SVG flame graph writer: merges the folded stacks into a tree, lays the tree out bottom-up
 * (root at the bottom, width proportional to weight), and embeds the script that zooms and
 * searches. Every frame keeps its position as a fraction of the whole (data-x, data-w), so
 * the script only rescales and never needs the tree. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"
#include "util/util.h"

#define FRAME_H	   16
#define TOP_PAD	   56
#define BOTTOM_PAD 32
#define SIDE_PAD   10
#define FONT_W	   6.6 /* average width of a 12 px character */
#define MIN_PX	   0.3 /* narrower frames are not drawn */

struct node {
	char *name;
	uint64_t value;
	struct node **kids;
	size_t nr, cap;
};

static struct node *child(struct node *p, const char *name, size_t len)
{
	struct node *c;

	/* Input sorted by stack keeps equal siblings adjacent: the last child is the usual hit. */
	if (p->nr && strlen(p->kids[p->nr - 1]->name) == len &&
	    !memcmp(p->kids[p->nr - 1]->name, name, len))
		return p->kids[p->nr - 1];
	for (size_t i = 0; i + 1 < p->nr; i++)
		if (strlen(p->kids[i]->name) == len && !memcmp(p->kids[i]->name, name, len))
			return p->kids[i];
	c = xcalloc(1, sizeof(*c));
	c->name = xmalloc(len + 1);
	memcpy(c->name, name, len);
	c->name[len] = '\0';
	xgrow((void **)&p->kids, &p->cap, p->nr + 1, sizeof(*p->kids));
	p->kids[p->nr++] = c;
	return c;
}

static void insert(struct node *root, const char *stack, uint64_t w)
{
	struct node *n = root;
	const char *p = stack;

	root->value += w;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		n = child(n, p, len);
		n->value += w;
		p += len;
		if (*p == ';')
			p++;
	}
}

static void free_tree(struct node *n)
{
	for (size_t i = 0; i < n->nr; i++)
		free_tree(n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n);
}

static unsigned int depth(const struct node *n)
{
	unsigned int d = 0;

	for (size_t i = 0; i < n->nr; i++) {
		unsigned int k = depth(n->kids[i]) + 1;

		if (k > d)
			d = k;
	}
	return d;
}

static void xml_escape(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; *s && i < max; s++, i++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

static unsigned int name_hash(const char *s)
{
	unsigned int h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Colours stay stable per name: warm for user code, orange for the kernel, blue on the
 * waker side, grey for the separator. */
static void colour(const char *name, bool waker, char *buf, size_t size)
{
	unsigned int h = name_hash(name);
	size_t len = strlen(name);
	bool kernel = len > 4 && !strcmp(name + len - 4, "_[k]");

	if (!strcmp(name, "--"))
		snprintf(buf, size, "rgb(160,160,160)");
	else if (waker)
		snprintf(buf, size, "rgb(%u,%u,%u)", 60 + h % 60, 120 + (h >> 8) % 80,
			 200 + (h >> 16) % 55);
	else if (kernel)
		snprintf(buf, size, "rgb(%u,%u,%u)", 230 + h % 25, 130 + (h >> 8) % 60,
			 30 + (h >> 16) % 30);
	else
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + h % 50, 60 + (h >> 8) % 130,
			 40 + (h >> 16) % 40);
}

struct layout {
	FILE *f;
	const struct flamegraph_opts *o;
	double total, width;
	unsigned int height;
};

static void emit(struct layout *l, const struct node *n, double x0, unsigned int d, bool waker)
{
	double px = n->value / l->total * l->width, x = x0 / l->total * l->width;
	double y = l->height - BOTTOM_PAD - (d + 1) * FRAME_H;
	size_t chars;
	char fill[32];

	if (px < MIN_PX)
		return;
	waker |= !strcmp(n->name, "--");
	colour(n->name, waker && strcmp(n->name, "--"), fill, sizeof(fill));
	fprintf(l->f, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\"><title>",
		x0 / l->total, n->value / l->total, d);
	xml_escape(l->f, n->name, SIZE_MAX);
	fprintf(l->f, " (%" PRIu64 " %s, %.2f%%)</title>", n->value, l->o->unit,
		100.0 * n->value / l->total);
	fprintf(l->f,
		"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
		SIDE_PAD + x, y, px, FRAME_H - 1, fill);
	chars = px > 3 * FONT_W ? (size_t)((px - 6) / FONT_W) : 0;
	fprintf(l->f, "<text x=\"%.2f\" y=\"%.1f\">", SIDE_PAD + x + 3, y + FRAME_H - 4.5);
	if (chars >= strlen(n->name))
		xml_escape(l->f, n->name, SIZE_MAX);
	else if (chars > 2) {
		xml_escape(l->f, n->name, chars - 2);
		fputs("..", l->f);
	}
	fputs("</text></g>\n", l->f);
	for (size_t i = 0; i < n->nr; i++) {
		emit(l, n->kids[i], x0, d + 1, waker);
		x0 += n->kids[i]->value;
	}
}

/* The script: zoom on click, search by regular expression, reset. Written for this file;
 * it reads the data-* attributes emit() writes. */
static const char script[] =
	"var svg, frames, W, PAD = 10, CW = 6.6, zoomed = null;\n"
	"function init(evt) {\n"
	"  svg = document.documentElement;\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  W = parseFloat(svg.getAttribute('width')) - 2 * PAD;\n"
	"  frames.forEach(function (g) {\n"
	"    g.fx = parseFloat(g.getAttribute('data-x'));\n"
	"    g.fw = parseFloat(g.getAttribute('data-w'));\n"
	"    g.fd = parseInt(g.getAttribute('data-d'), 10);\n"
	"    g.label = g.querySelector('title').textContent.replace(/ \\([^()]*\\)$/, '');\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () { "
	"status(g.querySelector('title').textContent); });\n"
	"    g.addEventListener('mouseout', function () { status(''); });\n"
	"  });\n"
	"  document.getElementById('reset').addEventListener('click', function () { zoom(null); "
	"});\n"
	"  document.getElementById('search').addEventListener('click', ask);\n"
	"  document.getElementById('clear').addEventListener('click', function () { search(null); "
	"});\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey && e.key === 'f') || e.key === '/') { e.preventDefault(); ask(); }\n"
	"    else if (e.key === 'Escape') { search(null); zoom(null); }\n"
	"  });\n"
	"}\n"
	"function status(s) { document.getElementById('status').textContent = s; }\n"
	"function place(g, x, w) {\n"
	"  var r = g.querySelector('rect'), t = g.querySelector('text'), n = Math.floor((w - 6) / "
	"CW);\n"
	"  r.setAttribute('x', PAD + x); r.setAttribute('width', Math.max(w, 0));\n"
	"  t.setAttribute('x', PAD + x + 3);\n"
	"  t.textContent = w < 3 * CW ? '' : (g.label.length <= n ? g.label : g.label.substr(0, n "
	"- 2) + '..');\n"
	"}\n"
	"function zoom(target) {\n"
	"  zoomed = target;\n"
	"  var zx = target ? target.fx : 0, zw = target ? target.fw : 1, zd = target ? target.fd : "
	"0;\n"
	"  frames.forEach(function (g) {\n"
	"    var inside = g.fx >= zx - 1e-12 && g.fx + g.fw <= zx + zw + 1e-12 && g.fd >= zd;\n"
	"    var below = g.fd < zd && g.fx <= zx + 1e-12 && g.fx + g.fw >= zx + zw - 1e-12;\n"
	"    if (inside) { g.style.display = ''; g.style.opacity = ''; place(g, (g.fx - zx) / zw * "
	"W, g.fw / zw * W); }\n"
	"    else if (below) { g.style.display = ''; g.style.opacity = '0.6'; place(g, 0, W); }\n"
	"    else g.style.display = 'none';\n"
	"  });\n"
	"  document.getElementById('reset').style.opacity = target ? '1' : '0';\n"
	"}\n"
	"function ask() {\n"
	"  var re = prompt('Search frames (regular expression)', '');\n"
	"  if (re !== null) search(re);\n"
	"}\n"
	"function search(re) {\n"
	"  var rx = null, spans = [];\n"
	"  if (re) { try { rx = new RegExp(re); } catch (e) { status('bad expression: ' + "
	"e.message); return; } }\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (r.orig === undefined) r.orig = r.getAttribute('fill');\n"
	"    var hit = rx && rx.test(g.label);\n"
	"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.orig);\n"
	"    if (hit) spans.push([g.fx, g.fx + g.fw]);\n"
	"  });\n"
	"  /* The share matched: the union of the matching frames' spans, nested ones counted "
	"once. */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var sum = 0, end = -1;\n"
	"  spans.forEach(function (s) {\n"
	"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
	"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
	"  });\n"
	"  var m = document.getElementById('matched');\n"
	"  m.textContent = rx ? 'Matched: ' + (100 * sum).toFixed(2) + '%' : '';\n"
	"  document.getElementById('clear').style.opacity = rx ? '1' : '0';\n"
	"}\n";

int flamegraph__write_svg(FILE *f, const struct flamegraph_entry *e, size_t n,
			  const struct flamegraph_opts *o)
{
	struct node *root = xcalloc(1, sizeof(*root));
	struct layout l = {.f = f, .o = o};
	unsigned int w = o->width ? o->width : 1200, d;

	root->name = xstrdup("all");
	for (size_t i = 0; i < n; i++)
		if (e[i].weight)
			insert(root, e[i].stack, e[i].weight);
	d = depth(root);
	l.total = root->value ? (double)root->value : 1;
	l.width = w - 2 * SIDE_PAD;
	l.height = TOP_PAD + (d + 1) * FRAME_H + BOTTOM_PAD;

	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		w, l.height, w, l.height);
	fprintf(f, "<style>\n"
		   "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
		   "g.f { cursor: pointer; }\n"
		   "g.f text { pointer-events: none; }\n"
		   "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		   ".btn { cursor: pointer; fill: #333; }\n"
		   "</style>\n");
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f4\"/>\n", w,
		l.height);
	fprintf(f, "<text x=\"%u\" y=\"22\" text-anchor=\"middle\" style=\"font-size:16px\">",
		w / 2);
	xml_escape(f, o->title ? o->title : "Flame graph", SIZE_MAX);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text x=\"%u\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">", w / 2);
		xml_escape(f, o->subtitle, SIZE_MAX);
		fputs("</text>\n", f);
	}
	fprintf(f,
		"<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"22\" style=\"opacity:0\">Reset "
		"zoom</text>\n",
		SIDE_PAD);
	fprintf(f,
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"22\" "
		"text-anchor=\"end\">Search</text>\n",
		w - SIDE_PAD);
	fprintf(f,
		"<text id=\"clear\" class=\"btn\" x=\"%u\" y=\"40\" text-anchor=\"end\" "
		"style=\"opacity:0\">Clear</text>\n",
		w - SIDE_PAD);
	fprintf(f, "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n",
		w - SIDE_PAD, l.height - 10);
	fprintf(f, "<text id=\"status\" x=\"%d\" y=\"%u\"></text>\n", SIDE_PAD, l.height - 10);
	/* The root spans everything; its children follow in input order. */
	emit(&l, root, 0, 0, false);
	fputs("</svg>\n", f);
	free_tree(root);
	return ferror(f) ? -EIO : 0;
}
