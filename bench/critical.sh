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
	# About 5 events per round trip; 2 pairs, one per CPU. Record in one go, long enough.
	secs=$(( EVENTS / 400000 + 2 ))
	"$SRVSCOPE" record --no-stacks --buffer-size 256M -o "$TRACE" -- \
		"$FIXTURES/rec_rate" 2 0 "$secs" 1 >"$OUT/rate.out" 2>"$OUT/rec.err" ||
		{ cat "$OUT/rec.err" >&2; exit 1; }
	sed 's/^/# /' "$OUT/rec.err"
fi
tid=$("$SRVSCOPE" sched "$TRACE" 2>/dev/null | awk -F'[: ]+' '/ ping:/ {print $3; exit}')
[ -n "$tid" ] || { echo "critical: no ping thread in $TRACE" >&2; exit 1; }
size=$(du -m "$TRACE" | cut -f1)

run() { # NAME COMMAND...: prints "NAME seconds max_rss_mb"
	local name=$1; shift
	/usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" ||
		{ echo "critical: $name failed:" >&2; cat "$OUT/$name.err" >&2; exit 1; }
	read -r secs kb <"$OUT/$name.time"
	echo "$name $secs $((kb / 1024))"
}
read -r _ c_s c_mb < <(run critical "$SRVSCOPE" critical --tid "$tid" --format=json "$TRACE")
read -r _ t_s t_mb < <(run timeline "$SRVSCOPE" timeline --tid "$tid" "$TRACE")
read -r nev segs < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["events"], len(d["segments"]), d["hops"])' "$OUT/critical.out")
echo "trace: $size MB, $nev events; thread $tid; path: $segs (segments, hops)"
printf "%-10s %8s %10s\n" "" "seconds" "max RSS MB"
printf "%-10s %8s %10s\n" critical "$c_s" "$c_mb" timeline "$t_s" "$t_mb"
awk -v c="$c_s" -v t="$t_s" -v m="$c_mb" -v n="$nev" 'BEGIN {
	printf "critical / timeline: %.2f x the time\n", (t > 0 ? c / t : 0)
	s = n > 0 ? c * 10000000 / n : c
	printf "goal (10 M events <= 10 s, <= 2 GB): %.1f s per 10 M events, %d MB: %s\n", s, m,
	       (s <= 10 && m <= 2048) ? "met" : "NOT met"
}'
