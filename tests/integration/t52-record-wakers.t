#!/bin/bash
# Wakers are right to the last event: on haproxy (in front of nginx), apache2 and memcached
# under load, each its own instance on loopback, every episode's wake kind agrees with its
# waker's kernel stack (softirq kind: a softirq in it; timer: the callback; task: neither),
# the final second included. The recorder ends at one instant (a flag every BPF program
# checks) instead of detaching the context programs one by one, which gave the last half
# second of wake-ups stale contexts. 'blocking' counts the UNKNOWN wake-ups: at most 1 in
# 1000 when no event was lost.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_btf
need_servers nginx apache2 haproxy ab memcached memcslap

# check_wakers NAME PID MIN_LAST: records PID for 1.5 s (the load already running) and checks
# the kinds against the stacks; at least MIN_LAST woken episodes in the last second.
check_wakers() {
	local name=$1 f="$TMP/$1.trace" span
	"$SRVSCOPE" record -p "$2" -d 1.5 --no-progress -o "$f" 2>"$TMP/$name.err"
	ok $? "$name: record -p PID -d 1.5"
	span=$("$SRVSCOPE" sched --format=json "$f" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["duration_ns"])')
	"$SRVSCOPE" blocking --stacks --format=json "$f" >"$TMP/$name.json" 2>/dev/null
	ok $? "$name: blocking --stacks --format=json"
	python3 "$(dirname "$0")/expect_wakers.py" "$TMP/$name.json" "$span" "$3"
	ok $? "$name: every wake kind agrees with its waker's stack, to the last second"
	summary=$("$SRVSCOPE" blocking "$f" 2>/dev/null | tail -1)
	like "$summary" "^[0-9]+ episodes, .*; [0-9]+ UNKNOWN \([0-9]+ ended with no wake-up event seen, [0-9]+ woken with no waking event\)" \
		"$name: the summary line counts the UNKNOWN wake-ups"
	# With nothing lost, ended episodes have their waking event (one that comes just
	# before the switch-out, from another CPU, included: 1.3 % of apache2's were UNKNOWN
	# without it). A few in 10^4 still have none: not understood yet.
	if printf '%s' "$summary" | grep -q "lost 0 events"; then
		printf '%s' "$summary" | awk '{n = $1; sub(/ UNKNOWN .*/, ""); u = $NF + 0; print "# " u " UNKNOWN of " n; exit !(u * 1000 <= n)}'
		ok $? "$name: nothing lost, at most 1 UNKNOWN in 1000 episodes"
	else
		ok 0 "$name: events were lost, UNKNOWN allowed # $summary"
	fi
}

start_nginx 1 || exit 1
start_haproxy "$NGINX_PORT" || exit 1
ab -q -k -r -t 5 -n 10000000 -c 2 "http://127.0.0.1:$HAPROXY_PORT/" >/dev/null 2>&1 &
load=$!
sleep 0.3
check_wakers haproxy "$HAPROXY_PID" 50
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null

start_apache2 2 || exit 1
ab -q -k -r -t 5 -n 10000000 -c 2 "http://127.0.0.1:$APACHE2_PORT/" >/dev/null 2>&1 &
load=$!
sleep 0.3
check_wakers apache2 "$APACHE2_PID" 50
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null

start_memcached 4 || exit 1
# -e 100000 (200000 sets, 2.5 s here) ended about when the recording did (it starts ~0.9 s
# in): a CI run saw its last second nearly idle. -e 300000 (~7 s of sets once its keys are
# made), killed after the check, keeps it loaded to its last second.
memcslap -s "127.0.0.1:$MEMCACHED_PORT" -c 2 -e 300000 -t set >/dev/null 2>&1 &
load=$!
# memcslap makes its keys before its first set (0.6 s on one machine, 2.4 on another): the
# recording starts once memcached counts sets, and a second later (the recorder's own start
# took 1.7 s of the verifier's time before, which hid it).
sets() {
	exec 3<>"/dev/tcp/127.0.0.1/$MEMCACHED_PORT" || { echo 0; return; }
	printf 'stats\r\nquit\r\n' >&3
	tr -d '\r' <&3 | awk '$2 == "cmd_set" { n = $3 } END { print n + 0 }'
	exec 3<&-
}
for _ in $(seq 200); do [ "$(sets)" -gt 1000 ] && break; sleep 0.05; done
diag "memcached: $(sets) sets before the recording"
sleep 0.3
check_wakers memcached "$MEMCACHED_PID" 50
kill "$load" 2>/dev/null
wait "$load" 2>/dev/null
done_testing
