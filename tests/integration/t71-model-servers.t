#!/bin/bash
# srvscope model on real servers (Debian packages, loopback, started here): the network model
# equals Ditto's published verdicts (memcached: accept_dispatch false, network_dispatch true,
# epoll, 1 acceptor, 4 network threads; redis: false, false, epoll, 1 thread; nginx with 2
# workers: true, false, epoll, pools 2), and the clusters match the threads' roles as /proc
# names them: memcached's 4 mc-worker threads are one cluster that does all connection I/O,
# its main thread the only acceptor; nginx's workers (the master's children) accept and serve.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers memcached memcslap redis-server redis-benchmark nginx ab

# check_model JSON PID NAME EXPECT...: python checks of the model against what /proc says.
check_model() {
	python3 - "$@" <<'PY'
import json, os, sys
path, pid, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = dict(kv.split("=") for kv in sys.argv[4:])
d = json.load(open(path))
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + "%s: %s" % (name, what))
    fails += not cond
nmc = d["network_model_characteristics"]
print("# %s: %s" % (name, json.dumps(nmc)))
for k in ("accept_dispatch", "network_dispatch", "network_epoll", "nonblocking"):
    if k in want:
        check("%s is %s" % (k, want[k]), str(nmc[k]).lower() == want[k])
for k in ("accept_thread_pool_size", "network_thread_pool_size"):
    if k in want:
        check("%s is %s" % (k, want[k]), nmc[k] == int(want[k]))
check("network_io is epoll", d["network_model"]["network_io"] == "epoll")
runs = d["runs"]
check("every run measured requests (%s)" % [r["requests"] for r in runs],
      all(r["requests"] > 100 for r in runs))
threads = {t["tid"]: t for t in d["threads"]}
clusters = {c["id"]: c for c in d["clusters"]}
def comm_of(tid):
    try:
        return open("/proc/%d/task/%d/comm" % (pid, tid)).read().strip()
    except OSError:
        for p in os.listdir("/proc"):
            if p.isdigit() and os.path.exists("/proc/%s/task/%d" % (p, tid)):
                return open("/proc/%s/task/%d/comm" % (p, tid)).read().strip()
    return None
acceptors = sorted(t for t in threads if threads[t]["accepts"] > 0)
servers = sorted(t for t in threads if threads[t]["io_syscalls"] > 0)
print("# %s: acceptors %s, threads doing connection I/O %s" % (name, acceptors, servers))
if name == "memcached":
    workers = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid) if comm_of(int(t)) == "mc-worker")
    check("4 mc-worker threads in /proc", len(workers) == 4)
    check("the main thread is the only acceptor", acceptors == [pid])
    wc = {threads[t]["cluster"] for t in workers if t in threads}
    check("the mc-workers are one cluster (%s)" % wc, len(wc) == 1)
    if len(wc) == 1:
        c = clusters[wc.pop()]
        check("that cluster is the mc-workers exactly, role network",
              sorted(c["threads"]) == workers and c["role"] == "network")
    check("the mc-workers do all the connection I/O", servers and set(servers) <= set(workers))
    check("the main thread's cluster has the roles main and acceptor",
          {"main", "acceptor"} <= set(clusters[threads[pid]["cluster"]]["roles"]))
elif name == "redis":
    check("the main thread accepts and serves", acceptors == [pid] and servers == [pid])
elif name == "nginx":
    def ppid(p):
        try:
            return int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    kids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and ppid(p) == pid)
    check("2 worker processes", len(kids) == 2)
    check("the workers (and only they) accept and serve (%s)" % kids,
          set(acceptors) <= set(kids) and set(servers) <= set(kids) and len(servers) == 2)
    wc = {threads[t]["cluster"] for t in kids if t in threads}
    check("the workers are one cluster, the master another",
          len(wc) == 1 and threads[pid]["cluster"] not in wc)
    check("multi_process", d["network_model"]["multi_process"] is True)
sys.exit(1 if fails else 0)
PY
}

# memcached: 4 worker threads, two runs.
start_memcached 4 || skip_all "memcached did not start"
t0=$(date +%s.%N)
"$SRVSCOPE" model -p "$MEMCACHED_PID" --conns 4,8 --duration 2 -o "$TMP/mc.json" \
	--load "memcslap --servers=127.0.0.1:$MEMCACHED_PORT --concurrency=8 --execute-number=1500 >/dev/null 2>&1 && memcslap --servers=127.0.0.1:$MEMCACHED_PORT --concurrency=8 --execute-number=1500 --test=get >/dev/null 2>&1" \
	>"$TMP/mc.out" 2>"$TMP/mc.err"
ok $? "model memcached"
t1=$(date +%s.%N)
diag "memcached: $(python3 -c "print('%.1f' % ($t1 - $t0))") s end to end"
sed 's/^/#   /' "$TMP/mc.out" "$TMP/mc.err"
check_model "$TMP/mc.json" "$MEMCACHED_PID" memcached accept_dispatch=false \
	network_dispatch=true network_epoll=true nonblocking=true accept_thread_pool_size=1 \
	network_thread_pool_size=4
ok $? "memcached: Ditto's verdicts, the mc-workers one network cluster, main the acceptor"

# redis: one thread accepts and serves.
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$TMP" >"$TMP/redis.out" 2>&1 &
REDIS_PID=$!
_srv_stops="$_srv_stops $REDIS_PID:TERM"
wait_port "$REDIS_PORT" "$REDIS_PID" || skip_all "redis did not start"
"$SRVSCOPE" model -p "$REDIS_PID" --conns 8 -o "$TMP/redis.json" \
	--load "redis-benchmark -p $REDIS_PORT -c 8 -n 10000 -q -t get,set >/dev/null" \
	>"$TMP/redis.out" 2>"$TMP/redis.err"
ok $? "model redis"
sed 's/^/#   /' "$TMP/redis.out" "$TMP/redis.err"
check_model "$TMP/redis.json" "$REDIS_PID" redis accept_dispatch=false network_dispatch=false \
	network_epoll=true nonblocking=true accept_thread_pool_size=1 network_thread_pool_size=1
ok $? "redis: Ditto's verdicts, the main thread accepts and serves"

# nginx: 2 worker processes, each accepts and serves its connections.
start_nginx 2 || skip_all "nginx did not start"
"$SRVSCOPE" model -p "$NGINX_PID" --conns 8 -o "$TMP/nginx.json" \
	--load "ab -q -c 8 -n 2000 http://127.0.0.1:$NGINX_PORT/ >/dev/null && ab -k -q -c 8 -n 2000 http://127.0.0.1:$NGINX_PORT/ >/dev/null" \
	>"$TMP/nginx.out" 2>"$TMP/nginx.err"
ok $? "model nginx"
sed 's/^/#   /' "$TMP/nginx.out" "$TMP/nginx.err"
check_model "$TMP/nginx.json" "$NGINX_PID" nginx accept_dispatch=true network_dispatch=false \
	network_epoll=true nonblocking=true accept_thread_pool_size=2 network_thread_pool_size=2
ok $? "nginx: Ditto's verdicts, pools 2, the workers one cluster"

done_testing
