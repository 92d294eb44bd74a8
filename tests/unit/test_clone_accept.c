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

/* tests/fixtures/models/redis.json with these syscalls added to its profile ("name",
 * per_request pairs, NULL-terminated), and setsockopt put in its cycle when in_cycle */
static int parse(const char *const *add, const double *per, bool in_cycle, struct clone_model *m)
{
	char path[4096], err[256], *text;
	json_t *root, *sp, *sys;
	size_t i;
	int ret;

	root = json_load_file(unit_fixture(path, sizeof(path), "models/redis.json"), 0, NULL);
	if (!root)
		return -ENOENT;
	sp = json_object_get(root, "syscall_profile");
	sys = json_object_get(sp, "syscalls");
	for (i = 0; add[i]; i++)
		json_array_append_new(
			sys, json_pack("{s:s, s:f}", "name", add[i], "per_request", per[i]));
	if (in_cycle)
		json_array_append_new(json_object_get(sp, "cycle"),
				      json_pack("{s:s}", "syscall", "setsockopt"));
	text = json_dumps(root, 0);
	memset(m, 0, sizeof(*m));
	ret = clone_model__parse(text, strlen(text), m, err, sizeof(err));
	if (ret)
		printf("# %s\n", err);
	free(text);
	json_decref(root);
	return ret;
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
	return done_testing();
}
