#!/usr/bin/env bash
# What recording costs each scheduler event and each syscall, measured where the machine's
# noise is small: one CPU, no network, a fixed amount of work.
# 1. A two-thread pipe ping-pong (tests/fixtures/rec_pingpong, ROUND_TRIPS round trips on
#    CPU 1: per round trip two switches, two wakings, two wake-ups and four syscalls): its
#    nanoseconds per round trip with nothing attached, while srvscope records another
#    process (what every event of the machine pays for the programs being there), while
#    srvscope records the ping-pong, and while 'perf sched record' records the machine.
# 2. dd's one-byte reads and writes (DD_BYTES of them each): nanoseconds per syscall with
#    nothing attached and while 'srvscope record --syscalls' records another process
#    (every syscall of the machine pays for the syscall tracepoints having a program),
#    and while 'perf trace' traces another process.
# Modes alternate round by round; medians are printed, and the difference to none.
# Usage (root): bench/record-floor.sh [ROUNDS [ROUND_TRIPS [DD_BYTES]]]
set -u
. "$(dirname "$0")/lib.sh"
ROUNDS=${1:-3}
TRIPS=${2:-300000}
BYTES=${3:-1000000}
for t in perf taskset dd; do
	command -v "$t" >/dev/null || { echo "record-floor: $t is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "record-floor: run as root (BPF, perf)" >&2; exit 1; }
[ -x "$FIXTURES/rec_pingpong" ] || { echo "record-floor: build srvscope first (make)" >&2; exit 1; }

sleep 100000 &
IDLE=$!
BENCH_PIDS="$BENCH_PIDS $IDLE"
CPU=$(($(nproc) - 1))

# ns per round trip of the ping-pong run by COMMAND... (its "rate N" line)
pingpong() { "$@" taskset -c "$CPU" "$FIXTURES/rec_pingpong" "$TRIPS" 0 2>/dev/null |
	awk '/^rate/ { if ($2 > 0) printf "%.0f\n", 1e9 / $2 }'; }
# ns per syscall of dd's one-byte copy (a read and a write each byte)
dd_ns() {
	local t0 t1
	t0=$(date +%s%N)
	taskset -c "$CPU" dd if=/dev/zero of=/dev/null bs=1 count="$BYTES" 2>/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / (2 * BYTES)))
}
REC=""
# background RECORDER ARGS...: started on another process, once it runs
background() {
	case $1 in
	srvscope)
		shift
		"$SRVSCOPE" record -p "$IDLE" "$@" --force -o "$OUT/bg.trace" --progress 2>"$OUT/bg.err" &
		REC=$!
		for _ in $(seq 200); do grep -q recording "$OUT/bg.err" && break; sleep 0.05; done ;;
	perf-trace)
		perf trace -p "$IDLE" -o "$OUT/perf-trace.txt" 2>/dev/null &
		REC=$!
		sleep 1.5 ;;
	esac
	sleep 0.3
}
stop() { kill -INT "$REC" 2>/dev/null; wait "$REC" 2>/dev/null; REC=""; }
trap 'stop; kill $BENCH_PIDS 2>/dev/null; rm -rf "$OUT"' EXIT

for r in $(seq "$ROUNDS"); do
	echo "$(pingpong)" >>"$OUT/pp.none"
	background srvscope
	echo "$(pingpong)" >>"$OUT/pp.attached"
	stop
	echo "$(pingpong "$SRVSCOPE" record --force -o "$OUT/pp.trace" --no-progress --)" >>"$OUT/pp.srvscope"
	echo "$(pingpong perf sched record -o "$OUT/perf.data" --)" >>"$OUT/pp.perf-sched"
	echo "$(dd_ns)" >>"$OUT/dd.none"
	background srvscope --syscalls
	echo "$(dd_ns)" >>"$OUT/dd.attached"
	stop
	background perf-trace
	echo "$(dd_ns)" >>"$OUT/dd.perf-trace"
	stop
	echo "# round $r: ping-pong ns/round trip: none $(tail -1 "$OUT/pp.none"), srvscope on another process $(tail -1 "$OUT/pp.attached"), srvscope recording it $(tail -1 "$OUT/pp.srvscope"), perf sched record $(tail -1 "$OUT/pp.perf-sched"); dd ns/syscall: none $(tail -1 "$OUT/dd.none"), srvscope --syscalls on another process $(tail -1 "$OUT/dd.attached"), perf trace on another process $(tail -1 "$OUT/dd.perf-trace")"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() { # FILE LABEL BASE UNIT
	local m
	m=$(median <"$1")
	awk -v m="$m" -v b="$3" -v l="$2" -v u="$4" 'BEGIN {
		printf "%-48s %8.0f ns%s  %+6.0f ns (%+.1f %%)\n", l, m, u, m - b, 100 * (m - b) / b }'
}
pp=$(median <"$OUT/pp.none")
dd=$(median <"$OUT/dd.none")
echo "# $ROUNDS rounds, medians; CPU $CPU; $(uname -r)"
row "$OUT/pp.none" "ping-pong, nothing attached" "$pp" "/round trip"
row "$OUT/pp.attached" "ping-pong, srvscope recording another process" "$pp" "/round trip"
row "$OUT/pp.srvscope" "ping-pong recorded by srvscope" "$pp" "/round trip"
row "$OUT/pp.perf-sched" "ping-pong under perf sched record" "$pp" "/round trip"
row "$OUT/dd.none" "dd syscall, nothing attached" "$dd" "/syscall"
row "$OUT/dd.attached" "dd syscall, srvscope --syscalls elsewhere" "$dd" "/syscall"
row "$OUT/dd.perf-trace" "dd syscall, perf trace elsewhere" "$dd" "/syscall"
