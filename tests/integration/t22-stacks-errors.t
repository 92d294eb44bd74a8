#!/bin/bash
# Bad input gets one line that says what to do, and a non-zero exit; a stopped target
# stays stopped; a target traced by someone else is refused in ptrace mode.
. "$(dirname "$0")/lib.sh"
need_root

one_line_error() { # DESCRIPTION REGEX ARGS...
	local desc=$1 re=$2; shift 2
	"$SRVSCOPE" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	check "$desc: non-zero exit" [ "$rc" -ne 0 ]
	is "$(wc -l <"$TMP/err" | tr -d ' ')" 1 "$desc: one line on stderr"
	like "$(cat "$TMP/err")" "$re" "$desc: says what is wrong"
}

one_line_error "no such pid" "no such process 999999" stacks -p 999999
one_line_error "kernel thread" "kernel thread" stacks -p 2 --mode=ptrace
one_line_error "bad pid value" "invalid value 'abc' for -p" stacks -p abc
one_line_error "missing pid" "give its pid with -p" stacks
one_line_error "bad format" "unknown format 'xml'" stacks -p 1 --format=xml
one_line_error "bad mode" "invalid value 'fast' for --mode" stacks -p 1 --mode=fast
one_line_error "bad count" "invalid value '0' for -n" stacks -p 1 -n 0
one_line_error "unknown command" "unknown command" frobnicate

start_fixture "$FIXTURES/stackfix-c-pie" || ok 1 "fixture starts"

# Not permitted: a process without capabilities looking at one with them.
if command -v setpriv >/dev/null; then
	unprivileged "$SRVSCOPE" stacks -p "$FPID" --mode=ptrace \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	check "no permission: non-zero exit" [ "$rc" -ne 0 ]
	is "$(wc -l <"$TMP/err" | tr -d ' ')" 1 "no permission: one line"
	like "$(cat "$TMP/err")" "root|CAP_SYS_PTRACE" "no permission: says to run as root or grant CAP_SYS_PTRACE"
fi

# Already traced: gdb holds the process.
gdb -q -p "$FPID" -batch -ex 'shell sleep 4' >/dev/null 2>&1 &
gdbpid=$!
for _ in $(seq 100); do [ "$(tracer_of "$FPID")" != 0 ] && break; sleep 0.05; done
one_line_error "traced by gdb" "already traced by [0-9]+ \(gdb\)" stacks -p "$FPID" --mode=ptrace
# The default mode does not need to attach: it serves the traced process in nostop mode.
out=$("$SRVSCOPE" stacks -p "$FPID" -f folded 2>"$TMP/err")
is "$?" 0 "traced by gdb, default mode: works"
like "$out" "main;" "traced by gdb, default mode: the stacks are there"
is "$(cat "$TMP/err")" "" "traced by gdb, default mode: nothing on stderr"
wait "$gdbpid"
for _ in $(seq 100); do [ "$(tracer_of "$FPID")" = 0 ] && break; sleep 0.05; done

# A process stopped by SIGSTOP before we came stays stopped after.
kill -STOP "$FPID"
for _ in $(seq 100); do case "$(states_of "$FPID")" in *[SR]*) sleep 0.02 ;; *) break ;; esac; done
"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace --format=json >"$TMP/stopped.json" 2>"$TMP/err"
is "$?" 0 "stacks of a stopped process works"
want=$(awk -F'\t' '{ n += $2 } END { print n }' "$TOP/tests/fixtures/stackfix-c.expect")
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(g["count"] for g in d["groups"]))' "$TMP/stopped.json")" "$want" "all $want threads of the stopped process sampled"
sleep 0.1
like "$(states_of "$FPID")" '^T+$' "stopped process still stopped afterwards"
is "$(tracer_of "$FPID")" 0 "stopped process not traced afterwards"
kill -CONT "$FPID"
sleep 0.1
like "$(states_of "$FPID")" '^[SR]+$' "it runs again after SIGCONT"

# --consistent reports the freeze; the process runs afterwards.
"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace --consistent --format=json >"$TMP/c.json" 2>"$TMP/err"
is "$?" 0 "--consistent works"
like "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["freeze_us"])' "$TMP/c.json")" '^[1-9][0-9]*$' "--consistent reports a freeze time"
like "$(states_of "$FPID")" '^[SR]+$' "running after --consistent"
done_testing
