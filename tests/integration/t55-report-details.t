#!/bin/bash
# The details of the reports that users trip on (issue 8, item 10): a wait spanning the
# whole recording has both marks; a timed wait interrupted by a ptrace snapshot is reported
# as the syscall it resumes, not restart_syscall; a wait already under way at the start has
# the same off-CPU stack as the same wait later (one tower in a flame graph); counts of one
# are singular.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

# A 'sleep 30' is in clock_nanosleep for all of a 1 s recording: one episode, both marks.
sleep 30 &
sp=$!
_pids="$_pids $sp"
"$SRVSCOPE" record -p "$sp" -d 1 -o "$TMP/whole.trace" >/dev/null 2>"$TMP/whole.err"
ok $? "record a sleep for 1 s"
text=$("$SRVSCOPE" blocking "$TMP/whole.trace")
like "$text" "^  [0-9.]+ +[0-9.]+<> +clock_nanosleep " "a wait spanning the recording is marked <>"
like "$text" "^1 episode, " "1 episode (singular)"
like "$("$SRVSCOPE" blocking --format=json "$TMP/whole.trace")" \
	'"from_start":true,"unfinished":true' "JSON: from_start and unfinished"

# The same sleep, with a ptrace snapshot in the middle of the recording: the nanosleep is
# interrupted, resumes as restart_syscall, and must still read clock_nanosleep.
"$SRVSCOPE" record -p "$sp" -d 1.5 -o "$TMP/restart.trace" >/dev/null 2>"$TMP/restart.err" &
rec=$!
sleep 0.7
"$SRVSCOPE" stacks --mode=ptrace -p "$sp" >"$TMP/snap.txt" 2>&1
ok $? "a ptrace snapshot during the recording"
wait "$rec"
ok $? "record through the snapshot"
text=$("$SRVSCOPE" blocking "$TMP/restart.trace")
n=$(printf '%s\n' "$text" | grep -cE '^  [0-9.]+ +[0-9.]+(<|>|<>)? +clock_nanosleep ')
printf "%s\n" "$text" | sed -n "3,6p" | sed "s/^/# /"
check "the wait after the snapshot is clock_nanosleep again ($n episodes)" [ "$n" -ge 2 ]
check "no restart_syscall" sh -c "! printf '%s' \"\$1\" | grep -q restart_syscall" - "$text"

# plurals: one thread, one sample
like "$("$SRVSCOPE" stacks -p "$sp" | head -1)" "^pid $sp \(sleep\): 1 thread, 1 sample, " \
	"stacks: 1 thread, 1 sample"
like "$("$SRVSCOPE" stacks -p "$sp" -n 2)" "^2 thread-samples \(100.0%\)" "2 thread-samples"
"$SRVSCOPE" record -o "$TMP/one.trace" -- sleep 0.2 >/dev/null 2>&1
like "$("$SRVSCOPE" sched "$TMP/one.trace" | tail -1)" "^ 1 thread, " "sched: 1 thread"

# A sleeper already asleep when the recording starts: its first episode's stack (read by
# the start snapshot, which the kernel gives without the scheduler's frames) folds into the
# same line as the later ones.
start_fixture "$FIXTURES/rec_sleeper" 5 || exit 1
"$SRVSCOPE" record -p "$FPID" -d 1 -o "$TMP/sleeper.trace" >/dev/null 2>&1
ok $? "record a running sleeper"
"$SRVSCOPE" blocking --format=json --comm sleeper "$TMP/sleeper.trace" >"$TMP/sleeper.json"
starts=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for t in d["tasks"] for b in t["blocks"] if b["from_start"]))' "$TMP/sleeper.json")
check "the sleeper was asleep at the start ($starts episode)" [ "$starts" = 1 ]
"$SRVSCOPE" flame --kind=off --comm sleeper "$TMP/sleeper.trace" >"$TMP/off.folded"
seven=$(grep -c ';sleep_seven;' "$TMP/off.folded")
three=$(grep -c ';sleep_three;' "$TMP/off.folded")
cut -c1-300 "$TMP/off.folded" | sed "s/^/# /"
is "$seven $three" "1 1" "one folded line (one tower) per sleeping function"
check "no scheduler frames at the top of off-CPU stacks" \
	sh -c "! grep -qE '(schedule|__schedule)_\[k\] [0-9]+$' \"\$1\"" - "$TMP/off.folded"

done_testing
