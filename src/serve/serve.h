/* srvscope serve: a long-running agent that records the served processes continuously
 * (the recorder's BPF programs, through a sink: no trace file) and answers over HTTP:
 * /metrics (Prometheus), /debug/pprof/profile and /debug/pprof/offcpu (pprof, as Parca,
 * Pyroscope and go tool pprof fetch them), /stacks (a nostop snapshot as JSON). Read-only;
 * loopback unless told otherwise; docs/serve.md. */
#ifndef SRVSCOPE_SERVE_SERVE_H
#define SRVSCOPE_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "serve/agg.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:6061"

struct serve_opts {
	const char *listen; /* "ADDR:PORT" or "[ADDR6]:PORT" */
	pid_t *pids;	    /* the served processes, with their descendants */
	size_t nr_pids;
	bool all;			/* every process */
	const char *token;		/* bearer token required when not NULL */
	unsigned int on_cpu_hz;		/* 0: no on-CPU samples, /debug/pprof/profile refused */
	unsigned int max_seconds;	/* the longest profile a request may ask for */
	unsigned int max_profiles;	/* profile and /stacks requests at once */
	unsigned int max_connections;	/* connections at once */
	uint64_t buffer_size;		/* the recorder's ring buffer */
	unsigned int ustack_dump_bytes; /* --call-graph=dwarf: user stack bytes; 0: fp */
	struct serve_limits limits;
	bool verbose;
};

/* Serves until SIGTERM, SIGINT or SIGHUP (or every served process is gone). Errors are
 * reported on stderr. Returns 0 or -errno. */
int serve__run(const struct serve_opts *o);

#endif
