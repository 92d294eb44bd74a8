#!/usr/bin/env bash
# What 'srvscope serve' costs and whether it holds: the demo server under load from the demo
# client for SECONDS (default 600), serve watching it (on-CPU samples at 49 Hz too) and
# scraped every 10 s as Prometheus would. Prints the agent's CPU (average, % of a core,
# against the 2 % goal and against 'srvscope record --call-graph=fp' of the same load
# writing a file, the peer doing the same recording), its resident memory over the run
# (flat: no growth past its bounds once a first profile has loaded the symbol tables), the
# lost events /metrics reports, then 100 concurrent scrapes, 10 concurrent
# profiles (4 answered, the rest 429) and malformed requests (bad paths, seconds=-1,
# seconds=1e9, a 1 MB header): each must get an answer, and the agent must still run.
# Usage (root): bench/serve.sh [SECONDS]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
SRVSCOPE=${SRVSCOPE:-$TOP/$BUILD/srvscope}
SECONDS_RUN=${1:-600}
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
PIDS=""

cleanup() {
	local p
	for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$OUT"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "serve: run as root (BPF)" >&2; exit 1; }
for b in "$SRVSCOPE" "$TOP/$BUILD/demo-server" "$TOP/$BUILD/demo-client"; do
	[ -x "$b" ] || { echo "serve: $b is missing: run 'make all' first" >&2; exit 1; }
done
command -v curl >/dev/null || { echo "serve: curl is needed" >&2; exit 1; }
[ "$SECONDS_RUN" -ge 30 ] 2>/dev/null || { echo "serve: SECONDS must be 30 or more" >&2; exit 1; }

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_line() { # FILE PATTERN: at most 10 s
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	echo "serve: '$2' did not come in $1:" >&2
	cat "$1" >&2
	exit 1
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

"$TOP/$BUILD/demo-server" -p 0 -l "$OUT/server.log" >"$OUT/server.out" 2>"$OUT/server.err" &
SERVER=$!
PIDS="$SERVER"
wait_line "$OUT/server.out" ready
DPORT=$(sed -n 's/^demo-server: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/server.err")
"$TOP/$BUILD/demo-client" -p "$DPORT" -c 8 -d $((SECONDS_RUN + 60)) >"$OUT/client.out" 2>&1 &
PIDS="$! $PIDS"

PORT=$(free_port)
U="http://127.0.0.1:$PORT"
"$SRVSCOPE" serve -p "$SERVER" --listen "127.0.0.1:$PORT" --on-cpu >"$OUT/serve.out" 2>"$OUT/serve.err" &
SERVE=$!
PIDS="$SERVE $PIDS"
wait_line "$OUT/serve.err" serving
sleep 2 # the recorder attaches after the listener is up
# The first profile loads the kernel's symbol table and the objects' (kept for the next
# ones): taken before the run, so that the run shows whether memory stays flat after it.
rss_cold=$(rss_kb "$SERVE")
curl -s -o /dev/null "$U/debug/pprof/offcpu?seconds=1"
rss_warm=$(rss_kb "$SERVE")

echo "serve: ${SECONDS_RUN} s of demo-server (4 workers) under demo-client (8 connections)"
c0=$(cpu_ticks "$SERVE")
t0=$(date +%s%N)
rss_first=""
rss_max=0
half=$((SECONDS_RUN / 2))
for ((t = 10; t <= SECONDS_RUN; t += 10)); do
	sleep 10
	curl -s -o "$OUT/metrics" "$U/metrics" || echo "serve: a scrape failed at $t s" >&2
	r=$(rss_kb "$SERVE")
	[ -z "$rss_first" ] && rss_first=$r
	[ "$r" -gt "$rss_max" ] && rss_max=$r
	printf '  %4d s: RSS %6d KB, %s events, %s lost, %s stacks the kernel could not take\n' \
		"$t" "$r" "$(awk '/^srvscope_events_total/ { print $2 }' "$OUT/metrics")" \
		"$(awk '/^srvscope_lost_events_total\{reason="(ringbuf|stack_ringbuf)"/ { s += $2 }
			END { print s + 0 }' "$OUT/metrics")" \
		"$(awk '/^srvscope_lost_events_total\{reason="stack_failed"/ { print $2 }' "$OUT/metrics")"
	if [ "$t" -eq $((half - half % 10)) ]; then
		# Under fire, mid-run: 100 scrapes at once, 10 profiles at once, bad requests.
		seq 100 | xargs -P 100 -I{} curl -s -o /dev/null -m 20 -w '%{http_code}\n' "$U/metrics" \
			>"$OUT/scrapes"
		seq 10 | xargs -P 10 -I{} curl -s -o /dev/null -m 20 -w '%{http_code}\n' \
			"$U/debug/pprof/offcpu?seconds=2" >"$OUT/profiles"
		for q in /nope "/debug/pprof/offcpu?seconds=-1" "/debug/pprof/offcpu?seconds=1e9" \
			"/debug/pprof/profile?seconds=abc" "/stacks?pid=1" "/../../etc/passwd"; do
			curl -s -o /dev/null -m 10 -w "%{http_code} $q\n" "$U$q"
		done >"$OUT/bad"
		python3 - "$PORT" >>"$OUT/bad" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
except OSError:
    pass
try:
    line = s.recv(64).split(b"\r\n")[0].decode()
except OSError:
    line = ""
print((line.split(" ")[1] if line else "closed"), "1 MB header")
PY
	fi
done
t1=$(date +%s%N)
c1=$(cpu_ticks "$SERVE")
rss_last=$(rss_kb "$SERVE")
kill -0 "$SERVE" 2>/dev/null && alive=yes || alive=NO
cpu=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", 100 * c / hz / (ns / 1e9) }')

# The peer: the same recording written to a file by 'srvscope record', 30 s.
/usr/bin/time -f '%U %S' -o "$OUT/rec.time" "$SRVSCOPE" record -p "$SERVER" --on-cpu=49 --call-graph=fp -d 30 \
	-o "$OUT/rec.trace" >/dev/null 2>"$OUT/rec.err"
rec=$(awk '{ printf "%.2f", 100 * ($1 + $2) / 30 }' "$OUT/rec.time")

echo
echo "agent CPU: $cpu % of a core on average (goal <= 2 %: $(awk -v c="$cpu" 'BEGIN { printf "%.2f", c / 2 }') of the budget)"
echo "  srvscope record of the same load into a file: $rec % (serve/record: $(awk -v a="$cpu" -v b="$rec" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'))"
echo "agent RSS: $rss_cold KB started, $rss_warm KB after a first profile (symbol tables loaded, kept)"
echo "  $rss_first KB after 10 s, $rss_last KB at the end, $rss_max KB at most (growth $(((rss_last - rss_first))) KB)"
echo "lost events reported in /metrics: $(awk '/^srvscope_lost_events_total/ { printf "%s=%s ", $1, $2 }' "$OUT/metrics")"
echo "100 concurrent scrapes: $(sort "$OUT/scrapes" | uniq -c | awk '{ printf "%s x %s  ", $1, $2 }')"
echo "10 concurrent 2 s profiles: $(sort "$OUT/profiles" | uniq -c | awk '{ printf "%s x %s  ", $1, $2 }')"
echo "malformed requests:"
sed 's/^/  /' "$OUT/bad"
echo "agent still running at the end: $alive"
