#!/bin/bash
# Lost events are counted and always reported: a ring buffer made tiny (--buffer-size 4K)
# and drained only every 300 ms (--read-timer: srvscope is never woken to drain it sooner,
# however fast it would be) under a fast ping-pong must lose events, and the count (per CPU) must show at the end of
# the recording, in the file, and in every report that reads it.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/lost.trace"
"$SRVSCOPE" record --buffer-size 4K --read-timer 300 -o "$f" -- "$FIXTURES/rec_pingpong" 5000 0 >/dev/null 2>"$TMP/err"
ok $? "record with a 4 KiB ring buffer read every 300 ms"
err=$(cat "$TMP/err")
like "$err" "lost [1-9][0-9]* events and [0-9]+ stacks to a full ring buffer \(cpu[0-9]+: [0-9]+" \
	"record reports the lost events per CPU"
like "$err" "larger --buffer-size" "and what to do about it"
lost=$(sed -n 's/.*lost \([0-9]*\) events.*/\1/p' "$TMP/err" | tail -1)
lost_stacks=$(sed -n 's/.*lost [0-9]* events and \([0-9]*\) stacks.*/\1/p' "$TMP/err" | tail -1)

out=$("$SRVSCOPE" sched "$f" 2>"$TMP/sched.err")
like "$out" "lost $lost events" "sched reports the same count"
like "$(cat "$TMP/sched.err")" "warning: lost $lost events" "and warns about it"
like "$("$SRVSCOPE" blocking "$f" 2>/dev/null | tail -1)" "lost $lost events" "blocking reports it"
like "$("$SRVSCOPE" blocking --format=json "$f" 2>/dev/null | tr -d '\n ')" "\"lost_events\":$lost,\"lost_stacks\":$lost_stacks" \
	"blocking's JSON has lost_events and lost_stacks"
like "$("$SRVSCOPE" sched --format=json "$f" 2>/dev/null | tr -d '\n ')" "\"lost_events\":$lost,\"lost_stacks\":$lost_stacks" \
	"sched's JSON has lost_events and lost_stacks"
like "$("$SRVSCOPE" flame --kind=off --format=svg "$f" 2>/dev/null)" "lost $lost events" \
	"the flame graph's subtitle has it"

# With the default buffer the same load loses nothing.
"$SRVSCOPE" record -o "$TMP/ok.trace" -- "$FIXTURES/rec_pingpong" 30000 0 >/dev/null 2>"$TMP/err2"
like "$(cat "$TMP/err2")" "lost 0 events and 0 stacks" "the default buffer loses nothing"
done_testing
