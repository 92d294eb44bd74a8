#!/bin/bash
# 'sched' runtime is the kernel's CPU time: a pipe ping-pong of 30000 round trips recorded
# with -a, once with its two threads on two CPUs (every wake-up wakes an idle CPU: there
# timestamps from switch-in to switch-out fell 35 % short, as the kernel charges a thread
# from its enqueue), once where the scheduler puts them (tens of thousands of round trips a
# second, more than 100 k on one CPU). Each thread prints its own CLOCK_THREAD_CPUTIME_ID
# and nvcsw + nivcsw (getrusage RUSAGE_THREAD) as it ends: sched must agree within 1 % on
# the runtime and within 1 on the switches.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/rt.trace"
: >"$TMP/rec.err"
"$SRVSCOPE" record -a --progress -o "$f" 2>"$TMP/rec.err" &
rec=$!
_pids="$_pids $rec"
i=0
while ! grep -q "recording" "$TMP/rec.err" && [ $i -lt 200 ] && kill -0 $rec 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
check "record -a started" grep -q "recording" "$TMP/rec.err"
timeout 60 "$FIXTURES/rec_pingpong" 30000 0 split >"$TMP/pp.out"
ok $? "the ping-pong ran on two CPUs"
timeout 60 "$FIXTURES/rec_pingpong" 30000 0 >>"$TMP/pp.out"
ok $? "the ping-pong ran where the scheduler put it"
kill -INT $rec
wait $rec
ok $? "record -a ends at SIGINT"
sed 's/^/# /' "$TMP/pp.out" | grep -v "ready"

"$SRVSCOPE" sched --format=json "$f" >"$TMP/sched.json"
ok $? "sched --format=json"
python3 - "$TMP/pp.out" "$TMP/sched.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
tasks = {t["tid"]: t for t in d["tasks"]}
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + what)
    fails += not cond
check("%d events lost" % d["lost_events"], d["lost_events"] == 0)
n = 0
for l in open(sys.argv[1]):
    w = l.split()
    if w and w[0] == "rate":
        print("# %s round trips a second" % w[1])
    if w and w[0] == "cpu":
        name, tid, ns, sw, vol = w[1], int(w[2]), int(w[3]), int(w[4]), int(w[5])
        t = tasks.get(tid)
        if not t:
            check("%s %d is in the report" % (name, tid), False)
            continue
        n += 1
        check("%s: runtime %.3f ms, its own CPU time %.3f ms (%.2f %%)" %
              (name, t["runtime_ns"] / 1e6, ns / 1e6, 100.0 * (t["runtime_ns"] - ns) / ns),
              abs(t["runtime_ns"] - ns) <= 0.01 * ns)
        # voluntary: nvcsw and the exit; involuntary: nivcsw, and perhaps a preemption after
        # the fixture read its counters
        v, i = t["switches"] - t["preemptions"], t["preemptions"]
        check("%s: %d voluntary switches, nvcsw %d; %d involuntary, nivcsw %d"
              % (name, v, vol, i, sw - vol), 0 <= v - vol <= 1 and 0 <= i - (sw - vol) <= 1)
check("both threads of both runs measured", n == 4)
sys.exit(1 if fails else 0)
PY
ok $? "sched's runtime and switches are the kernel's, for both threads"
done_testing
