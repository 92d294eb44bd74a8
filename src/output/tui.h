/* The full-screen view of 'srvscope top', drawn with ncurses: a header about the sampling,
 * then the items of a tui_view. Owns the terminal from tui__open to tui__close, which
 * restores it; stderr is held back meanwhile and replayed after. */
#ifndef SRVSCOPE_OUTPUT_TUI_H
#define SRVSCOPE_OUTPUT_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "output/tui_view.h"

/* What the header says about the target and the sampling. */
struct tui_status {
	pid_t pid;
	const char *comm;
	const char *mode;	  /* "ptrace" or "nostop" */
	unsigned int threads;	  /* in the latest sample */
	unsigned int samples;	  /* taken so far */
	unsigned int cum_samples; /* in the cumulative aggregate */
	uint64_t capture_ns;	  /* latest sample: time spent capturing */
	uint64_t sample_ns;	  /* latest sample: capture + unwind + symbols */
	uint64_t stall_ns;	  /* latest sample: total time threads were stopped */
	uint64_t stall_max_ns;	  /* latest sample: longest stop of one thread */
	long interval_ms;
	bool paused;
	bool kernel_captured;
	const char *message; /* a one-line notice, or NULL */
};

enum tui_action {
	TUI_NONE,
	TUI_REDRAW,    /* only the screen changed */
	TUI_REBUILD,   /* the view must be rebuilt from the aggregate (filter, view kind) */
	TUI_QUIT,      /* q */
	TUI_PAUSE,     /* space */
	TUI_KERNEL,    /* k: show_kernel toggled */
	TUI_CUMULATIVE /* c: cumulative toggled */
};

struct tui;

/* Takes over the terminal (stdin/stdout). NULL after an error message if it cannot. */
struct tui *tui__open(void);
/* Gives the terminal back as it was and prints what went to stderr meanwhile. Accepts
 * NULL; safe to call twice. */
void tui__close(struct tui *t);
void tui__draw(struct tui *t, const struct tui_status *st, struct tui_view *v);
/* Waits up to timeout_ms for a key; -1 when none (or a signal came). */
int tui__getkey(struct tui *t, int timeout_ms);
/* Applies one key to the view and says what the caller must do. */
enum tui_action tui__key(struct tui *t, struct tui_view *v, int key);

#endif
