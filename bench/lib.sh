# Helpers for the benchmarks (sourced, bash): a fixture, and a tool run under a kernel
# measurement of how long the target's threads were stopped.
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
SRVSCOPE=${SRVSCOPE:-$TOP/$BUILD/srvscope}
FIXTURES=${FIXTURES:-$TOP/$BUILD/fixtures}
BENCH_PIDS=""
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
trap 'kill $BENCH_PIDS 2>/dev/null; rm -rf "$OUT"' EXIT

. "$TOP/tests/integration/net.sh" # free_port, wait_port, nginx_conf

start_fixture() { # BIN ARGS...: sets FPID
	"$@" >"$OUT/fixture.out" 2>&1 &
	FPID=$!
	BENCH_PIDS="$BENCH_PIDS $FPID"
	for _ in $(seq 1000); do grep -q ready "$OUT/fixture.out" && return 0; sleep 0.01; done
	echo "fixture $1 did not start" >&2
	exit 1
}

# measure NAME COMMAND...: runs COMMAND while bpftrace watches the fixture's stops.
# Sets WALL_NS, STOPS, STOP_TOTAL_NS, STOP_MAX_NS, STOPPED_THREADS.
measure() {
	local name=$1; shift
	ulimit -l unlimited 2>/dev/null; bpftrace "$TOP/bench/stall.bt" "$FPID" >"$OUT/bt.$name" 2>&1 &
	local bt=$!
	# BEGIN runs once every probe is attached ("Attaching" comes before; a first start
	# after an install can take seconds).
	for _ in $(seq 3000); do grep -qs "^counting" "$OUT/bt.$name" && break; sleep 0.02; done
	grep -q '^counting' "$OUT/bt.$name" || { echo "bpftrace did not start:" >&2; cat "$OUT/bt.$name" >&2; exit 1; }
	local t0 t1
	t0=$(date +%s%N)
	"$@" >"$OUT/out.$name" 2>"$OUT/err.$name"
	t1=$(date +%s%N)
	sleep 0.3
	# bpftrace has been seen to miss a SIGINT on a busy machine: repeat until it ends.
	for _ in $(seq 20); do
		kill -INT "$bt" 2>/dev/null || break
		for _ in $(seq 20); do kill -0 "$bt" 2>/dev/null || break; sleep 0.05; done
	done
	wait "$bt"
	WALL_NS=$((t1 - t0))
	STOPS=$(sed -n 's/^RESULT stops=\([0-9]*\).*/\1/p' "$OUT/bt.$name")
	STOP_TOTAL_NS=$(sed -n 's/^RESULT.*total_ns=\([0-9]*\).*/\1/p' "$OUT/bt.$name")
	STOP_MAX_NS=$(sed -n 's/^RESULT.*max_ns=\([0-9]*\).*/\1/p' "$OUT/bt.$name")
	STOPPED_THREADS=$(sed -n 's/^RESULT threads=\([0-9]*\).*/\1/p' "$OUT/bt.$name")
	: "${STOPS:=0}" "${STOP_TOTAL_NS:=0}" "${STOP_MAX_NS:=0}" "${STOPPED_THREADS:=0}"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.1f", a / b }'; }
