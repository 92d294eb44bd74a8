/* The load's URLs, the placeholders of load commands, and a load command's bound: it and
 * what it started are gone at duration + grace. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "load/load.h"
#include "unit.h"
#include "util/util.h"

static void urls(void)
{
	struct load_target t;

	ok(!load__parse_url("memcached://127.0.0.1:11211", &t) && t.proto == LOAD_MEMCACHED &&
		   !strcmp(t.host, "127.0.0.1") && t.port == 11211,
	   "memcached URL");
	ok(!load__parse_url("redis://localhost:6379/", &t) && t.proto == LOAD_REDIS &&
		   !strcmp(t.host, "localhost") && t.port == 6379,
	   "redis URL with a trailing slash");
	ok(!load__parse_url("http://10.0.0.1:8080", &t) && t.proto == LOAD_HTTP &&
		   !strcmp(t.path, "/"),
	   "HTTP URL without a path: /");
	ok(!load__parse_url("http://[::1]:80/x/y?z=1", &t) && !strcmp(t.host, "::1") &&
		   t.port == 80 && !strcmp(t.path, "/x/y?z=1"),
	   "HTTP URL, IPv6 host, path and query");
	is_int(load__parse_url("memcached://127.0.0.1", &t), -EINVAL, "no port");
	is_int(load__parse_url("memcached://127.0.0.1:0", &t), -EINVAL, "port 0");
	is_int(load__parse_url("memcached://127.0.0.1:65536", &t), -EINVAL, "port too large");
	is_int(load__parse_url("memcached://127.0.0.1:-1", &t), -EINVAL, "negative port");
	is_int(load__parse_url("memcached://127.0.0.1:1x", &t), -EINVAL, "port with a letter");
	is_int(load__parse_url("memcached://:11211", &t), -EINVAL, "no host");
	is_int(load__parse_url("redis://127.0.0.1:1/db", &t), -EINVAL, "a path on redis");
	is_int(load__parse_url("ftp://127.0.0.1:21", &t), -EINVAL, "unknown scheme");
	is_int(load__parse_url("http://127.0.0.1:80/a b", &t), -EINVAL, "space in a path");
	is_int(load__parse_url("http://[::1:80/", &t), -EINVAL, "unclosed bracket");
}

static void expand(void)
{
	struct load_spec s = {.conns = 16, .rate = 2500, .duration_s = 3};
	char out[128];

	is_int(load__expand("wrk -c {conns} -R {rate} -d {duration}s -n {requests}", &s, out,
			    sizeof(out)),
	       0, "expand");
	is_str(out, "wrk -c 16 -R 2500 -d 3s -n 7500", "every placeholder");
	s.rate = 333.5;
	s.duration_s = 1.5;
	load__expand("{rate} {duration} {requests}", &s, out, sizeof(out));
	is_str(out, "333.5 1.5 500", "fractions kept, requests rounded");
	load__expand("awk '{print $1}' ${HOME} {} {X}", &s, out, sizeof(out));
	is_str(out, "awk '{print $1}' ${HOME} {} {X}", "the shell's braces left alone");
	is_int(load__expand("x {connz}", &s, out, sizeof(out)), -EINVAL, "unknown placeholder");
	is_int(load__expand("0123456789 {conns}", &s, out, 12), -ENAMETOOLONG, "too long");
	is_int(load__expand("0123456789", &s, out, 10), -ENAMETOOLONG, "no room for the NUL");
	is_int(load__expand("012345678", &s, out, 10), 0, "just fits");
}

/* Whether pid has ended (gone, or a zombie nobody reaped yet) within 3 s. */
static bool gone(pid_t pid)
{
	char path[64], buf[256];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 300; i++) {
		if (read_file(path, buf, sizeof(buf)) < 0 || strstr(buf, ") Z ") != NULL)
			return true;
		usleep(10000);
	}
	return false;
}

static void command(void)
{
	char cmd[256], path[] = "/tmp/test_load_cmd.XXXXXX", buf[32];
	uint64_t t0;
	pid_t bg;
	bool stopped = true;
	int fd, st;

	is_int(load__run_command("exit 7", 5, 1, &stopped), 7, "exit status");
	ok(!stopped, "one that exits by itself was not stopped");
	stopped = true;
	is_int(load__run_command("kill -USR1 $$", 5, 1, &stopped), 128 + SIGUSR1,
	       "killed by a signal");
	ok(!stopped, "one a signal of its own ended was not stopped");
	stopped = true;
	is_int(load__run_command("kill -TERM $$", 5, 1, &stopped), 128 + SIGTERM,
	       "its own SIGTERM");
	ok(!stopped, "... is not the bound's");
	is_int(load__run_command("no-such-command-here 2>/dev/null", 5, 1, NULL), 127,
	       "not found: 127");

	fd = mkstemp(path);
	close(fd);
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s; sleep 30", path);
	t0 = now_ns();
	/* 1 s: on a loaded machine the shell may take a while to start its background job */
	st = load__run_command(cmd, 1, 0.2, &stopped);
	ok((now_ns() - t0) / 1e9 < 3, "stopped at its bound (%.2f s)", (now_ns() - t0) / 1e9);
	is_int(st, 128 + SIGTERM, "by SIGTERM");
	ok(stopped, "... and says it stopped it");
	bg = read_file(path, buf, sizeof(buf)) > 0 ? atoi(buf) : 0;
	ok(bg > 0 && gone(bg), "what it started in the background is gone too");
	if (bg > 0 && !gone(bg))
		kill(bg, SIGKILL);

	/* a command that ignores SIGTERM (1 s: a loaded machine may not have run the shell
	 * that long after the fork, and SIGTERM would come before its trap) */
	t0 = now_ns();
	st = load__run_command("trap '' TERM; while :; do sleep 0.05; done", 1, 0.1, NULL);
	ok((now_ns() - t0) / 1e9 < 4, "one that ignores SIGTERM is killed (%.2f s)",
	   (now_ns() - t0) / 1e9);
	is_int(st, 128 + SIGKILL, "by SIGKILL");
	unlink(path);

	/* a caller that blocks SIGTERM (it reads signals from a signalfd): the command does not */
	{
		sigset_t term, old;

		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_BLOCK, &term, &old);
		is_int(load__run_command("sleep 30", 1, 0.1, NULL), 128 + SIGTERM,
		       "the command gets SIGTERM though its caller blocks it");
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	/* a caller that ignores SIGCHLD: the command is reaped by the kernel */
	signal(SIGCHLD, SIG_IGN);
	t0 = now_ns();
	st = load__run_command("exit 0", 5, 1, NULL);
	ok((now_ns() - t0) / 1e9 < 3, "SIGCHLD ignored: returns when the command ends (%.2f s, %d)",
	   (now_ns() - t0) / 1e9, st);
	signal(SIGCHLD, SIG_DFL);
}

int main(void)
{
	urls();
	expand();
	command();
	return done_testing();
}
