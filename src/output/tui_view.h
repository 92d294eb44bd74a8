/* What 'srvscope top' shows, apart from drawing it: the items (stack groups, or threads in
 * the per-thread view) with their shares, the filter, which items are collapsed, the
 * selection and scrolling. Pure functions over an aggregate, so tests need no terminal. */
#ifndef SRVSCOPE_OUTPUT_TUI_VIEW_H
#define SRVSCOPE_OUTPUT_TUI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/aggregate.h"

/* One selectable entry: a group, or one thread of a group in the per-thread view. */
struct tui_item {
	const struct stack_group *group;
	const struct group_thread *thread; /* per-thread view only */
	uint64_t key;			   /* identifies the item across refreshes */
	unsigned int count;		   /* thread-samples */
	double share;			   /* percent of all thread-samples */
	bool expanded;
	size_t first_row; /* its header row in rows[] */
};

/* One screen line: an item's header (frame < 0) or one of its frames. */
struct tui_row {
	size_t item;
	int frame; /* index in the group's frames, or -1 for the header */
};

struct tui_view {
	/* What the user chose. */
	bool per_thread;
	bool show_kernel;
	bool cumulative;
	char filter[64];
	bool editing_filter; /* '/' typed: keys go to the filter */
	size_t selected;     /* item index */
	size_t top;	     /* first row on screen */

	/* Built by tui_view__build from an aggregate (which must outlive the next build). */
	struct tui_item *items;
	size_t nr_items, cap_items;
	struct tui_row *rows;
	size_t nr_rows, cap_rows;
	unsigned int total; /* thread-samples in the aggregate */

	/* Items the user collapsed (keys): everything else shows its frames. */
	uint64_t *collapsed;
	size_t nr_collapsed, cap_collapsed;
	uint64_t selected_key;
	bool have_selection;
};

void tui_view__init(struct tui_view *v);
void tui_view__fini(struct tui_view *v);
/* Rebuilds items and rows from agg (sorted), applying the filter and the collapsed set;
 * keeps the selection on the same item when it is still there. */
void tui_view__build(struct tui_view *v, const struct stack_agg *agg);
/* Whether an item passes the filter: a thread name or a frame containing it. */
bool tui_view__matches(const struct tui_view *v, const struct stack_group *g,
		       const struct group_thread *t);

/* Moves the selection by delta items (clamped). */
void tui_view__move(struct tui_view *v, long delta);
void tui_view__select_first(struct tui_view *v);
void tui_view__select_last(struct tui_view *v);
/* Collapses or expands the selected item (Enter); expand < 0 toggles. Rebuilds rows. */
void tui_view__expand(struct tui_view *v, int expand);
/* Expands or collapses every item. */
void tui_view__expand_all(struct tui_view *v, bool expand);
/* Scrolls so that the selected item's header (and as much of it as fits) is within the
 * height rows on screen. */
void tui_view__scroll(struct tui_view *v, size_t height);

/* Filter editing: a printable character, backspace, or the end of editing. */
void tui_view__filter_add(struct tui_view *v, int ch);
void tui_view__filter_backspace(struct tui_view *v);
void tui_view__filter_done(struct tui_view *v, bool keep);

#endif
