#!/usr/bin/env bash
# What recording costs a busy server, next to perf: memcached (4 threads) under memcslap
# (8 connections), throughput with no recorder, with 'srvscope record -p', 'perf trace -p'
# and 'perf sched record'. The modes alternate round by round (drift hits them all alike);
# medians, and ratios to the unrecorded throughput, are printed; the order turns each round.
# Loads of 20000 gets per connection (about 2 s each on 2 vCPUs): 6000 (0.6 s) left the
# unrecorded throughput itself moving by a fifth from round to round.
# PIN=1: memcached and memcslap share the last CPU and the recorders run on CPU 0, so the
# figure is what recording costs the server's CPU (BPF programs, the kernel's share of the
# ring buffers), without the recorder process's own time and without the scheduler's
# placement noise of a 2-CPU machine.
# FLOOR=1: two more modes, what the same tracepoints cost with less done in them
# (SRVSCOPE_RECORD_FLOOR, src/bpf/record.bpf.c floor_mode): srvscope-empty, every program
# attached and returning at once; srvscope-bare, a record of the header alone for each
# switch, waking and wake-up of the server and nothing else (no stacks, no contexts, no
# syscall or fd). Any recorder of these events pays about the second.
# CLIENT_NETNS=1: memcslap runs in a network namespace of its own, joined to memcached's by
# a veth pair, in every mode, as a client on another host would be; srvscope-net is then
# 'record --net' (the segments memcached's namespace sends and receives: a request in and
# an answer out, as on a server's NIC), where over loopback it is --net=all, which records
# each segment twice (sent by one end, received by the other, both in the namespace).
# STEADY=1: one load all along (memcslap sets, 8 connections) instead of a load per mode, and
# the throughput from memcached's own counters (cmd_get + cmd_set, its 'stats') over SEG
# seconds (default 3) in each mode, once the recorder runs; every recorded segment sits
# between two unrecorded ones and is paired with their mean, so the machine's drift (the
# unrecorded throughput moved by a fifth between rounds a minute apart) mostly cancels.
# MODES="none srvscope ...": the modes to run (none is always first); besides those above,
# srvscope-nowaker (--no-waker-stacks), srvscope-nostacks (--no-stacks), srvscope-nowakers
# (no program at wakings, wake-ups or interrupts: switches alone, as srvscope model records;
# SRVSCOPE_RECORD_NO_WAKERS) and srvscope-empty-nowakers (those left, returning at once);
# srvscope-empty-noipi, -nowake and -noirq: every program returning at once but those of one
# group left unloaded (SRVSCOPE_RECORD_OFF): the IPI vectors' entries and exits, sched_waking
# and sched_wakeup, the interrupts' and timers' entries and exits; srvscope-model, what
# 'srvscope model -p' records (one run, its load a sleep, so the recorded segment is under
# the steady load; stopped as the others, its analysis waited for; bench/model.sh STEADY=1),
# and srvscope-model:ITEMS, the same with SRVSCOPE_MODEL_RECORD=ITEMS (docs/model.md: an item
# left out, e.g. srvscope-model:hz=0, to weigh it against srvscope-model in the same rounds),
# and srvscope-model-empty, its programs attached and returning at once (its floor: its
# syscall programs then stay attached all along, as no syscall is seen to sample);
# idle, nothing recorded (a sleep in the recorder's place): what the bench gives when there is
# nothing to measure, its noise and its bias; bpftrace-empty, bpftrace with empty programs on
# sched_switch, sched_waking and sched_wakeup: what any BPF tool on those events costs here;
# bpftrace-model-empty, bpftrace with empty programs on the events srvscope model cannot do
# without: sched_switch, every syscall's entry (raw_syscalls:sys_enter) and a 99 Hz on-CPU
# sample (not every syscall's exit, which the model has only in its windows): what any BPF
# tool that describes a server by its switches and syscalls costs here.
# Usage (root): [MODES=...] [PIN=1] [FLOOR=1] [CLIENT_NETNS=1] [STEADY=1 [SEG=S]] bench/record-overhead.sh [ROUNDS [GETS_PER_CONNECTION]]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
ROUNDS=${1:-5}
GETS=${2:-20000}
SERVER_CPU="" RECORDER_CPU=""
if [ -n "${PIN:-}" ]; then
	SERVER_CPU="taskset -c $(($(nproc) - 1))" RECORDER_CPU="taskset -c 0"
fi
PORT=${PORT:-22199}
. "$(dirname "$0")/memcached.sh"
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
MC=""
REC=""
STEADY_LOAD=""

NS="" CLIENT="" HOST=127.0.0.1 NETOPT=--net=all

cleanup() {
	[ -n "$REC" ] && kill -TERM "$REC" 2>/dev/null && wait "$REC" 2>/dev/null
	[ -n "$STEADY_LOAD" ] && kill "$STEADY_LOAD" 2>/dev/null && wait "$STEADY_LOAD" 2>/dev/null
	[ -n "$MC" ] && kill "$MC" 2>/dev/null && wait "$MC" 2>/dev/null
	[ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT

bench_need record-overhead memcached memcslap perf
case " ${MODES:-} " in *" bpftrace-empty "* | *" bpftrace-model-empty "*) bench_need record-overhead bpftrace ;; esac
[ "$(id -u)" = 0 ] || { echo "record-overhead: run as root (BPF, perf)" >&2; exit 1; }
[ -x "$SRVSCOPE" ] || { echo "record-overhead: build srvscope first (make)" >&2; exit 1; }

$SERVER_CPU true 2>/dev/null || { echo "record-overhead: PIN=1 needs taskset" >&2; exit 1; }
if [ -n "${CLIENT_NETNS:-}" ]; then
	bench_need record-overhead ip
	NS=srvscope-bench-$$ veth=ssb$(($$ % 100000))
	ip netns add "$NS" &&
		ip link add "$veth" type veth peer name "${veth}p" netns "$NS" &&
		ip addr add 10.231.0.1/24 dev "$veth" && ip link set "$veth" up &&
		ip -n "$NS" addr add 10.231.0.2/24 dev "${veth}p" &&
		ip -n "$NS" link set "${veth}p" up && ip -n "$NS" link set lo up ||
		{ echo "record-overhead: cannot make the client's network namespace" >&2; exit 1; }
	CLIENT="ip netns exec $NS" HOST=10.231.0.1 NETOPT=--net LISTEN=$HOST
fi
start_memcached record-overhead 256
[ -n "$SERVER_CPU" ] && taskset -a -p -c $(($(nproc) - 1)) "$MC" >/dev/null

# One load run: prints gets per second.
load() {
	$SERVER_CPU $CLIENT memcslap -s "$HOST":"$PORT" -c 8 -e "$GETS" -t get 2>&1 |
		awk '/Time to get/ { if ($(NF-1) > 0) printf "%.0f\n", $4 / $(NF-1) }'
}

# STEADY=1: the load that runs all along (restarted if it ends), and the requests memcached
# has served, from its own counters.
STEADY_LOAD=""
steady_load() {
	[ -n "$STEADY_LOAD" ] && kill -0 "$STEADY_LOAD" 2>/dev/null && return 0
	# per connection: enough sets for about three minutes at 80000/s (0.2 s a 100000 keys
	# to make them first)
	$SERVER_CPU $CLIENT memcslap -s "$HOST":"$PORT" -c 8 -e 2000000 -t set >/dev/null 2>&1 &
	STEADY_LOAD=$!
	# until the sets come (the keys are made first: seconds), then a second more
	local c0 c1
	c0=$(served)
	for _ in $(seq 300); do
		sleep 0.1
		c1=$(served)
		[ "${c1:-0}" -gt "$((${c0:-0} + 1000))" ] && break
	done
	sleep 1
}
served() {
	exec 3<>"/dev/tcp/$HOST/$PORT" || return 1
	printf 'stats\r\nquit\r\n' >&3
	tr -d '\r' <&3 | awk '$2 == "cmd_get" || $2 == "cmd_set" { n += $3 } END { print n + 0 }'
	exec 3<&-
}
# steady_rate: requests a second over SEG seconds of the load that runs (steady_load first,
# outside a $(...): the load's pid is kept).
steady_rate() {
	local c0 c1 t0 t1
	sleep 0.5 # a recorder's start (its first drains, kallsyms) is not what it costs
	t0=$(date +%s%N) c0=$(served)
	sleep "${SEG:-3}"
	t1=$(date +%s%N) c1=$(served)
	# the load ended within the segment (its sets run out): no figure, the caller restarts
	# it and measures again
	kill -0 "$STEADY_LOAD" 2>/dev/null || return 0
	awk -v n="$((c1 - c0))" -v t="$((t1 - t0))" 'BEGIN { if (t > 0 && n > 0) printf "%.0f\n", n * 1e9 / t }'
}
rate() { if [ -n "${STEADY:-}" ]; then steady_rate; else load; fi; }

# wait_for FILE PATTERN: until a recorder says it is running (at most 10 s).
wait_for() {
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

IPI_PROGS=$(for v in irq_work call_function call_function_single reschedule x86_platform_ipi; do
	printf '%s_entry,%s_exit,' $v $v; done)
IRQ_PROGS=softirq_entry,softirq_exit,irq_entry,irq_exit,hrtimer_entry,hrtimer_entry2,hrtimer_exit,hrtimer_exit2,timer_entry,timer_exit
start_recorder() { # MODE
	case $1 in
	none) REC="" ;;
	idle) # nothing recorded: the bench's own noise, each segment paired like a recorder's
		sleep 100000 &
		REC=$!
		;;
	bpftrace-empty | bpftrace-model-empty)
		# another tool's floor: empty programs on the scheduler's tracepoints, or on the
		# events a model needs
		local prog='tracepoint:sched:sched_switch { } tracepoint:sched:sched_waking { }
			tracepoint:sched:sched_wakeup { }'
		[ "$1" = bpftrace-model-empty ] && prog='tracepoint:sched:sched_switch { }
			tracepoint:raw_syscalls:sys_enter { } profile:hz:99 { }'
		$RECORDER_CPU bpftrace -e "$prog" >"$OUT/bpftrace.out" 2>&1 &
		REC=$!
		wait_for "$OUT/bpftrace.out" "Attaching" || echo "# bpftrace did not start" >&2
		;;
	srvscope | srvscope-net | srvscope-empty | srvscope-bare | srvscope-nowaker | srvscope-nostacks | \
		srvscope-nowakers | srvscope-empty-nowakers | srvscope-empty-no*)
		# srvscope-net: with the packets 'critical' needs; =all: on loopback too (memcslap
		# talks to memcached over it; --net alone would record none)
		local floor="" opt="" nowakers="" off=""
		case $1 in
		srvscope-empty) floor=1 ;;
		srvscope-empty-nowakers) floor=1 nowakers=1 ;;
		srvscope-empty-noipi) floor=1 off=$IPI_PROGS ;;
		srvscope-empty-nowake) floor=1 off=sched_waking,sched_wakeup ;;
		srvscope-empty-noirq) floor=1 off=$IRQ_PROGS ;;
		srvscope-nowakers) nowakers=1 ;;
		srvscope-bare) floor=2 ;;
		srvscope-net) opt=$NETOPT ;;
		srvscope-nowaker) opt=--no-waker-stacks ;;
		srvscope-nostacks) opt=--no-stacks ;;
		esac
		SRVSCOPE_RECORD_FLOOR=$floor SRVSCOPE_RECORD_NO_WAKERS=$nowakers SRVSCOPE_RECORD_OFF=$off $RECORDER_CPU "$SRVSCOPE" record -p "$MC" $opt \
			--force -o "$OUT/srvscope.trace" --progress 2>"$OUT/srvscope.err" &
		REC=$!
		wait_for "$OUT/srvscope.err" "recording" || echo "# srvscope record did not start" >&2
		;;
	srvscope-model | srvscope-model:* | srvscope-model-empty)
		# what 'srvscope model' records (every syscall with its arguments in sampled
		# windows, switches with stacks, on-CPU samples: docs/model.md), over one run
		# whose load is a sleep: the steady load is the server's; the run's command
		# says when the recording has begun
		rm -f "$OUT/model.json" "$OUT/model.go"
		local items=${SRVSCOPE_MODEL_RECORD:-} floor=""
		case $1 in
		srvscope-model:*) items=${1#srvscope-model:} ;;
		srvscope-model-empty) floor=1 ;;
		esac
		SRVSCOPE_RECORD_FLOOR=$floor SRVSCOPE_MODEL_RECORD=$items $RECORDER_CPU "$SRVSCOPE" model -p "$MC" --conns 8 -o "$OUT/model.json" \
			--load "echo recording >'$OUT/model.go'; exec sleep $((${SEG:-3} + 60))" \
			>/dev/null 2>"$OUT/srvscope.err" &
		REC=$!
		wait_for "$OUT/model.go" "recording" || echo "# srvscope model did not start" >&2
		;;
	perf-trace)
		$RECORDER_CPU perf trace -p "$MC" -o "$OUT/perf-trace.txt" 2>"$OUT/perf-trace.err" &
		REC=$!
		sleep 1.5 # perf trace says nothing when it is ready
		;;
	perf-sched)
		$RECORDER_CPU perf sched record -o "$OUT/perf-sched.data" 2>"$OUT/perf-sched.err" >/dev/null &
		REC=$!
		sleep 1.5
		;;
	esac
}

stop_recorder() { # MODE
	[ -n "$REC" ] || return 0
	kill -TERM "$REC" 2>/dev/null
	wait "$REC" 2>/dev/null
	REC=""
	case $1 in
	srvscope) tr '\r' '\n' <"$OUT/srvscope.err" | sed 's/\x1b\[K//g' | grep -E "recorded" | tail -1 >>"$OUT/srvscope.summary" ;;
	esac
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

MODES=${MODES:-"none srvscope srvscope-net perf-trace perf-sched${FLOOR:+ srvscope-empty srvscope-bare}"}
MODES="none $(printf '%s\n' $MODES | grep -vx none | tr '\n' ' ')"
MODES=${MODES% }
# Fill the cache so that gets hit, and warm everything up once.
if [ -z "${STEADY:-}" ]; then
	$CLIENT memcslap -s "$HOST":"$PORT" -c 8 -e "$GETS" -t set >/dev/null 2>&1
	load >/dev/null
fi

if [ -n "${STEADY:-}" ]; then
	echo "# memcached -t 4, memcslap -c 8 -t set all along; $ROUNDS rounds of ${SEG:-3} s a mode, each recorded segment between two unrecorded ones; $(nproc) CPUs; $(uname -r)${PIN:+; PIN=1: server and load on CPU $(($(nproc) - 1)), recorders on CPU 0}${NS:+; the client in a network namespace, over veth; srvscope-net is record $NETOPT}"
	for r in $(seq "$ROUNDS"); do
		steady_load
		prev=$(rate)
		[ -n "$prev" ] || { steady_load && prev=$(rate); }
		echo "${prev:-0}" >>"$OUT/none.ops"
		line="round $r: none=${prev:-0}"
		for m in ${MODES#none }; do
			steady_load
			start_recorder "$m"
			v=$(rate)
			[ -n "$v" ] || { steady_load && v=$(rate); }
			stop_recorder "$m"
			steady_load
			next=$(rate)
			[ -n "$next" ] || { steady_load && next=$(rate); }
			echo "${v:-0}" >>"$OUT/$m.ops"
			echo "${next:-0}" >>"$OUT/none.ops"
			awk -v v="${v:-0}" -v a="${prev:-0}" -v b="${next:-0}" 'BEGIN { if (a + b > 0) printf "%.5f\n", 2 * v / (a + b) }' >>"$OUT/$m.ratio"
			line="$line $m=${v:-0} none=${next:-0}"
			prev=$next
		done
		echo 1 >>"$OUT/none.ratio"
		echo "# $line"
	done
else
	echo "# memcached -t 4, memcslap -c 8 -e $GETS -t get; $ROUNDS rounds; $(nproc) CPUs; $(uname -r)${PIN:+; PIN=1: server and load on CPU $(($(nproc) - 1)), recorders on CPU 0}${NS:+; the client in a network namespace, over veth; srvscope-net is record $NETOPT}"
	set -- $MODES
	for r in $(seq "$ROUNDS"); do
		line="round $r:"
		# The order turns by one mode each round: a load runs faster the later it comes
		# in a round (with a fixed order, idle came out 2.7 % faster than none, programs
		# returning at once 5.3 %), and each place in the order is then every mode's
		# alike.
		order=$(k=$(((r - 1) % $#)); printf '%s\n' "$@" | awk -v k="$k" -v n="$#" '
			{ m[NR - 1] = $0 } END { for (i = 0; i < n; i++) print m[(i + k) % n] }')
		for m in $order; do
			start_recorder "$m"
			v=$(load)
			stop_recorder "$m"
			echo "${v:-0}" >>"$OUT/$m.ops"
			line="$line $m=${v:-0}"
			eval "round_${m//[^A-Za-z0-9]/_}=${v:-0}"
		done
		# Each mode against the unrecorded run of its own round, a minute apart at most:
		# drift between rounds (the machine's other load, its clock) cancels out.
		for m in $MODES; do
			eval "v=\$round_${m//[^A-Za-z0-9]/_}"
			awk -v v="$v" -v b="$round_none" 'BEGIN { if (b > 0) printf "%.5f\n", v / b }' >>"$OUT/$m.ratio"
		done
		echo "# $line"
	done
fi

base=$(median <"$OUT/none.ops")
median_ratio() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '\n%-22s %14s %10s %10s %16s\n' "mode" "median gets/s" "ratio" "cost %" "paired cost %"
for m in $MODES; do
	med=$(median <"$OUT/$m.ops")
	pr=$(median_ratio <"$OUT/$m.ratio")
	awk -v m="$m" -v v="$med" -v b="$base" -v pr="$pr" 'BEGIN {
		printf "%-22s %14.0f %10.3f %10.1f %16.1f\n", m, v, v / b, 100 * (1 - v / b), 100 * (1 - pr) }'
	eval "med_${m//[^A-Za-z0-9]/_}=$med"
	eval "pr_${m//[^A-Za-z0-9]/_}=$pr"
done
# the summary lines of the modes that ran
has() { case " $MODES " in *" $1 "*) return 0 ;; esac; return 1; }
if has srvscope; then
	awk -v b="$base" -v s="$med_srvscope" -v pr="$pr_srvscope" 'BEGIN {
		printf "\nsrvscope record cost: %.1f %% (goal <= 3 %%); paired (each round against its own unrecorded runs): %.1f %%\n",
			100 * (1 - s / b), 100 * (1 - pr) }'
fi
if has perf-trace && has perf-sched; then
	awk -v b="$base" -v t="$med_perf_trace" -v p="$med_perf_sched" 'BEGIN {
		printf "perf trace: %.1f %%, perf sched record: %.1f %%\n", 100 * (1 - t / b), 100 * (1 - p / b) }'
fi
if has srvscope-net; then
	awk -v b="$base" -v s="$med_srvscope_net" -v n="$pr_srvscope_net" -v o="$NETOPT" 'BEGIN {
		printf "srvscope record %s cost: %.1f %% (goal <= 3 %%); paired %.1f %%\n", o, 100 * (1 - s / b), 100 * (1 - n) }'
fi
echo "srvscope record, last round: $(tail -1 "$OUT/srvscope.summary" 2>/dev/null | sed 's/^srvscope: //')"
if has srvscope-empty && has srvscope-bare && has srvscope; then
	awk -v e="$pr_srvscope_empty" -v b="$pr_srvscope_bare" -v s="$pr_srvscope" 'BEGIN {
		printf "floor (paired): the tracepoints attached, programs returning at once %.1f %%; a bare record per event %.1f %%; srvscope %.1f %%\n", 100 * (1 - e), 100 * (1 - b), 100 * (1 - s) }'
fi

# Throughput on a shared machine is noisy: also count the CPU time recording takes, in one
# more run with the kernel's BPF statistics on (they cost a little themselves).
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
prog_ids() { bpftool prog show --json 2>/dev/null | python3 -c 'import json, sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))'; }
bpf_ns_of() { # IDS...: run time of those programs
	bpftool prog show --json 2>/dev/null | python3 -c '
import json, sys
ids = set(int(i) for i in sys.argv[1:])
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p["id"] in ids))' "$@"
}
cpu_cost() { # MODE: the CPU srvscope takes (BPF programs and recorder) during one load
	local before mine b0 b1 u0 u1 t0 t1
	before=" $(prog_ids) "
	start_recorder "$1"
	mine=$(for i in $(prog_ids); do case "$before" in *" $i "*) ;; *) echo "$i" ;; esac; done)
	b0=$(bpf_ns_of $mine)
	u0=$(awk '{print $14 + $15}' /proc/"$REC"/stat)
	[ -n "${STEADY:-}" ] && steady_load
	t0=$(date +%s%N)
	rate >/dev/null
	t1=$(date +%s%N)
	b1=$(bpf_ns_of $mine)
	u1=$(awk '{print $14 + $15}' /proc/"$REC"/stat)
	stop_recorder "$1"
	awk -v m="$1" -v b="$((b1 - b0))" -v u="$((u1 - u0))" -v hz="$(getconf CLK_TCK)" -v w="$((t1 - t0))" -v n="$(nproc)" 'BEGIN {
		us = u / hz * 1e9
		printf "%s CPU during a %.1f s load: BPF programs %.0f ms, recorder process %.0f ms: %.2f %% of %d CPUs\n",
			m, w / 1e9, b / 1e6, us / 1e6, 100 * (b + us) / (w * n), n }'
}
# (not srvscope-model: its programs are loaded per run, after this sees the ones there)
for m in srvscope srvscope-net; do
	has $m && cpu_cost $m
done
sysctl -qw kernel.bpf_stats_enabled="$old_stats"
