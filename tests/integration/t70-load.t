#!/bin/bash
# srvscope load against real servers on loopback (memcached, redis, nginx, a chunked HTTP
# server in Python): the number of requests follows the rate, the servers' own counters
# agree with the client's (memcached stats, redis INFO, nginx's access log), reconnects are
# accepted connections, every run ends within its duration + 1 s, and the failures (nothing
# listening, a server of another protocol, a server that dies) are one line each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_servers memcached redis-server redis-cli nginx jq python3

# load ARGS...: runs srvscope load -f json into $TMP/l.json, $TMP/l.err; sets RC, WALL (ms)
# and, from the JSON, L_<field> (whole numbers) and ORDERED (1: percentiles in order)
load() {
	local t0 t1
	t0=$(date +%s%N)
	"$SRVSCOPE" load -f json "$@" >"$TMP/l.json" 2>"$TMP/l.err"
	RC=$?
	t1=$(date +%s%N)
	WALL=$(((t1 - t0) / 1000000))
	read_result
}
read_result() { # one jq a run (a process start is slow on a loaded machine)
	unset "${!L_@}" ORDERED
	eval "$(jq -r '(to_entries[] | select(.value | type == "number") |
		"L_\(.key)=\(.value | floor)"), "ORDERED=\(if .p50_us > 0 and .p50_us <= .p90_us
		and .p90_us <= .p99_us and .p99_us <= .p999_us and .p999_us <= .max_us
		then 1 else 0 end)"' "$TMP/l.json" 2>/dev/null)"
}
# within GOT WANT PERCENT
within() { awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; }
bounded() { check "$1: ends within its duration + 1 s (${WALL} ms)" [ "$WALL" -le $(($2 * 1000 + 1000)) ]; }
percentiles_ordered() { is "$ORDERED" 1 "$1: 0 < p50 <= p90 <= p99 <= p99.9 <= max"; }

# The servers start together (their starts are slow on a loaded machine).
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$TMP" >"$TMP/redis.out" 2>&1 &
REDIS_PID=$!
_srv_stops="$_srv_stops $REDIS_PID:TERM"
d="$TMP/ngx"
NGINX_PORT=$(free_port)
nginx_conf "$d" "$NGINX_PORT" 2 "log_format conn '\$connection \$connection_requests'; access_log $d/logs/access.log conn;" \
	'; location / { return 200 "hello\n"; }'
nginx -p "$d" -c "$d/nginx.conf" -e "$d/logs/error.log" >"$d/out" 2>&1 &
NGINX_PID=$!
_srv_stops="$_srv_stops $NGINX_PID:TERM"
CH_PORT=$(free_port)
python3 - "$CH_PORT" >"$TMP/chunked.out" 2>&1 <<'PY' &
import sys, time, http.server
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    stalls = 0
    def do_GET(self):
        if self.path == "/delay": # every reply 20 ms late
            time.sleep(0.02)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); return
        if self.path == "/stall": # the 100th reply 300 ms late
            H.stalls += 1
            if H.stalls == 100:
                time.sleep(0.3)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); return
        if self.path == "/endless": # a body without a length that never ends
            self.wfile.write(b"HTTP/1.1 200 OK\r\n\r\n")
            try:
                while True:
                    self.wfile.write(b"x" * 65536)
            except OSError:
                return
        if self.path != "/chunked":
            self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"); return
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (b"hello ", b"chunked ", b"world\n"))
        # one write: small writes one after another wait for delayed ACKs (Nagle)
        self.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body + b"0\r\n\r\n")
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
CH_PID=$!
_srv_stops="$_srv_stops $CH_PID:TERM"

# --- memcached: rate, stats, reconnects
start_memcached 4 || skip_all "memcached did not start"
# every server up before the first load (their starts took the CPU from the first one)
check "redis-server started" wait_port "$REDIS_PORT" "$REDIS_PID"
check "nginx started" wait_port "$NGINX_PORT" "$NGINX_PID"
check "the Python HTTP server started" wait_port "$CH_PORT" "$CH_PID"
mc_stat() { # mc_stat NAME: one value of memcached's stats (over a connection of its own)
	exec 3<>"/dev/tcp/127.0.0.1/$MEMCACHED_PORT"
	printf 'stats\r\nquit\r\n' >&3
	tr -d '\r' <&3 | awk -v k="$1" '$2 == k {print $3}'
	exec 3<&-
}
mc_all() { echo "$(mc_stat cmd_get) $(mc_stat cmd_set) $(mc_stat total_connections)"; }
read -r g0 s0 c0 <<<"$(mc_all)"
load "memcached://127.0.0.1:$MEMCACHED_PORT" -c 8 -r 2000 -d 2 --reconnect 0.5 --set-share 0.2
read -r g1 s1 c1 <<<"$(mc_all)"
ok $RC "memcached: a 2 s load at 2000/s over 8 connections, reconnecting every 0.5 s"
bounded memcached 2
done_=$L_completed
check "memcached: completed $done_ of 4000 (within 5 %)" within "$done_" 4000 5
is "$L_errors" 0 "memcached: no errors"
percentiles_ordered memcached
is "$((g1 - g0 + s1 - s0))" "$(($L_completed + $L_prefilled))" \
	"memcached: cmd_get + cmd_set = the client's requests + the keys prefilled"
sets=$((s1 - s0 - $L_prefilled))
check "memcached: sets are about 20 % ($sets)" within "$sets" $((done_ / 5)) 25
# each mc_all opens 3 connections; the first three of the second are counted
is "$((c1 - c0 - 3))" "$L_connects" "memcached: total_connections grew by the client's connects"
check "memcached: reconnects: $L_connects connects for 8 connections" [ "$L_connects" -ge 30 ]

load "memcached://127.0.0.1:$MEMCACHED_PORT" -c 4 -r 0 -d 1
ok $RC "memcached: closed loop (rate 0)"
bounded "memcached closed loop" 1
check "memcached closed loop: $L_throughput_rps req/s, above 2000" [ "$L_throughput_rps" -gt 2000 ]

load "memcached://127.0.0.1:$MEMCACHED_PORT" -c 4 -r 1000 -d 1 --poisson --value-size 20000
ok $RC "memcached: Poisson arrivals, 20 kB values"
check "memcached Poisson: completed $L_completed of 1000 (within 15 %)" within "$L_completed" 1000 15

load "memcached://127.0.0.1:$MEMCACHED_PORT" -c 4 -r 2000 -d 1 --threads 2
ok $RC "memcached: two client threads"
check "memcached two threads: completed $L_completed of 2000 (within 5 %)" within "$L_completed" 2000 5

# SIGINT ends the schedule early; what was measured is printed
t0=$(date +%s%N)
"$SRVSCOPE" load -f json "memcached://127.0.0.1:$MEMCACHED_PORT" -r 1000 -d 20 >"$TMP/l.json" 2>"$TMP/l.err" &
lpid=$!
sleep 1
kill -INT "$lpid"
wait "$lpid"
RC=$?
WALL=$((($(date +%s%N) - t0) / 1000000))
read_result
ok $RC "SIGINT after 1 s of 20: exit status 0"
check "SIGINT: ends at once ($WALL ms)" [ "$WALL" -lt 2500 ]
check "SIGINT: the second measured ($L_completed requests)" [ "${L_completed:-0}" -gt 300 -a "${L_completed:-0}" -lt 1500 ]

# a server that dies mid-run: its requests fail, the run still ends on time
t0=$(date +%s%N)
"$SRVSCOPE" load -f json "memcached://127.0.0.1:$MEMCACHED_PORT" -c 4 -r 500 -d 2 \
	>"$TMP/l.json" 2>"$TMP/l.err" &
lpid=$!
sleep 1
disown "$MEMCACHED_PID" # no "Killed" line from the shell
kill -KILL "$MEMCACHED_PID"
wait "$lpid"
RC=$?
WALL=$((($(date +%s%N) - t0) / 1000000))
read_result
ok $RC "memcached killed after 1 s of 2: the run completes"
bounded "memcached killed" 2
check "memcached killed: some done ($L_completed of 1000), failed connects ($L_connect_errors)" \
	[ "$L_completed" -gt 0 -a "$L_completed" -lt 900 -a "$L_connect_errors" -gt 0 ]

# nothing listens there any more
load "memcached://127.0.0.1:$MEMCACHED_PORT" -d 5
is "$RC" 1 "nothing listening: exit status 1"
is "$(wc -l <"$TMP/l.err")" 1 "nothing listening: one line"
like "$(cat "$TMP/l.err")" "cannot connect to 127.0.0.1:$MEMCACHED_PORT: Connection refused" \
	"nothing listening: says so"
check "nothing listening: at once ($WALL ms)" [ "$WALL" -lt 1000 ]

# --- redis
rd_stat() { redis-cli -p "$REDIS_PORT" info stats | tr -d '\r' | awk -F: -v k="$1" '$1 == k {print $2}'; }
n0=$(rd_stat total_commands_processed)
k0=$(rd_stat total_connections_received)
load "redis://127.0.0.1:$REDIS_PORT" -c 6 -r 1500 -d 2 --reconnect 1
n1=$(rd_stat total_commands_processed)
k1=$(rd_stat total_connections_received)
ok $RC "redis: a 2 s load at 1500/s"
bounded redis 2
check "redis: completed $L_completed of 3000 (within 5 %)" within "$L_completed" 3000 5
percentiles_ordered redis
# an INFO counts itself in the next one's numbers: two before the load
is "$((n1 - n0 - 2))" "$(($L_completed + $L_prefilled))" \
	"redis: total_commands_processed = the client's requests + the keys prefilled"
is "$((k1 - k0 - 2))" "$L_connects" "redis: total_connections_received = the client's connects"

# --- nginx: keep-alive and one request per connection, against its access log
lines() { wc -l <"$d/logs/access.log"; }
a0=$(lines)
load "http://127.0.0.1:$NGINX_PORT/" -c 8 -r 2000 -d 2
a1=$(lines)
ok $RC "nginx: keep-alive, 2000/s for 2 s"
bounded nginx 2
check "nginx: completed $L_completed of 4000 (within 5 %)" within "$L_completed" 4000 5
percentiles_ordered nginx
is "$((a1 - a0))" "$L_completed" "nginx: one access log line per request"
is "$L_connects" 9 "nginx: keep-alive: 8 connections and the first check"
# the requests go round the connections: nginx served each about an eighth of them
read -r nconn most <<<"$(tail -n "$L_completed" "$d/logs/access.log" |
	awk '{ n[$1]++ } END { m = 0; for (c in n) { k++; if (n[c] > m) m = n[c] }; print k, m }')"
is "$nconn" 8 "nginx: the requests came over 8 connections"
check "nginx: none served more than twice its share ($most of $L_completed)" \
	[ "$((most * 8))" -le "$((L_completed * 2))" ]
load "http://127.0.0.1:$NGINX_PORT/" -c 4 -r 500 -d 2 --no-keepalive
a2=$(lines)
ok $RC "nginx: one request per connection, 500/s for 2 s"
check "nginx no keep-alive: completed $L_completed of 1000 (within 5 %)" within "$L_completed" 1000 5
is "$((a2 - a1))" "$L_completed" "nginx no keep-alive: one access log line per request"
# and up to one opened for the next request on each connection when the run ends
extra=$((L_connects - 1 - L_completed))
check "nginx no keep-alive: a connection per request ($L_connects for $L_completed)" \
	[ "$extra" -ge 0 -a "$extra" -le 4 ]

# a server of another protocol
load "memcached://127.0.0.1:$NGINX_PORT" -c 2 -r 100 -d 1
is "$RC" 1 "memcached client against nginx: exit status 1"
like "$(cat "$TMP/l.err")" "no good reply: is 127.0.0.1:$NGINX_PORT a memcached server" \
	"... one line that says what is wrong"
is "$(wc -l <"$TMP/l.err")" 1 "... only one"

# --- chunked replies and 404s from a small HTTP/1.1 server
load "http://127.0.0.1:$CH_PORT/chunked" -c 2 -r 200 -d 1
ok $RC "chunked replies"
check "chunked: completed $L_completed of 200 (within 5 %), no errors" within "$L_completed" 200 5
is "$L_errors" 0 "chunked: no errors"
# latency is the server's time and more, never less
load "http://127.0.0.1:$CH_PORT/delay" -c 2 -r 20 -d 1
ok $RC "replies 20 ms late"
check "replies 20 ms late: 20 ms <= p50 ($L_p50_us us) < 200 ms" \
	[ "${L_p50_us:-0}" -ge 20000 -a "${L_p50_us:-0}" -lt 200000 ]
# no coordinated omission: one reply 300 ms late on the one connection delays the 60
# requests scheduled behind it, and each counts from its schedule: the 40 slowest waited
# 100 ms or more (a client that counts from its send would see one slow request, and a p90
# of a few ms)
load "http://127.0.0.1:$CH_PORT/stall" -c 1 -r 200 -d 2
ok $RC "one reply 300 ms late, at 200/s over one connection"
check "stall: completed $L_completed of 400 (within 5 %)" within "${L_completed:-0}" 400 5
check "stall: the max ($L_max_us us) is the stall, 300 ms or more" [ "${L_max_us:-0}" -ge 300000 ]
check "stall: p90 ($L_p90_us us) is 50 ms or more: the requests behind it waited" \
	[ "${L_p90_us:-0}" -ge 50000 ]
check "stall: p50 ($L_p50_us us) below 100 ms" [ "${L_p50_us:-0}" -lt 100000 ]
# a reply that never ends is given up at 16 MB (it grew the client's memory without end)
load "http://127.0.0.1:$CH_PORT/endless" -c 1 -r 10 -d 1
is "$RC" 1 "a body that never ends: exit status 1"
bounded "a body that never ends" 1
like "$(cat "$TMP/l.err")" "no good reply" "... no good reply"
load "http://127.0.0.1:$CH_PORT/missing" -c 2 -r 100 -d 0.5
is "$RC" 1 "every reply a 404: exit status 1"
like "$(cat "$TMP/l.err")" "every reply an error \(last: HTTP 404\): check the path" "... says so"

# --- load commands
"$SRVSCOPE" load --load "echo {conns} {rate} {duration} {requests} >$TMP/cmd.out" -c 3 -r 100 -d 2 \
	2>/dev/null >/dev/null
ok $? "a load command runs"
is "$(cat "$TMP/cmd.out")" "3 100 2 200" "its placeholders are expanded"
"$SRVSCOPE" load --load "exit 3" -d 1 >/dev/null 2>&1
is $? 3 "its exit status is srvscope's"
t0=$(date +%s%N)
"$SRVSCOPE" load --load "sleep 30" -d 0.5 >/dev/null 2>"$TMP/err"
rc=$?
t1=$(date +%s%N)
is "$rc" 143 "a command past its bound is stopped (SIGTERM)"
like "$(cat "$TMP/err")" "still running 1 s after its 0.5 s: stopped" "... and srvscope says it stopped it"
check "... 1 s after the duration ($(((t1 - t0) / 1000000)) ms)" [ $(((t1 - t0) / 1000000)) -lt 2500 ]
"$SRVSCOPE" load --load "echo {bogus}" 2>"$TMP/err"
is $? 2 "an unknown placeholder: exit status 2"
like "$(cat "$TMP/err")" "unknown placeholder" "... named"

# --- bad options
"$SRVSCOPE" load "memcached://127.0.0.1" 2>"$TMP/err"
is $? 2 "a URL without a port: exit status 2"
"$SRVSCOPE" load "memcached://127.0.0.1:1" -c 0 2>"$TMP/err"
is $? 2 "-c 0: exit status 2"
"$SRVSCOPE" load "memcached://127.0.0.1:1" --set-share 2 2>"$TMP/err"
is $? 2 "--set-share 2: exit status 2"
"$SRVSCOPE" load --frobnicate=1 2>"$TMP/err"
is $? 2 "an unknown option: exit status 2"
is "$(cat "$TMP/err")" "srvscope: load: unknown option '--frobnicate' (see 'srvscope load --help')" \
	"... one line naming it"
"$SRVSCOPE" load --help >"$TMP/out"
like "$(head -1 "$TMP/out")" "^usage: srvscope load" "--help: the usage on stdout"
done_testing
