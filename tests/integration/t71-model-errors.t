#!/bin/bash
# srvscope model on bad input: a pid that is gone, a server that exits mid-run, a server
# that does not listen where the client connects, a load command that fails, a malformed
# config, bad options: one line that says what is wrong,
# a non-zero exit, and the runs done before a failure kept in the model.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers memcached memcslap

# one_error OUTPUT-FILE: exactly one line starting "srvscope: " that is not a notice.
one_error() { [ "$(grep -c '^srvscope: ' "$1")" -ge 1 ] && [ "$(grep -v '^srvscope: \(model: run\|recorded\|every target\)' "$1" | grep -c .)" = 1 ]; }

gone=$(sh -c 'echo $$')
"$SRVSCOPE" model -p "$gone" --load true >"$TMP/out" 2>"$TMP/err"
st=$?
sed 's/^/#   /' "$TMP/err"
ok $((st == 0)) "a gone pid: non-zero exit ($st)"
check "a gone pid: one line" one_error "$TMP/err"
like "$(cat "$TMP/err")" "$gone" "a gone pid: the line names it"

"$SRVSCOPE" model -p 1 >"$TMP/out" 2>"$TMP/err"
is $? 2 "no load: usage error"
check "no load: one line" one_error "$TMP/err"
"$SRVSCOPE" model -p 1 --client nope://x --load true >"$TMP/out" 2>"$TMP/err"
is $? 2 "--client and --load: usage error"
"$SRVSCOPE" model -p 1 --load true --conns 4,x >"$TMP/out" 2>"$TMP/err"
is $? 2 "a bad --conns: usage error"
like "$(cat "$TMP/err")" "--conns" "a bad --conns: the line names the option"

start_memcached 2 || skip_all "memcached did not start"

# A server that does not listen where the client would connect.
"$SRVSCOPE" model -p "$MEMCACHED_PID" --client "memcached://127.0.0.1:$(free_port)" \
	>"$TMP/out" 2>"$TMP/err"
st=$?
sed 's/^/#   /' "$TMP/err"
ok $((st == 0)) "not listening there: non-zero exit ($st)"
check "not listening there: one line" one_error "$TMP/err"
like "$(cat "$TMP/err")" "does not listen" "not listening there: the line says so"
"$SRVSCOPE" model -p "$MEMCACHED_PID" --client "gopher://127.0.0.1:1" >"$TMP/out" 2>"$TMP/err"
is $? 2 "an unknown URL scheme: usage error"

printf '{"runs": [{"conns": 4, "rate": "fast"}]}' >"$TMP/bad.json"
"$SRVSCOPE" model -p "$MEMCACHED_PID" --load true --config "$TMP/bad.json" >"$TMP/out" 2>"$TMP/err"
st=$?
sed 's/^/#   /' "$TMP/err"
ok $((st == 0)) "a malformed config: non-zero exit ($st)"
check "a malformed config: one line" one_error "$TMP/err"
printf '{"runs": [' >"$TMP/bad2.json"
"$SRVSCOPE" model -p "$MEMCACHED_PID" --load true --config "$TMP/bad2.json" >"$TMP/out" 2>"$TMP/err"
st=$?
sed 's/^/#   /' "$TMP/err"
ok $((st == 0)) "a config that is not JSON: non-zero exit ($st)"
check "a config that is not JSON: one line" one_error "$TMP/err"
# A config that is a FIFO (a neighbour's plant, or a mistake): refused at once, never read
# (a read would wait for a writer for ever).
mkfifo "$TMP/fifo.json"
timeout 10 "$SRVSCOPE" model -p "$MEMCACHED_PID" --load true --config "$TMP/fifo.json" >"$TMP/out" 2>"$TMP/err"
st=$?
sed 's/^/#   /' "$TMP/err"
ok $((st == 0 || st == 124)) "a config that is a FIFO: refused, not waited on ($st)"
check "a config that is a FIFO: one line" one_error "$TMP/err"
like "$(cat "$TMP/err")" "not a regular file" "a config that is a FIFO: the line says so"

# Two runs; the load fails on the second: the first is kept in the model.
printf '{"runs": [{"conns": 4, "duration_s": 1}, {"conns": 8, "duration_s": 1}]}' >"$TMP/two.json"
"$SRVSCOPE" model -p "$MEMCACHED_PID" --config "$TMP/two.json" -o "$TMP/kept.json" \
	--load "if [ -e $TMP/once ]; then exit 3; fi; touch $TMP/once; memcslap --servers=127.0.0.1:$MEMCACHED_PORT --concurrency=4 --execute-number=500 >/dev/null 2>&1" \
	>"$TMP/out" 2>"$TMP/err"
st=$?
sed 's/^/#   /' "$TMP/err"
ok $((st == 0)) "a load command that fails: non-zero exit ($st)"
check "a load command that fails: one line" one_error "$TMP/err"
like "$(cat "$TMP/err")" "exit status 3" "the line gives the command's status"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
print("# runs kept: %s" % [(r["conns"], r["requests"]) for r in runs])
sys.exit(0 if len(runs) == 1 and runs[0]["requests"] > 100 else 1)' "$TMP/kept.json"
ok $? "the run done before the failure is kept in the model"

# A load command that outlives its run (it ignores {duration}): stopped 5 s after the run's
# second, with a notice; the run is kept, since the server was loaded all along.
printf '{"runs": [{"conns": 4, "duration_s": 1}]}' >"$TMP/one.json"
t0=$(date +%s%N)
"$SRVSCOPE" model -p "$MEMCACHED_PID" --config "$TMP/one.json" -o "$TMP/late.json" --no-skeleton \
	--load "memcslap --servers=127.0.0.1:$MEMCACHED_PORT --concurrency=4 --execute-number=500 >/dev/null 2>&1; exec sleep 60" \
	>"$TMP/out" 2>"$TMP/err"
st=$?
t1=$(date +%s%N)
sed 's/^/#   /' "$TMP/err"
is "$st" 0 "a load command that outlives its run: the model is written"
like "$(cat "$TMP/err")" "still running 5 s after the run's 1 s: stopped, and the run kept" \
	"... and says it stopped the command"
check "... 5 s after the run, not 60 ($(((t1 - t0) / 1000000)) ms)" [ $(((t1 - t0) / 1000000)) -lt 30000 ]
python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
print("# runs: %s" % [(r["conns"], r["requests"]) for r in runs])
sys.exit(0 if len(runs) == 1 and runs[0]["requests"] > 100 else 1)' "$TMP/late.json"
ok $? "... and its run is in the model"

# The server exits mid-run.
memcached -u root -l 127.0.0.1 -p "$(free_port)" -U 0 -t 1 >/dev/null 2>&1 &
victim=$!
_srv_stops="$_srv_stops $victim:TERM"
sleep 0.3
(sleep 1.5; kill "$victim") &
t0=$(date +%s)
"$SRVSCOPE" model -p "$victim" --conns 2 --duration 3 --load "sleep 3" >"$TMP/out" 2>"$TMP/err"
st=$?
t1=$(date +%s)
sed 's/^/#   /' "$TMP/err"
ok $((st == 0)) "a server that exits mid-run: non-zero exit ($st)"
check "a server that exits mid-run: one line" one_error "$TMP/err"
like "$(cat "$TMP/err")" "exited during run 1" "the line says the server exited"
ok $((t1 - t0 > 10)) "bounded in time ($((t1 - t0)) s)"

done_testing
