#!/bin/bash
# Every record is in the trace or counted lost. Two recorders record the same process at
# once (rec_whole: on each CPU a thread woken by its timer every 20 us, in an interrupt
# that can land on any program there, the recorders' own flushes of their batches
# included; two threads handing a byte back and forth across the CPUs over pipes and TCP
# on the loopback device): their programs run at the same tracepoints, so each one's
# switches, wakings, segments and IPI sends (every send of the host) are the other's, one
# for one (trace_same.py). What the kernel does not trace at all is missing from both
# alike: here, every event in the context of the sandbox's agent (pid 1's threads: their
# switches out, the interrupts that land on them), which perf does not see either. The
# losses this guards against are rare: t73's three recorders caught a batch flushed on the
# recorder's own CPU as a softirq's program added to it (record.bpf.c flush_batch), and
# bpftool an IPI program skipped by the kernel (ipi_send_cpu2); six runs of this test
# before those fixes passed as well.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

"$SRVSCOPE" record --net=all --force -o "$TMP/a.trace" -- "$FIXTURES/rec_whole" 5 20 \
	>"$TMP/a.out" 2>"$TMP/a.err" &
ra=$!
i=0
while ! grep -q '^ready' "$TMP/a.out" 2>/dev/null && [ $i -lt 1000 ]; do
	i=$((i + 1))
	sleep 0.01
done
pid=$(awk '/^pid/ {print $2}' "$TMP/a.out")
"$SRVSCOPE" record --net=all --force -p "$pid" -o "$TMP/b.trace" >"$TMP/b.out" 2>"$TMP/b.err"
ok $? "the second recorder records the fixture to its end"
wait $ra
ok $? "the first recorder records the fixture"
like "$(cat "$TMP/a.err")" "lost 0 events" "the first lost none it counted"
like "$(cat "$TMP/b.err")" "lost 0 events" "the second lost none it counted"
out=$(python3 "$TOP/tests/integration/trace_same.py" "$TMP/a.trace" "$TMP/b.trace" "$pid")
st=$?
echo "$out" | sed 's/^#*/# /'
is "$st" 0 "the two traces hold the same records ($(echo "$out" | tail -1))"
done_testing
