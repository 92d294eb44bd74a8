/* The component classifier: the published mapping, the prefix rules for today's kernels,
 * suffixes cut at the first dot, a components file's precedence and its errors; and the
 * attribution of samples by self time and inclusive. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "unit.h"

static const char *cls(const struct comp_table *t, const char *name, bool kernel)
{
	return comp_table__name(t, comp_table__classify(t, name, kernel));
}

static void test_builtin(void)
{
	struct comp_table *t = comp_table__new();
	size_t i;
	int bad = 0;

	/* every line of the published table classifies as it says */
	for (i = 0; i < comp_sigcomm21_nr; i++)
		if (strcmp(cls(t, comp_sigcomm21[i].symbol, true), comp_sigcomm21[i].component)) {
			if (!bad++)
				printf("# %s: %s, want %s\n", comp_sigcomm21[i].symbol,
				       cls(t, comp_sigcomm21[i].symbol, true),
				       comp_sigcomm21[i].component);
		}
	is_int(bad, 0, "all %zu symbols of the SIGCOMM'21 table classify as published",
	       comp_sigcomm21_nr);
	is_int(comp_sigcomm21_nr, 430, "the table has the 430 published lines");
	is_str(cls(t, "copy_user_enhanced_fast_string", true), "data_copy", "published name");
	is_str(cls(t, "free_unref_page_prepare.part.0", true), "mm",
	       "published name with its suffix");
	is_str(cls(t, "skb_release_data.isra.0", true), "skb", "a suffix is cut at the first dot");
	is_str(cls(t, "_copy_from_iter", true), "data_copy", "6.x copy routine (prefix)");
	is_str(cls(t, "rep_movs_alternative", true), "data_copy", "6.x user copy");
	is_str(cls(t, "tcp_recvmsg_locked", true), "tcp/ip", "tcp_ prefix");
	is_str(cls(t, "__tcp_transmit_skb", true), "tcp/ip", "published beats skb_ lookalikes");
	is_str(cls(t, "tcp_stream_alloc_skb", true), "skb",
	       "the longest prefix wins (tcp_stream_alloc_skb over tcp_)");
	is_str(cls(t, "__netif_receive_skb_core.constprop.0", true), "netdev", "netif");
	is_str(cls(t, "napi_consume_skb", true), "netdev", "published napi_consume_skb");
	is_str(cls(t, "kmem_cache_alloc_node_noprof", true), "mm", "kmem_cache_ prefix");
	is_str(cls(t, "_raw_spin_unlock_irqrestore", true), "lock", "published spin unlock");
	is_str(cls(t, "_raw_spin_lock_bh", true), "lock", "spin lock");
	is_str(cls(t, "finish_task_switch.isra.0", true), "sched", "finish_task_switch");
	is_str(cls(t, "psi_group_change", true), "sched", "psi_");
	is_str(cls(t, "entry_SYSCALL_64_after_hwframe", true), "etc", "syscall entry is others");
	is_str(cls(t, "some_new_function", true), "unmatched", "unknown: unmatched, not others");
	is_str(cls(t, "__pi_memset", true), "data_copy",
	       "an alias __pi_X is X (perf names memset so)");
	is_str(cls(t, "__pi___x86_indirect_thunk_rax", true), "etc", "__pi_ of an 'etc' function");
	is_str(cls(t, "__pi_startup_64", true), "etc", "a __pi_ name of no known function");
	is_str(cls(t, "tcp_sendmsg", false), "unmatched", "kernel rules do not apply to user");
	is_str(cls(t, "", true), "unmatched", "an empty name");
	is_str(cls(t, ".isra.0", true), "unmatched", "a name that is only a suffix");
	comp_table__delete(t);
}

static void test_file(void)
{
	struct comp_table *t = comp_table__new();
	char err[256] = "";
	const char *good = "# comment\n\n"
			   "_copy_to_iter   rxcopy        # exact, over the built-in rule\n"
			   "tcp_*           tcp           kernel\n"
			   "btr_*           btree         user\n"
			   "btr_leaf_*      leaf          user\n"
			   "\t  main  app user\r\n";
	int r;

	r = comp_table__parse(t, "f", good, strlen(good), err, sizeof(err));
	is_int(r, 0, "a good file parses");
	is_str(cls(t, "_copy_to_iter", true), "rxcopy", "a file's exact rule wins");
	is_str(cls(t, "_copy_from_iter", true), "data_copy", "the built-in rules stay");
	is_str(cls(t, "tcp_stream_alloc_skb", true), "tcp",
	       "a file's prefix wins over a longer built-in one");
	is_str(cls(t, "btr_split", false), "btree", "a user rule");
	is_str(cls(t, "btr_leaf_insert", false), "leaf", "the longest user prefix");
	is_str(cls(t, "btr_split", true), "unmatched", "a user rule is not a kernel one");
	is_str(cls(t, "main", false), "app", "tabs, spaces and CR around fields");
	r = comp_table__parse(t, "g", "__pi_memcpy early\n", 18, err, sizeof(err));
	is_str(cls(t, "__pi_memcpy", true), "early", "a file's rule for an alias wins");
	is_str(cls(t, "__pi_memmove", true), "data_copy", "and only for it");

	r = comp_table__parse(t, "bad", "a b\nonly\n", 9, err, sizeof(err));
	is_int(r, -22, "one field: -EINVAL");
	is_str(err, "bad:2: expected 'PATTERN COMPONENT [kernel|user]', found 1 field",
	       "named with its line");
	r = comp_table__parse(t, "bad", "a b c d\n", 8, err, sizeof(err));
	is_str(err, "bad:1: expected 'PATTERN COMPONENT [kernel|user]', found 4 fields",
	       "too many fields");
	r = comp_table__parse(t, "bad", "a b both\n", 9, err, sizeof(err));
	is_str(err, "bad:1: the third field must be 'kernel' or 'user', not 'both'",
	       "a bad third field");
	r = comp_table__parse(t, "bad", "a*b c\n", 6, err, sizeof(err));
	ok(r && strstr(err, "bad:1: a pattern is a name, or a prefix ending in one '*'"),
	   "a '*' inside a pattern: %s", err);
	r = comp_table__parse(t, "bad", "* c\n", 4, err, sizeof(err));
	ok(r && strstr(err, "bad:1:"), "a pattern that is only '*'");
	comp_table__delete(t);
}

static void test_attribution(void)
{
	struct comp_table *t = comp_table__new();
	struct cpu_profile *p = cpu_profile__new(1);
	struct cpu_comp_share cs;
	struct cpu_func_row *rows;
	char err[128];
	size_t nr;
	const char *folded = "app;main;write;tcp_sendmsg_[k];memcpy_orig_[k] 60\n"
			     "app;main;write;tcp_sendmsg_[k];mystery_fn_[k] 30\n"
			     "app;main;write;__wake_up_[k];_raw_spin_lock_[k] 7\n"
			     "app;main;compute 100\n"
			     "app;main;other_mystery_[k] 3\n";
	int data_copy = 0, tcp = 1, lock = 5; /* the built-in order */

	is_int(cpu_profile__parse_folded(p, "x", folded, strlen(folded), err, sizeof(err)), 0,
	       "folded stacks parse");
	is_int(p->samples, 200, "200 samples");
	is_int(p->kernel_samples, 100, "100 of them in the kernel");
	cpu_profile__classify(p, t);
	is_str(comp_table__name(t, data_copy), "data_copy", "component 0 is data copy");
	is_str(comp_table__name(t, tcp), "tcp/ip", "1 is TCP/IP");
	is_str(comp_table__name(t, lock), "lock", "5 is lock");

	cpu_profile__components(p, t, false, NULL, NULL, &cs);
	is_int(cs.kernel_total, 100, "self: kernel samples only");
	is_int(cs.per_comp[data_copy], 60, "self: memcpy is data copy");
	is_int(cs.per_comp[lock], 7, "self: the spin lock");
	is_int(cs.per_comp[tcp], 0, "self: tcp_sendmsg has no self time");
	is_int(cs.unmatched, 33, "self: 33 unmatched");
	is_int(cs.nr_unmatched, 2, "two unmatched functions");
	is_str(p->funcs[cs.unmatched_funcs[0]].name, "mystery_fn", "the largest first");
	is_int(cs.unmatched_counts[0], 30, "with its samples");
	cpu_comp_share__free(&cs);

	cpu_profile__components(p, t, true, NULL, NULL, &cs);
	is_int(cs.per_comp[tcp], 30, "inclusive: mystery_fn under tcp_sendmsg is TCP/IP");
	is_int(cs.per_comp[data_copy], 60, "inclusive: memcpy is still data copy");
	is_int(cs.unmatched, 3, "inclusive: only the stack without a classified frame");
	cpu_comp_share__free(&cs);

	rows = cpu_profile__functions(p, &nr);
	is_str(p->funcs[rows[0].func].name, "compute", "functions by self: compute first");
	is_int(rows[0].self, 100, "its self");
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(p->funcs[rows[i].func].name, "main"))
			is_int(rows[i].total, 200, "main's total is every sample");
	free(rows);

	is_int(cpu_profile__parse_folded(p, "y", "a;b 1\nno_count\n", 16, err, sizeof(err)), -22,
	       "a line without a count");
	is_str(err, "y:2: expected 'frame;frame;... COUNT'", "named with its line");
	cpu_profile__delete(p);
	comp_table__delete(t);
}

static void test_stat(void)
{
	const char *line = "4242 (a) b) c) R 1 4242 4242 0 -1 4194560 11 0 22 0 33 44 0 0 20 0 1 "
			   "0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0";
	uint64_t ut, st, minf, majf;
	char state;
	int cpu;

	is_int(cpu_parse_stat(line, &state, &ut, &st, &minf, &majf, &cpu), 0, "stat parses");
	is_int(state, 'R', "state after a name with ') '");
	is_int(minf, 11, "minflt");
	is_int(majf, 22, "majflt");
	is_int(ut, 33, "utime");
	is_int(st, 44, "stime");
	is_int(cpu, 3, "processor");
	is_int(cpu_parse_stat("garbage", &state, &ut, &st, &minf, &majf, &cpu), -22,
	       "garbage: -EINVAL");
}

int main(void)
{
	test_builtin();
	test_file();
	test_attribution();
	test_stat();
	return done_testing();
}
