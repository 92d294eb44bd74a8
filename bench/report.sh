#!/usr/bin/env bash
# 'srvscope report' on a big trace: the HTML page of a SIZE_MB (1024) trace must be written in
# <= 30 s and weigh <= 20 MB (aggregates, never events). The trace is a recording of the
# ping-pong fixture (two threads handing a byte back and forth over pipes: a switch, a
# wake-up and a stack at each hand-over), as many rounds as make SIZE_MB (about 3,800
# rounds a MB). Beside it, on the same trace, the reports that compute the same
# aggregates one by one: flame --kind=off and --kind=wake (folded), blocking (reading
# every episode, printing none) and sched --hist; wall time, max RSS and output size of
# each, and the ratio of the report's time to theirs together. (timeline, whose buckets the
# report also fills, writes every slice as JSON: gigabytes for such a trace, left out.)
# Usage (root): bench/report.sh [SIZE_MB]
#   TRACE=FILE: use this trace if it exists, else record it there and keep it
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
FIXTURES=${FIXTURES:-$TOP/build/fixtures}
SIZE_MB=${1:-1024}
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
[ -x /usr/bin/time ] || { echo "report: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

trace=${TRACE:-$OUT/pp.trace}
if [ ! -e "$trace" ]; then
	[ "$(id -u)" = 0 ] || { echo "report: run as root (record uses BPF), or give TRACE=FILE" >&2; exit 1; }
	rounds=$((SIZE_MB * 3800))
	echo "# recording $rounds ping-pong round trips (about $SIZE_MB MB)..."
	"$SRVSCOPE" record -o "$trace" -- "$FIXTURES/rec_pingpong" "$rounds" 0 >/dev/null 2>"$OUT/rec.err" ||
		{ cat "$OUT/rec.err"; exit 1; }
	grep recorded "$OUT/rec.err" | sed 's/^/# /'
fi
mb=$(( $(stat -c %s "$trace") / 1048576 ))
# Read once so that every run finds the file in the page cache alike.
cat "$trace" >/dev/null

# run NAME OUTFILE COMMAND...: one run; sets S (seconds), RSS (MB), SIZE (bytes of OUTFILE).
run() {
	local name=$1 out=$2
	shift 2
	/usr/bin/time -f '%e %M' -o "$OUT/time" "$@" >"$OUT/stdout" 2>"$OUT/stderr" ||
		{ echo "$name failed:" >&2; cat "$OUT/stderr" >&2; exit 1; }
	read -r S RSS <"$OUT/time"
	RSS=$((RSS / 1024))
	[ "$out" = - ] && out="$OUT/stdout"
	SIZE=$(stat -c %s "$out")
	printf '%-34s %8.2f %8d %12d\n' "$name" "$S" "$RSS" "$SIZE"
}

printf '# trace: %s MB\n' "$mb"
printf '%-34s %8s %8s %12s\n' "command" "seconds" "RSS MB" "output bytes"
run "srvscope report" "$OUT/r.html" "$SRVSCOPE" report "$trace" -o "$OUT/r.html"
rs=$S rsize=$SIZE
others=0
for c in "flame --kind=off" "flame --kind=wake" "blocking --min-ms 100000" "sched --hist"; do
	# shellcheck disable=SC2086
	run "srvscope $c" - "$SRVSCOPE" $c "$trace"
	others=$(awk -v a="$others" -v b="$S" 'BEGIN { print a + b }')
done
awk -v r="$rs" -v o="$others" -v size="$rsize" -v mb="$mb" 'BEGIN {
	printf "\nreport of a %d MB trace: %.1f s (goal <= 30: %s), %.2f MB (goal <= 20: %s)\n",
		mb, r, r <= 30 ? "met" : "MISSED", size / 1048576, size <= 20 * 1048576 ? "met" : "MISSED"
	printf "report / (flame off + flame wake + blocking + sched, one by one): %.2f (%.1f s against %.1f s)\n",
		(o > 0 ? r / o : 0), r, o }'
