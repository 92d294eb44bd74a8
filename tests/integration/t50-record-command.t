#!/bin/bash
# How a recording ends. 'record -- CMD': a command that cannot be run is one line and a
# non-zero exit, with no trace left; otherwise srvscope exits with the command's status.
# SIGINT, SIGTERM and SIGHUP (a closed ssh session) all end a recording cleanly: exit 0,
# the end section written, the target untouched.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/cmd.trace"
"$SRVSCOPE" record -o "$f" -- /nonexistent/cmd >"$TMP/out" 2>"$TMP/err"
rc=$?
check "a command that cannot be run: non-zero exit" test "$rc" -ne 0
is "$(wc -l <"$TMP/err")" 1 "one line says so"
like "$(cat "$TMP/err")" "cannot run '/nonexistent/cmd': No such file" "the line names the command and why"
check "no trace is left" test ! -e "$f"

"$SRVSCOPE" record -o "$TMP/exit7.trace" -- sh -c 'exit 7' >/dev/null 2>"$TMP/err"
is $? 7 "srvscope exits with the command's status"
"$SRVSCOPE" sched "$TMP/exit7.trace" >/dev/null 2>"$TMP/sched.err"
ok $? "its trace is read"
"$SRVSCOPE" record -o "$TMP/killed.trace" -- sh -c 'kill -KILL $$' >/dev/null 2>"$TMP/err"
is $? 137 "a command killed by a signal: 128 + the signal, as a shell says"
"$SRVSCOPE" record -o "$TMP/true.trace" -- true >/dev/null 2>"$TMP/err"
is $? 0 "a command that succeeds: 0"

start_fixture "$FIXTURES/rec_sleeper" 60 || exit 1
for sig in INT TERM HUP; do
	f="$TMP/$sig.trace"
	"$SRVSCOPE" record -p "$FPID" --progress -o "$f" 2>"$TMP/$sig.err" &
	rec=$!
	for _ in $(seq 500); do grep -q recording "$TMP/$sig.err" && break; sleep 0.01; done
	sleep 0.5
	kill -"$sig" $rec
	wait $rec
	is $? 0 "SIG$sig ends the recording with exit 0"
	"$SRVSCOPE" sched --format=json "$f" >"$TMP/$sig.json" 2>"$TMP/$sig.sched.err"
	ok $? "SIG$sig: the trace is read"
	is "$(cat "$TMP/$sig.sched.err")" "" "SIG$sig: the trace is whole (its end section written)"
	like "$(cat "$TMP/$sig.json")" '"comm": *"sleeper"' "SIG$sig: the target's thread is in it"
	check "SIG$sig: the target runs on" kill -0 "$FPID"
	like "$(tr '\r' '\n' <"$TMP/$sig.err" | sed 's/\x1b\[K//g' | grep -v '^srvscope: recording' | grep . || true)" \
		"^srvscope: recorded [0-9]+ events" "SIG$sig: the summary line, and no other message"
done
done_testing
