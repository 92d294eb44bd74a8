#!/bin/bash
# srvscope model on servers of other architectures (Debian packages, loopback): postgresql
# forks a backend per connection (the postmaster select()s and accepts, each backend serves
# its one connection), apache2's event MPM has a listener thread per child process that
# accepts and polls, and hands ready connections to its 8 worker threads; haproxy's threads
# are event loops that each accept and serve.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
[ -n "$(pg_bin)" ] || skip_all "postgresql is not installed (scripts/install-deps.sh)"
need_servers apache2 haproxy nginx

# expect JSON PYTHON-CONDITION DESCRIPTION: the condition over d (the model) and nm
# (network_model), nmc (Ditto's keys).
expect() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
nm, nmc = d["network_model"], d["network_model_characteristics"]
ok = eval(sys.argv[2])
if not ok:
    print("#   network_model: %s" % json.dumps({k: v for k, v in nm.items() if k != "roles"}))
    print("#   Ditto: %s" % json.dumps(nmc))
sys.exit(0 if ok else 1)
PY
	ok $? "$3"
}

chmod 755 "$TMP" # the servers run as their own users
start_postgres || skip_all "postgres did not start"
bin=$(pg_bin)
setpriv --reuid=postgres --regid=postgres --init-groups "$bin/pgbench" -i -q -h 127.0.0.1 \
	-p "$POSTGRES_PORT" -U postgres postgres >"$TMP/pgbench-init" 2>&1
ok $? "pgbench -i"
"$SRVSCOPE" model -p "$POSTGRES_PID" --conns 4 --duration 2 -o "$TMP/pg.json" \
	--load "$bin/pgbench -h 127.0.0.1 -p $POSTGRES_PORT -U postgres -c {conns} -T {duration} -S -C postgres >/dev/null 2>&1" \
	>"$TMP/pg.out" 2>"$TMP/pg.err"
ok $? "model postgres (pgbench, a connection per transaction)"
sed 's/^/#   /' "$TMP/pg.out"
expect "$TMP/pg.json" 'nm["per_connection"] == "process" and nm["network_pool"] == "per-connection"' \
	"postgres: a process per connection"
expect "$TMP/pg.json" 'nm["accept_pool"] == 1 and nm["handoff"] == "fork" and nmc["network_dispatch"] and not nmc["accept_dispatch"]' \
	"postgres: one acceptor, connections handed over by fork"
expect "$TMP/pg.json" "[t['tid'] for t in d['threads'] if t['accepts']] == [$POSTGRES_PID]" \
	"postgres: the postmaster is the only acceptor"
expect "$TMP/pg.json" "all(t['pid'] != $POSTGRES_PID for t in d['threads'] if t['io_syscalls'])" \
	"postgres: the postmaster serves no connection"
expect "$TMP/pg.json" 'nm["accept_io"] in ("select", "epoll", "poll") and nm["multi_process"]' \
	"postgres: the postmaster waits in select (or epoll), several processes"

start_apache2 2 || skip_all "apache2 did not start"
"$SRVSCOPE" model -p "$APACHE2_PID" --conns 4 -o "$TMP/ap.json" \
	--client "http://127.0.0.1:$APACHE2_PORT/index.html" >"$TMP/ap.out" 2>"$TMP/ap.err"
ok $? "model apache2 (event MPM, 2 children of 8 threads)"
sed 's/^/#   /' "$TMP/ap.out"
expect "$TMP/ap.json" 'nmc["accept_thread_pool_size"] == 2 and nmc["network_thread_pool_size"] == 16' \
	"apache2: a listener per child, 16 workers"
expect "$TMP/ap.json" 'nmc["network_dispatch"] and nm["handoff"] == "queue" and nm["network_io"] == "epoll"' \
	"apache2: connections handed through a queue, epoll"
expect "$TMP/ap.json" 'len({t["pid"] for t in d["threads"] if t["accepts"]}) == 2 and not set(t["tid"] for t in d["threads"] if t["accepts"]) & set(t["tid"] for t in d["threads"] if t["io_syscalls"])' \
	"apache2: the acceptors are in the 2 children and serve no connection"
start_nginx 1 || skip_all "nginx did not start"
start_haproxy "$NGINX_PORT" || skip_all "haproxy did not start"
nthr=$(ls /proc/"$HAPROXY_PID"/task | wc -l)
"$SRVSCOPE" model -p "$HAPROXY_PID" --conns 8 -o "$TMP/hap.json" \
	--client "http://127.0.0.1:$HAPROXY_PORT/" >"$TMP/hap.out" 2>"$TMP/hap.err"
ok $? "model haproxy ($nthr threads, in front of nginx)"
sed 's/^/#   /' "$TMP/hap.out"
expect "$TMP/hap.json" "sorted(t['tid'] for t in d['threads'] if t['accepts']) == sorted(t['tid'] for t in d['threads'] if t['io_syscalls']) and nmc['accept_thread_pool_size'] == $nthr" \
	"haproxy: every thread accepts and serves"
expect "$TMP/hap.json" "nm['network_io'] == 'epoll' and nm['per_connection'] == 'none' and nmc['accept_dispatch'] == ($nthr > 1)" \
	"haproxy: event loops in epoll"
done_testing
