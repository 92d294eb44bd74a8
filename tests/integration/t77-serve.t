#!/bin/bash
# srvscope serve watching serve_split (7 ms in nanosleep, 3 ms in poll, over and over): a
# real Prometheus (Debian's) scrapes /metrics every second, and a PromQL query over what it
# stored gives the 70/30 off-CPU split within 3 points; go tool pprof reads
# /debug/pprof/offcpu?seconds=2 and shows the two paths with the same split; malformed
# requests get errors and the agent goes on; the bearer token is required when set; SIGTERM
# ends it cleanly (status 0).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers prometheus go curl
PF="python3 $TOP/tests/integration/pprof_folded.py"

start_fixture "$FIXTURES/serve_split" 50 || { ok 1 "fixture starts"; done_testing; }
PORT=$(free_port)
"$SRVSCOPE" serve -p "$FPID" --listen "127.0.0.1:$PORT" --token-file <(echo sekrit) \
	>"$TMP/serve.out" 2>"$TMP/serve.err" &
SERVE=$!
_srv_stops="$_srv_stops $SERVE:TERM"
wait_port "$PORT" "$SERVE"
ok $? "serve listens on 127.0.0.1:$PORT"
U="http://127.0.0.1:$PORT"
AUTH="Authorization: Bearer sekrit"

# Prometheus scrapes with the token, as a real deployment would.
PPORT=$(free_port)
mkdir -p "$TMP/prom"
cat >"$TMP/prom/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: srvscope
    authorization:
      credentials: sekrit
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOC
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom/log" 2>&1 &
PROM=$!
_srv_stops="$PROM:TERM $_srv_stops"
wait_port "$PPORT" "$PROM"
ok $? "prometheus listens on 127.0.0.1:$PPORT"
t0=$(date +%s)

is "$(curl -s -o /dev/null -w '%{http_code}' "$U/metrics")" 401 "no token: 401"
is "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong' "$U/metrics")" \
	401 "a wrong token: 401"
# The listener comes up first, then the recorder loads and attaches (seconds on a loaded
# machine): the first episodes show up after that.
for _ in $(seq 150); do
	curl -s -H "$AUTH" "$U/metrics" >"$TMP/metrics"
	grep -q '^srvscope_offcpu_seconds_total{process="splitter"' "$TMP/metrics" && break
	sleep 0.1
done
like "$(grep '^srvscope_offcpu_seconds_total' "$TMP/metrics")" \
	'process="splitter",thread="splitter",syscall="nanosleep"' "metrics: off-CPU seconds by syscall"
like "$(cat "$TMP/metrics")" '^# TYPE srvscope_sched_delay_seconds histogram' \
	"metrics: scheduling-delay histogram"
like "$(cat "$TMP/metrics")" 'srvscope_lost_events_total\{reason="ringbuf"\} [0-9]+' \
	"metrics: lost events"
like "$(cat "$TMP/metrics")" 'process_resident_memory_bytes [1-9]' "metrics: the agent's memory"

# pprof over 2 s, read by go tool pprof: the two paths, 70/30.
curl -s -H "$AUTH" -o "$TMP/off.pb.gz" "$U/debug/pprof/offcpu?seconds=2"
$PF "$TMP/off.pb.gz" >"$TMP/off.folded" 2>"$TMP/pf.err"
ok $? "go tool pprof -raw reads /debug/pprof/offcpu?seconds=2"
timer=$(awk '/;wait_timer;/ { s += $NF } END { print s + 0 }' "$TMP/off.folded")
poll=$(awk '/;wait_poll;/ { s += $NF } END { print s + 0 }' "$TMP/off.folded")
like "$(grep -c 'splitter;.*;main;wait_timer;.*nanosleep' "$TMP/off.folded")" '^[1-9]' \
	"the profile has the nanosleep path (main;wait_timer)"
like "$(grep -c 'splitter;.*;main;wait_poll;.*poll' "$TMP/off.folded")" '^[1-9]' \
	"the profile has the poll path (main;wait_poll)"
pct=$(awk -v a="$timer" -v b="$poll" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
diag "pprof: wait_timer $timer ns, wait_poll $poll ns: $pct%"
like "$(awk -v p="$pct" 'BEGIN { print (p >= 65 && p <= 75) ? "yes" : "no" }')" yes \
	"pprof: the nanosleep path is 70% of the off-CPU time, within 5 points ($pct)"
# go tool pprof fetches the URL itself, as its users do (the token through a header file).
HOME=$TMP PPROF_TMPDIR=$TMP timeout 30 go tool pprof -top \
	"http://127.0.0.1:$PORT/debug/pprof/offcpu?seconds=1" >"$TMP/top" 2>&1
# Without the token go tool pprof is refused: serve says so.
like "$(cat "$TMP/top")" '401|Unauthorized|unauthorized' "go tool pprof without the token is refused"

# Malformed requests: an error each, never a crash or a hang.
code() { curl -s -o /dev/null -m 10 -w '%{http_code}' -H "$AUTH" "$@"; }
is "$(code "$U/nope")" 404 "unknown path: 404"
is "$(code "$U/debug/pprof/offcpu?seconds=-1")" 400 "seconds=-1: 400"
is "$(code "$U/debug/pprof/offcpu?seconds=1e9")" 400 "seconds=1e9: 400"
is "$(code "$U/debug/pprof/offcpu?seconds=61")" 400 "seconds above --max-seconds: 400"
is "$(code "$U/debug/pprof/profile?seconds=1")" 404 "on-CPU profile without --on-cpu: 404"
is "$(code -X POST -d x=1 "$U/metrics")" 405 "POST: 405 (read-only)"
is "$(code "$U/stacks?pid=1")" 403 "a pid outside the served set: 403"
is "$(code "$U/debug/pprof/offcpu?seconds=1&pid=1")" 403 "a profile of a pid outside the set: 403"
# A 1 MB header, sent raw: the status line of the answer, or nothing when the connection
# is closed first (either way no crash and no hang: the agent is asked again below).
big=$(python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
except OSError:
    pass
try:
    print(s.recv(64).split(b"\r\n")[0].decode() or "closed")
except OSError:
    print("closed")
PY
)
like "$big" '^(HTTP/1.1 (413|431|400)|closed)' "a 1 MB header is refused ($big)"
is "$(code "$U/stacks")" 200 "/stacks answers"
curl -s -H "$AUTH" "$U/stacks" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["mode"] == "nostop", d["mode"]
assert any(f["symbol"] in ("wait_timer", "wait_poll") for g in d["groups"] for f in g["frames"])'
ok $? "/stacks: a nostop snapshot with the fixture's wait function"
kill -0 "$SERVE"
ok $? "serve still runs after the malformed requests"

# PromQL over what Prometheus scraped: the nanosleep share of the off-CPU time.
while [ $(($(date +%s) - t0)) -lt 14 ]; do sleep 1; done
Q='sum(rate(srvscope_offcpu_seconds_total{thread="splitter",syscall="nanosleep"}[12s])) / sum(rate(srvscope_offcpu_seconds_total{thread="splitter"}[12s]))'
curl -s "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$Q" >"$TMP/q.json"
share=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%.1f" % (100 * float(d["data"]["result"][0]["value"][1])))' "$TMP/q.json" 2>/dev/null)
diag "PromQL: nanosleep share $share%; the fixture measured: $(tail -1 "$FOUT")"
like "$(awk -v p="${share:-0}" 'BEGIN { print (p >= 67 && p <= 73) ? "yes" : "no" }')" yes \
	"PromQL: the off-CPU split is 70/30 within 3 points ($share)"
[ -n "$share" ] || sed 's/^/#   /' "$TMP/q.json"

kill -TERM "$SERVE"
wait "$SERVE"
is "$?" 0 "SIGTERM: serve exits 0"
like "$(cat "$TMP/serve.err")" 'serve stopped' "SIGTERM: serve says it stopped"

# On-CPU time by component (--on-cpu): a fixture burning CPU in user mode for 2 s shows
# as component="user", about the CPU time the kernel charged it.
"$FIXTURES/burn7030" >/dev/null 2>&1 &
BURN=$!
_pids="$_pids $BURN"
CPORT=$(free_port)
"$SRVSCOPE" serve -p "$BURN" --on-cpu --listen "127.0.0.1:$CPORT" 2>"$TMP/serve2.err" &
SERVE2=$!
_pids="$_pids $SERVE2"
for _ in $(seq 100); do grep -q serving "$TMP/serve2.err" && break; sleep 0.1; done
# The listener says "serving" before the recorder has loaded and attached (a second or more
# on a loaded machine): the window starts once samples come in.
oncpu_user() {
	curl -s "http://127.0.0.1:$CPORT/metrics" |
		awk -F'} ' '/^srvscope_oncpu_seconds_total.*component="user"/ {s += $2} END {print s + 0}'
}
for _ in $(seq 150); do
	awk -v m="$(oncpu_user)" 'BEGIN { exit !(m > 0) }' && break
	sleep 0.1
done
t1=$(awk '{print $14 + $15}' "/proc/$BURN/stat")
m1=$(oncpu_user)
sleep 2
t2=$(awk '{print $14 + $15}' "/proc/$BURN/stat")
m2=$(oncpu_user)
ticks=$(getconf CLK_TCK)
r=$(awk -v a="$m1" -v b="$m2" -v x="$t1" -v y="$t2" -v hz="$ticks" \
	'BEGIN { c = (y - x) / hz; printf "%.2f %.2f", b - a, c }')
diag "on-CPU user seconds by component: $r (metrics, the kernel's count)"
check "srvscope_oncpu_seconds_total{component=\"user\"} within 20 % of the kernel's CPU time ($r)" \
	awk -v r="$r" 'BEGIN { split(r, v, " "); exit !(v[2] > 0.5 && v[1] > 0.8 * v[2] && v[1] < 1.2 * v[2]) }'
kill -TERM "$SERVE2" "$BURN"
wait "$SERVE2"
done_testing
