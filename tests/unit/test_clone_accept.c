/* The socket calls a server makes once a connection (redis: setsockopt three times as it
 * accepts): the clone makes them as it accepts, each one's calls per request over the
 * accepts per request, unless the cycle already makes it; at most 64 a connection. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clone/clone.h"
#include "unit.h"

/* root (taken) parsed into m; the parser's line said when it fails */
static int parse_root(json_t *root, struct clone_model *m)
{
	char err[256], *text = json_dumps(root, 0);
	int ret;

	memset(m, 0, sizeof(*m));
	ret = clone_model__parse(text, strlen(text), m, err, sizeof(err));
	if (ret)
		printf("# %s\n", err);
	free(text);
	json_decref(root);
	return ret;
}

/* tests/fixtures/models/redis.json with these syscalls added to its profile ("name",
 * per_request pairs, NULL-terminated; eagain: the share of those calls that returned
 * EAGAIN, each, or NULL), and setsockopt put in its cycle when in_cycle */
static int parse_ret(const char *const *add, const double *per, const double *eagain,
		     bool in_cycle, struct clone_model *m)
{
	char path[4096];
	json_t *root, *sp, *sys;
	size_t i;

	root = json_load_file(unit_fixture(path, sizeof(path), "models/redis.json"), 0, NULL);
	if (!root)
		return -ENOENT;
	sp = json_object_get(root, "syscall_profile");
	sys = json_object_get(sp, "syscalls");
	for (i = 0; add[i]; i++)
		json_array_append_new(
			sys, json_pack("{s:s, s:f, s:{s:f, s:f}}", "name", add[i], "per_request",
				       per[i], "ret", "ok", per[i] * (1 - (eagain ? eagain[i] : 0)),
				       "EAGAIN", per[i] * (eagain ? eagain[i] : 0)));
	if (in_cycle)
		json_array_append_new(json_object_get(sp, "cycle"),
				      json_pack("{s:s}", "syscall", "setsockopt"));
	return parse_root(root, m);
}

static int parse(const char *const *add, const double *per, bool in_cycle, struct clone_model *m)
{
	return parse_ret(add, per, NULL, in_cycle, m);
}

/* redis.json with redis's cron read of /proc/self/stat: a file opened, read and closed
 * 0.005 times a request, by the network thread when net_opens (its profile's openat) */
static int parse_file_use(double net_opens, struct clone_model *m)
{
	char path[4096];
	json_t *root, *sys;

	root = json_load_file(unit_fixture(path, sizeof(path), "models/redis.json"), 0, NULL);
	if (!root)
		return -ENOENT;
	sys = json_object_get(json_object_get(root, "syscall_profile"), "syscalls");
	json_array_append_new(sys, json_pack("{s:s, s:f}", "name", "openat", "per_request",
					     net_opens));
	json_object_set_new(
		root, "files",
		json_pack("[{s:n, s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:[s, s, s]}]", "path",
			  "opened", "during", "access", "sequential", "size", 321,
			  "opens_per_request", 0.005, "reads_per_request", 0.005,
			  "writes_per_request", 0.0, "read_bytes_per_request", 1.605,
			  "written_bytes_per_request", 0.0, "ops", "openat", "read", "close"));
	return parse_root(root, m);
}

static bool near(double got, double want)
{
	return fabs(got - want) <= fabs(want) * 0.001 + 1e-9;
}

int main(void)
{
	static struct clone_model m;
	static const char *const redis[] = {"accept4", "setsockopt", "getpeername", "close", NULL};
	static const double redis_per[] = {0.02, 0.06, 0.01, 0.02};
	static const char *const none[] = {"setsockopt", NULL};
	static const double none_per[] = {0.06};
	static const char *const many[] = {"accept", "getsockname", "getsockopt", NULL};
	static const double many_per[] = {0.0001, 1.0, 0.0003};
	static const char *const drain[] = {"accept4", NULL};
	static const double drain_per[] = {0.02}, drain_half[] = {0.5}, drain_few[] = {0.1};
	static const char *const ctl[] = {"accept4", "epoll_ctl", NULL};
	static const double ctl_per[] = {0.01, 0.04};
	static const char *const ctl_one[] = {"accept4", "epoll_ctl", NULL};
	static const double ctl_one_per[] = {0.01, 0.009};
	int s, others = 0;

	is_int(parse(redis, redis_per, false, &m), 0, "redis's model with its accept's calls");
	ok(near(m.per_accept[CS_SETSOCKOPT], 3), "3 setsockopt an accept (%g)",
	   m.per_accept[CS_SETSOCKOPT]);
	ok(near(m.per_accept[CS_GETPEERNAME], 0.5), "half a getpeername an accept (%g)",
	   m.per_accept[CS_GETPEERNAME]);
	for (s = CS_NONE + 1; s < CS__COUNT; s++)
		if (s != CS_SETSOCKOPT && s != CS_GETPEERNAME && m.per_accept[s] != 0)
			others++;
	is_int(others, 0, "no other call is made as a connection is accepted (close, read, ...)");

	is_int(parse(redis, redis_per, true, &m), 0, "the same with setsockopt in the cycle");
	ok(m.per_accept[CS_SETSOCKOPT] == 0, "the cycle makes it: none more as it accepts (%g)",
	   m.per_accept[CS_SETSOCKOPT]);
	ok(near(m.per_accept[CS_GETPEERNAME], 0.5), "getpeername still (%g)",
	   m.per_accept[CS_GETPEERNAME]);

	is_int(parse(none, none_per, false, &m), 0, "setsockopt but no accept in the profile");
	ok(m.per_accept[CS_SETSOCKOPT] == 0,
	   "no accepts per request to divide by: nothing made as it accepts");

	is_int(parse(many, many_per, false, &m), 0, "a getsockname per request, 1 accept in 10000");
	ok(near(m.per_accept[CS_GETSOCKNAME], 64), "at most 64 a connection (%g)",
	   m.per_accept[CS_GETSOCKNAME]);
	ok(near(m.per_accept[CS_GETSOCKOPT], 3), "accept counts as accept4 does (%g)",
	   m.per_accept[CS_GETSOCKOPT]);

	/* memcached's workers: 3.4 epoll_ctl a connection, where the clone adds it once */
	is_int(parse(ctl, ctl_per, false, &m), 0, "epoll_ctl 0.04 a request at 0.01 accepts");
	ok(near(m.per_accept[CS_EPOLL_CTL], 3), "3 more a connection than the clone's add (%g)",
	   m.per_accept[CS_EPOLL_CTL]);
	is_int(parse(ctl_one, ctl_one_per, false, &m), 0, "epoll_ctl as often as accept4");
	ok(m.per_accept[CS_EPOLL_CTL] == 0, "the clone's own add is all (%g)",
	   m.per_accept[CS_EPOLL_CTL]);

	is_int(parse_file_use(0.005, &m), 0, "a file opened, read and closed 0.005 a request");
	ok(m.nfile_uses == 1 && near(m.file_use[0].per_request, 0.005) &&
		   m.file_use[0].nops == 3 && m.file_use[0].ops[0] == CS_OPENAT &&
		   m.file_use[0].ops[1] == CS_READ && m.file_use[0].ops[2] == CS_CLOSE &&
		   m.file_use[0].read_bytes == 321,
	   "made beside the requests: openat, read of 321 bytes, close");
	is_int(parse_file_use(0.0001, &m), 0, "the same file, opened by another thread");
	is_int(m.nfile_uses, 0, "not the network threads' work: not made beside the requests");

	/* redis reads its listener until it is empty: an accept4 in two finds none */
	is_int(parse_ret(drain, drain_per, drain_half, false, &m), 0,
	       "accept4 0.02 a request, half of them EAGAIN");
	ok(m.accept_drain, "the clone drains its listener");
	is_int(parse_ret(drain, drain_per, drain_few, false, &m), 0,
	       "accept4 0.02 a request, a tenth of them EAGAIN");
	ok(!m.accept_drain, "the clone accepts once a wake-up");
	is_int(parse(drain, drain_per, false, &m), 0, "accept4 that always found one");
	ok(!m.accept_drain, "once a wake-up");
	return done_testing();
}
