#!/bin/bash
# Checked unwinds: rec_garbage's thread "garbage" sleeps in a function without unwind table
# entry whose rbp points at a fake frame with the return address 0x1234. Every mode and
# format ends that stack at garbage_sleep with a [truncated] mark and never prints 0x1234
# as a frame: stacks (nostop, ptrace; text, raw, folded, json, speedscope) and record
# (--call-graph=dwarf and fp; flame folded, svg and speedscope, blocking text and json).
. "$(dirname "$0")/lib.sh"
need_root
need_btf

start_fixture "$FIXTURES/rec_garbage" || ok 1 "start rec_garbage"

for mode in nostop ptrace; do
	for fmt in text raw folded json speedscope; do
		"$SRVSCOPE" stacks -p "$FPID" --mode=$mode --format=$fmt -q >"$TMP/out" 2>"$TMP/err"
		ok $? "stacks --mode=$mode --format=$fmt"
		check "$mode $fmt: the garbage thread's stack is marked [truncated]" \
			grep -q '\[truncated\]' "$TMP/out"
		check "$mode $fmt: 0x1234 is not shown as a frame" \
			sh -c "! grep -q '0x1234\|0x0*1234 in' '$TMP/out'"
	done
	"$SRVSCOPE" stacks -p "$FPID" --mode=$mode --format=folded -q >"$TMP/out"
	like "$(grep '^garbage;' "$TMP/out")" '^garbage;\[truncated\];garbage_sleep [0-9]+$' \
		"$mode folded: the mark stands for the outermost frames, garbage_sleep follows"
done
like "$(states_of "$FPID")" '^[SR]+$' "the fixture still runs, nothing stopped"

for cg in dwarf fp; do
	"$SRVSCOPE" record -p "$FPID" -d 1 --call-graph=$cg -o "$TMP/$cg.trace" >/dev/null 2>&1
	ok $? "record --call-graph=$cg"
	"$SRVSCOPE" flame "$TMP/$cg.trace" --kind=off --comm garbage >"$TMP/f.folded"
	like "$(cut -d';' -f1-3 "$TMP/f.folded" | sort -u)" '^garbage;\[truncated\];garbage_sleep$' \
		"$cg: every folded stack of the thread is garbage;[truncated];garbage_sleep;..."
	for fmt in svg speedscope; do
		"$SRVSCOPE" flame "$TMP/$cg.trace" --kind=off --comm garbage --format=$fmt >"$TMP/f.$fmt"
		check "$cg: flame --format=$fmt has the mark" grep -q '\[truncated\]' "$TMP/f.$fmt"
	done
	for fmt in text json; do
		"$SRVSCOPE" blocking "$TMP/$cg.trace" --comm garbage --stacks --format=$fmt >"$TMP/b.$fmt"
		check "$cg: blocking --stacks --format=$fmt has the mark" \
			grep -q '\[truncated\]' "$TMP/b.$fmt"
	done
	check "$cg: 0x1234 is in no report" \
		sh -c "! grep -q '0x1234' '$TMP/f.folded' '$TMP/f.svg' '$TMP/f.speedscope' '$TMP/b.text' '$TMP/b.json'"
done

done_testing
