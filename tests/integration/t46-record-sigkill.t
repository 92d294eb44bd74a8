#!/bin/bash
# A recording killed with SIGKILL (no chance to finish the file) must stay readable up to
# its last flush, at most a second before the kill: every report works on it, says the
# file ends early, and symbolizes (maps and kallsyms are written when recording starts).
. "$(dirname "$0")/lib.sh"
need_root
need_btf

start_fixture "$FIXTURES/rec_sched" 30 2 2000 2000 || exit 1
f="$TMP/killed.trace"
"$SRVSCOPE" record -p "$FPID" --progress -o "$f" 2>"$TMP/err" &
rec=$!
for _ in $(seq 500); do grep -q recording "$TMP/err" && break; sleep 0.01; done
sleep 3
kill -KILL $rec
wait $rec 2>/dev/null
check "the recorder is gone" sh -c "! kill -0 $rec 2>/dev/null"

"$SRVSCOPE" sched --format=json "$f" >"$TMP/sched.json" 2>"$TMP/sched.err"
ok $? "sched reads the killed recording"
like "$(cat "$TMP/sched.err")" "(no end section|ends in the middle of a section).*killed" \
	"it says the file ends early"
python3 - "$TMP/sched.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = [t for t in d["tasks"] if t["comm"].startswith("worker")]
print("# %.2f s of events, workers: %s" % (d["duration_ns"] / 1e9, [(t["comm"], t["switches"]) for t in w]))
sys.exit(0 if len(w) == 2 and all(t["switches"] > 100 for t in w) and d["duration_ns"] > 1.5e9 else 1)
PY
ok $? "it holds the events up to about a second before the kill"
"$SRVSCOPE" blocking "$f" >"$TMP/b.txt" 2>/dev/null
ok $? "blocking reads it"
like "$("$SRVSCOPE" flame --kind=off "$f" 2>/dev/null)" "^worker[0-9];clone3;start_thread;worker;usleep;[a-z_]*nanosleep;" \
	"flame symbolizes it (maps saved at the start)"
# (hrtimer_nanosleep: off-CPU stacks leave out the scheduler's own frames, do_nanosleep too)
like "$("$SRVSCOPE" flame --kind=off "$f" 2>/dev/null)" "hrtimer_nanosleep_\[k\]" \
	"kernel frames are named from the kallsyms saved at the start"
done_testing
