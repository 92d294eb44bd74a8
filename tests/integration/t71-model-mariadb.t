#!/bin/bash
# srvscope model on MariaDB (Debian's mariadb-server, in $TMP, loopback), a server with a
# thread per connection: the main thread polls its listener and accepts, each connection
# gets a thread (from the thread cache) that polls its socket and reads it MSG_DONTWAIT.
# Driven by mariadb-slap through --load.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers mariadbd mariadb-install-db mariadb-slap

d="$TMP/mariadb"
mkdir -p "$d"
mariadb-install-db --user=root --datadir="$d/data" --auth-root-authentication-method=normal \
	>"$d/install.out" 2>&1 || { sed 's/^/#   /' "$d/install.out"; skip_all "mariadb-install-db failed"; }
PORT=$(free_port)
mariadbd --no-defaults --user=root --datadir="$d/data" --port="$PORT" --bind-address=127.0.0.1 \
	--socket="$d/sock" --skip-grant-tables --pid-file="$d/pid" --log-error="$d/err.log" \
	--innodb-buffer-pool-size=16M >"$d/out" 2>&1 &
MARIADB_PID=$!
_srv_stops="$_srv_stops $MARIADB_PID:TERM"
wait_port "$PORT" "$MARIADB_PID" || { sed 's/^/#   /' "$d/err.log"; skip_all "mariadbd did not start"; }

"$SRVSCOPE" model -p "$MARIADB_PID" --conns 4,8 --duration 2 -o "$TMP/my.json" \
	--load "mariadb-slap -h 127.0.0.1 -P $PORT -u root --concurrency={conns} --iterations=2 --number-of-queries=800 --auto-generate-sql --auto-generate-sql-load-type=read >/dev/null 2>&1" \
	>"$TMP/my.out" 2>"$TMP/my.err"
ok $? "model mariadb (mariadb-slap)"
sed 's/^/#   /' "$TMP/my.out"
python3 - "$TMP/my.json" "$MARIADB_PID" <<'PY'
import json, sys
d, pid = json.load(open(sys.argv[1])), int(sys.argv[2])
nm, nmc = d["network_model"], d["network_model_characteristics"]
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + what)
    fails += not cond
print("# %s" % json.dumps({k: v for k, v in nm.items() if k != "roles"}))
check("a thread per connection", nm["per_connection"] == "thread" and nm["network_pool"] == "per-connection")
check("connections handed from the acceptor (Ditto: network_dispatch)", nmc["network_dispatch"] and not nmc["accept_dispatch"])
check("the main thread is the only acceptor",
      [t["tid"] for t in d["threads"] if t["accepts"]] == [pid])
check("it serves no connection", all(t["tid"] != pid for t in d["threads"] if t["io_syscalls"]))
check("network threads wait in poll", nm["network_io"] == "poll" and nm["accept_io"] == "poll")
check("one process", not nm["multi_process"])
sys.exit(1 if fails else 0)
PY
ok $? "mariadb: thread per connection behind poll, the main thread the acceptor"
done_testing
