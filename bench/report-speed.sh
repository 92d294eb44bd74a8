#!/usr/bin/env bash
# How fast the reports read a trace, next to perf reading its own recording of the same
# workload: a ping-pong of ROUNDS round trips (two threads, a switch and a wake-up each way)
# recorded by 'srvscope record' and by 'perf sched record'; then events per second of
# 'srvscope sched', 'blocking' (filtered: reading, not printing) and 'flame --kind=off',
# and of 'perf sched latency' and 'perf script' on perf's file. Goal: >= 10 M events/s.
# Then a real server: memcached (4 threads) under memcslap recorded for MC_SECONDS (5) s,
# and 'blocking --stacks' in JSON and in text, 'sched' and 'flame --kind=off' on that trace:
# wall time, max RSS (/usr/bin/time -v) and output size, next to 'perf script' on perf's
# recording of the same load. Goal: JSON in <= 2 s and <= 30 MB of memory (the reader
# releases the trace's pages as it goes: the memory is the reports' own, not the file's).
# Usage (root): bench/report-speed.sh [ROUNDS]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
FIXTURES=${FIXTURES:-$TOP/build/fixtures}
ROUNDS=${1:-500000}
MC_SECONDS=${MC_SECONDS:-5}
PORT=${PORT:-22198}
. "$(dirname "$0")/memcached.sh"
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
MC="" LOAD=""
cleanup() {
	[ -n "$LOAD" ] && kill "$LOAD" 2>/dev/null && wait "$LOAD" 2>/dev/null
	[ -n "$MC" ] && kill "$MC" 2>/dev/null && wait "$MC" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT
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

# ---- memcached under load: blocking --stacks on a real server's trace ----
bench_need report-speed memcached memcslap
[ -x /usr/bin/time ] || { echo "report-speed: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
start_memcached report-speed 64
# memcslap runs for a given number of gets: loop it so the load outlasts the recording.
(while :; do memcslap -s 127.0.0.1:"$PORT" -c 8 -e 200000 -t get >/dev/null 2>&1 || exit; done) &
LOAD=$!
sleep 0.5
"$SRVSCOPE" record -p "$MC" -d "$MC_SECONDS" -o "$OUT/mc.trace" >/dev/null 2>"$OUT/mc.err" ||
	{ cat "$OUT/mc.err"; exit 1; }
perf record -e sched:sched_switch -e sched:sched_wakeup -g -p "$MC" -o "$OUT/mc.data" -- \
	sleep "$MC_SECONDS" >/dev/null 2>&1
kill "$LOAD"; wait "$LOAD" 2>/dev/null; LOAD=""
mcevents=$(sed -n 's/.*recorded \([0-9]*\) events.*/\1/p' "$OUT/mc.err")

# timed NAME COMMAND...: the command's output to $OUT/NAME.out; sets SECS, RSS_MB, OUT_MB.
timed() {
	local name=$1
	shift
	/usr/bin/time -v -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>/dev/null
	SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$OUT/$name.time")
	RSS_MB=$(awk -F': ' '/Maximum resident/ { printf "%.1f", $2 / 1024 }' "$OUT/$name.time")
	OUT_MB=$(du -k "$OUT/$name.out" | awk '{ printf "%.1f", $1 / 1024 }')
	printf '%-40s %9.2f %12s %12s\n' "$name" "$SECS" "$RSS_MB" "$OUT_MB"
}
printf '\n# memcached under memcslap, %s s: srvscope %s events (%s MB), perf record -g %s MB\n' \
	"$MC_SECONDS" "$mcevents" "$(du -m "$OUT/mc.trace" | cut -f1)" "$(du -m "$OUT/mc.data" | cut -f1)"
printf '%-40s %9s %12s %12s\n' "report" "seconds" "max RSS MB" "output MB"
timed "srvscope blocking --stacks --format=json" "$SRVSCOPE" blocking --stacks --format=json "$OUT/mc.trace"
json_s=$SECS json_rss=$RSS_MB json_mb=$OUT_MB
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT/srvscope blocking --stacks --format=json.out" ||
	echo "report-speed: the JSON does not parse" >&2
timed "srvscope blocking --stacks" "$SRVSCOPE" blocking --stacks "$OUT/mc.trace"
text_s=$SECS text_rss=$RSS_MB
timed "srvscope sched" "$SRVSCOPE" sched "$OUT/mc.trace"
timed "srvscope flame --kind=off" "$SRVSCOPE" flame --kind=off "$OUT/mc.trace"
timed "perf script (same load, perf's file)" perf script -i "$OUT/mc.data"
awk -v j="$json_s" -v r="$json_rss" -v m="$json_mb" -v t="$text_s" -v p="$SECS" -v tr="$text_rss" \
	-v f="$(du -m "$OUT/mc.trace" | cut -f1)" 'BEGIN {
	printf "\nblocking --stacks --format=json: %.2f s (goal <= 2), %s MB output, max RSS %s MB (goal <= 30; text: %s MB; the trace: %s MB);\n", j, m, r, tr, f
	printf "%.1fx the text report'"'"'s time, %.2fx perf script'"'"'s\n", (t > 0 ? j / t : 0), (p > 0 ? j / p : 0) }'
