#!/bin/bash
# srvscope top in a real terminal (tmux): stacks and shares on screen, the keys, resize,
# and the terminal given back as it was on q, on -n, on SIGTERM and on ^C. Piped: one
# snapshot per interval in --format (json: one document per line).
. "$(dirname "$0")/lib.sh"
need_root
command -v tmux >/dev/null || skip_all "tmux is needed to drive top in a terminal"
command -v python3 >/dev/null || skip_all "python3 is needed to check the JSON"

SOCK="srvscope-t31-$$"
tm() { tmux -L "$SOCK" "$@"; }
# The server and its socket go with the script.
trap 'tm kill-server 2>/dev/null; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"; cleanup' EXIT

start_fixture "$FIXTURES/stackfix-c-pie" || { ok 1 "fixture starts"; done_testing; }

# run_top NAME ARGS...: top in a fresh tmux session NAME; its exit status goes to
# $TMP/NAME.rc, the terminal settings before and after to $TMP/NAME.stty.{before,after}.
run_top() {
	local name=$1; shift
	rm -f "$TMP/$name".*
	# The shell keeps running after top (trap): ^C goes to the whole foreground group.
	tm new-session -d -s "$name" -x 160 -y "${ROWS:-60}" \
		"stty -g >$TMP/$name.stty.before; echo \$\$ >$TMP/$name.pid; exec sh -c 'trap : INT TERM; $SRVSCOPE top $* 2>$TMP/$name.err; echo \$? >$TMP/$name.rc; stty -g >$TMP/$name.stty.after; sleep 600'"
}
screen_of() { tm capture-pane -p -t "$1"; }
# wait_screen NAME REGEX: until the screen shows REGEX (10 s at most); prints the screen.
wait_screen() {
	local i
	for i in $(seq 100); do
		screen_of "$1" | grep -Eq -- "$2" && break
		sleep 0.1
	done
	screen_of "$1"
}
wait_file() { local i; for i in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
# restored NAME DESC: top has exited 0 and left the terminal as it found it.
restored() {
	wait_file "$TMP/$1.rc"
	is "$(cat "$TMP/$1.rc" 2>/dev/null)" 0 "$2: exit status 0"
	check "$2: terminal settings (stty) as before" cmp -s "$TMP/$1.stty.before" "$TMP/$1.stty.after"
	is "$(tm display -p -t "$1" '#{alternate_on}')" 0 "$2: back from the alternate screen"
	check "$2: cursor visible again" [ "$(tm display -p -t "$1" '#{cursor_flag}')" = 1 ]
	if [ -s "$TMP/$1.err" ]; then sed 's/^/#   stderr: /' "$TMP/$1.err"; fi
}

ROWS=100 run_top main -p "$FPID" -i 200
s=$(wait_screen main 'sleep_inner')
like "$s" 'srvscope top - pid [0-9]+ \(fix-main\) +threads 14 +mode nostop' "header: process, threads, mode"
like "$s" 'samples [0-9]+' "header: samples taken"
like "$s" 'stall 0' "header: stall per sample (none in nostop)"
like "$s" '28\.6% +4 +S clock_nanosleep +fix-sleep x4' "the 4 sleepers: 28.6%, thread count, state, names"
like "$s" '21\.4% +3 +S futex +fix-mutex x3' "the 3 mutex waiters: 21.4%"
like "$s" '7\.1% +1 +R +fix-spin' "the spinning thread, running"
like "$s" '#2 +sleep_inner' "frames, innermost first"
like "$s" '#0 +__GI___lll_lock_wait|#0 +__lll_lock_wait' "libc frame innermost for the mutex waiters"

tm send-keys -t main t
s=$(wait_screen main 'TID')
like "$s" "SHARE +TID" "t: per-thread view"
like "$s" "7\.1% +$FPID +S pause +fix-main" "t: one row per thread with its tid"
tm send-keys -t main t c
s=$(wait_screen main 'cumulative over')
like "$s" 'shares: cumulative over [0-9]+ samples?' "c: cumulative shares"
tm send-keys -t main c
wait_screen main 'shares: last sample' >/dev/null

tm send-keys -t main / p i p e
s=$(wait_screen main 'filter: pipe_')
like "$s" 'filter: pipe_' "/: the filter being typed"
tm send-keys -t main Enter
s=$(wait_screen main 'filter: pipe +\(')
like "$s" 'fix-pipe x2' "filter: the pipe readers stay"
check "filter: the others are gone" bash -c "! grep -q fix-sleep <<<'$s'"
tm send-keys -t main k
s=$(wait_screen main '\[k\]')
like "$s" '#[0-9]+ +\[k\] [a-z_]*pipe_read' "k: kernel frames shown, the pipe read path"
like "$s" 'kernel: shown' "k: header says so"
tm send-keys -t main k Escape
s=$(wait_screen main 'fix-sleep')
like "$s" 'kernel: hidden' "k again: kernel frames hidden"
check "Esc: the filter is cleared" bash -c "grep -q 'fix-sleep x4' <<<'$s'"

tm send-keys -t main Home Enter
s=$(wait_screen main '^ \+ ')
like "$s" '^ \+ +28\.6% .*\| clock_nanosleep < __nanosleep < sleep_inner' \
	"Enter: the selected group collapses to one line"
tm send-keys -t main Down Enter
s=$(wait_screen main '^ \+ +21\.4%')
like "$s" '^ \+ +21\.4% +3 ' "Down + Enter: the next group collapses too"

tm send-keys -t main Space
s=$(wait_screen main 'PAUSED')
n1=$(sed -n 's/.*samples \([0-9]*\).*/\1/p' <<<"$s" | head -1)
sleep 0.7
n2=$(screen_of main | sed -n 's/.*samples \([0-9]*\).*/\1/p' | head -1)
like "$s" '\[PAUSED\]' "space: paused"
is "$n2" "$n1" "space: no sample taken while paused"
tm send-keys -t main Space
wait_screen main 'samples' >/dev/null

tm resize-window -t main -x 90 -y 20 2>/dev/null || tm resize-pane -t main -x 90 -y 20
sleep 0.6
s=$(screen_of main)
is "$(printf '%s\n' "$s" | wc -l)" 20 "resize: the screen follows the new height"
like "$(printf '%s\n' "$s" | tail -1)" '^ q quit' "resize: the key help on the last line"

tm send-keys -t main q
restored main "q"
check "q: the screen is gone" bash -c "! tmux -L '$SOCK' capture-pane -p -t main | grep -q 'srvscope top -'"

# -n: exits by itself after so many refreshes.
run_top nrun -p "$FPID" -i 100 -n 3
restored nrun "-n 3"

# Signals: the handler only sets a flag; the loop restores the terminal.
run_top term -p "$FPID" -i 200
wait_screen term 'sleep_inner' >/dev/null
kill -TERM "$(pgrep -P "$(cat "$TMP/term.pid")" srvscope)"
restored term "SIGTERM"
run_top intr -p "$FPID" -i 200
wait_screen intr 'sleep_inner' >/dev/null
tm send-keys -t intr C-c
restored intr "^C (SIGINT)"

# Messages go to stderr after the screen is gone: the target exits under top.
start_fixture "$FIXTURES/stackfix-c-O2" || ok 1 "second fixture starts"
run_top gone -p "$FPID" -i 100
wait_screen gone 'sleep_inner' >/dev/null
kill -KILL "$FPID"
wait "$FPID" 2>/dev/null
wait_file "$TMP/gone.rc"
# What top showed was good: exit 0, as stacks does (docs/srvscope.1, EXIT STATUS).
is "$(cat "$TMP/gone.rc")" 0 "target gone: exit status 0, as stacks"
like "$(cat "$TMP/gone.err")" "^srvscope: process $FPID \\([^)]*\\) exited after [0-9]+ samples?\$" \
	"target gone: says so on stderr, in one line"
is "$(tm display -p -t gone '#{alternate_on}')" 0 "target gone: terminal restored"
start_fixture "$FIXTURES/stackfix-c-pie" || ok 1 "fixture restarts"

# Piped: one snapshot per interval.
"$SRVSCOPE" top -p "$FPID" -n 3 -i 100 --format=json >"$TMP/top.json" 2>"$TMP/err" </dev/null
is "$?" 0 "piped json: exits 0"
is "$(wc -l <"$TMP/top.json" | tr -d ' ')" 3 "piped -n 3 --format=json: 3 lines"
python3 - "$TMP/top.json" >"$TMP/json.check" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    sleepers = [g for g in d["groups"] if any(t["name"] == "fix-sleep" for t in g["threads"])]
    print(d["mode"], d["samples"], d["threads"], sleepers[0]["count"] if sleepers else 0,
          "frames" if all("frames" in g for g in d["groups"]) else "noframes")
EOF
is "$(sort -u "$TMP/json.check")" "nostop 1 14 4 frames" \
	"each line: a JSON document of one sample, same schema as stacks"
"$SRVSCOPE" top -p "$FPID" -n 2 -i 100 >"$TMP/top.raw" 2>"$TMP/err" </dev/null
is "$?" 0 "piped default format: exits 0"
is "$(grep -c '^Thread [0-9]* (LWP' "$TMP/top.raw")" 28 "piped default is raw: 14 thread blocks per snapshot, 2 snapshots"
like "$(grep -m1 -A3 'fix-sleep' "$TMP/top.raw")" '#[0-9]+ +0x[0-9a-f]+ in (clock_nanosleep|__nanosleep)' \
	"raw: gdb-style frame lines"
"$SRVSCOPE" top -p "$FPID" -n 1 --format=folded >"$TMP/top.folded" 2>"$TMP/err" </dev/null
like "$(cat "$TMP/top.folded")" '^fix-sleep;.*sleep_thread;sleep_outer;sleep_inner;.* 4$' "piped folded"

# Bad options: one line, non-zero.
"$SRVSCOPE" top -p "$FPID" -i abc >"$TMP/out" 2>"$TMP/err"
rc=$?
check "bad -i: non-zero exit" [ "$rc" -ne 0 ]
like "$(cat "$TMP/err")" "invalid value 'abc' for -i" "bad -i: says which option"
"$SRVSCOPE" top >"$TMP/out" 2>"$TMP/err"
check "no -p: non-zero exit" [ $? -ne 0 ]
like "$(cat "$TMP/err")" "-p PID" "no -p: says how to give the pid"
done_testing
