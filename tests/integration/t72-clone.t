#!/bin/bash
# srvscope clone of the memcached and nginx models (tests/fixtures/models): the clone has
# the modelled process and thread structure (threads counted by name in /proc), answers a
# client of the model's protocol and the built-in load (srvscope load), makes the model's syscalls per request (strace -c of the
# whole tree, within 10 %), and stops cleanly on SIGTERM / SIGINT.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t72-clone-lib.sh"
command -v strace >/dev/null || skip_all "strace is not installed (scripts/install-deps.sh)"
N=2000

for spec in memcached:memcached:TERM nginx:http:INT; do
	name=${spec%%:*}; rest=${spec#*:}; proto=${rest%:*}; sig=${rest#*:}
	model="$MODELS/$name.json"
	start_clone "$model" || { ok 1 "$name: the clone starts"; continue; }
	ok 0 "$name: the clone starts"
	out=$(python3 "$CH" tree "$model" "$CLONE_PID"); rc=$?
	ok $rc "$name: the modelled structure: $out"
	# strace every process of the tree (-f: each one's threads)
	args=""
	for p in $(tree_pids "$CLONE_PID"); do args="$args -p $p"; done
	# shellcheck disable=SC2086
	timeout 30 strace -f -c -o "$TMP/$name.strace" $args 2>/dev/null &
	st=$!
	sleep 0.5
	out=$(timeout 20 python3 "$CH" load "$CLONE_PORT" "$proto" $N 2>&1); rc=$?
	kill -INT $st; wait $st
	is "$out" "$N" "$name: $N requests answered in the $proto protocol"
	out=$(python3 "$CH" mix "$model" "$TMP/$name.strace" $N); rc=$?
	ok $rc "$name: syscalls per request within 10 % of the model: $out"
	[ $rc -eq 0 ] || sed 's/^/#   /' "$TMP/$name.strace"
	# the built-in load the model was taken with answers without an error
	url="$proto://127.0.0.1:$CLONE_PORT/"
	out=$(timeout -k 2 10 "$SRVSCOPE" load "$url" -c 8 -r 1000 -d 1 --reconnect 0.3 2>&1)
	like "$out" '^[1-9][0-9]* req in .*, 0 errors$' "$name: srvscope load (8 connections, reconnecting) gets every answer: $out"
	stop_clone "$sig" "$name"
done
done_testing
