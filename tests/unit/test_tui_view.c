/* The model behind 'srvscope top's screen, on hand-made snapshots: shares, the per-thread
 * view, the filter, collapsing, selection kept across refreshes, scrolling. */
#include <stdlib.h>
#include <string.h>

#include "analysis/aggregate.h"
#include "output/tui_view.h"
#include "snapshot/snapshot.h"
#include "unit.h"

static void add(struct snapshot *snap, pid_t tid, const char *name, const char **syms,
		unsigned int n)
{
	struct thread_sample *t = snapshot__add_thread(snap);
	unsigned int i;

	t->tid = tid;
	strcpy(t->name, name);
	t->state = 'S';
	t->syscall = 202;
	t->frames = calloc(n, sizeof(*t->frames));
	for (i = 0; i < n; i++) {
		t->frames[i].addr = 0x1000 + i;
		t->frames[i].symbol = syms[i];
		t->frames[i].module = "/usr/bin/fix";
	}
	t->nr_frames = n;
}

static const char *lock[] = {"futex_wait", "lock", "worker", "start_thread"};
static const char *io[] = {"read", "io_loop", "io_thread", "start_thread"};
static const char *spin[] = {"spin", "main"};

/* Four workers in lock, two io threads, main spinning; or, swapped, more io threads. */
static struct stack_agg *agg_of(bool more_io)
{
	struct snapshot *s = snapshot__new(42);
	struct stack_agg *agg = stack_agg__new(false);
	int i;

	strcpy(s->comm, "fix");
	for (i = 0; i < 4; i++)
		add(s, 50 + i, "worker", more_io && i < 3 ? io : lock, 4);
	add(s, 60, "io", io, 4);
	add(s, 61, "io", io, 4);
	add(s, 42, "fix", spin, 2);
	stack_agg__add(agg, s);
	stack_agg__sort(agg);
	snapshot__delete(s);
	return agg;
}

int main(void)
{
	struct stack_agg *a1 = agg_of(false), *a2 = agg_of(true);
	struct tui_view v;
	double sum = 0;
	size_t i;

	tui_view__init(&v);
	tui_view__build(&v, a1);
	is_int(v.nr_items, 3, "three groups");
	is_int(v.total, 7, "seven thread-samples");
	is_int(v.items[0].count, 4, "largest group first");
	for (i = 0; i < v.nr_items; i++)
		sum += v.items[i].share;
	ok(sum > 99.9 && sum < 100.1, "shares add up to 100%% (%.2f)", sum);
	ok(v.items[0].share > 57.1 && v.items[0].share < 57.2, "4 of 7 is 57.1%%");
	is_int(v.nr_rows, 3 + 4 + 4 + 2, "every item expanded by default: headers + frames");
	is_int(v.rows[1].frame, 0, "first frame row follows its header");

	/* Collapse the first group; it stays collapsed after a refresh. */
	tui_view__expand(&v, 0);
	is_int(v.nr_rows, 3 + 4 + 2, "collapsed item shows only its header");
	tui_view__build(&v, a1);
	ok(!v.items[0].expanded, "collapsed item stays collapsed across refreshes");
	tui_view__expand(&v, -1);
	ok(v.items[0].expanded, "Enter expands it again");

	/* Selection follows its item when the order changes. */
	tui_view__move(&v, 1);
	is_str(v.items[v.selected].group->frames[0].symbol, "read", "second item is the io group");
	tui_view__build(&v, a2);
	is_str(v.items[v.selected].group->frames[0].symbol, "read",
	       "selection stays on the io group after it moved");
	is_int(v.selected, 0, "which is now first");
	tui_view__move(&v, -5);
	is_int(v.selected, 0, "moving up stops at the first item");
	tui_view__move(&v, 50);
	is_int(v.selected, 2, "moving down stops at the last item");

	/* Filters: by thread name, by frame, case-insensitive; nothing. */
	strcpy(v.filter, "IO");
	tui_view__build(&v, a1);
	is_int(v.nr_items, 1, "filter 'IO' keeps the group with io threads and io_loop");
	strcpy(v.filter, "futex");
	tui_view__build(&v, a1);
	is_int(v.nr_items, 1, "filter by a frame name");
	is_str(v.items[0].group->frames[0].symbol, "futex_wait", "the lock group");
	ok(v.items[0].share > 57.1 && v.items[0].share < 57.2,
	   "shares stay relative to all threads");
	strcpy(v.filter, "nothing-like-this");
	tui_view__build(&v, a1);
	is_int(v.nr_items, 0, "a filter matching nothing leaves no item");
	tui_view__filter_done(&v, false);
	is_str(v.filter, "", "Esc clears the filter");
	tui_view__filter_add(&v, 's');
	tui_view__filter_add(&v, 'p');
	tui_view__filter_add(&v, '\n');
	is_str(v.filter, "sp", "typed characters go to the filter, control ones do not");
	tui_view__filter_backspace(&v);
	is_str(v.filter, "s", "backspace");
	v.filter[0] = '\0';

	/* Per-thread view: one item per thread, largest count then tid. */
	v.per_thread = true;
	tui_view__build(&v, a1);
	is_int(v.nr_items, 7, "per-thread view: seven threads");
	is_int(v.items[0].thread->tid, 42, "equal counts sort by tid");
	ok(v.items[0].share > 14.2 && v.items[0].share < 14.3, "one thread of seven is 14.3%%");

	/* Scrolling keeps the selected item on screen. */
	v.per_thread = false;
	tui_view__build(&v, a1);
	tui_view__expand_all(&v, true);
	tui_view__select_last(&v);
	tui_view__scroll(&v, 5);
	ok(v.items[v.selected].first_row >= v.top && v.items[v.selected].first_row < v.top + 5,
	   "the last item's header is within the 5 visible rows (top %zu)", v.top);
	tui_view__select_first(&v);
	tui_view__scroll(&v, 5);
	is_int(v.top, 0, "back at the top");

	tui_view__fini(&v);
	stack_agg__delete(a1);
	stack_agg__delete(a2);
	return done_testing();
}
