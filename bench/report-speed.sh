#!/usr/bin/env bash
# How fast the reports read a trace, next to perf reading its own recording of the same
# workload: a ping-pong of ROUNDS round trips (two threads, a switch and a wake-up each way)
# recorded by 'srvscope record' and by 'perf sched record'; then events per second of
# 'srvscope sched', 'blocking' (filtered: reading, not printing) and 'flame --kind=off',
# and of 'perf sched latency' and 'perf script' on perf's file. Goal: >= 10 M events/s.
# Usage (root): bench/report-speed.sh [ROUNDS]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
FIXTURES=${FIXTURES:-$TOP/build/fixtures}
ROUNDS=${1:-500000}
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
[ "$(id -u)" = 0 ] || { echo "report-speed: run as root (BPF, perf)" >&2; exit 1; }

"$SRVSCOPE" record -o "$OUT/s.trace" -- "$FIXTURES/rec_pingpong" "$ROUNDS" 0 >/dev/null 2>"$OUT/rec.err" ||
	{ cat "$OUT/rec.err"; exit 1; }
events=$(sed -n 's/.*recorded \([0-9]*\) events.*/\1/p' "$OUT/rec.err")
perf sched record -o "$OUT/p.data" -- "$FIXTURES/rec_pingpong" "$ROUNDS" 0 >/dev/null 2>&1
pevents=$(perf report -i "$OUT/p.data" --stats 2>/dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')

# best of three wall-clock runs, in seconds
best() {
	local b="" t0 t1 i
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		[ -z "$b" ] || [ $((t1 - t0)) -lt "$b" ] && b=$((t1 - t0))
	done
	awk -v n="$b" 'BEGIN { printf "%.3f", n / 1e9 }'
}

printf '# %s round trips: srvscope %s events (%s MB), perf sched record %s events (%s MB)\n' \
	"$ROUNDS" "$events" "$(du -m "$OUT/s.trace" | cut -f1)" "${pevents:-?}" "$(du -m "$OUT/p.data" | cut -f1)"
printf '%-34s %9s %14s\n' "reader" "seconds" "events/s"
row() { # NAME EVENTS COMMAND...
	local name=$1 n=$2 s
	shift 2
	s=$(best "$@")
	awk -v name="$name" -v n="$n" -v s="$s" 'BEGIN { printf "%-34s %9.3f %14.0f\n", name, s, (s > 0 ? n / s : 0) }'
	eval "rate_${name//[^a-z]/_}=$(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')"
}
row "srvscope sched" "$events" "$SRVSCOPE" sched "$OUT/s.trace"
row "srvscope blocking --min-ms 1000" "$events" "$SRVSCOPE" blocking --min-ms 1000 "$OUT/s.trace"
row "srvscope flame --kind=off" "$events" "$SRVSCOPE" flame --kind=off "$OUT/s.trace"
row "perf sched latency" "${pevents:-0}" perf sched latency -i "$OUT/p.data"
row "perf script" "${pevents:-0}" perf script -i "$OUT/p.data"
awk -v s="$rate_srvscope_sched" -v p="$rate_perf_sched_latency" 'BEGIN {
	printf "\nsrvscope sched reads %.1f M events/s (goal >= 10), %.1fx perf sched latency\n", s / 1e6, (p > 0 ? s / p : 0) }'
