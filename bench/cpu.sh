#!/usr/bin/env bash
# What on-CPU sampling costs a busy server, next to perf: memcached (4 threads) under
# memcslap (8 connections), throughput with no sampler, with 'srvscope cpu -a -F 999' and
# with 'perf record -F 999 -g -a', the modes alternating round by round (drift hits them
# all alike). Medians, ratios to the unsampled throughput, and srvscope's cost against
# perf's are printed. Usage (root): bench/cpu.sh [ROUNDS [GETS_PER_CONNECTION]]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
ROUNDS=${1:-5}
GETS=${2:-6000}
PORT=${PORT:-22299}
. "$(dirname "$0")/memcached.sh"
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
MC=""
SAMPLER=""

cleanup() {
	[ -n "$SAMPLER" ] && kill -TERM "$SAMPLER" 2>/dev/null && wait "$SAMPLER" 2>/dev/null
	[ -n "$MC" ] && kill "$MC" 2>/dev/null && wait "$MC" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT

bench_need cpu memcached memcslap perf
[ "$(id -u)" = 0 ] || { echo "cpu: run as root (BPF, perf)" >&2; exit 1; }
[ -x "$SRVSCOPE" ] || { echo "cpu: build srvscope first (make)" >&2; exit 1; }

start_memcached cpu 256

# One load run: prints gets per second.
load() {
	memcslap -s 127.0.0.1:"$PORT" -c 8 -e "$GETS" -t get 2>&1 |
		awk '/Time to get/ { if ($(NF-1) > 0) printf "%.0f\n", $4 / $(NF-1) }'
}

start_sampler() { # MODE
	case $1 in
	none) SAMPLER="" ;;
	srvscope)
		# a report at the end like perf's: sampling all along, symbols read once
		"$SRVSCOPE" cpu -a -F 999 -d 3600 -f folded >"$OUT/srvscope.folded" 2>"$OUT/srvscope.err" &
		SAMPLER=$!
		sleep 1.5
		;;
	perf)
		perf record -q -F 999 -g -a -o "$OUT/perf.data" 2>"$OUT/perf.err" >/dev/null &
		SAMPLER=$!
		sleep 1.5
		;;
	esac
}

ticks() { awk '{print $14 + $15}' /proc/"$1"/stat 2>/dev/null || echo 0; }

stop_sampler() { # MODE TICKS_AT_START
	[ -n "$SAMPLER" ] || return 0
	echo $(($(ticks "$SAMPLER") - $2)) >>"$OUT/$1.ticks"
	kill -INT "$SAMPLER" 2>/dev/null
	wait "$SAMPLER" 2>/dev/null
	SAMPLER=""
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

MODES="none srvscope perf"
memcslap -s 127.0.0.1:"$PORT" -c 8 -e "$GETS" -t set >/dev/null 2>&1
load >/dev/null

echo "# memcached -t 4, memcslap -c 8 -e $GETS -t get; $ROUNDS rounds; $(nproc) CPUs; $(uname -r)"
for r in $(seq "$ROUNDS"); do
	line="round $r:"
	for m in $MODES; do
		start_sampler "$m"
		t0=0
		[ -n "$SAMPLER" ] && t0=$(ticks "$SAMPLER")
		v=$(load)
		stop_sampler "$m" "$t0"
		echo "${v:-0}" >>"$OUT/$m.ops"
		line="$line $m=${v:-0}"
	done
	echo "# $line"
done

base=$(median <"$OUT/none.ops")
printf '\n%-22s %14s %10s %10s\n' "mode" "median gets/s" "ratio" "cost %"
for m in $MODES; do
	med=$(median <"$OUT/$m.ops")
	awk -v m="$m" -v v="$med" -v b="$base" 'BEGIN {
		printf "%-22s %14.0f %10.3f %10.1f\n", m, v, v / b, 100 * (1 - v / b) }'
	eval "med_$m=$med"
done
awk -v b="$base" -v s="$med_srvscope" -v p="$med_perf" 'BEGIN {
	printf "\nsrvscope cpu -a -F 999 keeps %.3f of the throughput, perf record -F 999 -g -a %.3f: srvscope/perf throughput ratio %.3f (goal >= 1)\n",
		s / b, p / b, s / p }'
# the samplers' own processes during a load run (the in-kernel sampling is not in these)
ts=$(median <"$OUT/srvscope.ticks")
tp=$(median <"$OUT/perf.ticks")
echo "CPU time of the sampler process during a load run (median): srvscope $((ts * 1000 / $(getconf CLK_TCK))) ms, perf $((tp * 1000 / $(getconf CLK_TCK))) ms"
