#!/bin/bash
# The details of the reports that users trip on (issue 8, item 10): a wait spanning the
# whole recording has both marks; a timed wait interrupted by a ptrace snapshot is reported
# as the syscall it resumes, not restart_syscall; a wait already under way at the start has
# the same off-CPU stack as the same wait later (one tower in a flame graph); counts of one
# are singular; poll and select show the first fd they wait on, also when the wait was
# under way as the recording started, and a wait resumed by restart_syscall is named.
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
"$SRVSCOPE" record -p "$sp" -d 2 --progress -o "$TMP/restart.trace" >/dev/null 2>"$TMP/restart.err" &
rec=$!
# The snapshot comes once the recording runs (its first progress line, after 0.5 s): the
# case of a wait restarted before the recording is checked further down.
for _ in $(seq 200); do grep -q recording "$TMP/restart.err" && break; sleep 0.05; done
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
start_fixture "$FIXTURES/rec_sleeper" 10 || exit 1
# It sleeps all but microseconds of every 10 ms; on a loaded machine the start snapshot may
# still find it runnable: then record again (three tries).
for try in 1 2 3; do
	"$SRVSCOPE" record -p "$FPID" -d 1 --force -o "$TMP/sleeper.trace" >/dev/null 2>&1 || break
	"$SRVSCOPE" blocking --format=json --comm sleeper "$TMP/sleeper.trace" >"$TMP/sleeper.json"
	starts=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for t in d["tasks"] for b in t["blocks"] if b["from_start"]))' "$TMP/sleeper.json")
	[ "$starts" = 1 ] && break
done
check "the sleeper was asleep at the start of a recording ($starts episode, try $try)" \
	[ "$starts" = 1 ]
"$SRVSCOPE" flame --kind=off --comm sleeper "$TMP/sleeper.trace" >"$TMP/off.folded"
seven=$(grep -c ';sleep_seven;' "$TMP/off.folded")
three=$(grep -c ';sleep_three;' "$TMP/off.folded")
cut -c1-300 "$TMP/off.folded" | sed "s/^/# /"
is "$seven $three" "1 1" "one folded line (one tower) per sleeping function"
check "no scheduler frames at the top of off-CPU stacks" \
	sh -c "! grep -qE '(schedule|__schedule)_\[k\] [0-9]+$' \"\$1\"" - "$TMP/off.folded"

# poll and select name the first fd they wait on: a Python process polls two listening
# sockets (fds A and B, in that order) for 40 ms, then selects on B alone for 20 ms, over
# and over.
python3 - >"$TMP/poller.out" 2>&1 <<'PY' &
import os, select, socket, sys, time
a = socket.socket(); a.bind(("127.0.0.1", 0)); a.listen()
b = socket.socket(); b.bind(("127.0.0.1", 0)); b.listen()
print("ready", a.fileno(), a.getsockname()[1], b.fileno(), b.getsockname()[1], flush=True)
p = select.poll(); p.register(a, select.POLLIN); p.register(b, select.POLLIN)
end = time.time() + 5
while time.time() < end:
    p.poll(40)
    select.select([b], [], [], 0.02)
PY
pp=$!
_pids="$_pids $pp"
for _ in $(seq 200); do grep -q ready "$TMP/poller.out" && break; sleep 0.02; done
read -r _ fa pa fb pb <"$TMP/poller.out"
"$SRVSCOPE" record -p "$pp" -d 1 -o "$TMP/poll.trace" >/dev/null 2>&1
ok $? "record a poller"
text=$("$SRVSCOPE" blocking "$TMP/poll.trace")
printf '%s\n' "$text" | sed -n '4,6p' | sed 's/^/# /'
like "$text" " poll +$fa\+ tcp 127.0.0.1:$pa \(listening\) " "poll: the first fd polled, + for more"
like "$text" " (pselect6|select) +$fb tcp 127.0.0.1:$pb \(listening\) " "select: the fd in the set"
check "no poll or select without its fd, the one under way at the start included" sh -c \
	"! printf '%s' \"\$1\" | sed '1,3d' | grep -E ' (poll|pselect6|select) +- '" - "$text"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
bl = [b for t in d["tasks"] for b in t["blocks"] if b["syscall"] == "poll"]
first = [b for t in d["tasks"] for b in t["blocks"] if b["from_start"]]
ok = bl and all(b["fd"] == int(sys.argv[2]) and b["more_fds"] for b in bl)
# The wait under way at the start, when the poller was waiting then (a loaded machine may
# have it runnable): its fd too.
first = [b for b in first if b["syscall"] in ("poll", "pselect6", "select")]
ok = ok and all(b["fd"] == (int(sys.argv[2]) if b["syscall"] == "poll" else int(sys.argv[3])) for b in first)
sys.exit(0 if ok else 1)' \
	<("$SRVSCOPE" blocking --format=json "$TMP/poll.trace") "$fa" "$fb"
ok $? "JSON: poll episodes have fd $fa and more_fds, the first one (under way at the start) too"

# A wait interrupted before the recording (a stop and a continue) goes on in the kernel as
# restart_syscall: the report names the wait it resumes, clock_nanosleep.
/bin/sleep 30 &
sp=$!
_pids="$_pids $sp"
sleep 0.2
kill -STOP "$sp" && sleep 0.1 && kill -CONT "$sp" && sleep 0.1
check "the stopped and continued sleep is in restart_syscall" grep -q '^219 ' "/proc/$sp/syscall"
"$SRVSCOPE" record -p "$sp" -d 0.3 -o "$TMP/resumed.trace" 2>"$TMP/resumed.err" >/dev/null
rc=$?; ok $rc "record a sleep resumed by restart_syscall"; [ $rc = 0 ] || sed "s/^/# /" "$TMP/resumed.err"
text=$("$SRVSCOPE" blocking "$TMP/resumed.trace")
like "$text" " clock_nanosleep " "the resumed wait is shown as clock_nanosleep"
check "not as restart_syscall" sh -c '! printf "%s" "$1" | grep -q restart_syscall' - "$text"
kill "$sp" 2>/dev/null

done_testing
