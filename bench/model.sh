#!/usr/bin/env bash
# What 'srvscope model' costs the server it describes: memcached (4 threads) under memcslap
# (8 connections, gets, as fast as it answers), its throughput with nothing attached and
# under the model's recording (syscalls with their arguments, every one in the windows a
# busy server's are sampled in (docs/model.md), switches with stacks, on-CPU samples: the
# model runs memcslap as its --load), round by round in turns; the
# medians and their ratio are printed (goal: >= 0.95). Then the end-to-end time of
# 'srvscope model' with its defaults and the built-in client (goal: <= 30 s).
# With --parts, each item the model asks the recorder for is left out in turn
# (SRVSCOPE_MODEL_RECORD, docs/model.md), and memcached's CPU time per request at a fixed
# rate (RATE, default 20000/s) is compared with an unrecorded run in the same round: what
# each item costs the server.
# PARTS_SETS="name:ITEMS ..." runs only those sets (e.g. "all: no-syscalls:syscalls=0").
# FLOOR=1: a third mode each round, the model's recording with every program attached and
# returning at once (SRVSCOPE_RECORD_FLOOR=1): the share of the cost no program can save.
# STEADY=1: the throughput side by side in record-overhead.sh's steady way instead (one
# memcslap load all along, memcached's own counters, each segment under the model's
# recording paired with the unrecorded ones on either side: the machine's drift cancels):
# bench/record-overhead.sh with the modes none and srvscope-model, ROUNDS rounds.
# Usage (root): [FLOOR=1] [STEADY=1 [SEG=S]] bench/model.sh [--parts] [ROUNDS [GETS_PER_CONNECTION]]
set -u
if [ -n "${STEADY:-}" ] && [ "${1:-}" != --parts ]; then
	MODES="none srvscope-model" exec "$(dirname "$0")/record-overhead.sh" "$@"
fi
PARTS=""
if [ "${1:-}" = --parts ]; then
	PARTS=1
	shift
fi
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
ROUNDS=${1:-5}
GETS=${2:-20000}
PORT=${PORT:-22198}
. "$(dirname "$0")/memcached.sh"
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
MC=""

cleanup() {
	[ -n "$MC" ] && kill "$MC" 2>/dev/null && wait "$MC" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT

bench_need model memcached memcslap
[ "$(id -u)" = 0 ] || { echo "model: run as root (BPF)" >&2; exit 1; }
[ -x "$SRVSCOPE" ] || { echo "model: build srvscope first (make)" >&2; exit 1; }

start_memcached model 256
LOAD="memcslap -s 127.0.0.1:$PORT -c 8 -e $GETS -t get"
rate() { awk '/Time to get/ { if ($(NF-1) > 0) printf "%.0f\n", $4 / $(NF-1) }' "$1"; }
$LOAD >/dev/null 2>&1 # the keys exist and nothing is cold

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ -n "$PARTS" ]; then
	# name:SRVSCOPE_MODEL_RECORD; "all" is what the model records by default. Under the
	# built-in client at a fixed rate (the load is the same, only what it costs changes),
	# per request: the run time of the recorder's BPF programs (from their fds' fdinfo in
	# the srvscope process, with kernel.bpf_stats_enabled: exact, and by program), the
	# recorder's own CPU time while the load runs (draining the ring buffer, unwinding),
	# and memcached's CPU time beside an unrecorded run of the same load (noisy on a
	# machine others use too).
	SETS=${PARTS_SETS:-"all: no-budget:budget=0 no-args:args=0 no-syscalls:syscalls=0 no-stacks:stacks=0 no-samples:hz=0
		fp-stacks:fp dump-8k:dump=8192 refresh-1s:refresh=1000 syscalls-only:stacks=0,hz=0
		stacks-only:syscalls=0,hz=0 nothing:syscalls=0,stacks=0,hz=0"}
	RATE=${RATE:-20000}
	URL="memcached://127.0.0.1:$PORT"
	bench_need model bpftool python3 bc
	stats=$(sysctl -n kernel.bpf_stats_enabled)
	[ "$stats" = 1 ] || sysctl -qw kernel.bpf_stats_enabled=1
	restore_stats() { [ "$stats" = 1 ] || sysctl -qw kernel.bpf_stats_enabled=0; cleanup; }
	trap restore_stats EXIT
	cpu() { cut -d' ' -f14,15 "$1" | tr ' ' + | bc; }
	done_reqs() { sed -n 's/^\([0-9]*\) req in .*/\1/p' "$1" | tail -1; }
	us_per_req() { echo "($2 - $1) * 1000000 / $(getconf CLK_TCK) / $3" | bc -l; }
	# The load command, inside the recording: the load, timed on the recorder's CPU clock
	# (its parent), then the counters of the recorder's BPF programs.
	{
		echo "rec0=\$(cut -d' ' -f14,15 /proc/\$PPID/stat | tr ' ' + | bc)"
		echo "'$SRVSCOPE' load '$URL' -c 8 -r $RATE -d 3 >'$OUT/load.out' 2>&1"
		echo "rec1=\$(cut -d' ' -f14,15 /proc/\$PPID/stat | tr ' ' + | bc)"
		echo "echo \$((rec1 - rec0)) >'$OUT/rec.ticks'"
		echo "bpftool prog show -j >'$OUT/progs.json'"
		echo "grep -h -E '^(prog_id|run_time_ns):' /proc/\$PPID/fdinfo/* >'$OUT/fdinfo'"
		echo "true # fds that came and went as grep read them are no failure"
	} >"$OUT/inside.sh"
	for s in $SETS; do : >"$OUT/set-${s%%:*}"; done
	for r in $(seq "$ROUNDS"); do
		for s in $SETS; do
			c0=$(cpu /proc/"$MC"/stat)
			"$SRVSCOPE" load "$URL" -c 8 -r "$RATE" -d 3 >"$OUT/load.out" 2>&1
			none=$(us_per_req "$c0" "$(cpu /proc/"$MC"/stat)" "$(done_reqs "$OUT/load.out")")
			c0=$(cpu /proc/"$MC"/stat)
			SRVSCOPE_MODEL_RECORD=${s#*:} "$SRVSCOPE" model -p "$MC" --conns 8 --duration 3 \
				--load ". $OUT/inside.sh" >/dev/null 2>"$OUT/model.err" ||
				{ cat "$OUT/model.err" >&2; exit 1; }
			n=$(done_reqs "$OUT/load.out")
			python3 - "$OUT" "$n" "$(us_per_req 0 "$(cat "$OUT/rec.ticks")" "$n")" \
				"$(us_per_req "$c0" "$(cpu /proc/"$MC"/stat)" "$n")" "$none" \
				>>"$OUT/set-${s%%:*}" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
names = {p["id"]: p["name"] for p in json.load(open(out + "/progs.json"))}
group = {"sys": 0, "sched": 0, "irq": 0, "samples": 0, "other": 0}
prog = None
for line in open(out + "/fdinfo"):
    k, v = line.split()
    if k == "prog_id:":
        prog = names.get(int(v), "?")
        continue
    g = ("sys" if prog.startswith("sys_") else "sched" if prog.startswith("sched_") else
         "irq" if "irq" in prog or "timer" in prog else "samples" if "sample" in prog else
         "other")
    group[g] += int(v)
print(" ".join("%.3f" % (v / 1e3 / n) for v in group.values()), *sys.argv[3:])
PY
		done
		echo "round $r of $ROUNDS done"
	done
	echo "memcached at $RATE requests/s over 8 connections, us per request, medians of $ROUNDS rounds:"
	echo "  set            BPF: all  syscalls  sched    irq  samples | recorder | memcached (unrecorded)"
	for s in $SETS; do
		python3 - "$OUT/set-${s%%:*}" "${s%%:*}" "${s#*:}" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
c = [statistics.median(x) for x in zip(*rows)]
print("  %-14s %8.2f  %7.2f %6.2f %6.2f %6.2f    | %6.2f   | %6.2f (%6.2f)   SRVSCOPE_MODEL_RECORD=%s"
      % (sys.argv[2], sum(c[:5]), c[0], c[1], c[2], c[3], c[5], c[6], c[7], sys.argv[3]))
PY
	done
	exit 0
fi
: >"$OUT/none"
: >"$OUT/model"
for r in $(seq "$ROUNDS"); do
	$LOAD >"$OUT/slap" 2>&1
	rate "$OUT/slap" >>"$OUT/none"
	"$SRVSCOPE" model -p "$MC" --conns 8 --duration 10 ${MODEL_OPTS:-} --load "$LOAD >$OUT/slap 2>&1" \
		>/dev/null 2>"$OUT/model.err" || { cat "$OUT/model.err" >&2; exit 1; }
	rate "$OUT/slap" >>"$OUT/model"
	floor=""
	if [ -n "${FLOOR:-}" ]; then
		# The same recording with every program attached and returning at once: the
		# model it makes is empty (its exit status is not looked at), the load is not.
		: >"$OUT/slap"
		SRVSCOPE_RECORD_FLOOR=1 "$SRVSCOPE" model -p "$MC" --conns 8 --duration 10 ${MODEL_OPTS:-} \
			--load "$LOAD >$OUT/slap 2>&1" >/dev/null 2>"$OUT/floor.err"
		rate "$OUT/slap" >>"$OUT/floor"
		floor=", its programs attached and returning at once $(tail -1 "$OUT/floor") gets/s"
	fi
	echo "round $r: unrecorded $(tail -1 "$OUT/none") gets/s, under the model's recording $(tail -1 "$OUT/model") gets/s$floor"
done
none=$(median <"$OUT/none")
model=$(median <"$OUT/model")
echo "memcached, memcslap 8 connections, medians of $ROUNDS rounds:"
printf "  unrecorded             %10.0f gets/s\n" "$none"
printf "  under srvscope model   %10.0f gets/s   ratio %.3f (goal >= 0.95)\n" "$model" \
	"$(echo "$model / $none" | bc -l)"
if [ -n "${FLOOR:-}" ]; then
	floor=$(median <"$OUT/floor")
	printf "  floor (programs empty) %10.0f gets/s   ratio %.3f: what the tracepoints cost with nothing done in them\n" \
		"$floor" "$(echo "$floor / $none" | bc -l)"
fi

if "$SRVSCOPE" model --help | grep -q -- '--client' &&
	"$SRVSCOPE" model -p "$MC" --client memcached://127.0.0.1:1 2>&1 | grep -q 'does not listen'; then
	t0=$(date +%s.%N)
	"$SRVSCOPE" model -p "$MC" --client "memcached://127.0.0.1:$PORT" -o "$OUT/m.json" \
		>"$OUT/m.out" 2>"$OUT/m.err" || { cat "$OUT/m.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	printf "  srvscope model, defaults, built-in client: %.1f s end to end (goal <= 30 s; Ditto: 7 x ~45 s of tracing)\n" \
		"$(echo "$t1 - $t0" | bc -l)"
fi
