#!/bin/bash
# A recording streams its trace out of the page cache (trace/writer.c stream_out): what a
# flush wrote is sent to the disk and dropped from the cache at the next flush, so a long
# recording does not push the server's own pages out. Two threads ping-pong 300000 times
# (tens of MB of events over two seconds and more): at the end, at most three quarters of
# the trace are still in the page cache (the fixture resident: mincore), and the trace
# reads back whole.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/pc.trace"
"$SRVSCOPE" record -o "$f" -- "$FIXTURES/rec_pingpong" 300000 0 >"$TMP/pp.out" 2>"$TMP/rec.err"
ok $? "record 300000 round trips"
like "$(cat "$TMP/rec.err")" "lost 0 events and 0 stacks" "nothing lost"
read -r res size < <("$FIXTURES/resident" "$f")
diag "trace: $size bytes, $res in the page cache"
check "the trace is tens of MB ($size bytes)" [ "${size:-0}" -gt 20000000 ]
check "at most three quarters of it are left in the page cache ($res of $size)" \
	[ "${res:-$size}" -le $((size * 3 / 4)) ]
out=$("$SRVSCOPE" sched "$f")
ok $? "sched reads the trace back"
like "$out" "lost 0 events and 0 stacks" "and finds it whole"
done_testing
