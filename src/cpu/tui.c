/* The live view of 'srvscope cpu' on a terminal, like perf top: every interval, the
 * interval's profile as functions (self and total %, [k] or [.], module; Enter shows the
 * call paths of the selected one), components, threads or cores. The terminal is taken
 * and given back by output/tui.c. */
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "output/tui.h"
#include "topology/topology.h"
#include "util/escape.h"
#include "util/util.h"

enum view { V_FUNCS, V_COMPS, V_THREADS, V_CORES };

struct live {
	struct cpu_profile *p;
	const struct comp_table *t;
	struct topo *topo;
	enum view view;
	bool inclusive;
	int sel, top;	     /* selected row, first row shown */
	uint32_t sel_func;   /* the function selected, kept across refreshes */
	uint32_t expanded;   /* function whose call paths are shown, or UINT32_MAX */
	char **lines;	     /* the view's rows */
	uint32_t *line_func; /* the function of each row (UINT32_MAX: none) */
	size_t nr, cap, cap_f;
	long interval_ms, snapshots;
};

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * a / b : 0;
}

static void add_line(struct live *l, uint32_t func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_line(struct live *l, uint32_t func, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	xgrow((void **)&l->lines, &l->cap, l->nr + 1, sizeof(char *));
	xgrow((void **)&l->line_func, &l->cap_f, l->nr + 1, sizeof(uint32_t));
	l->lines[l->nr] = xstrdup(buf);
	l->line_func[l->nr++] = func;
}

static void clear_lines(struct live *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		free(l->lines[i]);
	l->nr = 0;
}

static const char *base(const char *m)
{
	const char *s = strrchr(m, '/');

	return s ? s + 1 : m;
}

/* The heaviest call paths through func: from it out to the thread's outermost frame. */
static void call_paths(struct live *l, uint32_t func)
{
	const struct cpu_profile *p = l->p;
	struct u64map seen = {0};
	uint64_t *w = NULL;
	size_t *idx = NULL, n = 0, i, k;
	char b[512];

	for (i = 0; i < p->nr_stacks; i++) {
		const struct cpu_stack *s = &p->stacks[i];
		uint64_t h = FNV1A_INIT, *slot;
		bool created;
		uint32_t j;

		for (j = 0; j < s->nr && s->frames[j] != func; j++)
			;
		if (j == s->nr)
			continue;
		h = fnv1a(s->frames + j, (s->nr - j) * sizeof(uint32_t), h);
		slot = u64map__slot(&seen, h, &created);
		if (created) {
			idx = xrealloc(idx, (n + 1) * sizeof(*idx));
			w = xrealloc(w, (n + 1) * sizeof(*w));
			idx[n] = i;
			w[n] = 0;
			*slot = n++;
		}
		w[*slot] += s->count;
	}
	for (k = 0; k < 5 && k < n; k++) {
		size_t best = k;
		const struct cpu_stack *s;
		uint32_t j;
		size_t len = 0;

		for (i = k + 1; i < n; i++)
			if (w[i] > w[best])
				best = i;
		if (best != k) {
			uint64_t tw = w[k];
			size_t ti = idx[k];

			w[k] = w[best], idx[k] = idx[best];
			w[best] = tw, idx[best] = ti;
		}
		s = &p->stacks[idx[k]];
		for (j = 0; j < s->nr && s->frames[j] != func; j++)
			;
		b[0] = 0;
		for (j++; j < s->nr && len < sizeof(b) - 80; j++) {
			char e[256];

			len += snprintf(b + len, sizeof(b) - len, " <- %s",
					name_shown(p->funcs[s->frames[j]].name, e, sizeof(e)));
		}
		add_line(l, UINT32_MAX, "        %5.1f%% %s", pct(w[k], p->samples), b);
	}
	free(w);
	free(idx);
	u64map__free(&seen);
}

static void build(struct live *l)
{
	const struct cpu_profile *p = l->p;
	char b1[256], b2[256];
	size_t i, nr;
	int c;

	clear_lines(l);
	if (l->view == V_FUNCS) {
		struct cpu_func_row *rows = cpu_profile__functions(p, &nr);

		for (i = 0; i < nr; i++) {
			const struct cpu_func *f = &p->funcs[rows[i].func];

			add_line(l, rows[i].func, "%c %6.2f %6.2f  %s %-20.20s %-14s %s",
				 l->expanded == rows[i].func ? '-' : '+',
				 pct(rows[i].self, p->samples), pct(rows[i].total, p->samples),
				 f->kernel ? "[k]" : "[.]",
				 name_shown(base(f->module), b1, sizeof(b1)),
				 f->comp >= 0 ? comp_table__name(l->t, f->comp) : "",
				 name_shown(f->name, b2, sizeof(b2)));
			if (l->expanded == rows[i].func)
				call_paths(l, rows[i].func);
		}
		free(rows);
	} else if (l->view == V_COMPS) {
		struct cpu_comp_share cs;

		cpu_profile__components(p, l->t, l->inclusive, NULL, NULL, &cs);
		for (i = 0; i <= comp_table__nr(l->t); i++) {
			uint64_t v = i < comp_table__nr(l->t) ? cs.per_comp[i] : cs.unmatched;

			add_line(l, UINT32_MAX, "  %-14s %6.2f %%  %8llu",
				 i < comp_table__nr(l->t) ? comp_table__name(l->t, i) : "unmatched",
				 pct(v, cs.kernel_total), (unsigned long long)v);
		}
		for (i = 0; i < cs.nr_unmatched; i++)
			if (pct(cs.unmatched_counts[i], cs.kernel_total) >= 0.1)
				add_line(l, UINT32_MAX, "    unmatched %6.2f %%  %s",
					 pct(cs.unmatched_counts[i], cs.kernel_total),
					 name_shown(p->funcs[cs.unmatched_funcs[i]].name, b1,
						    sizeof(b1)));
		cpu_comp_share__free(&cs);
	} else if (l->view == V_THREADS) {
		long hz = sysconf(_SC_CLK_TCK);
		double secs = p->duration_ns / 1e9;

		for (i = 0; i < p->nr_threads; i++) {
			const struct cpu_thread *th = &p->threads[i];

			if (!th->samples && !(th->utime + th->stime))
				continue;
			add_line(l, UINT32_MAX,
				 "%7d %7d %-16s %6.1f %6.1f %6.1f %5c %4d %7llu %7llu %7llu",
				 th->pid, th->tid, name_shown(th->comm, b1, sizeof(b1)),
				 secs ? 100.0 * (th->utime + th->stime) / hz / secs : 0,
				 secs ? 100.0 * th->utime / hz / secs : 0,
				 secs ? 100.0 * th->stime / hz / secs : 0,
				 th->state ? th->state : '?', th->last_cpu,
				 (unsigned long long)th->vcsw, (unsigned long long)th->ivcsw,
				 (unsigned long long)th->samples);
		}
	} else {
		for (c = 0; c < p->nr_cpus; c++) {
			const struct cpu_core *cr = &p->cores[c];
			uint64_t all = cr->user + cr->system + cr->idle + cr->other;
			struct topo_cpu tc = {-1, -1, -1, 1};

			if (l->topo)
				topo__cpu(l->topo, c, &tc);
			add_line(l, UINT32_MAX, "%4d %5d %7d %4d %6.1f %6.1f %6.1f %8llu", c,
				 tc.core, tc.package, tc.node, pct(cr->user, all),
				 pct(cr->system, all), pct(cr->idle, all),
				 (unsigned long long)cr->samples);
		}
	}
	if (l->view == V_FUNCS && l->sel_func != UINT32_MAX)
		for (i = 0; i < l->nr; i++)
			if (l->line_func[i] == l->sel_func) {
				l->sel = i;
				break;
			}
	if (l->sel >= (int)l->nr)
		l->sel = l->nr ? (int)l->nr - 1 : 0;
}

static const char *const titles[] = {
	"  SELF%  TOTAL%      MODULE               COMPONENT      FUNCTION",
	"  COMPONENT      SHARE OF KERNEL  SAMPLES",
	"    PID     TID COMM               CPU%  USER%   SYS% STATE LAST    VCSW   IVCSW SAMPLES",
	" CPU  CORE PACKAGE NODE  USER%   SYS%  IDLE%  SAMPLES",
};

static void draw(struct live *l)
{
	static const char *const names[] = {"functions", "components", "threads", "cores"};
	const struct cpu_profile *p = l->p;
	int rows = LINES - 3, i;

	erase();
	attron(A_REVERSE);
	mvprintw(0, 0,
		 "srvscope cpu - %llu samples (kernel %.1f%%) in %.2f s, %u Hz  view: %s%s  "
		 "snapshot %ld",
		 (unsigned long long)p->samples, pct(p->kernel_samples, p->samples),
		 p->duration_ns / 1e9, p->hz, names[l->view],
		 l->view == V_COMPS ? (l->inclusive ? " (inclusive)" : " (self)") : "",
		 l->snapshots);
	clrtoeol();
	attroff(A_REVERSE);
	attron(A_BOLD);
	mvprintw(1, 0, "%s", titles[l->view]);
	attroff(A_BOLD);
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + rows)
		l->top = l->sel - rows + 1;
	for (i = 0; i < rows && l->top + i < (int)l->nr; i++) {
		if (l->top + i == l->sel && l->view == V_FUNCS)
			attron(A_REVERSE);
		mvprintw(2 + i, 0, "%.*s", COLS, l->lines[l->top + i]);
		if (l->top + i == l->sel && l->view == V_FUNCS)
			attroff(A_REVERSE);
	}
	attron(A_REVERSE);
	mvprintw(LINES - 1, 0,
		 "f functions  c components  t threads  p cores  i inclusive  Enter call paths  "
		 "q quit");
	clrtoeol();
	attroff(A_REVERSE);
	refresh();
}

/* Applies a key; false to quit. */
static bool key(struct live *l, int k)
{
	switch (k) {
	case 'q':
	case 'Q':
		return false;
	case 'f':
		l->view = V_FUNCS;
		break;
	case 'c':
		l->view = V_COMPS;
		break;
	case 't':
		l->view = V_THREADS;
		break;
	case 'p':
		l->view = V_CORES;
		break;
	case 'i':
		l->inclusive = !l->inclusive;
		break;
	case KEY_UP:
		if (l->sel > 0)
			l->sel--;
		l->sel_func = UINT32_MAX;
		break;
	case KEY_DOWN:
		l->sel++;
		l->sel_func = UINT32_MAX;
		break;
	case KEY_NPAGE:
		l->sel += LINES - 3;
		l->sel_func = UINT32_MAX;
		break;
	case KEY_PPAGE:
		l->sel = l->sel > LINES - 3 ? l->sel - (LINES - 3) : 0;
		l->sel_func = UINT32_MAX;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (l->view == V_FUNCS && l->sel < (int)l->nr) {
			uint32_t f = l->line_func[l->sel];

			if (f != UINT32_MAX)
				l->expanded = l->expanded == f ? UINT32_MAX : f;
			l->sel_func = f;
		}
		break;
	default:
		return true;
	}
	build(l);
	if (l->view == V_FUNCS && l->sel_func == UINT32_MAX && l->sel < (int)l->nr)
		l->sel_func = l->line_func[l->sel]; /* moved: this one stays selected */
	draw(l);
	return true;
}

int cpu_tui__run(struct cpu_session *s, const struct comp_table *t, long interval_ms,
		 long iterations, bool inclusive, volatile sig_atomic_t *stop)
{
	struct live l = {.t = t,
			 .inclusive = inclusive,
			 .expanded = UINT32_MAX,
			 .sel_func = UINT32_MAX,
			 .interval_ms = interval_ms};
	struct tui *tui;
	size_t nr, i;
	const pid_t *targets = cpu_session__targets(s, &nr);
	int alive = 1;
	bool run = true;
	uint64_t t0;

	l.topo = topo__load();
	l.p = cpu_profile__new(cpu_session__nr_cpus(s));
	for (i = 0; i < nr; i++)
		cpu_proc__start(l.p, targets[i]);
	cpu_cores__read(l.p, true);
	tui = tui__open();
	if (!tui) {
		cpu_profile__delete(l.p);
		topo__delete(l.topo);
		return 1;
	}
	build(&l);
	draw(&l); /* the frame at once, the figures after the first interval */
	t0 = now_ns();
	while (run && !*stop && alive && (!iterations || l.snapshots < iterations)) {
		uint64_t end = t0 + interval_ms * 1000000ull;

		while (run && !*stop) {
			uint64_t now = now_ns();
			int k;

			if (now >= end)
				break;
			k = tui__getkey(tui, (int)((end - now) / 1000000) + 1);
			if (k >= 0)
				run = key(&l, k);
		}
		if (!run || *stop)
			break;
		cpu_profile__clear(l.p);
		alive = cpu_session__read(s, l.p, true);
		l.p->duration_ns = l.p->end_ns - t0;
		t0 = l.p->end_ns;
		cpu_profile__classify(l.p, t);
		l.snapshots++;
		build(&l);
		draw(&l);
		cpu_proc__rebase(l.p);
	}
	tui__close(tui);
	if (!alive)
		notice("the targets exited");
	clear_lines(&l);
	free(l.lines);
	free(l.line_func);
	cpu_profile__delete(l.p);
	topo__delete(l.topo);
	return 0;
}
