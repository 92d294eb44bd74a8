#!/usr/bin/env bash
# Garbage frames: memcached (4 threads) under memcslap (8 connections), SAMPLES snapshots of
# every thread with 'srvscope stacks' in each mode, every frame's address checked against
# memcached's executable mappings. Prints, per mode, the frames, those outside every
# executable mapping (garbage printed as real: must be 0) and the stacks marked
# [truncated] (where an unwind stopped short instead).
# Usage (root): bench/unwind-garbage.sh [SAMPLES [MODES]]   (MODES default: "nostop ptrace")
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
SAMPLES=${1:-1000}
MODES=${2:-nostop ptrace}
PORT=${PORT:-22299}
. "$(dirname "$0")/memcached.sh"
OUT=$(mktemp -d /tmp/srvscope-garbage.XXXXXX)
MC=""
LOAD=""

cleanup() {
	# The loop first held, so that it starts no other client, then its client.
	if [ -n "$LOAD" ]; then
		kill -STOP "$LOAD" 2>/dev/null
		pkill -P "$LOAD" 2>/dev/null
		kill -KILL "$LOAD" 2>/dev/null
		wait "$LOAD" 2>/dev/null
	fi
	[ -n "$MC" ] && kill "$MC" 2>/dev/null && wait "$MC" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT

bench_need unwind-garbage memcached memcslap python3
[ "$(id -u)" = 0 ] || { echo "unwind-garbage: run as root" >&2; exit 1; }

start_memcached unwind-garbage 64
memcslap -s 127.0.0.1:"$PORT" -c 8 -e 2000 -t set >/dev/null 2>&1
# Load for as long as the snapshots take (memcslap does nothing with a huge -e).
(while :; do memcslap -s 127.0.0.1:"$PORT" -c 8 -e 20000 -t get >/dev/null 2>&1; done) &
LOAD=$!
sleep 0.5

echo "# memcached -t 4 under memcslap -c 8; $SAMPLES snapshots per mode; $(nproc) CPUs"
printf '%-8s %8s %8s %10s %10s\n' mode stacks frames garbage truncated
for mode in $MODES; do
	"$SRVSCOPE" stacks -p "$MC" --mode="$mode" -n "$SAMPLES" -i 1 --format=raw -q \
		>"$OUT/$mode.raw" 2>"$OUT/$mode.err" || { cat "$OUT/$mode.err" >&2; continue; }
	cp /proc/"$MC"/maps "$OUT/maps"
	python3 - "$OUT/maps" "$OUT/$mode.raw" "$mode" <<'EOF'
import re, sys
maps = []
for line in open(sys.argv[1]):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    if 'x' in f[1]:
        maps.append((lo, hi))
stacks = frames = garbage = truncated = 0
for line in open(sys.argv[2]):
    if line.startswith('Thread '):
        stacks += 1
        continue
    m = re.match(r'#\d+\s+0x([0-9a-f]+) in (\S+)', line)
    if not m:
        continue
    if m.group(2) == '[truncated]':
        truncated += 1
        continue
    a = int(m.group(1), 16)
    frames += 1
    if not any(lo <= a < hi for lo, hi in maps):
        garbage += 1
print('%-8s %8d %8d %10d %10d' % (sys.argv[3], stacks, frames, garbage, truncated))
EOF
done
