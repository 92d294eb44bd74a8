#!/bin/bash
# The thread-per-connection and fork-per-connection models run as such: K held
# connections make K threads (K processes) named as the model's network cluster, which go
# away with their connections (no zombie left); the syscalls per request are the model's;
# SIGINT/SIGTERM stop the clone with every forked process gone, and a SIGKILLed clone's
# processes die with it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t72-clone-lib.sh"
command -v strace >/dev/null || skip_all "strace is not installed (scripts/install-deps.sh)"
K=3

# count_named PID NAME: threads named NAME in PID's tree; procs_named: processes
count_named() { local p; for p in $(tree_pids "$1"); do cat /proc/"$p"/task/*/comm 2>/dev/null; done | grep -cx "$2"; }
procs_named() { local p; for p in $(tree_pids "$1"); do cat /proc/"$p"/comm 2>/dev/null; done | grep -cx "$2"; }
zombies() { local p; for p in $(tree_pids "$1"); do awk '{print $3}' /proc/"$p"/stat 2>/dev/null; done | grep -c Z; }

for spec in thread-per-conn:redis:tpc-conn:TERM fork-per-conn:http:fpc-backend:INT; do
	IFS=: read -r name proto conn sig <<<"$spec"
	model="$MODELS/$name.json"
	start_clone "$model" || { ok 1 "$name: the clone starts"; continue; }
	is "$(count_named "$CLONE_PID" "$conn")" 0 "$name: no $conn before any connection"
	coproc HOLD { timeout 20 python3 "$CH" hold "$CLONE_PORT" "$proto" $K; }
	read -r -t 10 held <&"${HOLD[0]}"
	is "${held:-}" held "$name: $K connections answered"
	if [ "$name" = thread-per-conn ]; then
		is "$(count_named "$CLONE_PID" "$conn")" $K "$name: $K $conn threads, one per connection"
	else
		is "$(procs_named "$CLONE_PID" "$conn")" $K "$name: $K $conn processes, one per connection"
	fi
	exec {HOLD[1]}>&-
	wait "$HOLD_PID" 2>/dev/null
	for i in $(seq 60); do [ "$(count_named "$CLONE_PID" "$conn")" = 0 ] && break; sleep 0.05; done
	is "$(count_named "$CLONE_PID" "$conn")" 0 "$name: they go away with their connections"
	is "$(zombies "$CLONE_PID")" 0 "$name: no zombie is left"

	timeout 30 strace -f -c -o "$TMP/$name.strace" -p "$CLONE_PID" 2>/dev/null &
	st=$!
	sleep 0.5
	# paced as the model's load was (its cycle drains the socket to EAGAIN after each
	# answer: a client sending the next request at once would find it there)
	out=$(timeout 20 python3 "$CH" load "$CLONE_PORT" "$proto" 1000 1 2>&1)
	kill -INT $st; wait $st
	is "$out" 1000 "$name: 1000 requests answered"
	out=$(python3 "$CH" mix "$model" "$TMP/$name.strace" 1000); rc=$?
	ok $rc "$name: syscalls per request within 10 % of the model: $out"
	[ $rc -eq 0 ] || sed 's/^/#   /' "$TMP/$name.strace"

	# connections open while it stops: their threads or processes go with it
	coproc HOLD { timeout 20 python3 "$CH" hold "$CLONE_PORT" "$proto" $K; }
	read -r -t 10 held <&"${HOLD[0]}"
	stop_clone "$sig" "$name (with $K connections open)"
	exec {HOLD[1]}>&-
	wait "$HOLD_PID" 2>/dev/null
done

# SIGKILL: nothing can run in the clone, its forked processes die with it
start_clone "$MODELS/fork-per-conn.json" || ok 1 "fork-per-conn: the clone starts again"
coproc HOLD { timeout 20 python3 "$CH" hold "$CLONE_PORT" http $K; }
read -r -t 10 held <&"${HOLD[0]}"
kids=$(children_of "$CLONE_PID")
kill -KILL "$CLONE_PID"; wait "$CLONE_PID" 2>/dev/null
sleep 0.5
left=""
for p in $kids; do alive "$p" && left="$left $p"; done
is "${left:-none}" none "a SIGKILLed clone's $(echo $kids | wc -w) connection processes die with it"
exec {HOLD[1]}>&-
wait "$HOLD_PID" 2>/dev/null
done_testing
