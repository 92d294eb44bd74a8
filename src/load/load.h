/* Built-in open-loop load clients (memcached text, redis RESP, HTTP/1.1) and external load
 * commands, for `srvscope model`, `srvscope clone --check` and `srvscope load`. Open loop:
 * requests are sent on a schedule at the target rate whatever the server's latency, and a
 * request's latency counts from its scheduled send time (no coordinated omission). */
#ifndef SRVSCOPE_LOAD_LOAD_H
#define SRVSCOPE_LOAD_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum load_proto {
	LOAD_MEMCACHED = 1, /* memcached://HOST:PORT: text get/set */
	LOAD_REDIS = 2,	    /* redis://HOST:PORT: RESP GET/SET */
	LOAD_HTTP = 3,	    /* http://HOST:PORT/PATH: HTTP/1.1 GET */
};

struct load_target {
	enum load_proto proto;
	char host[256];
	uint16_t port;
	char path[1024]; /* HTTP only; "/" when none */
};

struct load_spec {
	struct load_target target;
	unsigned conns;	     /* connections open at once */
	double rate;	     /* requests per second in total; 0: as fast as the server answers */
	double duration_s;   /* seconds of load */
	double reconnect_s;  /* each connection is closed and opened anew after this many seconds
			      * (so the server keeps accepting); 0: never */
	bool keepalive;	     /* HTTP: keep-alive (else one request per connection) */
	unsigned value_size; /* memcached/redis: bytes of each stored value */
	double set_share;    /* memcached/redis: share of requests that are sets (rest gets) */
	unsigned keys;	     /* memcached/redis: distinct keys */
	/* Added after the first contract (zero is the default for each): */
	bool poisson;	  /* exponential gaps between arrivals (else evenly spaced) */
	unsigned threads; /* client threads, 1 or 2; 0: 2 for rate 0 or above 40000/s */
	bool no_prefill;  /* memcached/redis: do not store every key once before the run */
};

struct load_result {
	uint64_t sent, completed, errors; /* requests */
	uint64_t connects, connect_errors;
	double elapsed_s;
	double throughput_rps;				/* completed / elapsed */
	double p50_us, p90_us, p99_us, p999_us, max_us; /* latency */
	char error[256]; /* a one-line reason when the run failed (nothing could connect) */
	/* Added after the first contract: */
	uint64_t missed;    /* scheduled before the end but not sent by the bound: every
			     * connection stayed busy (or none could connect) */
	uint64_t prefilled; /* keys stored before the run (not in sent or completed) */
	double mean_us;
	bool command_stopped; /* --load: the command outlived the run's bound and was stopped */
};

/* Parses "memcached://HOST:PORT", "redis://HOST:PORT" or "http://HOST:PORT/PATH" into t.
 * Returns 0 or -EINVAL. */
int load__parse_url(const char *url, struct load_target *t);

/* Runs the load described by spec, blocking for its duration (plus at most 1 s to drain),
 * and fills res. Stops early, with what it measured, when *stop becomes non-zero (may be
 * NULL). Returns 0, or -errno when the run could not take place (res->error says why). */
int load__run(const struct load_spec *spec, struct load_result *res, const volatile int *stop);

/* --load 'COMMAND': expands {conns} {rate} {duration} {requests} in cmd (requests = rate *
 * duration) into out. Returns 0, or -EINVAL for an unknown placeholder, -ENAMETOOLONG. */
int load__expand(const char *cmd, const struct load_spec *spec, char *out, size_t outlen);

/* Runs an expanded load command with /bin/sh -c, in its own process group, for at most
 * duration_s + grace_s seconds (then SIGTERM, SIGKILL to the group). Returns its exit
 * status (0-255), 128+signal, or -errno when it could not start; *stopped (may be NULL)
 * says whether it was still running at that bound and stopped by this (its status is
 * then what the signal left, not a failure of its own). */
int load__run_command(const char *cmd, double duration_s, double grace_s, bool *stopped);

/* Prints one line: "N req in S s, R req/s, p50 … p99 … max … us, E errors". */
void load__print_result(const struct load_result *res, FILE *f);

#endif
