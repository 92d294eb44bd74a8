#!/bin/bash
# srvscope record end to end on a small command, the sched report read back, and the one-line
# errors (cause and remedy, non-zero exit) of record and of the readers.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/pp.trace"
"$SRVSCOPE" record -o "$f" -- "$FIXTURES/rec_pingpong" 30 >"$TMP/pp.out" 2>"$TMP/rec.err"
ok $? "record -- COMMAND exits 0"
like "$(cat "$TMP/rec.err")" "recorded [0-9]+ events .* to $f; lost 0 events and 0 stacks" \
	"record ends with what it wrote and what it lost"
ping=$(awk '/^ping/ {print $2}' "$TMP/pp.out")
pong=$(awk '/^pong/ {print $2}' "$TMP/pp.out")

out=$("$SRVSCOPE" sched "$f")
ok $? "sched reads the trace"
like "$out" "ping:$ping +\|" "sched lists the ping thread"
like "$out" "pong:$pong +\|" "sched lists the pong thread"
like "$out" "lost 0 events and 0 stacks" "sched reports lost events"
like "$("$SRVSCOPE" sched --hist "$f")" "pong:$pong delays" "sched --hist adds histograms"
"$SRVSCOPE" sched --format=json "$f" >"$TMP/sched.json"
python3 - "$TMP/sched.json" "$pong" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["tasks"] if t["tid"] == int(sys.argv[2])][0]
keys = {"tid", "pid", "comm", "runtime_ns", "switches", "avg_delay_ns", "max_delay_ns", "max_delay_at_ns"}
assert keys <= set(t), keys - set(t)
assert t["comm"] == "pong" and t["switches"] >= 30 and t["runtime_ns"] > 0, t
assert d["lost_events"] == 0
PY
ok $? "sched --format=json has the documented fields and plausible values"

# -a: every task on the system, stopped by -d.
start_fixture "$FIXTURES/rec_pingpong" 1000 2000 || exit 1
"$SRVSCOPE" record -a -d 1 -o "$TMP/all.trace" 2>"$TMP/all.err"
ok $? "record -a -d 1"
out=$("$SRVSCOPE" sched "$TMP/all.trace")
like "$out" "pong:[0-9]+ " "a system-wide trace has the fixture"
check "and many other tasks" [ "$(printf '%s\n' "$out" | grep -c ':[0-9]* *|')" -gt 5 ]

# --cost: each program's runs and time, from the kernel's statistics (on for the recording
# only), and the recorder's own CPU time.
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
# (1500 round trips 1 ms apart: over a second, so that the first second is told apart)
"$SRVSCOPE" record --cost -o "$TMP/cost.trace" -- "$FIXTURES/rec_pingpong" 1500 1000 >/dev/null 2>"$TMP/cost.err"
ok $? "record --cost"
cost=$(cat "$TMP/cost.err")
check "--cost: sched_switch ran, and took time" \
	awk '$1 == "sched_switch" && $2 > 0 && $3 > 0 { f = 1 } END { exit !f }' "$TMP/cost.err"
like "$cost" "all BPF programs +[0-9.]+" "--cost: the programs' total"
like "$cost" "recorder process +[0-9.]+ \(user [0-9.]+, system [0-9.]+\), after its first second" "--cost: the recorder's CPU"
like "$cost" "recorder start-up +[0-9]+ ms once" "--cost: and its start-up, apart"
like "$cost" "recorder first second +[0-9]+ ms once" "--cost: and its first second (the first unwinds), apart"
like "$cost" "kernel stacks walked +[1-9][0-9]*/s" "--cost: what the stack caches did"
is "$(sysctl -n kernel.bpf_stats_enabled)" "$stats_before" "--cost leaves the kernel's statistics setting as it was"

# --no-waker-stacks: stacks where threads block, none where they are woken from.
"$SRVSCOPE" record --no-waker-stacks -o "$TMP/nw.trace" -- "$FIXTURES/rec_pingpong" 300 >/dev/null 2>&1
ok $? "record --no-waker-stacks"
nw=$("$SRVSCOPE" blocking --stacks "$TMP/nw.trace")
like "$nw" "blocked at:" "--no-waker-stacks: the blocked stacks are there"
check "--no-waker-stacks: no waker's stack" [ "$(printf '%s\n' "$nw" | grep -c "woken from:")" = 0 ]

# Errors: one line naming the cause and the remedy, exit status not 0.
err=$("$SRVSCOPE" record -p 4000000 -o "$TMP/x" 2>&1); rc=$?
check "record -p of a missing pid fails" [ $rc -ne 0 ]
like "$err" "no such process 4000000" "record names the missing pid"
err=$("$SRVSCOPE" record -o "$TMP/x" 2>&1); rc=$?
check "record without a target fails" [ $rc -eq 2 ]
like "$err" "exactly one target: -p PID, -a, or -- COMMAND" "record says what targets are"
err=$("$SRVSCOPE" record --buffer-size 3x -a 2>&1); rc=$?
check "a bad --buffer-size fails" [ $rc -eq 2 ]
like "$err" "invalid value '3x' for --buffer-size" "the bad value and option are named"
err=$("$SRVSCOPE" record -d -1 -a 2>&1)
like "$err" "invalid value '-1' for -d" "a bad -d is named"
err=$(unprivileged "$SRVSCOPE" record -o "$TMP/unpriv.trace" -- true 2>&1); rc=$?
check "record without privileges fails" [ $rc -ne 0 ]
like "$err" "permission denied \(run as root, or grant CAP_BPF and CAP_PERFMON\)" \
	"record says which privileges it needs"
# A mount namespace of its own, whose /sys is made private there, before hiding the BTF:
# '--propagation private' would need / to be a mount point, which it is not in a chroot.
err=$(unshare -m --propagation unchanged sh -c "mount --make-rprivate /sys &&
	mount -t tmpfs none /sys/kernel/btf && '$SRVSCOPE' record -o '$TMP/x' -- true" 2>&1); rc=$?
check "record on a kernel without BTF fails" [ $rc -ne 0 ]
like "$err" "no BTF type information \(/sys/kernel/btf/vmlinux is missing\).*CONFIG_DEBUG_INFO_BTF" \
	"record explains the missing BTF"

printf 'hello, not a trace file at all, but long enough to have a header.%0300d' 0 >"$TMP/text"
err=$("$SRVSCOPE" blocking "$TMP/text" 2>&1); rc=$?
check "blocking on a text file fails" [ $rc -ne 0 ]
like "$err" "not a srvscope trace file: bad magic at offset 0" "the reader says what is wrong"
# Damage the first section header (right after the 256-byte header): that section is
# skipped, said with its offset, the rest read.
cp "$f" "$TMP/bad.trace"
printf 'XXXX' | dd of="$TMP/bad.trace" bs=1 seek=256 conv=notrunc status=none
"$SRVSCOPE" sched "$f" >"$TMP/sched.good" 2>/dev/null
err=$("$SRVSCOPE" sched "$TMP/bad.trace" 2>&1 >"$TMP/sched.bad"); rc=$?
check "sched reads a trace with a damaged section header" [ $rc -eq 0 ]
like "$err" "section header at offset 256 is damaged \(bad magic\): skipped [0-9]+ bytes to the next section" \
	"the reader gives the offset of the damage"
# One flipped byte in the payload of the kallsyms section and of every stacks section: sched,
# which needs neither, gives the same report; each damaged section is named, once.
cp "$f" "$TMP/bad2.trace"
nsec=$(python3 - "$TMP/bad2.trace" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, n = 256, 0
while off + 24 <= len(b):
    magic, typ, flags, size = struct.unpack_from("<IHHQ", b, off)
    if typ in (2, 3) and size > 8:
        b[off + 24 + size // 2] ^= 0x20
        n += 1
    off += 24 + (size + 7) // 8 * 8
open(sys.argv[1], "wb").write(b)
print(n)
PY
)
err=$("$SRVSCOPE" sched "$TMP/bad2.trace" 2>&1 >"$TMP/sched.bad2"); rc=$?
check "sched reads a trace whose kallsyms and stacks are damaged" [ $rc -eq 0 ]
check "with the same report" cmp -s "$TMP/sched.good" "$TMP/sched.bad2"
is "$(printf '%s\n' "$err" | grep -cE "(kallsyms|stacks) section at offset [0-9]+ is damaged \(checksum mismatch\): skipped")" \
	"$nsec" "one line per damaged section ($nsec)"
like "$err" "stacks section at offset [0-9]+ is damaged \(checksum mismatch\): skipped; the episodes and samples whose stacks it held show \[unknown\] for them" \
	"the line says what the damage costs"
# The stacks those sections held: one [unknown] frame, marked, where the frames were, in
# blocking --stacks (text, JSON) and flame (folded, svg, speedscope); none in the whole trace.
for t in good bad2; do
	tf=$f
	[ $t = good ] || tf="$TMP/bad2.trace"
	"$SRVSCOPE" blocking --stacks "$tf" >"$TMP/b.$t" 2>/dev/null
	"$SRVSCOPE" blocking --stacks --format=json "$tf" >"$TMP/bj.$t" 2>/dev/null
	"$SRVSCOPE" flame --kind=off "$tf" >"$TMP/fl.$t" 2>/dev/null
	"$SRVSCOPE" flame --kind=off --format=svg "$tf" >"$TMP/svg.$t" 2>/dev/null
	"$SRVSCOPE" flame --kind=off --format=speedscope "$tf" >"$TMP/ss.$t" 2>/dev/null
done
is "$(grep -c "stack missing from the trace" "$TMP/b.good")" 0 "the whole trace: no frame marked missing"
like "$(cat "$TMP/b.bad2")" "#0 +\[unknown\]( \[k\])? \(stack missing from the trace\)" \
	"blocking --stacks: a lost stack is one [unknown] frame, marked"
check "blocking --stacks: every listed stack of the damaged trace is that frame" \
	[ "$(grep -cE '^ +#[0-9]+ ' "$TMP/b.bad2")" = "$(grep -c '#0 *\[unknown\].*(stack missing' "$TMP/b.bad2")" ]
python3 - "$TMP/bj.good" "$TMP/bj.bad2" <<'PY'
import json, sys
good, bad = (json.load(open(p)) for p in sys.argv[1:3])
def ids(d):
    return [b["stack_id"] for t in d["tasks"] for b in t["blocks"] if b["stack_id"]]
assert ids(good) and ids(bad), "episodes with stacks"
assert all("missing" not in f for s in good["stacks"].values() for f in s), "none missing"
for i in ids(bad):
    s = bad["stacks"][str(i)]
    assert len(s) == 1 and s[0]["symbol"] == "[unknown]" and s[0]["missing"] is True, s
PY
ok $? "blocking --stacks --format=json: each lost stack is [{symbol: [unknown], missing: true}]"
# Unresolved addresses are [unknown] too: the whole trace's lines have real frames, the
# damaged one's lines are the thread and one [unknown] frame, every one of them.
check "flame folded, the whole trace: stacks of several frames" grep -qE "^[^;]+;[^;]+;[^;]+;" "$TMP/fl.good"
check "flame folded: the lost stacks are one [unknown] frame each" \
	[ -s "$TMP/fl.bad2" -a "$(grep -cvE "^[^;]+;\[unknown\](_\[k\])? [0-9]+$" "$TMP/fl.bad2")" = 0 ]
check "flame svg: [unknown] shown" grep -q "\[unknown\]" "$TMP/svg.bad2"
check "flame speedscope: [unknown] shown" grep -q '"\[unknown\]' "$TMP/ss.bad2"
err=$("$SRVSCOPE" flame "$f" --kind=sideways 2>&1)
like "$err" "invalid value 'sideways' for --kind" "flame names a bad --kind"
err=$("$SRVSCOPE" blocking "$f" --min-ms=abc 2>&1)
like "$err" "invalid value 'abc' for --min-ms" "blocking names a bad --min-ms"
done_testing
