/* A self-contained interactive SVG flame graph from folded stacks ("root;...;leaf" and a
 * weight): frames are laid out by srvscope; a small script of our own, embedded in the SVG,
 * zooms into a frame on click and highlights the frames matching a search. */
#ifndef SRVSCOPE_OUTPUT_FLAMEGRAPH_H
#define SRVSCOPE_OUTPUT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flamegraph_entry {
	const char *stack; /* frames separated by ';', root first */
	uint64_t weight;
};

struct flamegraph_opts {
	const char *title;
	const char *subtitle; /* may be NULL */
	const char *unit;     /* of the weights, e.g. "us" or "samples" */
	unsigned int width;   /* pixels; 0: 1200 */
};

/* Writes the SVG document. Frames after a "--" frame are drawn in cool colours (the waker
 * side of a wake-up graph), kernel frames ("_[k]") in orange. Returns 0 or -errno. */
int flamegraph__write_svg(FILE *f, const struct flamegraph_entry *e, size_t n,
			  const struct flamegraph_opts *o);

#endif
