/* Components: which part of the system a function belongs to. The built-in table is the
 * SIGCOMM'21 mapping (components_sigcomm21.c) plus prefix rules for the names of today's
 * kernels; a components file adds rules that win over the built-in ones, for the kernel
 * or for user space (a database's own subsystems by symbol prefix). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "util/safefile.h"
#include "util/util.h"

/* Prefix rules for names the published table (a 5.4-era kernel) does not have, or has
 * only some members of: "tcp_" is TCP/IP whatever the function. Each is a fact about
 * where the kernel keeps the code (net/ipv4, net/core/dev.c, mm/, kernel/sched). */
static const struct comp_builtin prefix_rules[] = {
	/* data copy: user copies, iov iterators, checksum-and-copy */
	{"copy_user_", "data_copy"},
	{"rep_movs_alternative", "data_copy"},
	{"rep_stos_alternative", "data_copy"},
	{"_copy_to_iter", "data_copy"},
	{"_copy_from_iter", "data_copy"},
	{"copy_page_to_iter", "data_copy"},
	{"copy_page_from_iter", "data_copy"},
	{"copy_to_user", "data_copy"},
	{"copy_from_user", "data_copy"},
	{"_copy_to_user", "data_copy"},
	{"_copy_from_user", "data_copy"},
	{"__copy_", "data_copy"},
	{"memcpy", "data_copy"},
	{"__memcpy", "data_copy"},
	{"memmove", "data_copy"},
	{"__memmove", "data_copy"},
	{"memset", "data_copy"},
	{"__memset", "data_copy"},
	{"iov_iter_", "data_copy"},
	{"skb_copy_datagram", "data_copy"},
	{"csum_partial_copy", "data_copy"},
	{"check_heap_object", "data_copy"},
	{"__check_object_size", "data_copy"},
	{"clear_user", "data_copy"},
	{"is_vmalloc_addr", "data_copy"}, /* asked by check_heap_object of every copy */
	{"__virt_addr_valid", "data_copy"},
	/* TCP/IP */
	{"tcp_", "tcp/ip"},
	{"__tcp_", "tcp/ip"},
	{"tcp4_", "tcp/ip"},
	{"ip_", "tcp/ip"},
	{"__ip_", "tcp/ip"},
	{"ipv4_", "tcp/ip"},
	{"inet_", "tcp/ip"},
	{"__inet_", "tcp/ip"},
	{"udp", "tcp/ip"},
	{"__udp", "tcp/ip"},
	{"raw_", "tcp/ip"},
	{"nf_", "tcp/ip"},
	{"ipt_", "tcp/ip"},
	{"sk_filter", "tcp/ip"},
	{"sock_", "tcp/ip"},
	{"__sock_", "tcp/ip"},
	{"sk_", "tcp/ip"},
	{"__sk_", "tcp/ip"},
	{"release_sock", "tcp/ip"},
	{"dst_", "tcp/ip"},
	{"ipv6_", "tcp/ip"},
	{"inet6_", "tcp/ip"},
	{"ip6_", "tcp/ip"},
	{"tcp_v6_", "tcp/ip"},
	/* congestion control modules */
	{"bbr_", "tcp/ip"},
	{"cubictcp_", "tcp/ip"},
	{"bictcp_", "tcp/ip"},
	/* netdevice: NAPI, the device layer, qdiscs, GRO/GSO, loopback */
	{"napi_", "netdev"},
	{"__napi_", "netdev"},
	{"netif_", "netdev"},
	{"__netif_", "netdev"},
	{"netdev_", "netdev"},
	{"dev_", "netdev"},
	{"__dev_", "netdev"},
	{"net_rx_action", "netdev"},
	{"net_tx_action", "netdev"},
	{"qdisc_", "netdev"},
	{"__qdisc_", "netdev"},
	{"sch_", "netdev"},
	{"pfifo_", "netdev"},
	{"fq_codel_", "netdev"},
	{"loopback_", "netdev"},
	{"validate_xmit_", "netdev"},
	{"gro_", "netdev"},
	{"skb_gro_", "netdev"},
	{"__skb_gro_", "netdev"},
	{"eth_", "netdev"},
	{"process_backlog", "netdev"},
	{"enqueue_to_backlog", "netdev"},
	{"rps_", "netdev"},
	{"get_rps_cpu", "netdev"},
	{"__cgroup_bpf_run_filter_skb", "netdev"},
	/* skb management */
	{"skb_", "skb"},
	{"__skb_", "skb"},
	{"pskb_", "skb"},
	{"__pskb_", "skb"},
	{"kfree_skb", "skb"},
	{"__kfree_skb", "skb"},
	{"consume_skb", "skb"},
	{"alloc_skb", "skb"},
	{"__alloc_skb", "skb"},
	{"build_skb", "skb"},
	{"__build_skb", "skb"},
	{"napi_build_skb", "skb"},
	{"tcp_stream_alloc_skb", "skb"},
	{"sk_stream_alloc_skb", "skb"},
	{"skb_page_frag_refill", "skb"},
	{"sk_page_frag_refill", "skb"},
	/* memory de-/allocation */
	{"__alloc_pages", "mm"},
	{"alloc_pages", "mm"},
	{"__folio_alloc", "mm"},
	{"folio_alloc", "mm"},
	{"get_page_from_freelist", "mm"},
	{"rmqueue", "mm"},
	{"__rmqueue", "mm"},
	{"free_unref_", "mm"},
	{"free_pcppages_bulk", "mm"},
	{"free_tail_page", "mm"},
	{"__free_pages", "mm"},
	{"free_pages", "mm"},
	{"__free_one_page", "mm"},
	{"__put_page", "mm"},
	{"__folio_put", "mm"},
	{"put_page", "mm"},
	{"clear_page", "mm"},
	{"prep_compound_page", "mm"},
	{"prep_new_page", "mm"},
	{"post_alloc_hook", "mm"},
	{"kernel_init_pages", "mm"},
	{"kernel_init_free_pages", "mm"},
	{"kmem_cache_", "mm"},
	{"__kmem_cache_", "mm"},
	{"kmalloc", "mm"},
	{"__kmalloc", "mm"},
	{"kfree", "mm"},
	{"__kfree", "mm"},
	{"krealloc", "mm"},
	{"ksize", "mm"},
	{"__ksize", "mm"},
	{"slab_", "mm"},
	{"__slab_", "mm"},
	{"___slab_", "mm"},
	{"page_frag_", "mm"},
	{"page_pool_", "mm"},
	{"mem_cgroup_", "mm"},
	{"__mem_cgroup_", "mm"},
	{"memcg_", "mm"},
	{"__memcg_", "mm"},
	{"mod_memcg_", "mm"},
	{"__mod_memcg_", "mm"},
	{"__mod_lruvec_", "mm"},
	{"mod_lruvec_", "mm"},
	{"__mod_zone_", "mm"},
	{"__mod_node_", "mm"},
	{"obj_cgroup_", "mm"},
	{"refill_obj_stock", "mm"},
	{"drain_obj_stock", "mm"},
	{"consume_obj_stock", "mm"},
	{"page_counter_", "mm"},
	{"try_charge", "mm"},
	{"__zone_watermark_ok", "mm"},
	{"__free_frozen_pages", "mm"},
	{"free_frozen_page", "mm"},
	{"__alloc_frozen_pages", "mm"},
	{"alloc_frozen_pages", "mm"},
	{"__get_pfnblock_flags", "mm"},
	{"get_pfnblock_flags", "mm"},
	{"alloc_pages_mpol", "mm"},
	{"__page_cache_release", "mm"},
	/* lock/unlock */
	{"_raw_spin_", "lock"},
	{"_raw_read_", "lock"},
	{"_raw_write_", "lock"},
	{"queued_spin_", "lock"},
	{"native_queued_spin_", "lock"},
	{"__pv_queued_spin_", "lock"},
	{"queued_read_", "lock"},
	{"queued_write_", "lock"},
	{"lock_sock", "lock"},
	{"__lock_sock", "lock"},
	{"mutex_", "lock"},
	{"__mutex_", "lock"},
	{"down_", "lock"},
	{"up_", "lock"},
	{"rwsem_", "lock"},
	{"osq_", "lock"},
	{"__raw_callee_save___pv_queued_spin", "lock"},
	/* scheduling */
	{"schedule", "sched"},
	{"__schedule", "sched"},
	{"__cond_resched", "sched"},
	{"_cond_resched", "sched"},
	{"psi_", "sched"},
	{"enqueue_", "sched"},
	{"dequeue_", "sched"},
	{"update_curr", "sched"},
	{"update_load_", "sched"},
	{"__update_load_", "sched"},
	{"update_cfs_", "sched"},
	{"update_rq_clock", "sched"},
	{"pick_next_", "sched"},
	{"put_prev_", "sched"},
	{"set_next_", "sched"},
	{"try_to_wake_up", "sched"},
	{"ttwu_", "sched"},
	{"__wake_up", "sched"},
	{"wake_up_", "sched"},
	{"woken_wake_function", "sched"},
	{"autoremove_wake_function", "sched"},
	{"finish_task_switch", "sched"},
	{"__switch_to", "sched"},
	{"switch_mm", "sched"},
	{"sched_", "sched"},
	{"select_task_rq", "sched"},
	{"select_idle_", "sched"},
	{"check_preempt", "sched"},
	{"wakeup_preempt", "sched"},
	{"resched_curr", "sched"},
	{"reweight_", "sched"},
	{"cpuacct_", "sched"},
	{"account_", "sched"},
	{"prepare_task_switch", "sched"},
	{"wait_woken", "sched"},
	{"prepare_to_wait", "sched"},
	{"finish_wait", "sched"},
	{"local_bh_enable", "sched"},
	{"__local_bh_enable", "sched"},
	{"raw_spin_rq_", "sched"},
	/* others: syscall entry and exit, IRQ and softirq handling, timers, the profiler's
	 * own sampling */
	{"entry_SYSCALL", "etc"},
	{"do_syscall_64", "etc"},
	{"syscall_", "etc"},
	{"__x64_sys_", "etc"},
	{"__sys_", "etc"},
	{"ksys_", "etc"},
	{"x64_sys_call", "etc"},
	{"exit_to_user_mode", "etc"},
	{"__fget", "etc"},
	{"fget", "etc"},
	{"fput", "etc"},
	{"__fdget", "etc"},
	{"fdget", "etc"},
	{"vfs_", "etc"},
	{"rw_verify_area", "etc"},
	{"security_", "etc"},
	{"apparmor_", "etc"},
	{"aa_", "etc"},
	{"__do_softirq", "etc"},
	{"handle_softirqs", "etc"},
	{"do_softirq", "etc"},
	{"irq_", "etc"},
	{"__irq_", "etc"},
	{"asm_", "etc"},
	{"sysvec_", "etc"},
	{"common_interrupt", "etc"},
	{"hrtimer_", "etc"},
	{"__hrtimer_", "etc"},
	{"tick_", "etc"},
	{"ktime_", "etc"},
	{"read_tsc", "etc"},
	{"native_sched_clock", "etc"},
	{"timekeeping_", "etc"},
	{"rcu_", "etc"},
	{"__rcu_", "etc"},
	{"perf_", "etc"},
	{"__perf_", "etc"},
	{"bpf_", "etc"},
	{"__bpf_", "etc"},
	{"___bpf_", "etc"},
	{"fpregs_", "etc"},
	{"switch_fpu", "etc"},
	{"restore_fpregs", "etc"},
	{"__x86_return_thunk", "etc"},
	{"__x86_indirect_thunk", "etc"},
	{"srso_", "etc"},
	{"native_", "etc"},
	{"clear_bhb_loop", "etc"},
	{"mod_timer", "etc"},
	{"__mod_timer", "etc"},
	{"lock_timer_base", "etc"},
	{"cpuidle_", "etc"},
	{"do_idle", "etc"},
	{"default_idle", "etc"},
	{"csum_partial", "etc"},
	{"do_csum", "etc"},
	{"__siphash", "etc"},
	{"siphash_", "etc"},
	{"__get_user_", "etc"},
	{"__put_user_", "etc"},
	{"__fsnotify_", "etc"},
	{"fsnotify", "etc"},
	{"__audit_", "etc"},
	{"audit_", "etc"},
	{"__cgroup_account_cputime", "etc"},
	{"cgroup_rstat_", "etc"},
	/* select and poll: the application's waiting for its sockets */
	{"core_sys_select", "etc"},
	{"do_select", "etc"},
	{"do_pselect", "etc"},
	{"__pollwait", "etc"},
	{"poll_freewait", "etc"},
	{"do_sys_poll", "etc"},
	{"do_poll", "etc"},
	{"ep_", "etc"},
	{"do_epoll_", "etc"},
	{"get_timespec64", "etc"},
	{"put_timespec64", "etc"},
	{"__rseq_", "etc"},
	{"rseq_", "etc"},
	{"__list_del_entry_valid", "etc"},
	{"__list_add_valid", "etc"},
	{"__pi_", "etc"}, /* what is not one of the aliases below */
	{"pvclock_", "etc"},
	{"kvm_clock_", "etc"},
	{"__traceiter_", "etc"},
	{"select_estimate_accuracy", "etc"},
	{"poll_select_", "etc"},
	{"_find_next_", "etc"},
	{"_find_first_", "etc"},
};

struct comp_rule {
	const char *pattern; /* owned by the table's strings */
	size_t len;
	bool prefix, user;
	int comp;
	int layer; /* 0: a components file, 1: built in */
};

struct comp_table {
	char **names;
	size_t nr_names, cap_names;
	struct comp_rule *rules;
	size_t nr_rules, cap_rules;
	struct u64map exact; /* hash(layer, user, name) -> rule index + 1 */
	char **strings;	     /* patterns read from files */
	size_t nr_strings, cap_strings;
};

static int comp_id(struct comp_table *t, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < t->nr_names; i++)
		if (strlen(t->names[i]) == len && !memcmp(t->names[i], name, len))
			return i;
	xgrow((void **)&t->names, &t->cap_names, t->nr_names + 1, sizeof(char *));
	t->names[t->nr_names] = xmalloc(len + 1);
	memcpy(t->names[t->nr_names], name, len);
	t->names[t->nr_names][len] = 0;
	return t->nr_names++;
}

static uint64_t rule_hash(int layer, bool user, const char *name, size_t len)
{
	uint64_t h = fnv1a(&layer, sizeof(layer), FNV1A_INIT);

	h = fnv1a(&user, sizeof(user), h);
	return fnv1a(name, len, h);
}

static void add_rule(struct comp_table *t, const char *pattern, size_t len, bool prefix, bool user,
		     int comp, int layer)
{
	struct comp_rule *r;

	if (!prefix) {
		uint64_t h = rule_hash(layer, user, pattern, len), *slot;
		bool created;

		slot = u64map__slot(&t->exact, h, &created);
		if (!created) { /* the same name again: the later line wins */
			t->rules[*slot - 1].comp = comp;
			return;
		}
		*slot = t->nr_rules + 1;
	}
	xgrow((void **)&t->rules, &t->cap_rules, t->nr_rules + 1, sizeof(*t->rules));
	r = &t->rules[t->nr_rules++];
	r->pattern = pattern;
	r->len = len;
	r->prefix = prefix;
	r->user = user;
	r->comp = comp;
	r->layer = layer;
}

struct comp_table *comp_table__new(void)
{
	struct comp_table *t = xcalloc(1, sizeof(*t));
	static const char *const order[] = {"data_copy", "tcp/ip", "netdev", "skb",
					    "mm",	 "lock",   "sched",  "etc"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(order); i++)
		comp_id(t, order[i], strlen(order[i]));
	for (i = 0; i < comp_sigcomm21_nr; i++) {
		const char *s = comp_sigcomm21[i].symbol;
		const char *dot = strchr(s, '.');

		add_rule(t, s, dot ? (size_t)(dot - s) : strlen(s), false, false,
			 comp_id(t, comp_sigcomm21[i].component,
				 strlen(comp_sigcomm21[i].component)),
			 1);
	}
	for (i = 0; i < ARRAY_SIZE(prefix_rules); i++)
		add_rule(t, prefix_rules[i].symbol, strlen(prefix_rules[i].symbol), true, false,
			 comp_id(t, prefix_rules[i].component, strlen(prefix_rules[i].component)),
			 1);
	return t;
}

void comp_table__delete(struct comp_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr_names; i++)
		free(t->names[i]);
	for (i = 0; i < t->nr_strings; i++)
		free(t->strings[i]);
	free(t->names);
	free(t->strings);
	free(t->rules);
	u64map__free(&t->exact);
	free(t);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Splits line[0..len) into at most 4 whitespace-separated fields, '#' starting a
 * comment; returns the number of fields (4 means too many). */
static int split(const char *line, size_t len, const char **f, size_t *fl)
{
	size_t i = 0;
	int n = 0;

	while (i < len) {
		size_t s;

		while (i < len && is_space(line[i]))
			i++;
		if (i >= len || line[i] == '#')
			break;
		if (n == 4)
			return 4;
		s = i;
		while (i < len && !is_space(line[i]) && line[i] != '#')
			i++;
		f[n] = line + s;
		fl[n++] = i - s;
	}
	return n;
}

static bool valid_name(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || s[i] == 0x7f)
			return false;
	return len > 0;
}

int comp_table__parse(struct comp_table *t, const char *name, const char *text, size_t len,
		      char *err, size_t size)
{
	size_t pos = 0;
	int lineno = 0;

	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		const char *f[4];
		size_t fl[4];
		bool user = false, prefix;
		char *pat;
		int n;

		pos += ll + (nl != NULL);
		lineno++;
		n = split(line, ll, f, fl);
		if (!n)
			continue;
		if (n < 2 || n > 3) {
			snprintf(err, size,
				 "%s:%d: expected 'PATTERN COMPONENT [kernel|user]', found %d "
				 "field%s",
				 name, lineno, n == 4 ? 4 : n, n == 1 ? "" : "s");
			return -EINVAL;
		}
		if (n == 3) {
			if (fl[2] == 4 && !memcmp(f[2], "user", 4))
				user = true;
			else if (!(fl[2] == 6 && !memcmp(f[2], "kernel", 6))) {
				snprintf(err, size,
					 "%s:%d: the third field must be 'kernel' or 'user', not "
					 "'%.*s'",
					 name, lineno, (int)(fl[2] > 40 ? 40 : fl[2]), f[2]);
				return -EINVAL;
			}
		}
		prefix = f[0][fl[0] - 1] == '*';
		if (!valid_name(f[0], fl[0] - prefix) || memchr(f[0], '*', fl[0] - prefix) ||
		    !valid_name(f[1], fl[1]) || fl[1] > 64 || memchr(f[0], 0, fl[0]) ||
		    memchr(f[1], 0, fl[1])) {
			snprintf(err, size,
				 "%s:%d: a pattern is a name, or a prefix ending in one '*'; a "
				 "component a name of at most 64 characters",
				 name, lineno);
			return -EINVAL;
		}
		pat = xmalloc(fl[0] + 1);
		memcpy(pat, f[0], fl[0] - prefix);
		pat[fl[0] - prefix] = 0;
		xgrow((void **)&t->strings, &t->cap_strings, t->nr_strings + 1, sizeof(char *));
		t->strings[t->nr_strings++] = pat;
		add_rule(t, pat, fl[0] - prefix, prefix, user, comp_id(t, f[1], fl[1]), 0);
	}
	return 0;
}

int cpu_read_file(const char *path, char **out, size_t *out_len)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n = 0;
	int fd = safefile__open_input(path, NULL), ret = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		xgrow((void **)&buf, &cap, len + 65537, 1);
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		if (n <= 0)
			break;
		len += n;
		if (len > (1u << 30)) {
			ret = -EFBIG;
			break;
		}
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*out = buf;
	*out_len = len;
	return 0;
}

int comp_table__load(struct comp_table *t, const char *path, char *err, size_t size)
{
	char *buf;
	size_t len;
	int ret = cpu_read_file(path, &buf, &len);

	if (ret) {
		snprintf(err, size, "cannot read the components file '%s': %s", path,
			 safefile__strerror(ret));
		return ret;
	}
	ret = comp_table__parse(t, path, buf, len, err, size);
	free(buf);
	return ret;
}

/* The component of name[0..len) by the rules of one layer, or -1. */
static int classify_layer(const struct comp_table *t, const char *name, size_t len, bool kernel,
			  int layer)
{
	const struct comp_rule *best = NULL;
	uint64_t idx;
	size_t i;

	if (u64map__get(&t->exact, rule_hash(layer, !kernel, name, len), &idx)) {
		const struct comp_rule *r = &t->rules[idx - 1];

		if (r->len == len && !memcmp(r->pattern, name, len))
			return r->comp;
	}
	for (i = 0; i < t->nr_rules; i++) {
		const struct comp_rule *r = &t->rules[i];

		if (!r->prefix || r->layer != layer || r->user == kernel || r->len > len ||
		    (best && best->len >= r->len) || memcmp(r->pattern, name, r->len))
			continue;
		best = r;
	}
	return best ? best->comp : -1;
}

int comp_table__classify(const struct comp_table *t, const char *name, bool kernel)
{
	const char *dot = strchr(name, '.');
	size_t len = dot && dot != name ? (size_t)(dot - name) : strlen(name);
	int layer, comp;

	/* x86 kernels name some functions twice at one address, "__pi_memset" beside
	 * "memset" (the position-independent alias early boot code calls): which name a
	 * symbolizer shows is its choice (perf shows __pi_memset, srvscope memset), so the
	 * alias is classified as the function, unless a components file names the alias. */
	if (kernel && len > 5 && !strncmp(name, "__pi_", 5)) {
		if ((comp = classify_layer(t, name, len, kernel, 0)) >= 0)
			return comp;
		if ((comp = comp_table__classify(t, name + 5, kernel)) >= 0)
			return comp;
	}
	for (layer = 0; layer < 2; layer++)
		if ((comp = classify_layer(t, name, len, kernel, layer)) >= 0)
			return comp;
	return -1;
}

size_t comp_table__nr(const struct comp_table *t)
{
	return t->nr_names;
}

const char *comp_table__name(const struct comp_table *t, int comp)
{
	return comp >= 0 && (size_t)comp < t->nr_names ? t->names[comp] : "unmatched";
}

size_t comp_table__rules(const struct comp_table *t)
{
	return t->nr_rules;
}
