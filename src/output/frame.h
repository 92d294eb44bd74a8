/* How a frame is named in every output: its symbol, or module+0xoffset when unknown. */
#ifndef SRVSCOPE_OUTPUT_FRAME_H
#define SRVSCOPE_OUTPUT_FRAME_H

#include <stddef.h>

#include "snapshot/snapshot.h"

/* The module's file name without its directory. */
const char *frame__module_base(const struct frame *f);
/* Writes the frame's display name into buf and returns buf. */
const char *frame__name(const struct frame *f, char *buf, size_t len);
/* A state letter and syscall as "S futex" / "R" for a thread line. */
const char *frame__thread_state(char state, long syscall, char *buf, size_t len);

#endif
