#!/bin/bash
# 'record -p MASTER' takes the whole tree: on nginx (2 workers), apache2 (mpm_event, 2
# children) and postgresql (checkpointer, walwriter, ... and two backends), each its own
# instance under load, every process the master had before the recording has episodes in
# 'blocking'; with --no-children the workers are left out. -d 2 ends each recording
# within 2.5 s of its start (the trace's span).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers nginx apache2 ab "$(pg_bin)/postgres" "$(pg_bin)/pgbench"

tree_of() { # the pid and its descendants
	local c
	echo "$1"
	for c in $(children_of "$1"); do tree_of "$c"; done
}

# record_tree NAME MASTER [OPTIONS]: records MASTER for 2 s into $TMP/NAME.trace and lists
# the pids with episodes into $TMP/NAME.pids.
record_tree() {
	local name=$1 master=$2 f="$TMP/$1.trace"
	shift 2
	"$SRVSCOPE" record -p "$master" -d 2 --no-progress -o "$f" "$@" 2>"$TMP/$name.err"
	ok $? "$name: record -p MASTER -d 2 $*"
	"$SRVSCOPE" blocking "$f" 2>/dev/null | sed -n 's/^Blocking report.*\[pid \([0-9]*\),.*/\1/p' |
		sort -un >"$TMP/$name.pids"
}

# check_tree NAME PIDS...: every pid has episodes; the trace spans at most 2.5 s.
check_tree() {
	local name=$1 p missing=""
	shift
	for p in "$@"; do grep -qx "$p" "$TMP/$name.pids" || missing="$missing $p"; done
	is "$missing" "" "$name: each of the $# processes of the tree has episodes"
	"$SRVSCOPE" sched --format=json "$TMP/$name.trace" 2>/dev/null |
		python3 -c 'import json, sys; d = json.load(sys.stdin)["duration_ns"] / 1e9; print("# span %.2f s" % d); sys.exit(d > 2.5)'
	ok $? "$name: -d 2 ends the recording within 2.5 s of its start"
}

start_nginx 2 || exit 1
tree=$(tree_of "$NGINX_PID")
is "$(echo $tree | wc -w)" 3 "nginx: a master and 2 workers"
ab -q -k -r -t 6 -n 10000000 -c 4 "http://127.0.0.1:$NGINX_PORT/" >/dev/null 2>&1 &
load=$!
record_tree nginx "$NGINX_PID"
check_tree nginx $tree
record_tree nginx-nochildren "$NGINX_PID" --no-children
is "$(cat "$TMP/nginx-nochildren.pids" | tr '\n' ' ')" "$NGINX_PID " \
	"nginx --no-children: the master alone"
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null

start_apache2 2 || exit 1
tree=$(tree_of "$APACHE2_PID")
is "$(echo $tree | wc -w)" 3 "apache2: a master and 2 children"
ab -q -k -r -t 4 -n 10000000 -c 8 "http://127.0.0.1:$APACHE2_PORT/" >/dev/null 2>&1 &
load=$!
record_tree apache2 "$APACHE2_PID"
check_tree apache2 $tree
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null

start_postgres || exit 1
pgbench="$(pg_bin)/pgbench -h 127.0.0.1 -p $POSTGRES_PORT -U postgres"
$pgbench -i -s 1 postgres >"$TMP/pgbench-i.out" 2>&1
ok $? "pgbench -i"
backends() { # the master's children that serve a client: "postgres: USER DB HOST(PORT) ..."
	local c
	for c in $(children_of "$POSTGRES_PID"); do
		tr '\0' ' ' 2>/dev/null </proc/"$c"/cmdline | grep -q '127\.0\.0\.1(' && echo "$c"
	done
}
$pgbench -c 2 -T 8 postgres >/dev/null 2>&1 &
load=$!
for _ in $(seq 200); do [ "$(backends | wc -l)" -ge 2 ] && break; sleep 0.05; done
tree=$(tree_of "$POSTGRES_PID")
diag "postgres: $(ps -o args= -p "$(echo $tree | tr ' ' ,)" | tr '\n' ';')"
is "$(backends | wc -l)" 2 "postgres: the master has the two backends of pgbench"
record_tree postgres "$POSTGRES_PID"
check_tree postgres $tree
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null
done_testing
