#!/bin/bash
# Thread names are the target's to choose: a process names its threads with every byte
# 0x01-0x1f and 0x7f, terminal escapes (window title, screen clear), a newline, ';' and a
# byte that is not UTF-8. No output of stacks, top, record's reports carries a raw control
# byte, JSON stays valid, SVG well-formed, and folded lines keep one frame per name. The
# same holds for the path of a file it blocks on.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
chk() { # DESCRIPTION KIND FILE [NAMED]
	local d=$1; shift
	local why
	why=$(python3 "$TOP/tests/integration/check_names.py" "$@" 2>&1)
	ok $? "$d"
	[ -z "$why" ] || echo "#   $why"
}
N=8 # threads the fixture names

start_fixture "$FIXTURES/evilnames" 30 || { ok 1 "fixture starts"; done_testing; }
is "$(awk '/^threads/ {print $2}' "$FOUT")" $N "the fixture named $N threads"

for mode in ptrace nostop; do
	for fmt in text raw folded json speedscope; do
		timeout 20 "$SRVSCOPE" stacks -p "$FPID" --mode=$mode --format=$fmt >"$TMP/s.$fmt" 2>"$TMP/err"
		ok $? "stacks --mode=$mode --format=$fmt runs"
		case $fmt in
		folded) chk "stacks $mode folded: safe, one frame per name" folded "$TMP/s.$fmt" $N ;;
		json | speedscope) chk "stacks $mode $fmt: safe, valid JSON" json "$TMP/s.$fmt" ;;
		*) chk "stacks $mode $fmt: no control byte" text "$TMP/s.$fmt" ;;
		esac
		[ $fmt = text ] || continue
		for want in '\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f/' \
			'\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e/' '\\x1f\\x7f/'; do
			like "$(cat "$TMP/s.text")" "$want" "stacks $mode: the name $want shown whole"
		done
	done
done
timeout 20 "$SRVSCOPE" top -p "$FPID" -n 2 -i 50 | cat >"$TMP/top.text"
chk "top piped: no control byte" text "$TMP/top.text"
timeout 20 "$SRVSCOPE" top -p "$FPID" -n 2 -i 50 --format=json >"$TMP/top.json"
chk "top piped json: valid lines" jsonl "$TMP/top.json"

# The full-screen top in a terminal: the names neither retitle the window nor clear it.
if command -v tmux >/dev/null; then
	SOCK="srvscope-t61-$$"
	trap 'tmux -L "$SOCK" kill-server 2>/dev/null; cleanup' EXIT
	tmux -L "$SOCK" new-session -d -s top -x 200 -y 60 \
		"printf '\\033]0;clean\\007'; $SRVSCOPE top -p $FPID -i 100; sleep 60"
	for _ in $(seq 100); do
		tmux -L "$SOCK" capture-pane -p -t top | grep -q 'pwned' && break
		sleep 0.1
	done
	like "$(tmux -L "$SOCK" capture-pane -p -t top)" '\\x1b]0\\x3bpwned' "top shows the escaped name"
	is "$(tmux -L "$SOCK" display -p -t top '#{pane_title}')" clean "top: the window title is untouched"
	tmux -L "$SOCK" kill-server
else
	skip_all "tmux is needed to drive top in a terminal"
fi

f="$TMP/names.trace"
timeout 30 "$SRVSCOPE" record -p "$FPID" -d 1 -o "$f" >/dev/null 2>"$TMP/err"
ok $? "record the fixture"
run() { # FILE ARGS...: a report into FILE
	local out=$1; shift
	timeout 30 "$SRVSCOPE" "$@" "$f" >"$out" 2>"$TMP/err"
	ok $? "$* runs"
}
run "$TMP/b.text" blocking --stacks
chk "blocking --stacks: no control byte" text "$TMP/b.text"
like "$(cat "$TMP/b.text")" 'evilnames-\\x1b]0\\x3bfifo\\x07' "blocking: the FIFO's path (the target's choice) escaped"
run "$TMP/b.json" blocking --format=json
chk "blocking json: valid" json "$TMP/b.json"
run "$TMP/sc.text" sched
chk "sched: no control byte" text "$TMP/sc.text"
run "$TMP/sc.json" sched --format=json
chk "sched json: valid" json "$TMP/sc.json"
run "$TMP/fl.folded" flame --kind=off
chk "flame folded: safe, one frame per name" folded "$TMP/fl.folded" $N
run "$TMP/fl.svg" flame --kind=off --format=svg
chk "flame svg: well-formed" svg "$TMP/fl.svg"
run "$TMP/fl.json" flame --kind=off --format=speedscope
chk "flame speedscope: valid JSON" json "$TMP/fl.json"
run "$TMP/tl.json" timeline
chk "timeline: valid JSON" json "$TMP/tl.json"

# srvscope model of the trace: the clusters are named after the threads, the JSON lists
# every thread (a name that is not UTF-8 once made jansson drop its object), and the
# summary keeps one line per item (a newline in a name used to break one).
run "$TMP/m.text" model -o "$TMP/m.json"
check "model summary: no control byte, valid UTF-8" python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
d.decode("utf-8")
sys.exit(any((b < 32 and b != 10) or b == 127 for b in d))' "$TMP/m.text"
chk "model json: valid" json "$TMP/m.json"
check "model summary: every line after the first indented (no name broke one)" \
	awk 'NR > 1 && !/^  / { bad = 1 } END { exit bad }' "$TMP/m.text"
is "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for t in d["threads"] if t["comm"] not in ("evilnames", "fifo-reader", "fifo-writer")))' "$TMP/m.json")" $N \
	"model json: all $N named threads listed"
like "$(cat "$TMP/m.json")" '"comm": ?"bad\\\\xff utf8"' "model json: the name that is not UTF-8, escaped"

# Every report shows a thread's whole name, escaped, not the first 16 bytes of it: 15
# control bytes are 60 characters once escaped. In JSON the backslash itself is escaped.
run "$TMP/fl.off" flame --kind=off
for want in '\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f' \
	'\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e' '\\x1f\\x7f'; do
	json=${want//\\\\/\\\\\\\\}
	like "$(cat "$TMP/b.text")" "task $want \\[pid" "blocking: the name $want shown whole"
	like "$(cat "$TMP/b.json")" "\"comm\": ?\"$json\"" "blocking json: the name $want whole"
	like "$(cat "$TMP/sc.text")" " $want:[0-9]+ " "sched: the name $want shown whole"
	like "$(cat "$TMP/sc.json")" "\"comm\": ?\"$json\"" "sched json: the name $want whole"
	like "$(cat "$TMP/fl.off")" "^$want;" "flame folded: the name $want whole"
	like "$(cat "$TMP/tl.json")" "\"$json\"" "timeline: the name $want whole"
done

done_testing
