/* Drawing 'srvscope top' with ncurses and turning keys into view changes. The terminal is
 * restored by tui__close on every way out (the caller's signal flag, q, errors, exit()). */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "output/frame.h"
#include "output/tui.h"
#include "util/util.h"

enum { PAIR_HEAD = 1, PAIR_TITLE, PAIR_KERNEL, PAIR_MODULE, PAIR_HOT, PAIR_HELP };

#define HEADER_LINES 4	/* two status lines, the filter/message line, the column titles */
#define FRAME_INDENT 39 /* frames line up under the thread names */

struct tui {
	SCREEN *screen;
	bool colors;
	int saved_stderr; /* the real stderr, while ours goes to held */
	FILE *held;
};

/* The open tui, for the atexit handler. */
static struct tui *open_tui;

static void close_at_exit(void)
{
	tui__close(open_tui);
}

/* Messages printed while the screen is ours would be wiped by the next refresh and lost
 * with the alternate screen: keep them in a file and print them at close. */
static void hold_stderr(struct tui *t)
{
	t->saved_stderr = -1;
	t->held = tmpfile();
	if (!t->held)
		return;
	fflush(stderr);
	t->saved_stderr = dup(STDERR_FILENO);
	if (t->saved_stderr < 0 || dup2(fileno(t->held), STDERR_FILENO) < 0) {
		if (t->saved_stderr >= 0)
			close(t->saved_stderr);
		t->saved_stderr = -1;
		fclose(t->held);
		t->held = NULL;
	}
}

static void release_stderr(struct tui *t)
{
	char buf[4096];
	size_t n;

	if (!t->held)
		return;
	fflush(stderr);
	dup2(t->saved_stderr, STDERR_FILENO);
	close(t->saved_stderr);
	rewind(t->held);
	while ((n = fread(buf, 1, sizeof(buf), t->held)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(t->held);
	t->held = NULL;
}

struct tui *tui__open(void)
{
	static bool registered;
	struct tui *t;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		error("top needs a terminal on stdin and stdout for its screen (pipe stdout for "
		      "--format output)");
		return NULL;
	}
	setlocale(LC_CTYPE, "");
	t = xcalloc(1, sizeof(*t));
	t->screen = newterm(NULL, stdout, stdin);
	if (!t->screen) {
		const char *term = getenv("TERM");

		error("cannot drive the terminal '%s': set TERM to a known terminal type",
		      term ? term : "(unset)");
		free(t);
		return NULL;
	}
	set_term(t->screen);
	hold_stderr(t);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors()) {
		t->colors = true;
		start_color();
		use_default_colors();
		init_pair(PAIR_HEAD, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_GREEN);
		init_pair(PAIR_KERNEL, COLOR_MAGENTA, -1);
		init_pair(PAIR_MODULE, COLOR_BLUE, -1);
		init_pair(PAIR_HOT, COLOR_RED, -1);
		init_pair(PAIR_HELP, COLOR_BLACK, COLOR_CYAN);
	}
	open_tui = t;
	if (!registered)
		atexit(close_at_exit);
	registered = true;
	return t;
}

void tui__close(struct tui *t)
{
	if (!t)
		return;
	if (!isendwin())
		endwin();
	delscreen(t->screen);
	release_stderr(t);
	if (open_tui == t)
		open_tui = NULL;
	free(t);
}

static const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 10 * 1000 * 1000)
		snprintf(buf, len, "%.0f us", ns / 1e3);
	else if (ns < 10ull * 1000 * 1000 * 1000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.1f s", ns / 1e9);
	return buf;
}

/* Writes text at (y, x) clipped to the screen width, with attributes. */
static void put(int y, int x, attr_t attr, const char *text)
{
	if (y >= LINES || x >= COLS)
		return;
	attron(attr);
	mvaddnstr(y, x, text, COLS - x);
	attroff(attr);
}

static attr_t pair(const struct tui *t, int p)
{
	return t->colors ? COLOR_PAIR(p) : A_NORMAL;
}

/* A full-width bar: the text, padded with spaces. */
static void bar(struct tui *t, int y, int p, const char *text)
{
	attr_t a = t->colors ? COLOR_PAIR(p) : A_REVERSE;

	attron(a);
	mvhline(y, 0, ' ', COLS);
	attroff(a);
	put(y, 0, a, text);
}

static void draw_header(struct tui *t, const struct tui_status *st, const struct tui_view *v)
{
	char line[512], stall[96], shares[64], a[32], b[32];
	const char *mode = st->mode ? st->mode : "?";

	snprintf(line, sizeof(line),
		 " srvscope top - pid %d (%s)   threads %u   mode %s   samples %u   every %ld ms%s",
		 st->pid, st->comm ? st->comm : "?", st->threads, mode, st->samples,
		 st->interval_ms, st->paused ? "   [PAUSED]" : "");
	bar(t, 0, PAIR_HEAD, line);

	if (!strcmp(mode, "nostop") && !st->stall_ns)
		snprintf(stall, sizeof(stall), "0 (never stopped)");
	else
		snprintf(stall, sizeof(stall), "%s (max %s/thread)",
			 fmt_ns(st->stall_ns, a, sizeof(a)),
			 fmt_ns(st->stall_max_ns, b, sizeof(b)));
	if (v->cumulative)
		snprintf(shares, sizeof(shares), "cumulative over %u sample%s", st->cum_samples,
			 st->cum_samples == 1 ? "" : "s");
	else
		snprintf(shares, sizeof(shares), "last sample");
	snprintf(line, sizeof(line),
		 " sample %s  capture %s  stall %s   shares: %s   view: %s   kernel: %s",
		 fmt_ns(st->sample_ns, a, sizeof(a)), fmt_ns(st->capture_ns, b, sizeof(b)), stall,
		 shares, v->per_thread ? "threads" : "stacks",
		 v->show_kernel ? "shown" : (st->kernel_captured ? "hidden" : "off"));
	put(1, 0, A_NORMAL, line);

	if (v->editing_filter) {
		snprintf(line, sizeof(line), " filter: %s_   (Enter keeps, Esc clears)", v->filter);
		put(2, 0, A_BOLD, line);
	} else if (v->filter[0]) {
		snprintf(line, sizeof(line), " filter: %s   (%zu match; Esc clears)", v->filter,
			 v->nr_items);
		put(2, 0, A_BOLD, line);
	} else if (st->message) {
		snprintf(line, sizeof(line), " %s", st->message);
		put(2, 0, A_BOLD, line);
	}
	if (v->per_thread)
		bar(t, 3, PAIR_TITLE, "    SHARE     TID  STATE               THREAD / FRAMES");
	else
		bar(t, 3, PAIR_TITLE, "    SHARE  THRDS  STATE               THREADS / FRAMES");
}

/* "fix-sleep x4, fix-main": the group's thread names, each once, in order. */
static void names_summary(const struct stack_group *g, char *buf, size_t len)
{
	size_t i, j, off = 0;

	buf[0] = '\0';
	for (i = 0; i < g->nr_threads && off + 1 < len; i++) {
		unsigned int n = 0;

		for (j = 0; j < i; j++)
			if (!strcmp(g->threads[j].name, g->threads[i].name))
				break;
		if (j < i)
			continue;
		for (j = i; j < g->nr_threads; j++)
			n += !strcmp(g->threads[j].name, g->threads[i].name);
		if (n > 1)
			off += snprintf(buf + off, len - off, "%s%s x%u", off ? ", " : "",
					g->threads[i].name, n);
		else
			off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
					g->threads[i].name);
	}
}

/* Where a collapsed item is: its innermost user frames, "a < b < c". */
static void frames_summary(const struct stack_group *g, char *buf, size_t len)
{
	char name[256];
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < g->nr_frames && off + 4 < len; i++) {
		if (g->frames[i].kernel)
			continue;
		off += snprintf(buf + off, len - off, "%s%s", off ? " < " : "",
				frame__name(&g->frames[i], name, sizeof(name)));
	}
}

static void draw_item_header(struct tui *t, int y, const struct tui_item *it, bool selected)
{
	const struct group_thread *gt = it->thread ? it->thread : &it->group->threads[0];
	char line[1024], state[64], names[512], where[512] = "";
	attr_t a = selected ? A_REVERSE : A_NORMAL;

	frame__thread_state(gt->state, gt->syscall, state, sizeof(state));
	if (it->thread)
		snprintf(names, sizeof(names), "%s", gt->name);
	else
		names_summary(it->group, names, sizeof(names));
	if (!it->expanded)
		frames_summary(it->group, where, sizeof(where));
	snprintf(line, sizeof(line), " %c %6.1f%% %6d  %-18.18s  %s%s%s", it->expanded ? '-' : '+',
		 it->share, it->thread ? gt->tid : (int)it->group->nr_threads, state, names,
		 where[0] ? "  | " : "", where);
	if (selected) {
		attron(a);
		mvhline(y, 0, ' ', COLS);
		attroff(a);
	}
	put(y, 0, a | A_BOLD, line);
	if (!selected && t->colors && it->share >= 50.0)
		mvchgat(y, 3, 8, A_BOLD, PAIR_HOT, NULL);
}

static void draw_frame(struct tui *t, int y, const struct tui_item *it, int i)
{
	const struct frame *f = &it->group->frames[i];
	char line[1024], name[512];
	const char *mod = frame__module_base(f);
	int x, modlen = (int)strlen(mod);

	frame__name(f, name, sizeof(name));
	snprintf(line, sizeof(line), "%*s#%-2d %s%s", FRAME_INDENT, "", i, f->kernel ? "[k] " : "",
		 name);
	put(y, 0, f->kernel ? pair(t, PAIR_KERNEL) : A_NORMAL, line);
	x = COLS - modlen - 1;
	if (x > (int)strlen(line) + 2 && f->symbol)
		put(y, x, pair(t, PAIR_MODULE), mod);
}

void tui__draw(struct tui *t, const struct tui_status *st, struct tui_view *v)
{
	int body = LINES - HEADER_LINES - 1;

	erase();
	draw_header(t, st, v);
	if (body > 0) {
		size_t r;
		int y;

		tui_view__scroll(v, (size_t)body);
		for (r = v->top, y = HEADER_LINES; r < v->nr_rows && y < HEADER_LINES + body;
		     r++, y++) {
			const struct tui_row *row = &v->rows[r];
			const struct tui_item *it = &v->items[row->item];

			if (row->frame < 0)
				draw_item_header(t, y, it, row->item == v->selected);
			else
				draw_frame(t, y, it, row->frame);
		}
		if (!v->nr_items)
			put(HEADER_LINES, 2, A_DIM,
			    v->filter[0] ? "(nothing matches the filter)" : "(no sample yet)");
	}
	bar(t, LINES - 1, PAIR_HELP,
	    " q quit  space pause  t threads  k kernel  c cumulative  / filter"
	    "  arrows select  Enter expand");
	refresh();
}

int tui__getkey(struct tui *t, int timeout_ms)
{
	int ch;

	timeout(timeout_ms < 0 ? 0 : timeout_ms);
	ch = getch();
	return ch == ERR ? -1 : ch;
}

static enum tui_action filter_key(struct tui_view *v, int key)
{
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		tui_view__filter_done(v, true);
		return TUI_REBUILD;
	case 27: /* Esc */
		tui_view__filter_done(v, false);
		return TUI_REBUILD;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		tui_view__filter_backspace(v);
		return TUI_REBUILD;
	case KEY_RESIZE:
		return TUI_REDRAW;
	}
	tui_view__filter_add(v, key);
	return TUI_REBUILD;
}

enum tui_action tui__key(struct tui *t, struct tui_view *v, int key)
{
	long page = LINES > HEADER_LINES + 3 ? (LINES - HEADER_LINES - 1) / 2 : 1;

	if (v->editing_filter)
		return filter_key(v, key);
	switch (key) {
	case 'q':
	case 'Q':
		return TUI_QUIT;
	case ' ':
		return TUI_PAUSE;
	case 't':
		v->per_thread = !v->per_thread;
		v->top = 0;
		return TUI_REBUILD;
	case 'k':
		v->show_kernel = !v->show_kernel;
		return TUI_KERNEL;
	case 'c':
		v->cumulative = !v->cumulative;
		return TUI_CUMULATIVE;
	case '/':
		v->editing_filter = true;
		return TUI_REDRAW;
	case 27:
		if (!v->filter[0])
			return TUI_NONE;
		tui_view__filter_done(v, false);
		return TUI_REBUILD;
	case KEY_UP:
		tui_view__move(v, -1);
		return TUI_REDRAW;
	case KEY_DOWN:
		tui_view__move(v, 1);
		return TUI_REDRAW;
	case KEY_PPAGE:
		tui_view__move(v, -page);
		return TUI_REDRAW;
	case KEY_NPAGE:
		tui_view__move(v, page);
		return TUI_REDRAW;
	case KEY_HOME:
		tui_view__select_first(v);
		return TUI_REDRAW;
	case KEY_END:
		tui_view__select_last(v);
		return TUI_REDRAW;
	case '\n':
	case '\r':
	case KEY_ENTER:
		tui_view__expand(v, -1);
		return TUI_REDRAW;
	case KEY_RIGHT:
	case '+':
		tui_view__expand(v, 1);
		return TUI_REDRAW;
	case KEY_LEFT:
	case '-':
		tui_view__expand(v, 0);
		return TUI_REDRAW;
	case '*':
		tui_view__expand_all(v, true);
		return TUI_REDRAW;
	case '_':
		tui_view__expand_all(v, false);
		return TUI_REDRAW;
	case KEY_RESIZE:
	case 12: /* ^L */
		clearok(curscr, TRUE);
		return TUI_REDRAW;
	}
	return TUI_NONE;
}
