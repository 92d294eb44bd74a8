/* Fuzz target: the trace file reader (header, sections, truncated tails, compressed
 * sections), then every report's analysis over whatever it accepted. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/blocking.h"
#include "analysis/flame.h"
#include "analysis/sched.h"
#include "trace/trace.h"

static const char *fake_user(void *ctx, uint32_t pid, uint64_t ts, uint64_t addr)
{
	return (addr & 1) ? "odd;name" : "even";
}

static const char *fake_kernel(void *ctx, uint64_t addr)
{
	return (addr & 2) ? "bpf_prog_x" : "asm_sysvec";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flame_namer n = { .user = fake_user, .kernel = fake_kernel };
	struct sched_report sr;
	struct block_report br;
	struct flame fl;
	struct trace *t;
	char err[256], buf[512];
	size_t i;

	t = trace__open_mem(data, size, err, sizeof(err));
	if (!t)
		return 0;
	for (i = 0; i < t->nr_ev; i++) {
		trace__thread(t, t->ev[i]->h.tid);
		trace__stack(t, t->ev[i]->sw.kstack);
		trace__fd_desc(t, t->ev[i]->h.pid, t->ev[i]->sw.fd, t->ev[i]->h.ts);
		trace__maps(t, t->ev[i]->h.pid, t->ev[i]->h.ts);
		if (i < 16) /* walks every section: a few are enough */
			trace__title(t, t->ev[i]->h.pid, buf, sizeof(buf));
	}
	trace__lost_summary(t, buf, sizeof(buf));
	sched__analyze(t, &sr);
	sched_report__free(&sr);
	blocking__analyze(t, NULL, &br);
	block_report__free(&br);
	for (i = 0; i < 3; i++) {
		flame__build(t, (enum flame_kind)i, NULL, &n, &fl);
		flame__free(&fl);
	}
	trace__close(t);
	return 0;
}
