#!/bin/bash
# 'srvscope timeline': the ping-pong's threads as slices in the Trace Event Format. Checked
# against the other reports of the same trace: running time per thread equals 'sched's
# runtime, blocked slices are 'blocking's episodes, every read of pong woken by ping has an
# arrow from ping to the start of pong's runnable slice; slices of a thread never overlap.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/pp.trace"
record_pingpong "$f"

"$SRVSCOPE" timeline "$f" >"$TMP/tl.json"
ok $? "timeline"
"$SRVSCOPE" sched --format=json "$f" >"$TMP/sched.json"
"$SRVSCOPE" blocking --format=json "$f" >"$TMP/blocking.json"
python3 - "$TMP/tl.json" "$TMP/sched.json" "$TMP/blocking.json" "$ping" "$pong" <<'PY'
import json, sys
from collections import defaultdict
tl = json.load(open(sys.argv[1]))
sched = {t["tid"]: t for t in json.load(open(sys.argv[2]))["tasks"]}
blocking = {t["tid"]: t for t in json.load(open(sys.argv[3]))["tasks"]}
ping, pong = int(sys.argv[4]), int(sys.argv[5])
ev = tl["traceEvents"]
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + what)
    fails += not cond

check("document: traceEvents, displayTimeUnit, otherData with no lost events",
      isinstance(ev, list) and tl["displayTimeUnit"] == "ms" and tl["otherData"]["lost_events"] == 0)
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
check("thread names: %s" % names, names.get(ping) == "ping" and names.get(pong) == "pong")
xs = defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        xs[e["tid"]].append(e)
overlaps = 0
for tid, sl in xs.items():
    sl.sort(key=lambda e: e["ts"])
    overlaps += sum(1 for a, b in zip(sl, sl[1:]) if b["ts"] < a["ts"] + a["dur"] - 0.002)
check("no thread's slices overlap (%d overlaps)" % overlaps, overlaps == 0)
for tid in (ping, pong):
    # The kernel's CPU time of each running slice (its args), summed, is sched's runtime.
    run = sum(e.get("args", {}).get("cpu_ns", 0) for e in xs[tid] if e["name"] == "running" and not e.get("args", {}).get("cut_by_recording"))
    want = sched[tid]["runtime_ns"]
    check("%d: running slices' CPU time %d ns, sched runtime %d ns" % (tid, run, want), run == want)
    blocked = [e for e in xs[tid] if e["name"].startswith("blocked")]
    check("%d: %d blocked slices, %d blocking episodes" % (tid, len(blocked), len(blocking[tid]["blocks"])),
          len(blocked) == len(blocking[tid]["blocks"]))
reads = [e for e in xs[pong] if e["name"] == "blocked: read"]
check("pong's reads: fd and pipe in the arguments, woken by ping",
      reads and all(e["args"]["fd_desc"].startswith("pipe [") for e in reads) and
      sum(1 for e in reads if e["args"].get("waker_tid") == ping) >= 0.95 * len(reads))
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
to_pong = [i for i, e in ends.items() if e["tid"] == pong and starts[i]["tid"] == ping]
woken_at = {round(e["ts"], 3) for e in xs[pong] if e["name"] == "runnable (woken)"}
check("%d arrows from ping to pong for %d reads" % (len(to_pong), len(reads)), len(to_pong) >= 0.95 * len(reads))
check("each arrow starts and ends at the wake-up, where pong's runnable slice begins",
      set(starts) == set(ends) and all(starts[i]["ts"] == ends[i]["ts"] and ends[i].get("bp") == "e" and
                                      round(ends[i]["ts"], 3) in woken_at for i in to_pong))
# This kernel's own sched_switch stream now and then lacks a switch-in (bpftrace on the
# tracepoint counts 20002 switch-outs of ping for 19997 switch-ins): ping then runs with no
# running slice, and an arrow leaves from nowhere. Nearly all must leave from one.
run_ping = [e for e in xs[ping] if e["name"] == "running"]
inside = sum(1 for i in to_pong if any(r["ts"] <= starts[i]["ts"] <= r["ts"] + r["dur"] + 0.001 for r in run_ping))
check("%d of %d arrows leave from a slice where ping runs" % (inside, len(to_pong)), inside >= 0.95 * len(to_pong))
sys.exit(1 if fails else 0)
PY
ok $? "the timeline agrees with sched, blocking and the wakers"

"$SRVSCOPE" timeline --comm pong "$f" >"$TMP/pong.json"
is "$(python3 -c 'import json, sys; print(sorted({e["tid"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"}))' "$TMP/pong.json")" \
	"[$pong]" "--comm keeps one thread's track"
err=$("$SRVSCOPE" timeline --format=svg "$f" 2>&1)
like "$?: $err" "^2: srvscope: invalid value 'svg' for --format: expected chrome$" "a bad --format is refused"
done_testing
