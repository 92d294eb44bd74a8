#!/bin/bash
# srvscope model on real servers (Debian packages, loopback, started here): the network model
# equals Ditto's published verdicts (memcached: accept_dispatch false, network_dispatch true,
# epoll, 1 acceptor, 4 network threads; redis: false, false, epoll, 1 thread), and the
# clusters match the threads' roles as /proc names them: memcached's 4 mc-worker threads are
# one cluster that does all connection I/O, its main thread the only acceptor. memcached is
# modelled with the defaults (3 runs of the built-in client) within 30 s.
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
	network_thread_pool_size=4
ok $? "memcached: Ditto's verdicts, the mc-workers one network cluster, main the acceptor"

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
