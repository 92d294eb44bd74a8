/* Process titles in a trace (the title section): each process's title is found by pid,
 * whatever sections lie between, of any length up to the writer's limit; a process
 * without one has none; a long one is cut to the caller's buffer. */
#include "rec_build.h"
#include "unit.h"

static void title(struct tb *b, uint32_t pid, const char *text)
{
	struct {
		uint64_t ts;
		uint32_t pid, len;
		char text[256];
	} sec = {.ts = 5, .pid = pid, .len = strlen(text)};

	memcpy(sec.text, text, sec.len);
	trace_writer__section(b->w, SEC_TITLE, &sec, 16 + sec.len);
}

int main(void)
{
	struct trace *t;
	struct tb b;
	char buf[256], small[8];
	uint64_t ips[2] = {0x1000, 0x2000};

	tb_open(&b);
	title(&b, 10, "postgres: walwriter");
	trace_writer__add_stack(b.w, 1, true, ips, 2);
	trace_writer__section(b.w, 99, "a section from a newer writer", 29);
	title(&b, 11, "postgres: checkpointer");
	title(&b, 12, "");
	t = tb_read(&b, 100);
	ok(t != NULL, "the trace reads");
	is_str(trace__title(t, 10, buf, sizeof(buf)), "postgres: walwriter", "pid 10");
	is_str(trace__title(t, 11, buf, sizeof(buf)), "postgres: checkpointer",
	       "pid 11, after a stack and an unknown section");
	is_str(trace__title(t, 12, buf, sizeof(buf)), "", "an empty title");
	ok(trace__title(t, 13, buf, sizeof(buf)) == NULL, "no title for pid 13");
	is_str(trace__title(t, 10, small, sizeof(small)), "postgre", "cut to the buffer");
	ok(trace__stack(t, 1) != NULL, "the stack section is still read");
	trace__close(t);
	return done_testing();
}
