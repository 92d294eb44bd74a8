#!/bin/bash
# srvscope model on real servers (Debian packages, loopback, started here): the network model
# equals Ditto's published verdicts (memcached: accept_dispatch false, network_dispatch true,
# epoll, 1 acceptor, 4 network threads; redis: false, false, epoll, 1 thread), and the
# clusters match the threads' roles as /proc names them: memcached's 4 mc-worker threads are
# one cluster that does all connection I/O, its main thread the only acceptor. memcached is
# modelled with the defaults (3 runs of the built-in client) within 30 s; each run gives its
# network threads' time outside syscalls, below their CPU time (none when sampled).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers memcached redis-server

check_model() { python3 "$(dirname "$0")/expect_model.py" "$@"; }
# memcached: 4 worker threads; the defaults (3 runs, the built-in client).
start_memcached 4 || skip_all "memcached did not start"
t0=$(date +%s.%N)
"$SRVSCOPE" model -p "$MEMCACHED_PID" --client "memcached://127.0.0.1:$MEMCACHED_PORT" \
	-o "$TMP/mc.json" >"$TMP/mc.out" 2>"$TMP/mc.err"
ok $? "model memcached (defaults)"
t1=$(date +%s.%N)
secs=$(python3 -c "print('%.1f' % ($t1 - $t0))")
sed 's/^/#   /' "$TMP/mc.out" "$TMP/mc.err"
check "memcached with the defaults in at most 30 s end to end ($secs s)" \
	python3 -c "import sys; sys.exit(0 if $secs <= 30 else 1)"
check_model "$TMP/mc.json" "$MEMCACHED_PID" memcached accept_dispatch=false \
	network_dispatch=true network_epoll=true nonblocking=true accept_thread_pool_size=1 \
	network_thread_pool_size=4 skeleton=1
ok $? "memcached: Ditto's verdicts, the mc-workers one network cluster, main the acceptor, measured beside its skeleton"
# Its network threads' time outside syscalls (switch and syscall records, docs/model.md):
# every run gives it, above nothing and below all of their CPU time, as the whole does.
check "memcached: time outside syscalls per request in each run, below its CPU per request" \
	python3 - "$TMP/mc.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
runs = [(r["on_cpu_us_per_request"], r["user_us_per_request"]) for r in m["runs"]]
sp = m["syscall_profile"]
print("# runs (on-CPU, outside syscalls): %s; all: %s, %s us" % (runs, sp["on_cpu_us_per_request"], sp["user_us_per_request"]))
sys.exit(0 if all(on and u and 0 < u < on for on, u in runs) and
         0 < sp["user_us_per_request"] < sp["on_cpu_us_per_request"] else 1)
PY

# memcached flat out (the built-in client as fast as it answers): the recorder samples its
# syscalls in windows (a budget of 2000 a second makes sure of it, whatever the machine's
# speed); the verdicts are the same, and the requests counted in the windows, scaled by the
# share sampled, are the client's within a quarter. Between windows the program on every
# syscall's exit is detached (fd syscalls are written by one on their own exits): record
# --cost's table (SRVSCOPE_MODEL_RECORD's cost) shows it ran for a fraction of the syscalls.
SRVSCOPE_MODEL_RECORD=budget=2000,cost "$SRVSCOPE" model -p "$MEMCACHED_PID" --conns 8 --rate 0 \
	--duration 2 --no-skeleton --client "memcached://127.0.0.1:$MEMCACHED_PORT" -o "$TMP/mcs.json" \
	>"$TMP/mcs.out" 2>"$TMP/mcs.err"
ok $? "model memcached flat out, syscalls sampled"
sed 's/^/#   /' "$TMP/mcs.out" "$TMP/mcs.err"
check_model "$TMP/mcs.json" "$MEMCACHED_PID" memcached accept_dispatch=false \
	network_dispatch=true network_epoll=true nonblocking=true accept_thread_pool_size=1 \
	network_thread_pool_size=4
ok $? "memcached sampled: the same verdicts and clusters"
runs() { awk -v p="$1" '$1 == p { print $2 }' "$TMP/mcs.err"; }
enter=$(runs sys_enter) exit=$(runs sys_exit)
diag "sys_enter $enter runs/s, sys_exit $exit, fd_exit $(runs fd_exit)"
[ -n "$(runs fd_exit)" ] && [ -n "$enter" ] && [ -n "$exit" ] && [ $((exit * 2)) -lt "$enter" ]
ok $? "memcached sampled: sys_exit detached between windows, fd syscalls written by fd_exit"
check "memcached sampled: a share sampled, requests scaled to the client's count, no time outside syscalls" python3 - "$TMP/mcs.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
run = m["runs"][0]
per = {s["name"]: s["per_request"] for s in m["syscall_profile"]["syscalls"]}
print("# sampled %.3f, requests %d, client %s, read %.2f sendmsg %.2f per request"
      % (run["syscalls_sampled"], run["requests"], run["client_requests"],
         per.get("read", 0), per.get("sendmsg", 0)))
sys.exit(0 if 0 < run["syscalls_sampled"] < 0.9 and run["client_requests"] and
         abs(run["requests"] / run["client_requests"] - 1) < 0.25 and
         0.8 < per.get("sendmsg", 0) < 1.25 and run["user_us_per_request"] is None else 1)
PY
# The busy threads' switches are sampled with the syscalls (switch windows, docs/model.md):
# left out between windows (record --cost's "switches left out"), the waits seen in the
# windows scaled to each thread's time: where the workers wait is what it is unsampled,
# and no thread's time on and off CPU adds up to more than the recording's (the idle
# threads', blocked all along, measure it).
left=$(sed -n 's/^ *switches left out *\([0-9]*\)\/s$/\1/p' "$TMP/mcs.err" | head -1)
check "memcached sampled: switches left out between windows (${left:-none}/s), waits scaled within the run" \
	python3 - "$TMP/mcs.json" "${left:-0}" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
idle = [t["off_cpu_ns"] for t in m["threads"] if t["on_cpu_ns"] == 0]
span = max(idle) if idle else (m["runs"][0]["duration_s"] + 1) * 1e9
over = [(t["comm"], t["on_cpu_ns"] + t["off_cpu_ns"]) for t in m["threads"]
        if t["on_cpu_ns"] + t["off_cpu_ns"] > 1.05 * span]
net = [c for c in m["clusters"] if c["role"] == "network"]
print("# recording %.2f s; over it: %s; network wait %s" % (span / 1e9, over, net and net[0]["wait"]))
sys.exit(0 if int(sys.argv[2]) > 0 and not over and len(net) == 1 and
         net[0]["wait"]["syscall"] == "epoll_wait" and net[0]["wait"]["share"] > 0.9 else 1)
PY

# redis: one thread accepts and serves.
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$TMP" >"$TMP/redis.out" 2>&1 &
REDIS_PID=$!
_srv_stops="$_srv_stops $REDIS_PID:TERM"
wait_port "$REDIS_PORT" "$REDIS_PID" || skip_all "redis did not start"
"$SRVSCOPE" model -p "$REDIS_PID" --conns 8 --client "redis://127.0.0.1:$REDIS_PORT" \
	-o "$TMP/redis.json" >"$TMP/redis.out" 2>"$TMP/redis.err"
ok $? "model redis"
sed 's/^/#   /' "$TMP/redis.out" "$TMP/redis.err"
check_model "$TMP/redis.json" "$REDIS_PID" redis accept_dispatch=false network_dispatch=false \
	network_epoll=true nonblocking=true accept_thread_pool_size=1 network_thread_pool_size=1
ok $? "redis: Ditto's verdicts, the main thread accepts and serves"

done_testing
