#!/bin/bash
# Thread clustering on real servers (not a benchmark: a demonstration on real data, run by
# hand): each server from Debian, on a loopback port, recorded by srvscope for DUR (3) s
# under a load; its threads' stacks (off-CPU time and on-CPU samples, per thread through
# 'srvscope flame --tid') clustered by bench/cluster-folded.c, which prints the clusters.
# Usage: bench/cluster-servers.sh [memcached|redis|nginx|apache2|postgres]... (default all)
# Needs root, a built srvscope (make), the servers and their load tools (install-deps.sh).
. "$(dirname "$0")/../tests/integration/lib.sh"
. "$TOP/tests/integration/servers.sh"
DUR=${DUR:-3}
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$TOP/src" -o "$TMP/cluster-folded" "$TOP/bench/cluster-folded.c" \
	"$TOP"/src/model/cluster*.c "$TOP"/src/model/stacktree.c "$TOP"/src/util/util.c || exit 1

threads_of() { # PID: "TID COMM" for every thread of PID and of its children
	local p t
	for p in $1 $(children_of "$1"); do
		for t in /proc/"$p"/task/*; do echo "${t##*/} $(cat "$t"/comm 2>/dev/null)"; done
	done
}

cluster_server() { # NAME PID LOAD-COMMAND...: records PID under the load, clusters
	local name=$1 pid=$2 load k tid comm
	shift 2
	"$@" </dev/null >/dev/null 2>&1 &
	load=$!
	sleep 0.5
	"$SRVSCOPE" record -p "$pid" -d "$DUR" --on-cpu --buffer-size 256M -o "$TMP/$name.trace" \
		2>&1 | tail -1
	threads_of "$pid" >"$TMP/$name.tids"
	kill -- -"$load" 2>/dev/null || kill "$load" 2>/dev/null
	wait "$load" 2>/dev/null
	for k in off on; do
		while read -r tid comm; do
			"$SRVSCOPE" flame "$TMP/$name.trace" --kind=$k --tid "$tid" |
				sed "s/^[^;]*;/$tid $k /"
		done <"$TMP/$name.tids"
	done >"$TMP/$name.folded"
	echo "== $name"
	"$TMP/cluster-folded" "$TMP/$name.folded" "$TMP/$name.tids"
}

# Each load runs in its own process group (set -m), so that it is stopped whole.
set -m
for server in ${@:-memcached redis nginx apache2 postgres}; do
	case $server in
	memcached)
		start_memcached 4 || exit 1
		cluster_server memcached "$MEMCACHED_PID" bash -c "for i in 1 2 3 4; do
			(while :; do memcslap -s 127.0.0.1:$MEMCACHED_PORT -c 2 -e 50000 -t get; done) &
			done; wait" ;;
	redis)
		REDIS_PORT=$(free_port)
		redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
			>"$TMP/redis.out" 2>&1 &
		REDIS_PID=$!
		_srv_stops="$_srv_stops $REDIS_PID:TERM"
		wait_port "$REDIS_PORT" "$REDIS_PID" || { cat "$TMP/redis.out"; exit 1; }
		cluster_server redis "$REDIS_PID" redis-benchmark -p "$REDIS_PORT" -c 8 -n 100000000 \
			-q -t get,set ;;
	nginx)
		start_nginx 2 || exit 1
		cluster_server nginx "$NGINX_PID" ab -q -n 100000000 -c 8 -t 60 \
			"http://127.0.0.1:$NGINX_PORT/" ;;
	apache2)
		start_apache2 2 || exit 1
		cluster_server apache2 "$APACHE2_PID" ab -q -n 100000000 -c 8 -t 60 \
			"http://127.0.0.1:$APACHE2_PORT/" ;;
	postgres)
		start_postgres || exit 1
		pgbench=$(pg_bin)/pgbench
		"$pgbench" -i -s 1 -h 127.0.0.1 -p "$POSTGRES_PORT" -U postgres postgres \
			>"$TMP/pgbench-init.out" 2>&1 || { cat "$TMP/pgbench-init.out"; exit 1; }
		cluster_server postgres "$POSTGRES_PID" "$pgbench" -S -c 4 -T 60 -h 127.0.0.1 \
			-p "$POSTGRES_PORT" -U postgres postgres ;;
	*)
		echo "cluster-servers: unknown server '$server'" >&2
		exit 2 ;;
	esac
	stop_servers
done
