#!/bin/bash
# The target comes first: hundreds of snapshots of a process that creates and joins
# thousands of threads per second, half of them with srvscope SIGKILLed mid-way. After
# each: the process is alive, not traced, no thread stopped, its long-lived threads all there.
. "$(dirname "$0")/lib.sh"
need_root
ROUNDS=${CHURN_ROUNDS:-200}
start_fixture "$FIXTURES/churn" || { ok 1 "churn fixture starts"; done_testing; }
base=$(ls /proc/"$FPID"/task | wc -l)
creators=$(cat /proc/"$FPID"/task/*/comm 2>/dev/null | grep -c '^churn-creator' || true)
diag "churn pid $FPID, $creators creator threads"
check "churn has its long-lived creator threads" [ "$creators" -gt 0 ]
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
	c=$(cat /proc/"$FPID"/task/*/comm 2>/dev/null | grep -c '^churn-creator' || true)
	[ "$c" -ge "$creators" ] || bad_lost=$((bad_lost + 1))
done
diag "$completed completed snapshots, $killed killed mid-way"
is "$bad_alive" 0 "churn process alive after every round"
is "$bad_traced" 0 "never left traced"
is "$bad_stopped" 0 "never left with a stopped thread"
is "$bad_lost" 0 "no long-lived thread lost"
check "most unkilled snapshots completed" [ "$completed" -ge $((ROUNDS / 2 - ROUNDS / 20)) ]
check "churn still creating threads" sh -c "a=\$(ls /proc/$FPID/task | sort -n | tail -1); sleep 0.2; b=\$(ls /proc/$FPID/task | sort -n | tail -1); [ \"\$a\" != \"\$b\" ]"
done_testing
