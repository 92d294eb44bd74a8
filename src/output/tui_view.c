/* The model behind 'srvscope top's screen: items and rows built from an aggregate, the
 * filter, collapsed items and the selection. No terminal here; tui.c draws it. */
#include <stdlib.h>
#include <string.h>

#include "output/tui_view.h"
#include "util/util.h"

void tui_view__init(struct tui_view *v)
{
	memset(v, 0, sizeof(*v));
}

void tui_view__fini(struct tui_view *v)
{
	free(v->items);
	free(v->rows);
	free(v->collapsed);
	memset(v, 0, sizeof(*v));
}

static bool contains(const char *hay, const char *needle)
{
	return hay && strcasestr(hay, needle);
}

bool tui_view__matches(const struct tui_view *v, const struct stack_group *g,
		       const struct group_thread *t)
{
	unsigned int i;

	if (!v->filter[0])
		return true;
	if (t) {
		if (contains(t->name, v->filter))
			return true;
	} else {
		for (i = 0; i < g->nr_threads; i++)
			if (contains(g->threads[i].name, v->filter))
				return true;
	}
	for (i = 0; i < g->nr_frames; i++)
		if (contains(g->frames[i].symbol, v->filter) ||
		    contains(g->frames[i].module, v->filter))
			return true;
	return false;
}

static bool is_collapsed(const struct tui_view *v, uint64_t key)
{
	size_t i;

	for (i = 0; i < v->nr_collapsed; i++)
		if (v->collapsed[i] == key)
			return true;
	return false;
}

static void set_collapsed(struct tui_view *v, uint64_t key, bool collapsed)
{
	size_t i;

	for (i = 0; i < v->nr_collapsed; i++) {
		if (v->collapsed[i] != key)
			continue;
		if (!collapsed)
			v->collapsed[i] = v->collapsed[--v->nr_collapsed];
		return;
	}
	if (!collapsed)
		return;
	xgrow((void **)&v->collapsed, &v->cap_collapsed, v->nr_collapsed + 1,
	      sizeof(*v->collapsed));
	v->collapsed[v->nr_collapsed++] = key;
}

static void add_row(struct tui_view *v, size_t item, int frame)
{
	xgrow((void **)&v->rows, &v->cap_rows, v->nr_rows + 1, sizeof(*v->rows));
	v->rows[v->nr_rows].item = item;
	v->rows[v->nr_rows].frame = frame;
	v->nr_rows++;
}

static void rebuild_rows(struct tui_view *v)
{
	size_t i;
	unsigned int f;

	v->nr_rows = 0;
	for (i = 0; i < v->nr_items; i++) {
		struct tui_item *it = &v->items[i];

		it->first_row = v->nr_rows;
		add_row(v, i, -1);
		if (it->expanded)
			for (f = 0; f < it->group->nr_frames; f++)
				add_row(v, i, (int)f);
	}
}

/* A thread's key mixes its tid into its group's, so one thread seen with two different
 * stacks over time gives two items. */
static uint64_t thread_key(const struct stack_group *g, const struct group_thread *t)
{
	return g->key ^ ((uint64_t)(uint32_t)t->tid * 0x9e3779b97f4a7c15ull);
}

static void add_item(struct tui_view *v, const struct stack_group *g, const struct group_thread *t)
{
	struct tui_item *it;

	xgrow((void **)&v->items, &v->cap_items, v->nr_items + 1, sizeof(*v->items));
	it = &v->items[v->nr_items++];
	memset(it, 0, sizeof(*it));
	it->group = g;
	it->thread = t;
	it->key = t ? thread_key(g, t) : g->key;
	it->count = t ? t->count : g->count;
	it->share = v->total ? 100.0 * it->count / v->total : 0;
	it->expanded = !is_collapsed(v, it->key);
}

static int cmp_thread_item(const void *a, const void *b)
{
	const struct tui_item *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->thread->tid - y->thread->tid;
}

void tui_view__build(struct tui_view *v, const struct stack_agg *agg)
{
	size_t i, j;

	v->nr_items = 0;
	v->total = 0;
	for (i = 0; i < agg->nr_groups; i++)
		v->total += agg->groups[i].count;
	for (i = 0; i < agg->nr_groups; i++) {
		const struct stack_group *g = &agg->groups[i];

		if (!v->per_thread) {
			if (tui_view__matches(v, g, NULL))
				add_item(v, g, NULL);
			continue;
		}
		for (j = 0; j < g->nr_threads; j++)
			if (tui_view__matches(v, g, &g->threads[j]))
				add_item(v, g, &g->threads[j]);
	}
	if (v->per_thread)
		qsort(v->items, v->nr_items, sizeof(*v->items), cmp_thread_item);
	rebuild_rows(v);

	/* Keep the selection on the same item; else keep its position. */
	if (v->have_selection)
		for (i = 0; i < v->nr_items; i++)
			if (v->items[i].key == v->selected_key) {
				v->selected = i;
				break;
			}
	if (v->selected >= v->nr_items)
		v->selected = v->nr_items ? v->nr_items - 1 : 0;
	v->have_selection = v->nr_items > 0;
	if (v->have_selection)
		v->selected_key = v->items[v->selected].key;
}

static void select_item(struct tui_view *v, size_t i)
{
	if (!v->nr_items)
		return;
	v->selected = i < v->nr_items ? i : v->nr_items - 1;
	v->selected_key = v->items[v->selected].key;
	v->have_selection = true;
}

void tui_view__move(struct tui_view *v, long delta)
{
	long i = (long)v->selected + delta;

	if (i < 0)
		i = 0;
	select_item(v, (size_t)i);
}

void tui_view__select_first(struct tui_view *v)
{
	select_item(v, 0);
}

void tui_view__select_last(struct tui_view *v)
{
	select_item(v, v->nr_items ? v->nr_items - 1 : 0);
}

void tui_view__expand(struct tui_view *v, int expand)
{
	struct tui_item *it;

	if (v->selected >= v->nr_items)
		return;
	it = &v->items[v->selected];
	it->expanded = expand < 0 ? !it->expanded : expand > 0;
	set_collapsed(v, it->key, !it->expanded);
	rebuild_rows(v);
}

void tui_view__expand_all(struct tui_view *v, bool expand)
{
	size_t i;

	for (i = 0; i < v->nr_items; i++) {
		v->items[i].expanded = expand;
		set_collapsed(v, v->items[i].key, !expand);
	}
	rebuild_rows(v);
}

void tui_view__scroll(struct tui_view *v, size_t height)
{
	const struct tui_item *it;
	size_t first, last;

	if (!height)
		return;
	if (!v->nr_items) {
		v->top = 0;
		return;
	}
	it = &v->items[v->selected];
	first = it->first_row;
	last = first + (it->expanded ? it->group->nr_frames : 0);
	/* Show the whole item when it fits, else at least its header. */
	if (last >= v->top + height)
		v->top = last - height + 1;
	if (first < v->top || last - first + 1 > height)
		v->top = first;
	if (v->nr_rows <= height)
		v->top = 0;
	else if (v->top > v->nr_rows - height)
		v->top = v->nr_rows - height;
}

void tui_view__filter_add(struct tui_view *v, int ch)
{
	size_t n = strlen(v->filter);

	if (ch < 0x20 || ch > 0x7e || n + 1 >= sizeof(v->filter))
		return;
	v->filter[n] = (char)ch;
	v->filter[n + 1] = '\0';
}

void tui_view__filter_backspace(struct tui_view *v)
{
	size_t n = strlen(v->filter);

	if (n)
		v->filter[n - 1] = '\0';
}

void tui_view__filter_done(struct tui_view *v, bool keep)
{
	v->editing_filter = false;
	if (!keep)
		v->filter[0] = '\0';
}
