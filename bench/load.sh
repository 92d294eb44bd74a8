#!/usr/bin/env bash
# srvscope load's clients beside the peer tools, in one run, on the same servers and the
# same number of connections: memcached (memcslap: Debian has no memtier_benchmark), redis
# (redis-benchmark), nginx keep-alive (wrk) and one request per connection (ab). For each:
#   closed loop: the peer's throughput and p50 and ours (srvscope load -r 0), and their
#                ratios (memcslap gives no latency);
#   open loop:   ours at half the peer's throughput (-r PEER_RPS/2): the share of the asked
#                rate we hold (1.00: every request on time) and our p50 there.
# The peers are closed-loop tools (none in Debian keeps a rate: wrk2 and memtier are not
# packaged), so the rates and latencies compared side by side are closed-loop ones. The
# peer and ours alternate who goes first, round by round; medians are printed.
# Usage: bench/load.sh [SECONDS [CONNS [ROUNDS]]]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRVSCOPE=${SRVSCOPE:-$TOP/build/srvscope}
D=${1:-3}
C=${2:-8}
ROUNDS=${3:-3}
. "$(dirname "$0")/memcached.sh"
OUT=$(mktemp -d /tmp/srvscope-bench.XXXXXX)
PIDS=""
cleanup() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$OUT"
}
trap cleanup EXIT

bench_need load memcached memcslap redis-server redis-benchmark nginx wrk ab jq python3
[ -x "$SRVSCOPE" ] || { echo "load: build srvscope first (make)" >&2; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

PORT=$(free_port)
start_memcached load 256
PIDS="$PIDS $MC"
MC_PORT=$PORT
RD_PORT=$(free_port)
redis-server --port "$RD_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$OUT" \
	>"$OUT/redis.out" 2>&1 &
PIDS="$PIDS $!"
NG_PORT=$(free_port)
mkdir -p "$OUT/ngx/logs"
cat >"$OUT/ngx/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $OUT/ngx/nginx.pid;
error_log $OUT/ngx/logs/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $OUT/ngx; proxy_temp_path $OUT/ngx; fastcgi_temp_path $OUT/ngx;
	uwsgi_temp_path $OUT/ngx; scgi_temp_path $OUT/ngx;
	server { listen 127.0.0.1:$NG_PORT; location / { return 200 "hello\n"; } }
}
CONF
nginx -p "$OUT/ngx" -c "$OUT/ngx/nginx.conf" -e "$OUT/ngx/logs/error.log" >"$OUT/ngx/out" 2>&1 &
PIDS="$PIDS $!"
sleep 1

# Peers: each prints "RPS P50_US" (P50_US "-" when the tool gives none).
peer_memcached() { # memcslap: C threads of one connection, gets of keys it sets first
	local n
	n=$(awk -v d="$D" -v c="$C" 'BEGIN { printf "%d", 15000 * d / c }')
	memcslap -s "127.0.0.1:$MC_PORT" -c "$C" -e "$n" -t get 2>&1 |
		awk '/Time to get/ { if ($(NF-1) > 0) printf "%.0f -\n", $4 / $(NF-1) }'
}
peer_redis() { # redis-benchmark: GETs of 100-byte values over 1000 keys
	local n
	n=$(awk -v d="$D" 'BEGIN { printf "%d", 40000 * d }')
	redis-benchmark -p "$RD_PORT" -c "$C" -n "$n" -t get -d 100 -r 1000 --csv 2>/dev/null |
		awk -F'"' '$2 == "GET" { printf "%.0f %.0f\n", $4, $10 * 1000 }'
}
wrk_us() { # wrk's "123.45us" / "1.2ms" / "1.1s" in microseconds
	awk '{ v = $1 + 0; if ($1 ~ /ms$/) v *= 1000; else if ($1 ~ /[0-9]s$/) v *= 1e6; printf "%.0f", v }'
}
peer_http() { # wrk, keep-alive, one thread
	local o p50
	o=$(wrk -t1 -c"$C" -d"$D" --latency "http://127.0.0.1:$NG_PORT/" 2>&1)
	p50=$(echo "$o" | awk '$1 == "50%" { print $2 }' | wrk_us)
	echo "$o" | awk -v p="$p50" '/^Requests\/sec/ { printf "%.0f %s\n", $2, p }'
}
peer_http_close() { # ab, a connection per request (its percentiles are whole ms)
	local n
	n=$(awk -v d="$D" 'BEGIN { printf "%d", 2000 * d }')
	ab -c "$C" -n "$n" "http://127.0.0.1:$NG_PORT/" 2>&1 |
		awk '/^Requests per second/ { r = $4 } $1 == "50%" { p = $2 * 1000 }
		     END { printf "%.0f %s\n", r, p }'
}
# ours URL RATE ARGS...: prints "RPS P50_US"
ours() {
	local url=$1 rate=$2
	shift 2
	"$SRVSCOPE" load -f json "$url" -c "$C" -d "$D" -r "$rate" "$@" 2>"$OUT/ours.err" |
		jq -r '"\(.throughput_rps | floor) \(.p50_us | floor)"'
}
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0 || b == "-" || a == "-") print "-"; else printf "%.2f", a / b }'; }

printf 'srvscope load beside the peer tools: %s s runs, %s connections, median of %s rounds\n\n' "$D" "$C" "$ROUNDS"
printf '%-17s %-15s %9s %9s %5s %9s %9s %5s | %9s %6s %9s\n' server peer "peer rps" "ours rps" ratio \
	"peer p50" "ours p50" ratio "half rps" held "ours p50"
row() { # NAME PEER_FN URL ARGS...
	local name=$1 fn=$2 url=$3 r
	shift 3
	: >"$OUT/pr" >"$OUT/pp" >"$OUT/or" >"$OUT/op" >"$OUT/hh" >"$OUT/hp"
	for r in $(seq "$ROUNDS"); do
		local peer closed half
		if [ $((r % 2)) = 1 ]; then
			peer=$($fn)
			closed=$(ours "$url" 0 "$@")
		else
			closed=$(ours "$url" 0 "$@")
			peer=$($fn)
		fi
		echo "${peer% *}" >>"$OUT/pr"
		echo "${peer#* }" >>"$OUT/pp"
		echo "${closed% *}" >>"$OUT/or"
		echo "${closed#* }" >>"$OUT/op"
		half=$(( ${peer% *} / 2 ))
		local open
		open=$(ours "$url" "$half" "$@")
		echo "${open% *} $half" | awk '{ if ($2 > 0) printf "%.3f\n", $1 / $2 }' >>"$OUT/hh"
		echo "${open#* }" >>"$OUT/hp"
	done
	local pr pp or op
	pr=$(median <"$OUT/pr")
	pp=$(grep -qv -- - "$OUT/pp" && median <"$OUT/pp" || echo -)
	or=$(median <"$OUT/or")
	op=$(median <"$OUT/op")
	printf '%-17s %-15s %9s %9s %5s %9s %9s %5s | %9s %6s %9s\n' "$name" "${fn#peer_}" "$pr" "$or" \
		"$(ratio "$or" "$pr")" "$pp" "$op" "$(ratio "$op" "$pp")" "$((pr / 2))" \
		"$(median <"$OUT/hh")" "$(median <"$OUT/hp")"
}
row memcached "peer_memcached" "memcached://127.0.0.1:$MC_PORT" --set-share 0
row redis "peer_redis" "redis://127.0.0.1:$RD_PORT" --set-share 0
row "nginx keep-alive" "peer_http" "http://127.0.0.1:$NG_PORT/"
row "nginx close" "peer_http_close" "http://127.0.0.1:$NG_PORT/" --no-keepalive
printf '\nratios: ours / the peer'"'"'s, both closed loop at %s connections (p50 in us; ab gives whole\n' "$C"
printf 'ms). held: our completed rate / the asked rate, open loop at half the peer'"'"'s throughput.\n'
