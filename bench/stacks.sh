#!/bin/bash
# srvscope stacks vs eu-stack vs gdb on the 1000-thread fixture (threads blocked 20 frames
# deep), in one run: wall time, and the time the target's threads spent stopped as the
# kernel's scheduler events show it (not as any tool reports it). Prints the ratios.
# Goals (issue 2): mean stall per thread <= 25 us, max <= 1 ms, wall <= 0.3 s including
# symbols, and no slower than eu-stack. Then the same target with a busy thread and every
# CPU busy (LOADED=0 skips it), next to ptrace-floor (bench/ptrace-floor.c: seize,
# interrupt, wait, registers, one page, detach, nothing else): goal (issue 8) srvscope's
# mean stall <= 1.3 x the floor's, in both runs.
set -u
. "$(dirname "$0")/lib.sh"
N=${THREADS:-1000}
FLOOR=$OUT/ptrace-floor
cc -O2 -o "$FLOOR" "$TOP/bench/ptrace-floor.c" || exit 1
start_fixture "$FIXTURES/threads1000" "$N"
sleep 0.5
printf '%-22s %10s %8s %12s %12s %12s\n' tool wall_ms stops threads mean_stall_us max_stall_us
declare -A WALL MEAN MAX
run() {
	local name=$1; shift
	measure "$name" "$@"
	local threads=$STOPPED_THREADS
	[ "$threads" -gt 0 ] || threads=1
	WALL[$name]=$((WALL_NS / 1000000))
	MEAN[$name]=$((STOP_TOTAL_NS / threads / 1000))
	MAX[$name]=$((STOP_MAX_NS / 1000))
	printf '%-22s %10d %8d %12d %12d %12d\n' "$name" "${WALL[$name]}" "$STOPS" "$STOPPED_THREADS" \
		"${MEAN[$name]}" "${MAX[$name]}"
}
run srvscope "$SRVSCOPE" stacks -p "$FPID" --mode=ptrace --format=folded
run ptrace-floor "$FLOOR" "$FPID"
run srvscope-consistent "$SRVSCOPE" stacks -p "$FPID" --mode=ptrace --consistent --format=folded
run eu-stack eu-stack -p "$FPID"
[ -n "${NO_GDB:-}" ] || run gdb gdb -q -p "$FPID" -batch -ex 'thread apply all bt'
groups=$(grep -c . "$OUT/out.srvscope")
frames=$(awk '{ n = split($1, a, ";"); if (n > m) m = n } END { print m - 1 }' "$OUT/out.srvscope")
echo
echo "srvscope output: $groups folded stacks, deepest $frames frames"
echo "ratios (peer / srvscope, higher is better for srvscope):"
for peer in eu-stack gdb; do
	[ -n "${WALL[$peer]:-}" ] || continue
	echo "  $peer: wall $(ratio "${WALL[$peer]}" "${WALL[srvscope]}")x," \
		"mean stall $(ratio "${MEAN[$peer]}" "${MEAN[srvscope]}")x," \
		"max stall $(ratio "${MAX[$peer]}" "${MAX[srvscope]}")x"
done
echo "goals: mean stall <= 25 us: $([ "${MEAN[srvscope]}" -le 25 ] && echo met || echo MISSED);" \
	"max <= 1000 us: $([ "${MAX[srvscope]}" -le 1000 ] && echo met || echo MISSED);" \
	"wall <= 300 ms: $([ "${WALL[srvscope]}" -le 300 ] && echo met || echo MISSED);" \
	"wall <= eu-stack: $([ "${WALL[srvscope]}" -le "${WALL[eu-stack]}" ] && echo met || echo MISSED)"
echo "floor: srvscope's mean stall $(ratio "${MEAN[srvscope]}" "${MEAN[ptrace-floor]}") x the floor's" \
	"(goal <= 1.3: $(awk -v a="${MEAN[srvscope]}" -v b="${MEAN[ptrace-floor]}" 'BEGIN { print a <= 1.3 * b ? "met" : "MISSED" }'))"
[ "${LOADED:-1}" = 0 ] && exit 0

# Loaded: a busy thread in the target, and a spinner on every other CPU.
kill "$FPID"
start_fixture "$FIXTURES/threads1000" "$N" 1
for _ in $(seq 2 "$(nproc)"); do
	sh -c 'while :; do :; done' &
	BENCH_PIDS="$BENCH_PIDS $!"
done
sleep 0.5
echo
echo "loaded: $N blocked threads and 1 busy one in the target, all $(nproc) CPUs busy"
ROUNDS=${ROUNDS:-3}
for r in $(seq 1 "$ROUNDS"); do
	run "srvscope-loaded.$r" "$SRVSCOPE" stacks -p "$FPID" --mode=ptrace --format=folded
	run "ptrace-floor-loaded.$r" "$FLOOR" "$FPID"
done
s=0 f=0
for r in $(seq 1 "$ROUNDS"); do
	s=$((s + MEAN[srvscope-loaded.$r])); f=$((f + MEAN[ptrace-floor-loaded.$r]))
done
echo "loaded: srvscope's mean stall $((s / ROUNDS)) us, the floor's $((f / ROUNDS)) us (means of $ROUNDS" \
	"alternating runs): $(ratio "$s" "$f") x the floor's" \
	"(goal <= 1.3: $(awk -v a="$s" -v b="$f" 'BEGIN { print a <= 1.3 * b ? "met" : "MISSED" }'))"
