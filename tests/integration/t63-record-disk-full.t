#!/bin/bash
# A disk that fills up under a recording: 'record -p' on a busy ping-pong into a 2 MB
# tmpfs ends at once with one line that names the file and the error, and a non-zero
# status; the target runs on, neither stopped nor slowed; what reached the disk before is a
# trace the reports read (with a warning that it was cut short). The trace is written by a
# thread of the recorder's own (src/trace/writeq.c): its error must reach the recorder.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

full="$TMP/full"
mkdir -p "$full"
mount -t tmpfs -o size=2m none "$full" || skip_all "cannot mount a tmpfs here"
trap 'umount -l "$full" 2>/dev/null; cleanup' EXIT

start_fixture "$FIXTURES/rec_pingpong" 100000000 0 || exit 1
t0=$(date +%s%N)
"$SRVSCOPE" record --no-progress -p "$FPID" -d 20 -o "$full/x.trace" 2>"$TMP/err"
rc=$?
t1=$(date +%s%N)
diag "record: exit $rc after $(((t1 - t0) / 1000000)) ms; $(tr '\n' '|' <"$TMP/err")"
is "$rc" 1 "a full disk: exit status 1"
is "$(wc -l <"$TMP/err")" 1 "... one line"
like "$(cat "$TMP/err")" "^srvscope: cannot write '$full/x.trace': No space left on device; what was recorded until then is kept in it$" \
	"... that names the file and the error, and says the trace so far is kept"
check "... at once, not at the end of -d 20 ($(((t1 - t0) / 1000000)) ms)" [ $((t1 - t0)) -lt 8000000000 ]

# The target: alive, not stopped, its two threads still running.
state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$FPID/status" 2>/dev/null)
check "the target is alive and not stopped (state $state)" [ -n "$state" -a "$state" != T -a "$state" != t ]
cpu() { cat /proc/"$FPID"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }
c0=$(cpu)
sleep 0.3
c1=$(cpu)
check "the target keeps running (+$(((c1 - c0) / 1000000)) ms of CPU in 0.3 s)" [ $((c1 - c0)) -gt 100000000 ]

# What was written is read: the reports warn that the trace was cut, and see the threads.
cp "$full/x.trace" "$TMP/x.trace"
"$SRVSCOPE" sched --format=json "$TMP/x.trace" >"$TMP/s.json" 2>"$TMP/s.err"
ok $? "sched reads the trace cut by the full disk"
like "$(cat "$TMP/s.err")" "(ends in the middle of a section|has no end section)" \
	"... and warns that it was cut short"
python3 - "$TMP/s.json" "$FPID" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
mine = [t for t in d["tasks"] if t.get("pid") == pid and t.get("switches", 0) > 100]
print("# %d threads of the target with switches: %s" % (len(mine), [(t["comm"], t["switches"]) for t in mine]))
sys.exit(0 if len(mine) >= 2 else 1)
PY
ok $? "... and has the target's two threads switching"
done_testing
