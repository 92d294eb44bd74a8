#!/usr/bin/env bash
# Lost events against the event rate, with default buffers, next to perf: PAIRS pipe
# ping-pongs (build/fixtures/rec_rate, both threads of a pair on one CPU) paced to rising
# rates and finally unpaced, each rate run alone, under 'srvscope record --' and under
# 'perf sched record --'. Prints per rate the events/s each recorder took in, what each
# lost, and the fixture's round trips/s (what recording cost it, as a ratio to perf's).
# Then the unpaced rate again with smaller srvscope buffers: the margin of the default.
# Goal: srvscope loses nothing up to 1 M events/s (or the highest rate the machine makes).
# Usage (root): bench/record-rate.sh [SECONDS [PAIRS [EVENTS_PER_S...]]]  (0: unpaced)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
FIXTURES=${FIXTURES:-$TOP/build/fixtures}
SECS=${1:-3}
PAIRS=${2:-2}
shift $(($# > 2 ? 2 : $#))
RATES=${*:-100000 250000 500000 750000 1000000 0}
SMALL_BUFFERS=${SMALL_BUFFERS-1M 256K 64K} # empty: none
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

[ "$(id -u)" = 0 ] || { echo "record-rate: run as root (BPF, perf)" >&2; exit 1; }
command -v perf >/dev/null || { echo "record-rate: perf is missing (scripts/install-deps.sh)" >&2; exit 1; }
for f in "$SRVSCOPE" "$FIXTURES/rec_rate"; do
	[ -x "$f" ] || { echo "record-rate: $f is missing: make first" >&2; exit 1; }
done

fixture() { "$FIXTURES/rec_rate" "$PAIRS" "$1" "$SECS" 1; } # ROUNDS_PER_S
# "rounds N seconds S" from the fixture: round trips per second, seconds
rounds_per_s() { awk '/^rounds/ { if ($4 > 0) printf "%.0f", $2 / $4 }' "$1"; }
per_s() { awk -v n="${1:-0}" '/^rounds/ { if ($4 > 0) printf "%.0f", n / $4 }' "$2"; } # EVENTS FILE

# srvscope_run ROUNDS_PER_S [OPTIONS...]: sets S_EVENTS S_LOST S_LOST_STK, fixture output in s.out
srvscope_run() {
	local rounds=$1
	shift
	"$SRVSCOPE" record "$@" --force -o "$OUT/s.trace" -- "$FIXTURES/rec_rate" "$PAIRS" "$rounds" "$SECS" 1 \
		>"$OUT/s.out" 2>"$OUT/s.err" || { cat "$OUT/s.err" >&2; exit 1; }
	S_EVENTS=$(sed -n 's/.*recorded \([0-9]*\) events.*/\1/p' "$OUT/s.err")
	S_LOST=$(sed -n 's/.*; lost \([0-9]*\) events and \([0-9]*\) stacks.*/\1/p' "$OUT/s.err")
	S_LOST_STK=$(sed -n 's/.*; lost \([0-9]*\) events and \([0-9]*\) stacks.*/\2/p' "$OUT/s.err")
}

printf '# %s s per run, %s ping-pong pairs pinned one per CPU, %s CPUs; default buffers: srvscope\n' \
	"$SECS" "$PAIRS" "$(nproc)"
printf '# 32M ring, perf sched record its own (-m 1024 pages per CPU). srvscope records the\n'
printf '# fixture only, perf the whole system; lost = events (+ stacks for srvscope) dropped.\n'
printf '%-8s %9s | %10s %8s %9s | %10s %8s %9s | %12s\n' "target" "alone" "srvscope" "lost" \
	"rounds/s" "perf" "lost" "rounds/s" "rounds/s"
printf '%-8s %9s | %10s %8s %9s | %10s %8s %9s | %12s\n' "ev/s" "rounds/s" "events/s" "ev+stk" \
	"" "events/s" "samples" "" "srv / perf"
max_clean=0
for rate in $RATES; do
	# ~4.5 events per round trip: on each side a switch, a waking and a wakeup unless the
	# other side was still running
	rounds=$((rate * 2 / 9))

	fixture "$rounds" >"$OUT/a.out"
	srvscope_run "$rounds"
	s_rate=$(per_s "$S_EVENTS" "$OUT/s.out")

	perf sched record -o "$OUT/p.data" -- "$FIXTURES/rec_rate" "$PAIRS" "$rounds" "$SECS" 1 \
		>"$OUT/p.out" 2>"$OUT/p.err"
	perf report -i "$OUT/p.data" --stats >"$OUT/p.stats" 2>/dev/null
	p_events=$(awk '/^ *SAMPLE events:/ { print $3; exit }' "$OUT/p.stats")
	# per event type, after the aggregated figures: the samples lost
	p_lost=$(awk '/^[^ ].* stats:$/ && !/^Aggregated/ { s = 1 } s && /LOST_SAMPLES events:/ { n += $3 }
		END { print n + 0 }' "$OUT/p.stats")
	p_rate=$(per_s "$p_events" "$OUT/p.out")

	printf '%-8s %9s | %10s %8s %9s | %10s %8s %9s | %12s\n' \
		"$([ "$rate" = 0 ] && echo max || echo "$rate")" "$(rounds_per_s "$OUT/a.out")" \
		"$s_rate" "${S_LOST:-?}+${S_LOST_STK:-?}" "$(rounds_per_s "$OUT/s.out")" \
		"$p_rate" "$p_lost" "$(rounds_per_s "$OUT/p.out")" \
		"$(awk -v a="$(rounds_per_s "$OUT/s.out")" -v b="$(rounds_per_s "$OUT/p.out")" \
			'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }')"
	[ "${S_LOST:-1}" = 0 ] && [ "${S_LOST_STK:-1}" = 0 ] && [ "$s_rate" -gt "$max_clean" ] && max_clean=$s_rate
done
awk -v m="$max_clean" 'BEGIN { printf "\nsrvscope lost nothing up to %.2f M events/s with its default buffer (goal: 1 M events/s)\n", m / 1e6 }'

printf '\n# the margin: unpaced again with smaller srvscope buffers\n'
printf '%-8s %10s %8s\n' "buffer" "events/s" "lost"
for size in $SMALL_BUFFERS; do
	srvscope_run 0 --buffer-size "$size"
	printf '%-8s %10s %8s\n' "$size" "$(per_s "$S_EVENTS" "$OUT/s.out")" "${S_LOST:-?}+${S_LOST_STK:-?}"
done
