/* JIT symbol maps, /tmp/perf-PID.map: one "START SIZE name" line (hex numbers) per piece
 * of generated code, written by V8, the JVM's perf agents, LuaJIT, .NET... Internal to
 * src/symbol, declared here for the symbolizer and the fuzz target. */
#ifndef SRVSCOPE_SYMBOL_PERFMAP_H
#define SRVSCOPE_SYMBOL_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;

/* Parses map text (copied). Malformed lines are skipped; never fails. */
struct perfmap *perfmap__parse(const char *text, size_t len);
/* Reads and parses the file at path. NULL with errno when it cannot be read. */
struct perfmap *perfmap__load(const char *path);
/* Accepts NULL. */
void perfmap__delete(struct perfmap *pm);
size_t perfmap__nr(const struct perfmap *pm);

/* Name of the code covering addr (the latest line wins where entries overlap, as code
 * is re-generated at old addresses) and the offset into it; NULL if none. */
const char *perfmap__find(struct perfmap *pm, uint64_t addr, uint64_t *offset);

#endif
