#!/bin/bash
# 'srvscope cpu' live in a terminal (tmux): the functions view of burn7030, the keys that
# switch to components, threads and cores and expand call paths, q giving the terminal back;
# and its cost: at most 5 % of a core at a 1 s refresh on a 1000-thread process.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
command -v tmux >/dev/null || skip_all "tmux is needed to drive the live view"

SOCK="srvscope-t74-$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"; cleanup' EXIT
screen_of() { tm capture-pane -p -t "$1"; }
wait_screen() {
	local i
	for i in $(seq 100); do
		screen_of "$1" | grep -Eq -- "$2" && break
		sleep 0.1
	done
	screen_of "$1"
}

start_fixture "$FIXTURES/burn7030" 60 || exit 1
tm new-session -d -s live -x 160 -y 50 \
	"stty -g >$TMP/stty.before; $SRVSCOPE cpu -p $FPID -i 500 2>$TMP/live.err; echo \$? >$TMP/live.rc; stty -g >$TMP/stty.after; sleep 600"
s=$(wait_screen live 'burn_seventy')
like "$s" 'srvscope cpu - [0-9]+ samples .* view: functions' "header"
like "$s" '^\+ +[0-9.]+ +[0-9.]+ +\[\.\] burn7030 +burn_seventy' "functions: self, total, [.], module"
# the first row is selected: burn_seventy, the heaviest, once a second of samples is in
sleep 1
tm send-keys -t live Enter
s=$(wait_screen live '<- main')
like "$s" '^- .*burn_seventy' "Enter expands the selected function"
like "$s" '[0-9.]+% +<- main <- ' "its call paths"
tm send-keys -t live c
s=$(wait_screen live 'view: components')
like "$s" '^  data_copy +[0-9.]+ %' "c: components"
tm send-keys -t live t
s=$(wait_screen live 'view: threads')
like "$s" "^ +$FPID +$FPID burn7030 " "t: threads"
tm send-keys -t live p
s=$(wait_screen live 'view: cores')
like "$s" '^ +0 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ ' "p: cores with core, package, node"
tm send-keys -t live q
for _ in $(seq 50); do [ -s "$TMP/live.rc" ] && break; sleep 0.1; done
is "$(cat "$TMP/live.rc" 2>/dev/null)" 0 "q: exit 0"
check "terminal settings as before" cmp -s "$TMP/stty.before" "$TMP/stty.after"
is "$(tm display -p -t live '#{alternate_on}')" 0 "back from the alternate screen"

# The cost on 1000 threads: CPU time of srvscope over 10 refreshes.
start_fixture "$FIXTURES/threads1000" 1000 1 || exit 1
big=$FPID
tm new-session -d -s big -x 160 -y 50 "$SRVSCOPE cpu -p $big -i 1000 -n 40 2>$TMP/big.err; sleep 600"
s=$(wait_screen big 'snapshot [1-9]')
like "$s" 'snapshot [1-9]' "the live view of 1000 threads refreshes" || sed 's/^/#   /' "$TMP/big.err"
spid=$(pgrep -f "^$SRVSCOPE cpu -p $big" | head -1)
a=$(awk '{print $14 + $15}' /proc/$spid/stat)
sleep 10
b=$(awk '{print $14 + $15}' /proc/$spid/stat 2>/dev/null)
hz=$(getconf CLK_TCK)
pct=$(((${b:-0} - a) * 100 * 100 / hz / 10))
diag "srvscope used $((b - a)) ticks of $hz/s in 10 s: $((pct / 100)).$((pct % 100)) % of a core"
check "at most 5 % of a core on 1000 threads at 1 s" [ -n "$b" ] && [ $pct -le 500 ]
like "$(screen_of big)" 'busy_thread' "and it shows the busy thread"
tm send-keys -t big q

# Piped: one snapshot per interval (text).
out=$("$SRVSCOPE" cpu -p $big -i 200 -n 2 2>&1)
is "$(printf '%s\n' "$out" | grep -c '^srvscope cpu: ')" 2 "piped: two text snapshots"
# Every sample keeps its stacks, snapshot after snapshot, with -a at 4999 Hz: the stacks
# are named by the hash of their frames (a stack-id map lost 1-5 % of them here, to
# buckets another stack held and to ids deleted after a read while counted again).
"$SRVSCOPE" cpu -a -F 4999 -i 500 -n 4 -f json >"$TMP/all.json" 2>"$TMP/all.err"
ok $? "piped -a: four JSON snapshots"
out=$(python3 -c '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
print(len(docs), sum(d["samples"] for d in docs), sum(d["stacks_lost"] for d in docs),
      sum(f["self"] for d in docs for f in d["functions"] if f["function"] == "[unknown]"))
' "$TMP/all.json")
read -r n samples lost unknown <<<"$out"
diag "-a: $n snapshots, $samples samples, $lost lost their stack, $unknown [unknown]"
check "with samples" [ "${samples:-0}" -gt 1000 ]
is "$lost" 0 "no sample lost its stack"
done_testing
