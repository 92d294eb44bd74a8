#!/bin/bash
# The critical path on one host, its truth known by construction (crit_chain): A waits on B
# over a pipe, B on C over a futex, C sleeps 50 ms on a timer then works 20 ms, so each of
# A's waits must be C's timer, then C running, then B, then A (>= 95 % of the time on the
# right segments); with C's work an fdatasync loop, the disk shows as BLOCK_DEVICE. Then the
# outputs (JSON, Perfetto) and the bad inputs, one clear line each.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/chain.trace"
"$SRVSCOPE" record -o "$f" -- "$FIXTURES/crit_chain" 5 >"$TMP/out" 2>"$TMP/err"
ok $? "record the chain"
A=$(awk '/^A/ {print $2}' "$TMP/out")
"$SRVSCOPE" critical --tid "$A" --format=json "$f" >"$TMP/c.json"
ok $? "critical --format=json"

cat >"$TMP/judge.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = {}
rounds = []
for l in open(sys.argv[2]):
    w = l.split()
    if w[0] in "ABC":
        ids[w[0]] = int(w[1])
    elif w[0] == "round":
        rounds.append([int(x) for x in w[1:]])
disk = sys.argv[3] == "disk"
segs = d["segments"]

def overlap(a0, a1, pred):
    return sum(max(0, min(a1, s["end_ns"]) - max(a0, s["start_ns"])) for s in segs if pred(s))

A, B, C = ids["A"], ids["B"], ids["C"]
work = ("RUNNING", "PREEMPTED", "BLOCK_DEVICE") if disk else ("RUNNING", "PREEMPTED")
total = right = timer = timer_right = busy = busy_right = dev = 0
for a0, a1, c_sleep, c_woke, c_done, b_woke in rounds:
    # A's wait: before C sleeps, A itself and C waking up; then C's timer; then C's work;
    # then B's wake-up and A's.
    parts = ((a0, c_sleep, lambda s: s["tid"] in (A, C) and s["state"] in ("RUNNING", "PREEMPTED")),
             (c_sleep, c_woke, lambda s: s["tid"] == C and s["state"] == "TIMER"),
             (c_woke, c_done, lambda s: s["tid"] == C and s["state"] in work),
             (c_done, a1, lambda s: s["tid"] in (A, B, C) and s["state"] in ("RUNNING", "PREEMPTED")))
    for i, (x0, x1, pred) in enumerate(parts):
        got = overlap(x0, x1, pred)
        total += x1 - x0
        right += got
        if i == 1:
            timer += x1 - x0; timer_right += got
        if i == 2:
            busy += x1 - x0; busy_right += got
    dev += overlap(c_woke, c_done, lambda s: s["tid"] == C and s["state"] == "BLOCK_DEVICE")
said = "# %d rounds: %.1f %% of A's waits on the right segments (C's timer %.1f %%, C's work %.1f %%, disk %.1f %% of the work)" % (
    len(rounds), 100.0 * right / total, 100.0 * timer_right / timer, 100.0 * busy_right / busy, 100.0 * dev / busy)
print(said)
checks = [("3 rounds at least", len(rounds) >= 3),
          ("95 % of the waits right", right >= 0.95 * total),
          ("95 % of C's timers right", timer_right >= 0.95 * timer),
          ("95 % of C's work right", busy_right >= 0.95 * busy)]
if disk:
    checks.append(("30 % of the work on the disk", dev >= 0.3 * busy))
else:
    # A first run on a cold machine can fault C's pages in from the disk: a real device
    # wait, not a misattribution, but it stays small.
    checks.append(("at most 5 % of the work on the disk", dev <= 0.05 * busy))
# The path is contiguous over its window, and the summary adds up.
checks.append(("contiguous", all(segs[i]["end_ns"] == segs[i + 1]["start_ns"] for i in range(len(segs) - 1))))
checks.append(("over its window", segs[0]["start_ns"] == d["start_ns"] and segs[-1]["end_ns"] == d["end_ns"]))
checks.append(("summary adds up", sum(d["summary"]["by_state"].values()) == d["end_ns"] - d["start_ns"]))
for name, good in checks:
    if not good:
        print("# failed: " + name)
        # prove shows a failing test's stderr, not its comments
        print("t73 %s: %s\n# failed: %s" % (sys.argv[3], said, name), file=sys.stderr)
sys.exit(0 if all(good for _, good in checks) else 1)
PY
python3 "$TMP/judge.py" "$TMP/c.json" "$TMP/out" cpu
ok $? "A's waits resolve to C's timer, then C running, then B, then A (>= 95 %)"

text=$("$SRVSCOPE" critical --tid "$A" "$f")
ok $? "critical (text)"
like "$text" "Critical path of thread chainA $A on " "the text names the thread"
like "$text" "chainC [0-9]+ +TIMER +hrtimer" "the text shows C's timer"
like "$text" "TIMER +[0-9.]+ ms +[0-9.]+ %" "the text summary has the share of the timer"

"$SRVSCOPE" critical --tid "$A" --format=chrome "$f" >"$TMP/c.trace.json"
ok $? "critical --format=chrome"
python3 - "$TMP/c.trace.json" "$A" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
path = [e for e in ev if e["ph"] == "X" and e["pid"] == 0]
arrows = [e for e in ev if e["ph"] in "sf"]
names = [e for e in ev if e["ph"] == "M" and e["pid"] == 0 and e["args"]["name"] == "critical path"]
assert names and path and arrows, (len(names), len(path), len(arrows))
assert any(e["name"].startswith("TIMER") for e in path)
assert len([e for e in arrows if e["ph"] == "s"]) == len([e for e in arrows if e["ph"] == "f"])
PY
ok $? "the Perfetto timeline has the path as its own track, with arrows between hops"

# timeline and blocking show the path when asked.
"$SRVSCOPE" timeline --critical "$A" "$f" >"$TMP/tl.json"
ok $? "timeline --critical"
python3 - "$TMP/tl.json" "$A" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
path = [e for e in ev if e["ph"] == "X" and e["pid"] == 0]
threads = [e for e in ev if e["ph"] == "X" and e["pid"] != 0]
assert threads, "the timeline's own tracks are there"
assert any(e["name"].startswith("TIMER chainC") for e in path), "C's timer on the path track"
PY
ok $? "the timeline has a critical-path track beside the threads' tracks"
text=$("$SRVSCOPE" blocking --tid "$A" --critical "$f")
ok $? "blocking --critical"
like "$text" "critical path: chainC [0-9]+ TIMER 5[0-9]\.[0-9]+ ms, chainC [0-9]+ RUNNING (19|2[0-9])\.[0-9]+ ms" \
	"each of A's reads: C's timer, then C running"

# Scenario 2: C's work is a disk wait.
# Known gap, not this test's subject: in about one recording in ten of this loop, a few
# dozen of C's wakings reach no BPF program while srvscope records, though their wake-ups
# come (bpftrace on both tracepoints beside it: 1424 wakings, 1468 wake-ups, 43 episodes
# UNKNOWN; bpftrace alone sees every waking), so those episodes have no waker and the path
# shows C BLOCKED there (a CI run: 6.4 % of C's work; docs/record.md). Such a recording is
# made again, twice at most, and said; the last one is judged.
f2="$TMP/disk.trace"
for try in 1 2 3; do
	"$SRVSCOPE" record --force -o "$f2" -- "$FIXTURES/crit_chain" 4 fsync "$TMP/blockfile" >"$TMP/out2" 2>"$TMP/err2"
	rc=$?
	C2=$(awk '/^C/ {print $2}' "$TMP/out2")
	unknown=$("$SRVSCOPE" blocking --tid "$C2" "$f2" 2>/dev/null | tail -1 | sed -n 's/.*; \([0-9]*\) UNKNOWN.*/\1/p')
	[ "${unknown:-0}" = 0 ] && break
	diag "recording $try: $unknown of C's episodes have no waking (the recorder gap above)"
done
ok $rc "record the chain with fdatasync"
A2=$(awk '/^A/ {print $2}' "$TMP/out2")
"$SRVSCOPE" critical --tid "$A2" --format=json "$f2" >"$TMP/c2.json"
python3 "$TMP/judge.py" "$TMP/c2.json" "$TMP/out2" disk
ok $? "the fdatasync in the chain shows as BLOCK_DEVICE on C's segments"

# Bad input: one line each, exit status 1 (2 for usage).
out=$("$SRVSCOPE" critical --tid 999999 "$f" 2>&1)
is "$?" 1 "a tid not in the trace fails"
like "$out" "^srvscope: critical: thread 999999 is not in the trace" "and says so in one line"
out=$("$SRVSCOPE" critical --tid "$A" --from 500 --to 501 "$f" 2>&1)
is "$?" 1 "a window outside the trace fails"
like "$out" "^srvscope: critical: the window 500.000000-501.000000 s is outside" "and says so"
out=$("$SRVSCOPE" critical --tid "$A" "$f" "$f" 2>&1)
is "$?" 1 "the same host twice fails"
like "$out" "^srvscope: critical: traces 1 and 2 were recorded on the same host" "and says so"
out=$("$SRVSCOPE" critical "$f" 2>&1)
is "$?" 2 "--tid is required"
is "$(printf '%s\n' "$out" | wc -l)" 1 "in one line"
done_testing
