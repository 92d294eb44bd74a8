#!/bin/bash
# A recording streams its trace out of the page cache, so that a long recording does not
# push the server's own pages out: written past it (O_DIRECT, trace/writeq.c) where the
# file system takes it, else (SRVSCOPE_WRITE_BUFFERED=1 forces it) sent to the disk and
# dropped from the cache a megabyte at a time (stream_out). Two threads ping-pong 300000
# times (tens of MB of events over two seconds and more), in each mode: at the end, at
# most three quarters of the trace are still in the page cache (the fixture resident:
# mincore), and the trace reads back whole, events and stacks, the same as in the other mode
# up to the run's own variation.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

for mode in direct buffered; do
	f="$TMP/pc-$mode.trace"
	env $([ "$mode" = buffered ] && echo SRVSCOPE_WRITE_BUFFERED=1) \
		"$SRVSCOPE" record -o "$f" -- "$FIXTURES/rec_pingpong" 300000 0 >"$TMP/pp.out" 2>"$TMP/rec.err"
	ok $? "$mode: record 300000 round trips"
	like "$(cat "$TMP/rec.err")" "lost 0 events and 0 stacks" "$mode: nothing lost"
	read -r res size < <("$FIXTURES/resident" "$f")
	diag "$mode: trace: $size bytes, $res in the page cache"
	check "$mode: the trace is tens of MB ($size bytes)" [ "${size:-0}" -gt 20000000 ]
	check "$mode: at most three quarters of it are left in the page cache ($res of $size)" \
		[ "${res:-$size}" -le $((size * 3 / 4)) ]
	out=$("$SRVSCOPE" sched "$f" 2>"$TMP/sched.err")
	ok $? "$mode: sched reads the trace back"
	like "$out" "lost 0 events and 0 stacks" "$mode: and finds it whole"
	is "$(cat "$TMP/sched.err")" "" "$mode: with no warning (no damaged or cut section)"
	# ping and pong each switch out about once a round trip (a few round trips find
	# the other already waiting): a trace cut or a megabyte lost would be thousands fewer
	sw=$(printf '%s\n' "$out" | awk '/TOTAL/ { print $5 }')
	check "$mode: 95 % of 600000 switches or more ($sw)" [ "${sw:-0}" -ge 570000 ]
done
done_testing
