/* srvscope clone --check: starts the clone in a child process, drives it with the built-in
 * load of the model's protocol (a fixed-rate run, then one at peak), and prints it side by
 * side with the model: structure, network model, syscalls per request, throughput,
 * latency and CPU per request, with the differences. */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clone/child.h"
#include "clone/clone.h"
#include "load/load.h"
#include "model/model.h"
#include "proc/task.h"
#include "util/escape.h"
#include "util/jsonfile.h"
#include "util/util.h"

/* What a profile of the running clone says, next to what the model says. */
struct profile {
	double requests;
	double per_request[CS__COUNT]; /* syscalls per request */
	double cpu_us_per_request;
	unsigned nnames;
	struct {
		char name[CLONE_NAME];
		unsigned threads;
	} names[64];
	unsigned processes;
};

/* The names of the clone's threads and its processes, from /proc. */
static void count_tree(pid_t root, struct profile *p)
{
	pid_t *pids, *tids;
	int n, i, k, nt;
	unsigned j;

	p->nnames = 0;
	n = proc__tree(&root, 1, &pids);
	if (n < 0)
		return;
	p->processes = 0;
	for (i = 0; i < n; i++) {
		nt = proc_tasks__list(pids[i], &tids);
		if (nt <= 0)
			continue;
		p->processes++;
		for (k = 0; k < nt; k++) {
			struct task_stat st;

			if (proc_task__stat(pids[i], tids[k], &st))
				continue;
			for (j = 0; j < p->nnames; j++)
				if (!strcmp(p->names[j].name, st.comm))
					break;
			if (j == p->nnames && j < ARRAY_SIZE(p->names)) {
				snprintf(p->names[j].name, CLONE_NAME, "%s", st.comm);
				p->names[j].threads = 0;
				p->nnames++;
			}
			if (j < p->nnames)
				p->names[j].threads++;
		}
		free(tids);
	}
	free(pids);
}

/* CPU time of the clone's tree in microseconds: the live processes' own, and the reaped
 * ones' (a process per connection) through the root's children times. */
static double tree_cpu_us(pid_t root)
{
	long tick = sysconf(_SC_CLK_TCK);
	pid_t *pids;
	double us = 0;
	int n, i;

	n = proc__tree(&root, 1, &pids);
	for (i = 0; i < n; i++) {
		char path[64], buf[1024], *p;
		unsigned long long ut, st, cut, cst;

		snprintf(path, sizeof(path), "/proc/%d/stat", pids[i]);
		if (read_file(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
			continue;
		if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			   &ut, &st, &cut, &cst) != 4)
			continue;
		us += (ut + st + (pids[i] == root ? cut + cst : 0)) * 1e6 / tick;
	}
	if (n > 0)
		free(pids);
	return us;
}

/* The profile of the clone over a load run: what its processes counted (syscalls per
 * request) and what /proc says (threads, CPU). The network model and the syscalls the
 * kernel saw come from a model of the clone (model_clone). */
static void profile_clone(pid_t pid, const struct clone_counts *before,
			  const struct clone_counts *after, double cpu_us, struct profile *p)
{
	int s;

	p->requests = after->requests - before->requests;
	for (s = 0; s < CS__COUNT; s++)
		p->per_request[s] =
			p->requests ? (after->sys[s] - before->sys[s]) / p->requests : 0;
	p->cpu_us_per_request = p->requests ? cpu_us / p->requests : 0;
	count_tree(pid, p);
}

static double num_at(const json_t *o, const char *key)
{
	json_t *v = o ? json_object_get(o, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : -1;
}

/* The model's runs (conns, rate, duration_s each) as a 'model --config' file at path, and
 * the built-in client's reconnect period of its last run into reconnect (-1: not known):
 * the clone is modelled under the load that made its model, so that what a connection
 * costs (accept, close, epoll_ctl) is spread over as many requests (the default runs have
 * 4, 8 and 16 connections: a run of 16 alone accepted twice as often a request). false
 * when a run does not say its connections, rate or duration (a model of traces). */
static bool runs_config(const json_t *runs, const char *path, double *reconnect)
{
	json_t *cfg = json_pack("{s:[]}", "runs"), *r;
	size_t i;
	bool ok = json_array_size(runs) > 0;
	int fd;

	json_array_foreach(runs, i, r)
	{
		double c = num_at(r, "conns"), rate = num_at(r, "rate"),
		       d = num_at(r, "duration_s");

		if (!(c >= 1 && rate > 0 && d > 0)) {
			ok = false;
			break;
		}
		json_array_append_new(json_object_get(cfg, "runs"),
				      json_pack("{s:i, s:f, s:f}", "conns", (int)c, "rate", rate,
						"duration_s", d));
		*reconnect = json_is_number(json_object_get(r, "reconnect_s"))
				     ? num_at(r, "reconnect_s")
				     : -1;
	}
	fd = ok ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	ok = fd >= 0 && !json_dumpfd(cfg, fd, 0);
	if (fd >= 0)
		close(fd);
	json_decref(cfg);
	return ok;
}

/* A model of the running clone, made by this binary's own 'model' command over the built-in
 * load (url): the model's own runs (runs_config), or one run of conns at rate for secs
 * when they were asked for or the model's runs do not say theirs: the network model and
 * the syscalls per request as the kernel saw them, not as the clone counted them. NULL,
 * after a line saying why, when it could not be made (no BPF here, say): the table then
 * shows the clone's own counts. */
static json_t *model_clone(pid_t pid, const char *url, const json_t *runs, unsigned conns,
			   double rate, double secs)
{
	char dir[] = "/tmp/srvscope-check.XXXXXX", out[64], err[64], cfg[64], a_pid[16],
	     a_conns[16], a_rate[32], a_secs[32], a_rec[32];
	double reconnect = -1, total = secs;
	bool by_runs;
	json_t *m = NULL, *r;
	int status = -1;
	size_t i;
	pid_t c;

	if (!mkdtemp(dir))
		return error("clone --check: cannot make a directory in /tmp: %s", strerror(errno)),
		       NULL;
	snprintf(out, sizeof(out), "%s/clone.json", dir);
	snprintf(err, sizeof(err), "%s/model.err", dir);
	snprintf(cfg, sizeof(cfg), "%s/runs.json", dir);
	snprintf(a_pid, sizeof(a_pid), "%d", pid);
	snprintf(a_conns, sizeof(a_conns), "%u", conns);
	snprintf(a_rate, sizeof(a_rate), "%g", rate);
	snprintf(a_secs, sizeof(a_secs), "%g", secs);
	by_runs = runs && runs_config(runs, cfg, &reconnect);
	snprintf(a_rec, sizeof(a_rec), "%g", reconnect);
	if (by_runs)
		for (i = 0, total = 0; (r = json_array_get(runs, i)); i++)
			total += num_at(r, "duration_s");
	fprintf(stderr, "srvscope: clone --check: modelling the clone (srvscope model, %s, %g s)\n",
		by_runs ? "the model's runs" : "one run", total);
	fflush(NULL);
	c = fork();
	if (c == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0 ||
		    dup2(fd, STDERR_FILENO) < 0)
			_exit(127);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char *by_run[] = {"--conns", a_conns, "--rate", a_rate, "--duration", a_secs, NULL},
		     *by_cfg[] = {"--config", cfg, "--reconnect", a_rec, NULL};
		char *argv[20] = {"srvscope", "model", "-p", a_pid, "--client", (char *)url};
		char **load = by_runs ? by_cfg : by_run;
		int k = 6;

		if (by_runs && reconnect < 0)
			by_cfg[2] = NULL; /* the model's default reconnect period */
		while (*load)
			argv[k++] = *load++;
		argv[k++] = "--no-skeleton"; /* the clone's ratio is measured here (beside_row) */
		argv[k++] = "-o";
		argv[k++] = out;
		argv[k] = NULL;
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (c > 0)
		while (waitpid(c, &status, 0) < 0 && errno == EINTR)
			;
	if (c > 0 && WIFEXITED(status) && !WEXITSTATUS(status))
		m = json_load_file(out, 0, NULL);
	if (!m) {
		char line[512] = "";
		FILE *f = fopen(err, "re");

		/* the model's own last line says why */
		while (f && fgets(line, sizeof(line), f))
			;
		if (f)
			fclose(f);
		line[strcspn(line, "\n")] = 0;
		error("clone --check: no model of the clone (%s); its own counts are shown",
		      line[0] ? line : "srvscope model failed");
	}
	unlink(out);
	unlink(err);
	unlink(cfg);
	rmdir(dir);
	return m;
}

static void diff(FILE *f, double model, double clone)
{
	if (model > 0)
		fprintf(f, "  %+6.0f%%", (clone - model) / model * 100);
	fputc('\n', f);
}

static void row_num(FILE *f, const char *what, double model, double clone, const char *fmt)
{
	char a[32], b[32], w[128];

	if (model >= 0)
		snprintf(a, sizeof(a), fmt, model);
	else
		snprintf(a, sizeof(a), "-");
	if (clone >= 0)
		snprintf(b, sizeof(b), fmt, clone);
	else
		snprintf(b, sizeof(b), "-");
	fprintf(f, "  %-30s %12s %12s", name_shown(what, w, sizeof(w)), a, b);
	diff(f, clone >= 0 ? model : -1, clone);
}

static const char *str_of(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_boolean(v))
		return json_is_true(v) ? "true" : "false";
	if (json_is_number(v)) {
		snprintf(buf, size, "%g", json_number_value(v));
		return buf;
	}
	return "-";
}

/* Whether a thread of the clone is named as the cluster: the same name, or the same
 * numbered stem ("worker-3" for a cluster named "worker-1"). */
static bool same_cluster(const char *thread, const char *cluster)
{
	size_t d = strlen(cluster), k;

	if (!strncmp(thread, cluster, CLONE_NAME - 1))
		return true;
	while (d && cluster[d - 1] >= '0' && cluster[d - 1] <= '9')
		d--;
	if (d == strlen(cluster) || !d || cluster[d - 1] != '-' || strncmp(thread, cluster, d))
		return false;
	for (k = d; thread[k]; k++)
		if (thread[k] < '0' || thread[k] > '9')
			return false;
	return thread[d] != 0;
}

/* One object's members side by side, "differs" where they do. Returns how many differ. */
static unsigned print_members(FILE *f, const json_t *model, const json_t *clone,
			      const char *const *keys, size_t nr)
{
	unsigned differ = 0;
	char a[32], b[32], ea[128], eb[128];
	size_t i;

	for (i = 0; i < nr; i++) {
		const char *v = str_of(json_object_get(model, keys[i]), a, sizeof(a));
		const char *w = str_of(json_object_get(clone, keys[i]), b, sizeof(b));
		/* a member one side leaves null (not measured) is not a difference */
		bool same = !strcmp(v, w) || json_is_null(json_object_get(model, keys[i])) ||
			    json_is_null(json_object_get(clone, keys[i]));

		differ += !same;
		fprintf(f, "  %-30s %12s %12s%s\n", keys[i], name_shown(v, ea, sizeof(ea)),
			name_shown(w, eb, sizeof(eb)), same ? "" : "  differs");
	}
	return differ;
}

/* The network model of the original (the model file) beside the clone's: modelled anew
 * when cm is given, else as the clone was built from the model. */
static void print_structure(FILE *f, const json_t *root, const json_t *cm, const struct profile *p)
{
	static const char *const keys[] = {"network_io",   "accept_io",	    "accept_pool",
					   "network_pool", "multi_process", "per_connection",
					   "handoff",	   "reuseport",	    "epoll_exclusive"};
	static const char *const ditto[] = {"accept_dispatch",
					    "network_dispatch",
					    "network_epoll",
					    "nonblocking",
					    "blocking",
					    "accept_thread_pool_size",
					    "network_thread_pool_size"};
	json_t *clusters = json_object_get(root, "clusters"), *c;
	const json_t *nm = json_object_get(root, "network_model");
	unsigned j, differ;
	char n[16];
	size_t i;

	if (cm) {
		fprintf(f, "network model (the clone's: srvscope model of the clone)\n");
		differ = print_members(f, json_object_get(root, "network_model_characteristics"),
				       json_object_get(cm, "network_model_characteristics"), ditto,
				       ARRAY_SIZE(ditto));
		differ += print_members(f, nm, json_object_get(cm, "network_model"), keys,
					ARRAY_SIZE(keys));
		snprintf(n, sizeof(n), "%u", differ);
		fprintf(f, "  %-30s %12s %12s\n", "fields that differ", "", differ ? n : "none");
	} else {
		fprintf(f, "network model (the clone's: as built from the model)\n");
		print_members(f, nm, nm, keys, ARRAY_SIZE(keys));
	}
	fprintf(f, "threads by name (model: its last run; clone: /proc now)\n");
	json_array_foreach(clusters, i, c)
	{
		const char *name = json_string_value(json_object_get(c, "name"));
		json_t *spr = json_object_get(c, "size_per_run");
		unsigned got = 0;
		char e[128];
		double want;

		if (!name)
			continue;
		want = json_array_size(spr)
			       ? json_number_value(json_array_get(spr, json_array_size(spr) - 1))
			       : json_array_size(json_object_get(c, "threads"));
		for (j = 0; j < p->nnames; j++)
			if (same_cluster(p->names[j].name, name))
				got += p->names[j].threads;
		if (json_is_true(json_object_get(c, "grows_with_conns")))
			fprintf(f, "  %-30.30s %12s %12u\n", name_shown(name, e, sizeof(e)),
				"per-conn", got);
		else
			row_num(f, name, want, got, "%.0f");
	}
}

/* The entry of syscall name in a model's syscall profile, NULL when it has none. */
static const json_t *model_syscall(const json_t *m, const char *name)
{
	json_t *sys = json_object_get(json_object_get(m, "syscall_profile"), "syscalls"), *s;
	size_t i;

	json_array_foreach(sys, i, s)
	{
		const char *n = json_string_value(json_object_get(s, "name"));

		if (n && !strcmp(n, name))
			return s;
	}
	return NULL;
}

/* Fewer calls than this on both sides (the models' counts): a count of n varies by about
 * the square root of n from one run to the next, so a difference in per-request frequency
 * says nothing (redis's futex: 2 calls in 10 000 requests against none). */
#define FEW_CALLS 20

/* A syscall's row of two models; calls too few to compare are counted, not compared. */
static void row_syscall(FILE *f, const char *name, const json_t *orig, const json_t *clone)
{
	double n = orig ? num_at(orig, "count") : 0, c = clone ? num_at(clone, "count") : 0;
	char e[128];

	if (n < 0 || c < 0 || n >= FEW_CALLS || c >= FEW_CALLS) {
		row_num(f, name, orig ? num_at(orig, "per_request") : 0,
			clone ? num_at(clone, "per_request") : 0, "%.2f");
		return;
	}
	fprintf(f, "  %-30s %12.4f %12.4f  (%.0f and %.0f calls: too few to compare)\n",
		name_shown(name, e, sizeof(e)), orig ? num_at(orig, "per_request") : 0,
		clone ? num_at(clone, "per_request") : 0, n, c);
}

static void print_syscalls(FILE *f, const json_t *root, const json_t *cm, const struct profile *p)
{
	json_t *sys = json_object_get(json_object_get(root, "syscall_profile"), "syscalls"), *s;
	bool shown[CS__COUNT] = {0};
	char e[128];
	size_t i;
	int k;

	if (cm) {
		fprintf(f, "syscalls per request (clone: srvscope model of the clone)\n");
		json_array_foreach(sys, i, s)
		{
			const char *name = json_string_value(json_object_get(s, "name"));

			if (name)
				row_syscall(f, name, s, model_syscall(cm, name));
		}
		sys = json_object_get(json_object_get(cm, "syscall_profile"), "syscalls");
		json_array_foreach(sys, i, s)
		{
			const char *name = json_string_value(json_object_get(s, "name"));

			if (name && !model_syscall(root, name) && num_at(s, "per_request") >= 0.01)
				row_syscall(f, name, NULL, s);
		}
		return;
	}
	fprintf(f, "syscalls per request (clone: as it counted them)\n");
	json_array_foreach(sys, i, s)
	{
		const char *name = json_string_value(json_object_get(s, "name"));
		enum clone_sys cs = name ? clone_sys__from_name(name) : CS_NONE;

		if (!name)
			continue;
		if (cs == CS_NONE) {
			fprintf(f, "  %-30.30s %12.2f %12s  (not replayed)\n",
				name_shown(name, e, sizeof(e)), num_at(s, "per_request"), "-");
			continue;
		}
		shown[cs] = true;
		row_num(f, name, num_at(s, "per_request"), p->per_request[cs], "%.2f");
	}
	for (k = CS_NONE + 1; k < CS__COUNT; k++)
		if (!shown[k] && p->per_request[k] >= 0.01)
			row_num(f, clone_sys__name(k), 0, p->per_request[k], "%.2f");
}

/* The built-in load --check drives the clone with. */
static struct load_spec check_spec(const struct load_target *t, unsigned conns, double rate,
				   double secs)
{
	return (struct load_spec){
		.target = *t,
		.conns = conns,
		.rate = rate,
		.duration_s = secs,
		.keepalive = true,
		.value_size = 100,
		.set_share = 0.1,
		.keys = 1000,
		/* the clone stores nothing: its gets answer at the modelled sizes */
		.no_prefill = true};
}

static int run_load(const struct load_target *t, unsigned conns, double rate, double secs,
		    struct load_result *res)
{
	struct load_spec spec = check_spec(t, conns, rate, secs);
	int err;

	memset(res, 0, sizeof(*res));
	err = load__run(&spec, res, NULL);
	if (err)
		error("clone --check: the load could not run: %s",
		      res->error[0] ? res->error : strerror(-err));
	return err;
}

/* The clone beside its skeleton (clone__beside, as the model measured the original beside
 * it), at the fixed rate in three slices of a third of secs: the clone's ratio, to set
 * against the model's, which it aims at. Returns it, or -1 (said on stderr). */
static double beside_ratio(const struct clone_model *m, const struct load_target *t,
			   const struct clone_counts *counts, unsigned conns, double rate,
			   double secs)
{
	struct load_spec spec = check_spec(t, conns, rate, secs / 3);
	uint32_t tids[CLONE_COUNTS_TIDS];
	struct model_beside b;
	size_t n = clone_child__net_tids(counts, tids);
	int err;

	spec.poisson = true; /* as the model's (model.c, beside_skeleton) */
	fprintf(stderr,
		"srvscope: clone --check: beside its skeleton (spinning nothing), both at %g "
		"req/s for %g s\n",
		rate, secs / 3 * 4);
	err = clone__beside(m, &spec, tids, n, 3, NULL, &b);
	if (err) {
		warning("clone --check: the clone beside its skeleton not measured: %s",
			err == -ESRCH ? "a network thread is gone" : strerror(-err));
		return -1;
	}
	return b.ratio;
}

/* --load COMMAND: {port} replaced here, the load's placeholders by load__expand. */
static int run_command(const char *cmd, int port, unsigned conns, double rate, double secs)
{
	struct load_spec spec = {.conns = conns, .rate = rate, .duration_s = secs};
	char withport[4096], expanded[4096], num[16];
	const char *p, *q;
	size_t o = 0;
	bool stopped;
	int rc;

	snprintf(num, sizeof(num), "%d", port);
	for (p = cmd; (q = strstr(p, "{port}")); p = q + 6) {
		if (o + (q - p) + strlen(num) >= sizeof(withport))
			return error("clone --check: --load is too long"), -ENAMETOOLONG;
		memcpy(withport + o, p, q - p);
		o += q - p;
		memcpy(withport + o, num, strlen(num));
		o += strlen(num);
	}
	if (o + strlen(p) >= sizeof(withport))
		return error("clone --check: --load is too long"), -ENAMETOOLONG;
	strcpy(withport + o, p);
	if (load__expand(withport, &spec, expanded, sizeof(expanded)))
		return error("clone --check: --load has a placeholder other than {port} {conns} "
			     "{rate} {duration} {requests}"),
		       -EINVAL;
	rc = load__run_command(expanded, secs, 1.0, &stopped);
	if (rc < 0)
		return error("clone --check: cannot run the load command: %s", strerror(-rc)), rc;
	if (rc && !stopped) /* one that outlived the bound was stopped: its time was loaded */
		return error("clone --check: the load command exited with %d", rc), -EIO;
	return 0;
}

int clone__check(const char *path, const struct clone_model *m, const struct clone_opts *o,
		 const struct clone_check_opts *co)
{
	static const char *const proto_url[] = {NULL, "memcached", "redis", "http"};
	struct clone_counts *counts, before;
	struct load_target target;
	struct load_result fixed, peak;
	struct profile prof;
	json_t *root, *runs, *last, *cm = NULL;
	json_error_t je;
	char url[512];
	double rate, cpu0, cpu1, secs = co->duration_s, ratio = -1;
	unsigned conns;
	pid_t pid = 0;
	int port = 0, err;

	if ((m->proto == CLONE_RAW || m->proto == CLONE_LINE) && !co->load)
		return error("clone --check: the model's load is not memcached, redis nor HTTP: "
			     "give the client with --load 'COMMAND' ({port} is the clone's)"),
		       -EINVAL;
	root = jsonfile__load(path, 64 << 20, 0, &je);
	if (!root)
		return error("clone --check: %s: %s", path, je.text), -EINVAL;
	runs = json_object_get(root, "runs");
	last = json_array_size(runs) ? json_array_get(runs, json_array_size(runs) - 1) : NULL;
	rate = co->rate > 0 ? co->rate : num_at(last, "rate") > 0 ? num_at(last, "rate") : 1000;
	conns = co->conns ? co->conns : num_at(last, "conns") >= 1 ? num_at(last, "conns") : 8;

	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		      0);
	if (counts == MAP_FAILED) {
		json_decref(root);
		return error("clone --check: mmap: %s", strerror(errno)), -ENOMEM;
	}
	err = clone_child__start(m, o, counts, &pid, &port);
	if (err)
		goto out;
	snprintf(url, sizeof(url), "%s://%s:%d/", proto_url[m->proto] ? proto_url[m->proto] : "raw",
		 o->listen_addr ? o->listen_addr : m->listen_addr, port);
	if (!co->load && (err = load__parse_url(url, &target))) {
		error("clone --check: cannot make a load URL of '%s'", url);
		goto out_stop;
	}
	if (co->load)
		fprintf(stderr,
			"srvscope: clone --check: the clone (pid %d) listens on port %d; "
			"the load command for %g s\n",
			pid, port, secs);
	else
		fprintf(stderr,
			"srvscope: clone --check: the clone (pid %d) listens on port %d; %u "
			"connections at %g req/s for %g s, then at peak for %g s\n",
			pid, port, conns, rate, secs, secs);

	memcpy(&before, counts, sizeof(before));
	cpu0 = tree_cpu_us(pid);
	if (co->load) { /* the command's own figures are its own: the clone counts requests */
		uint64_t t0 = now_ns();

		if ((err = run_command(co->load, port, conns, rate, secs)))
			goto out_stop;
		memset(&fixed, 0, sizeof(fixed));
		fixed.throughput_rps =
			(counts->requests - before.requests) / ((now_ns() - t0) / 1e9);
		fixed.p50_us = fixed.p90_us = fixed.p99_us = -1;
	} else if ((err = run_load(&target, conns, rate, secs, &fixed))) {
		goto out_stop;
	}
	cpu1 = tree_cpu_us(pid);
	profile_clone(pid, &before, counts, cpu1 - cpu0, &prof);
	if (!co->load && (err = run_load(&target, conns, 0, secs, &peak)))
		goto out_stop;
	if (!co->load && m->cpu_ratio > 0)
		ratio = beside_ratio(m, &target, counts, conns, rate, secs);
	if (!co->load)
		cm = model_clone(pid, url, co->conns || co->rate > 0 ? NULL : runs, conns, rate,
				 secs);

	printf("srvscope clone --check %s: the model against its clone (pid %d, port %d)\n\n", path,
	       pid, port);
	printf("  %-30s %12s %12s  %s\n", "", "model", "clone", "diff");
	print_structure(stdout, root, cm, &prof);
	row_num(stdout, "processes", num_at(last, "processes"), prof.processes, "%.0f");
	print_syscalls(stdout, root, cm, &prof);
	if (co->load)
		printf("load: '%s' for %g s (model: %s)\n", co->load, secs,
		       last ? "its last run" : "no run");
	else
		printf("load: %u connections at %g req/s for %g s (model: %s)\n", conns, rate, secs,
		       last ? "its last run" : "no run");
	row_num(stdout, "throughput req/s", num_at(last, "throughput_rps"), fixed.throughput_rps,
		"%.0f");
	{
		const json_t *lat = json_object_get(last, "latency_us");

		row_num(stdout, "latency p50 us", num_at(lat, "p50"), fixed.p50_us, "%.0f");
		row_num(stdout, "latency p90 us", num_at(lat, "p90"), fixed.p90_us, "%.0f");
		row_num(stdout, "latency p99 us", num_at(lat, "p99"), fixed.p99_us, "%.0f");
	}
	row_num(stdout, "CPU per request us", m->on_cpu_us_per_request, prof.cpu_us_per_request,
		"%.1f");
	if (m->cpu_ratio > 0) /* what the clone aims at: the original's over its skeleton's */
		row_num(stdout, "CPU over the skeleton's", m->cpu_ratio, ratio, "%.2f");
	row_num(stdout, "errors", num_at(last, "errors"), co->load ? -1 : (double)fixed.errors,
		"%.0f");
	if (!co->load) {
		printf("load: %u connections at peak for %g s\n", conns, secs);
		row_num(stdout, "throughput req/s", -1, peak.throughput_rps, "%.0f");
		row_num(stdout, "latency p50 us", -1, peak.p50_us, "%.0f");
	}
	printf("\nThe model's figures are the original's on the machine it was profiled on; "
	       "compare\nthroughput and latency side by side on one machine (bench/clone.sh).\n");
	fflush(stdout);
out_stop:
	if (clone_child__stop(pid) && !err)
		err = (error("clone --check: the clone did not stop cleanly"), -EIO);
out:
	munmap(counts, sizeof(*counts));
	json_decref(cm);
	json_decref(root);
	return err;
}
