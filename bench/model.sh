#!/usr/bin/env bash
# What 'srvscope model' costs the server it describes: memcached (4 threads) under memcslap
# (8 connections, gets, as fast as it answers), its throughput with nothing attached and
# under the model's recording (every syscall with its arguments, switches with stacks,
# on-CPU samples: the model runs memcslap as its --load), round by round in turns; the
# medians and their ratio are printed (goal: >= 0.95). Then the end-to-end time of
# 'srvscope model' with its defaults and the built-in client (goal: <= 30 s).
# With --parts, each item the model asks the recorder for is left out in turn
# (SRVSCOPE_MODEL_RECORD, docs/model.md): the ratio of each set, measured in the same rounds
# as the unrecorded runs, tells what that item costs.
# Usage (root): bench/model.sh [--parts] [ROUNDS [GETS_PER_CONNECTION]]
set -u
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
	# name:SRVSCOPE_MODEL_RECORD; "all" is what the model records by default
	SETS="all: no-args:args=0 no-syscalls:syscalls=0 no-stacks:stacks=0 no-samples:hz=0
		fp-stacks:fp refresh-1s:refresh=1000 stacks-only:syscalls=0,hz=0
		nothing:syscalls=0,stacks=0,hz=0"
	: >"$OUT/none"
	for s in $SETS; do : >"$OUT/set-${s%%:*}"; done
	for r in $(seq "$ROUNDS"); do
		line="round $r:"
		for s in $SETS; do
			$LOAD >"$OUT/slap" 2>&1
			rate "$OUT/slap" >>"$OUT/none"
			SRVSCOPE_MODEL_RECORD=${s#*:} "$SRVSCOPE" model -p "$MC" --conns 8 --duration 10 \
				--load "$LOAD >$OUT/slap 2>&1" >/dev/null 2>"$OUT/model.err" ||
				{ cat "$OUT/model.err" >&2; exit 1; }
			rate "$OUT/slap" >>"$OUT/set-${s%%:*}"
			line="$line ${s%%:*} $(tail -1 "$OUT/set-${s%%:*}")"
		done
		echo "$line (unrecorded: $(tail -"$(echo $SETS | wc -w)" "$OUT/none" | tr '\n' ' '))"
	done
	none=$(median <"$OUT/none")
	echo "memcached, memcslap 8 connections, medians of $ROUNDS rounds (each set beside its own unrecorded run):"
	printf "  %-14s %10.0f gets/s\n" unrecorded "$none"
	for s in $SETS; do
		v=$(median <"$OUT/set-${s%%:*}")
		printf "  %-14s %10.0f gets/s   ratio %.3f   (SRVSCOPE_MODEL_RECORD=%s)\n" "${s%%:*}" "$v" \
			"$(echo "$v / $none" | bc -l)" "${s#*:}"
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
	echo "round $r: unrecorded $(tail -1 "$OUT/none") gets/s, under the model's recording $(tail -1 "$OUT/model") gets/s"
done
none=$(median <"$OUT/none")
model=$(median <"$OUT/model")
echo "memcached, memcslap 8 connections, medians of $ROUNDS rounds:"
printf "  unrecorded             %10.0f gets/s\n" "$none"
printf "  under srvscope model   %10.0f gets/s   ratio %.3f (goal >= 0.95)\n" "$model" \
	"$(echo "$model / $none" | bc -l)"

if "$SRVSCOPE" model --help | grep -q -- '--client' &&
	"$SRVSCOPE" model -p "$MC" --client memcached://127.0.0.1:1 2>&1 | grep -q 'does not listen'; then
	t0=$(date +%s.%N)
	"$SRVSCOPE" model -p "$MC" --client "memcached://127.0.0.1:$PORT" -o "$OUT/m.json" \
		>"$OUT/m.out" 2>"$OUT/m.err" || { cat "$OUT/m.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	printf "  srvscope model, defaults, built-in client: %.1f s end to end (goal <= 30 s; Ditto: 7 x ~45 s of tracing)\n" \
		"$(echo "$t1 - $t0" | bc -l)"
fi
