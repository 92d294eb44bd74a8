#!/bin/bash
# A thread that blocks at one place only every few seconds keeps its user stack in every
# episode, while another thread's new stacks make the recorder's user side forget ids
# unused for a while: the BPF side takes such a stack again instead of reusing an id that
# no longer resolves (which gave episodes with a kernel stack and no user frame at all).
. "$(dirname "$0")/lib.sh"
need_root
need_btf

start_fixture "$FIXTURES/rec_slowplace" 2500 || exit 1
f="$TMP/slow.trace"
"$SRVSCOPE" record -p "$FPID" -d 8 -o "$f" 2>"$TMP/err"
ok $? "record -p the fixture for 8 s"
"$SRVSCOPE" flame "$f" --kind=off --tid "$FPID" >"$TMP/off.folded"
ok $? "flame --kind=off of the sleeping thread"
read -r with all <<<"$(awk '{ n += $NF } /;main;nap_long;/ { w += $NF } END { print w + 0, n + 0 }' "$TMP/off.folded")"
diag "$with of $all us off-CPU under main;nap_long"
check "the sleeper was recorded blocked for most of the 8 s ($all us)" [ "$all" -gt 6000000 ]
check "every one of its waits has its user stack (main;nap_long: $with of $all us)" [ "$with" = "$all" ]
done_testing
