#!/bin/bash
# Wake-ups from IPI handlers: rec_irqwork's poller waits in poll() on a perf event that
# samples its spinner; each sample's wake-up comes from perf's irq_work, whose handler
# interrupts the spinner. Every such wake-up is of kind IPI (irq_work), never the spinner
# (which a recorder blind to x86's system vectors names: 483 of 487 in one run before),
# in blocking, its JSON and its stacks, timeline, flame and critical (IPI edges, no wait
# put down to the spinner), with the default BPF programs and the compat ones. record --ipi
# writes the IPIs sent (type 14, checked by tests/integration/trace_ipis.py), plain record
# none.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
[ -d /sys/kernel/tracing/events/irq_vectors/irq_work_entry ] ||
	[ -d /sys/kernel/debug/tracing/events/irq_vectors/irq_work_entry ] ||
	skip_all "no irq_vectors:irq_work_entry tracepoint (not x86?)"

f="$TMP/irqw.trace"
"$SRVSCOPE" record --ipi --no-progress -o "$f" -- "$FIXTURES/rec_irqwork" 1.5 >"$TMP/fix.out" \
	2>"$TMP/rec.err"
ok $? "record --ipi -- rec_irqwork 1.5"
read -r _ wakeups _ timeouts <"$TMP/fix.out"
diag "the fixture's poll() returned $wakeups times with samples, $timeouts timed out"
check "the poller was woken by samples, hundreds of times" [ "${wakeups:-0}" -ge 200 ]
like "$(grep -a '^ipi' "$f" | tr '\n' ' ')" "^ipi=1 ipi_contexts=irq_work,.*call_function_single" \
	"the info section says sends are recorded and which vectors are tracked"

# blocking: the poller's poll waits, by kind.
"$SRVSCOPE" blocking --comm irqw-poll --format=json "$f" >"$TMP/b.json"
ok $? "blocking --format=json"
python3 - "$TMP/b.json" "$wakeups" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
eps = [b for t in d["tasks"] for b in t["blocks"] if b["syscall"] == "poll"
       and not b["unfinished"] and not b["from_start"]]
kinds = {}
for b in eps:
    w = b["wakeup"]
    k = "%s %s" % (w["kind"], w.get("detail"))
    kinds[k] = kinds.get(k, 0) + 1
print("# poll waits by wake-up: %s (the fixture counted %s)" % (kinds, sys.argv[2]))
ipi = kinds.get("ipi irq_work", 0)
# Every wake-up the fixture saw is one poll wait; a few may be unfinished or come from
# elsewhere (a signal), never from the spinner.
assert ipi >= 0.95 * int(sys.argv[2]), "too few ipi irq_work: %d" % ipi
assert not any(k.startswith("task") for k in kinds), "a poll wait put down to a task"
PY
ok $? "every poll wait ends with an IPI irq_work wake-up, none with a task"
like "$("$SRVSCOPE" blocking --comm irqw-poll "$f" | grep -m1 ' poll ')" "IPI irq_work$" \
	"blocking's text says IPI irq_work"
"$SRVSCOPE" blocking --stacks --format=json "$f" >"$TMP/bs.json"
span=$("$SRVSCOPE" sched --format=json "$f" | python3 -c 'import json, sys; print(json.load(sys.stdin)["duration_ns"])')
python3 "$(dirname "$0")/expect_wakers.py" "$TMP/bs.json" "$span" 100
ok $? "every wake kind agrees with its waker's stack (ipi: sysvec_irq_work in it)"

like "$("$SRVSCOPE" timeline --comm irqw-poll "$f" | grep -m1 '"blocked: poll"')" \
	'"wakeup":"ipi","wakeup_detail":"irq_work"' "timeline: the blocked slice's wake-up"
like "$("$SRVSCOPE" flame --kind=wake --comm irqw-poll "$f" | grep -c '\[ipi irq_work\] ')" \
	"^[1-9]" "flame --kind=wake: the waker is [ipi irq_work]"

# critical: the poller's waits are IPI edges (irq_work has no sender to follow), none is
# put down to the spinner.
tid=$("$SRVSCOPE" blocking --comm irqw-poll "$f" | sed -n '1s/.*tid \([0-9]*\)\].*/\1/p')
"$SRVSCOPE" critical "$f" --tid "$tid" --format=json >"$TMP/c.json"
ok $? "critical --tid POLLER --format=json"
python3 - "$TMP/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
by = d["summary"]["by_state"]
total = d["end_ns"] - d["start_ns"]
ipi = [s for s in d["segments"] if s["state"] == "IPI"]
print("# by state %s; %d IPI segments" % (by, len(ipi)))
assert by.get("IPI", 0) >= 0.8 * total, "IPI is %.1f %% of the path" % (100.0 * by.get("IPI", 0) / total)
assert all(s["wake"] == "ipi" and s["what"] == "irq_work" and "from_tid" not in s for s in ipi)
assert not any(s["comm"] == "irqw-spin" for s in d["segments"]), "the spinner is on the path"
PY
ok $? "critical: the poller waited on IPIs (irq_work), at least 80 % of its path, never on the spinner"

python3 "$(dirname "$0")/trace_ipis.py" "$f" >"$TMP/ipis.out"
ok $? "the IPI records are sane: $(cat "$TMP/ipis.out")"
like "$(cat "$TMP/ipis.out")" "^sends [1-9][0-9]* call [1-9]" "record --ipi wrote IPI sends"

# Without --ipi: no sends, the contexts still tracked.
"$SRVSCOPE" record --no-progress -o "$TMP/plain.trace" -- "$FIXTURES/rec_irqwork" 0.5 \
	>/dev/null 2>"$TMP/plain.err"
ok $? "record -- rec_irqwork 0.5 (no --ipi)"
python3 "$(dirname "$0")/trace_ipis.py" "$TMP/plain.trace" >"$TMP/plain.out"
ok $? "plain record: sane ($(cat "$TMP/plain.out"))"
like "$(cat "$TMP/plain.out")" "^sends 0 .*ipi wakes [1-9][0-9]* by vector \{0: " \
	"plain record: no sends, the irq_work wake-ups still of kind IPI"

# The programs built for kernels before 6.2 do the same.
SRVSCOPE_BPF_COMPAT=1 "$SRVSCOPE" record --ipi --no-progress -o "$TMP/compat.trace" -- \
	"$FIXTURES/rec_irqwork" 0.5 >/dev/null 2>"$TMP/compat.err"
ok $? "SRVSCOPE_BPF_COMPAT=1 record --ipi"
python3 "$(dirname "$0")/trace_ipis.py" "$TMP/compat.trace" >"$TMP/compat.out"
ok $? "compat: sane ($(cat "$TMP/compat.out"))"
like "$(cat "$TMP/compat.out")" "^sends [1-9].*ipi wakes [1-9][0-9]* by vector \{0: " \
	"compat: sends and irq_work wake-ups"
SRVSCOPE_BPF_COMPAT=1 "$SRVSCOPE" record -a -d 1 --no-progress -o "$TMP/compat-all.trace" \
	2>"$TMP/compat-all.err"
ok $? "SRVSCOPE_BPF_COMPAT=1 record -a -d 1"
done_testing
