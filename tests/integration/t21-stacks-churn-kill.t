#!/bin/bash
# The target comes first: hundreds of snapshots of a process that creates and joins
# thousands of threads per second, half of them with srvscope SIGKILLed mid-way. After
# each: the process is alive, not traced, no thread stopped, its long-lived threads all there.
. "$(dirname "$0")/lib.sh"
need_root
ROUNDS=${CHURN_ROUNDS:-200}
start_fixture "$FIXTURES/churn" -v || { ok 1 "churn fixture starts"; done_testing; }
# The creators are the churn-creator threads present in two reads 0.2 s apart (a new
# short-lived thread carries its creator's name for a moment); each is then checked by
# its own /proc entry, since readdir of /proc/PID/task can miss threads under churn.
creator_tids() {
	for f in /proc/"$FPID"/task/*/comm; do
		[ "$(cat "$f" 2>/dev/null)" = churn-creator ] && basename "$(dirname "$f")"
	done | sort
}
a=$(creator_tids); sleep 0.2; b=$(creator_tids)
CREATORS=$(comm -12 <(echo "$a") <(echo "$b"))
creators=$(echo "$CREATORS" | grep -c . || true)
diag "churn pid $FPID, $creators creator threads"
check "churn has its long-lived creator threads" [ "$creators" -eq 8 ]
creators_alive() {
	local t
	for t in $CREATORS; do [ -d /proc/"$FPID"/task/"$t" ] || return 1; done
}
bad_alive=0 bad_traced=0 bad_stopped=0 bad_lost=0 completed=0 killed=0
for i in $(seq 1 "$ROUNDS"); do
	if [ $((i % 2)) -eq 0 ]; then
		"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace -q --format=folded >/dev/null 2>&1 &
		sp=$!
		# Kill at a varying moment: from right after start to well into the capture.
		sleep "0.00$((RANDOM % 10))$((RANDOM % 10))"
		kill -KILL "$sp" 2>/dev/null && killed=$((killed + 1))
		wait "$sp" 2>/dev/null
	else
		"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace -q $([ $((i % 4)) -eq 1 ] && echo --consistent) \
			--format=folded >/dev/null 2>&1 && completed=$((completed + 1))
	fi
	kill -0 "$FPID" 2>/dev/null || { bad_alive=$((bad_alive + 1)); break; }
	[ "$(tracer_of "$FPID")" = 0 ] || bad_traced=$((bad_traced + 1))
	# A thread in ptrace-stop shows 't', in group-stop 'T'.
	case "$(states_of "$FPID")" in *t* | *T*) bad_stopped=$((bad_stopped + 1)) ;; esac
	creators_alive || bad_lost=$((bad_lost + 1))
done
diag "$completed completed snapshots, $killed killed mid-way"
is "$bad_alive" 0 "churn process alive after every round"
is "$bad_traced" 0 "never left traced"
is "$bad_stopped" 0 "never left with a stopped thread"
is "$bad_lost" 0 "no long-lived thread lost"
check "most unkilled snapshots completed" [ "$completed" -ge $((ROUNDS / 2 - ROUNDS / 20)) ]
sleep 1.2
rate=$(sed -n 's/^churn: \([0-9]*\) threads\/s$/\1/p' "$FOUT" | tail -1)
diag "churn rate after the rounds: ${rate:-?} threads/s"
check "churn still creating threads" [ "${rate:-0}" -gt 100 ]
done_testing
