#!/usr/bin/env bash
# The critical path of one thread over a big trace: goal <= 10 s and <= 2 GB for 10 M events.
# Records pipe ping-pongs (build/fixtures/rec_rate, unpaced, --no-stacks) until the trace
# holds EVENTS events (or reuses TRACE), then runs 'srvscope critical' on a ping thread over
# the whole trace, next to 'srvscope timeline' over the same trace (the pass over every
# event that critical builds on: the nearest peer; Trace Compass, the only other tool
# that computes this path, is a Java UI not packaged for Debian). Prints both times and max
# RSS, the ratio, and the goal's verdict.
# Usage (root): bench/critical.sh [EVENTS]   (TRACE=FILE: use an existing trace)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
FIXTURES=${FIXTURES:-$TOP/build/fixtures}
EVENTS=${1:-10000000}
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

for f in "$SRVSCOPE" "$FIXTURES/rec_rate"; do
	[ -x "$f" ] || { echo "critical: $f is missing: make first" >&2; exit 1; }
done
if [ -z "${TRACE:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "critical: run as root (BPF) or give TRACE=FILE" >&2; exit 1; }
	TRACE=$OUT/big.trace
	# About 600 k to 1 M events/s from 2 unpaced pairs, one per CPU, on a 2-core machine.
	secs=$(( EVENTS / 800000 + 1 ))
	"$SRVSCOPE" record --no-stacks --buffer-size 256M -o "$TRACE" -- \
		"$FIXTURES/rec_rate" 2 0 "$secs" 1 >"$OUT/rate.out" 2>"$OUT/rec.err" ||
		{ cat "$OUT/rec.err" >&2; exit 1; }
	sed 's/^/# /' "$OUT/rec.err"
fi
tid=$("$SRVSCOPE" sched "$TRACE" 2>/dev/null | awk -F'[: ]+' '/ ping:/ {print $3; exit}')
[ -n "$tid" ] || { echo "critical: no ping thread in $TRACE" >&2; exit 1; }
size=$(du -m "$TRACE" | cut -f1)

# On a shared machine the wall time says more about the others than about srvscope: the
# CPU time (user + system) is printed beside it, and the goal is judged on it.
run() { # NAME COMMAND...: prints "NAME wall_seconds cpu_seconds max_rss_mb"
	local name=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" ||
		{ echo "critical: $name failed:" >&2; cat "$OUT/$name.err" >&2; exit 1; }
	read -r secs user sys kb <"$OUT/$name.time"
	echo "$name $secs $(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}') $((kb / 1024))"
}
read -r _ c_s c_cpu c_mb < <(run critical "$SRVSCOPE" critical --tid "$tid" --format=json "$TRACE")
read -r _ t_s t_cpu t_mb < <(run timeline "$SRVSCOPE" timeline --tid "$tid" "$TRACE")
read -r nev segs < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["events"], len(d["segments"]), d["hops"])' "$OUT/critical.out")
echo "trace: $size MB, $nev events; thread $tid; path: $segs (segments, hops)"
printf "%-10s %8s %8s %10s\n" "" "wall s" "CPU s" "max RSS MB"
printf "%-10s %8s %8s %10s\n" critical "$c_s" "$c_cpu" "$c_mb" timeline "$t_s" "$t_cpu" "$t_mb"
awk -v c="$c_cpu" -v t="$t_cpu" -v m="$c_mb" -v n="$nev" 'BEGIN {
	printf "critical / timeline: %.2f x the CPU time\n", (t > 0 ? c / t : 0)
	# The fixture runs at whatever rate the machine gives: the trace is seldom 10 M events.
	# Time and memory grow with the events (per-thread event indexes, the path): both are
	# judged per 10 M events, and memory as measured too when the trace is smaller.
	s = n > 0 ? c * 10000000 / n : c
	mm = n > 10000000 ? m * 10000000 / n : m
	printf "goal (10 M events <= 10 s, <= 2 GB): %.1f s and %d MB per 10 M events (%d MB for %.1f M): %s\n",
	       s, mm, m, n / 1e6, (s <= 10 && mm <= 2048) ? "met" : "NOT met"
}'
