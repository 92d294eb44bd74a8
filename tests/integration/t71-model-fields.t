#!/bin/bash
# srvscope model's hand-offs and the fields filled from /proc and from wake-ups:
# - the epoll_pool fixture, shared: the main thread accepts and adds each connection to one
#   epoll instance all 4 pool threads wait in (hand-off "shared-epoll"); reuseport: 3 pool
#   threads each accept on a listening socket of their own on one port (SO_REUSEPORT, hand-off
#   "reuseport"); its "ticker" thread wakes every 20 ms and writes 64 bytes: a background
#   cluster with period_ms near 20 and that write as its work;
# - nginx with 2 workers and "listen ... reuseport", a static file served with
#   open_file_cache off and an access log: Ditto's verdict still, hand-off reuseport, and
#   files: the access log by its path (appended once per request) and the file served, opened
#   per request, its size the file's;
# - memcached: its LRU maintainer (mc-lrumaint, which sleeps between 1 ms and 1 s as it finds
#   work) a background cluster with a period in that range; the workers' reads of their
#   notification eventfds and pipes, opened before the recording, named so (not "other");
#   its listener without SO_REUSEPORT;
# - a model made from a kept trace: SO_REUSEPORT not known there (null), the rest the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers memcached nginx

# expect JSON PYTHON-CONDITION DESCRIPTION: the condition over d (the model), nm
# (network_model), nmc (Ditto's keys), cl (clusters by name) and files.
expect() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
nm, nmc, files = d["network_model"], d["network_model_characteristics"], d["files"]
cl = {c["name"]: c for c in d["clusters"]}
w = (cl.get("mc-lrumaint") or {}).get("work") or {}
sc = {s["name"]: s for s in d["syscall_profile"]["syscalls"]}
ok = eval(sys.argv[2])
if not ok:
    print("#   network_model: %s" % json.dumps({k: v for k, v in nm.items() if k != "roles"}))
    print("#   Ditto: %s" % json.dumps(nmc))
    for c in d["clusters"]:
        print("#   cluster %s %s: period_ms %s, work %s" % (c["name"], c["role"], c["period_ms"], json.dumps(c["work"])))
    print("#   files: %s" % json.dumps(files))
    print("#   fd kinds: %s" % json.dumps({k: v["fd_kinds"] for k, v in sc.items()}))
sys.exit(0 if ok else 1)
PY
	ok $? "$3"
}

# The fixture, shared epoll.
PORT=$(free_port)
run_server epoll-shared "$PORT" "$FIXTURES/epoll_pool" shared "$PORT" 4 50 || skip_all "epoll_pool did not start"
EP=$SERVER_PID
model shared "$EP" "http://127.0.0.1:$PORT/" --conns 8 --keep-traces "$TMP/shared-traces"
expect "$TMP/shared.json" 'nm["handoff"] == "shared-epoll" and nm["shared_epoll"] and nmc["network_dispatch"] and nmc["network_thread_pool_size"] == 4 and nmc["accept_thread_pool_size"] == 1' \
	"shared epoll: 4 pool threads fed through one epoll instance by the acceptor"
expect "$TMP/shared.json" 'cl["ticker"]["role"] == "background" and 18 <= cl["ticker"]["period_ms"] <= 30' \
	"the ticker: a background cluster woken every 20 ms"
expect "$TMP/shared.json" '[(s["name"], round(s["per_wake"]), s.get("bytes")) for s in cl["ticker"]["work"]["syscalls"]] == [("write", 1, 64)] and cl["ticker"]["work"]["on_cpu_us"] > 0' \
	"the ticker's work: one write of 64 bytes a wake-up"
expect "$TMP/shared.json" 'all(c["period_ms"] is None and c["work"] is None for c in d["clusters"] if c["role"] not in ("background", "idle"))' \
	"no period or work for the clusters that serve"
# The model reads where threads wait, never who woke them: its recording runs no program at
# wakings, wake-ups or interrupts (record_opts.no_wakers), and its trace says so.
python3 - "$TMP/shared-traces/run-0.trace" "$TOP/tests/integration" <<'PY'
import collections, struct, sys
sys.path.insert(0, sys.argv[2])
from trace_ipis import events
_, recs = events(sys.argv[1])
n = collections.Counter(struct.unpack_from("<H", r, 8)[0] for r in recs)
print("# switches %d, wakings %d, wake-ups %d" % (n[1], n[2], n[3]))
sys.exit(0 if n[1] > 100 and n[2] == 0 and n[3] == 0 else 1)
PY
ok $? "the model's trace: switches, and no waking or wake-up recorded"
grep -aqx "wakers=0" "$TMP/shared-traces/run-0.trace"
ok $? "its info says it was recorded without wakers"
like "$("$SRVSCOPE" blocking "$TMP/shared-traces/run-0.trace" 2>&1 | tail -1)" \
	"UNKNOWN .*: recorded without wakings, as srvscope model records" \
	"blocking on it says why no waker is known"
"$SRVSCOPE" model "$TMP/shared-traces/run-0.trace" -o "$TMP/shared-trace.json" >/dev/null 2>&1
ok $? "model of the kept trace"
expect "$TMP/shared-trace.json" 'nm["handoff"] == "shared-epoll" and nm["reuseport"] is None and 18 <= cl["ticker"]["period_ms"] <= 30' \
	"from the trace: the same hand-off and period, SO_REUSEPORT not known"
expect "$TMP/shared.json" 'nm["reuseport"] is False and d["target"]["listen"][0]["reuseport"] is False' \
	"shared epoll: one listener, without SO_REUSEPORT"
stop_pid "$EP"

# The fixture, a listening socket per thread.
PORT=$(free_port)
run_server epoll-reuseport "$PORT" "$FIXTURES/epoll_pool" reuseport "$PORT" 3 50 || skip_all "epoll_pool did not start"
EP=$SERVER_PID
model reuse "$EP" "http://127.0.0.1:$PORT/" --conns 8
expect "$TMP/reuse.json" 'nm["handoff"] == "reuseport" and nm["reuseport"] is True and nm["listeners"] == 3 and not nm["shared_epoll"]' \
	"reuseport: three listening sockets on one port, each thread accepting on its own"
expect "$TMP/reuse.json" 'nmc["accept_dispatch"] and not nmc["network_dispatch"] and nmc["accept_thread_pool_size"] == 3 and len(d["target"]["listen"]) == 3 and all(l["reuseport"] for l in d["target"]["listen"])' \
	"reuseport: 3 acceptors that serve what they accept; the listeners have SO_REUSEPORT"
stop_pid "$EP"

# nginx: reuseport, a static file per request, an access log.
chmod 755 "$TMP" # nginx's workers run as nobody
d="$TMP/nginx"
mkdir -p "$d/www"
head -c 5000 /dev/urandom | base64 -w 76 >"$d/www/page.html"
chmod 755 "$d" "$d/www"
chmod 644 "$d/www/page.html"
SIZE=$(stat -c %s "$d/www/page.html")
NGINX_PORT=$(free_port)
nginx_conf "$d" "$NGINX_PORT" 2 "access_log $d/logs/access.log; open_file_cache off;" " reuseport; root $d/www;"
run_server nginx "$NGINX_PORT" nginx -p "$d" -c "$d/nginx.conf" -e "$d/logs/error.log" || skip_all "nginx did not start"
NGINX_PID=$SERVER_PID
model nginx "$NGINX_PID" "http://127.0.0.1:$NGINX_PORT/page.html" --conns 8
expect "$TMP/nginx.json" 'nmc["accept_dispatch"] and not nmc["network_dispatch"] and nmc["network_epoll"] and nmc["accept_thread_pool_size"] == 2 and nmc["network_thread_pool_size"] == 2' \
	"nginx reuseport: Ditto's verdict, pools 2"
expect "$TMP/nginx.json" 'nm["handoff"] == "reuseport" and nm["reuseport"] is True and nm["listeners"] == 2' \
	"nginx reuseport: each worker accepts on its own listening socket"
expect "$TMP/nginx.json" '[(f["opened"], f["access"], round(f["writes_per_request"], 1)) for f in files if f["path"] == "'"$d/logs/access.log"'"] == [("before", "append", 1.0)]' \
	"nginx: the access log, open before, appended once per request"
expect "$TMP/nginx.json" '[f["size"] for f in files if f["opened"] == "during" and 0.9 <= f["opens_per_request"] <= 1.1 and f["ops"][0] in ("openat", "open") and f["ops"][-1] == "close"] == ['"$SIZE"']' \
	"nginx: the page ($SIZE bytes), opened, read and closed per request"
stop_pid "$NGINX_PID"

# memcached: its LRU maintainer, and fds opened before the recording.
start_memcached 4 || skip_all "memcached did not start"
model memcached "$MEMCACHED_PID" "memcached://127.0.0.1:$MEMCACHED_PORT" --conns 8
expect "$TMP/memcached.json" 'cl["mc-lrumaint"]["role"] == "background" and 0.5 <= cl["mc-lrumaint"]["period_ms"] <= 1100 and cl["mc-lrumaint"]["wait"]["syscall"] == "nanosleep"' \
	"memcached: the LRU maintainer wakes on a clock (1 ms to 1 s)"
# Beside the unrecorded run at the last run's rate: the maintainer's CPU per wake-up there,
# and a bare sleeper's at the shortest period of the threads that are not network threads.
expect "$TMP/memcached.json" 'w["on_cpu_us_unrecorded"] > 0 and w["wake_floor_us"] > 0 and 0.5 <= w["wake_floor_period_ms"] / cl["mc-lrumaint"]["period_ms"] <= 2 and w["per_run"][-1]["on_cpu_us_unrecorded"] == w["on_cpu_us_unrecorded"] and all(r["on_cpu_us_unrecorded"] is None for r in w["per_run"][:-1])' \
	"memcached: the maintainer's CPU per wake-up unrecorded, and a bare wake-up's"
expect "$TMP/memcached.json" '"other" not in sc["read"]["fd_kinds"] and set(sc["read"]["fd_kinds"]) <= {"tcp", "eventfd", "pipe"} and set(sc["epoll_wait"]["fd_kinds"]) == {"epoll"}' \
	"memcached: the workers' fds opened before the recording are named (eventfd or pipe, epoll)"
expect "$TMP/memcached.json" 'nm["reuseport"] is False and nm["handoff"] == "queue" and not nm["shared_epoll"]' \
	"memcached: no SO_REUSEPORT, a queue to the workers, an epoll each"

done_testing
