#!/bin/bash
# User stacks in a recording come out whole where frame pointers are missing: the exact-stack
# fixtures (C and C++, PIE, stripped with a debuglink, -O2 -fomit-frame-pointer; libc has no
# frame pointers either) recorded with the default --call-graph=dwarf give, for every blocked
# thread, the fixture's exact chain of functions from the thread's start down to the libc
# function it blocks in, every frame named, in 'flame --kind=off'; on-CPU samples of the
# spinning thread do the same in 'flame --kind=on'; threads blocked since before a recording
# (-p) have theirs too. --call-graph=fp on the -O2 build shows what frame pointers alone give.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
command -v python3 >/dev/null || skip_all "python3 is needed to check the stacks"

# run_checker ARGS...: expect_folded.py's TAP lines, numbered after ours.
# When a check fails, the heaviest stacks of the folded file and what the recorder said go to
# stderr (prove shows it): a CI run once failed every blocked thread of c-debuglink (no
# weight in stacks with the chain) where the on-CPU checks of the same trace passed.
run_checker() {
	local out folded
	out=$(python3 "$TOP/tests/integration/expect_folded.py" "$@")
	printf '%s\n' "$out" | grep -v '^# next'
	_n=$(($(printf '%s\n' "$out" | sed -n 's/^# next //p') - 1))
	_failed=$((_failed + $(printf '%s\n' "$out" | grep -c '^not ok')))
	if printf '%s\n' "$out" | grep -q '^not ok'; then
		[ "$1" = --on-cpu ] && shift
		folded=$2
		{
			echo "# $5 the heaviest stacks of $folded:"
			awk '{ print $NF, $0 }' "$folded" 2>/dev/null | sort -rn | head -8 | cut -c1-400 |
				sed 's/^/#   /'
			echo "# the recorder said:"
			sed 's/^/#   /' "$TMP/err" 2>/dev/null | tail -5
		} >&2
	fi
}
blocked="fix-main fix-mutex fix-cond fix-pipe fix-epoll fix-sleep"
# Weights are checked as shares (a loaded host starts the fixture late and gives the spinner
# little CPU): most of each thread's weight must be in stacks with its exact chain.

for lang in c cxx; do
	for build in pie debuglink O2; do
		fix="$FIXTURES/stackfix-$lang-$build"
		f="$TMP/$lang-$build.trace"
		"$SRVSCOPE" record -d 1 --on-cpu=199 -o "$f" -- "$fix" >/dev/null 2>"$TMP/err"
		ok $? "record $lang-$build"
		like "$(cat "$TMP/err")" "lost 0 events and 0 stacks" "$lang-$build: nothing lost"
		"$SRVSCOPE" flame "$f" --kind=off >"$TMP/off.folded"
		ok $? "$lang-$build: flame --kind=off"
		run_checker "$TOP/tests/fixtures/stackfix-$lang.expect" "$TMP/off.folded" \
			$((_n + 1)) 90 "$lang-$build off: " $blocked
		"$SRVSCOPE" flame "$f" --kind=on >"$TMP/on.folded"
		ok $? "$lang-$build: flame --kind=on"
		run_checker --on-cpu "$TOP/tests/fixtures/stackfix-$lang.expect" "$TMP/on.folded" \
			$((_n + 1)) 50 "$lang-$build on: " fix-spin
	done
done

# The static binary (BPF, libunwind and libelf inside) records the same stacks.
if [ -z "${SRVSCOPE_NO_STATIC:-}" ]; then
	"${SRVSCOPE}-static" record -d 1 -o "$TMP/static.trace" -- "$FIXTURES/stackfix-c-O2" >/dev/null 2>&1
	ok $? "the static binary records c-O2"
	"${SRVSCOPE}-static" flame "$TMP/static.trace" --kind=off >"$TMP/static.folded"
	run_checker "$TOP/tests/fixtures/stackfix-c.expect" "$TMP/static.folded" $((_n + 1)) 90 \
		"static c-O2 off: " $blocked
fi

# Threads blocked before the recording starts (and all through it) have their stacks from a
# snapshot the recorder takes with the BPF task iterator as it starts (-p).
start_fixture "$FIXTURES/stackfix-cxx-O2" || ok 1 "start stackfix-cxx-O2"
"$SRVSCOPE" record -p "$FPID" -d 1 -o "$TMP/p.trace" >/dev/null 2>"$TMP/err"
ok $? "record -p of a process whose threads are already blocked"
like "$(states_of "$FPID")" '^[SR]+$' "the fixture still runs, nothing stopped"
"$SRVSCOPE" flame "$TMP/p.trace" --kind=off >"$TMP/p.folded"
run_checker "$TOP/tests/fixtures/stackfix-cxx.expect" "$TMP/p.folded" $((_n + 1)) 90 \
	"already blocked: " fix-main fix-mutex fix-cond fix-pipe fix-epoll
kill -KILL "$FPID"
wait "$FPID" 2>/dev/null

# A library loaded while recording, after the process's maps were last read: its frames
# fall outside every known mapping, the recorder reads the maps again and unwinds anew (or,
# on a host so loaded that the recorder lags, reports name them from a later reading).
start_fixture "$FIXTURES/dlopener" || ok 1 "start dlopener"
"$SRVSCOPE" record -p "$FPID" -d 2.5 -o "$TMP/dl.trace" >/dev/null 2>"$TMP/err" &
rec=$!
sleep 1.2
kill -USR1 "$FPID"
wait $rec
ok $? "record -p while the process loads a library"
like "$(cat "$FOUT")" "loaded" "the library was loaded during the recording"
"$SRVSCOPE" flame "$TMP/dl.trace" --kind=off --comm dl-lib >"$TMP/dl.folded"
like "$(cat "$TMP/dl.folded")" "^dl-lib;clone3;start_thread;lib_thread;lib_outer;lib_inner;read;" \
	"the library's thread is unwound through the library loaded mid-recording"
kill -KILL "$FPID"
wait "$FPID" 2>/dev/null

# A 24 KiB stack frame whose pages were never touched: the copy cannot fault them in, so it
# zero-fills them and goes on to the return address above (stopping at the first missing
# page left the stack at big_frame).
"$SRVSCOPE" record -d 1 -o "$TMP/bf.trace" -- "$FIXTURES/rec_bigframe" 1 >/dev/null 2>&1
ok $? "record the big-frame fixture"
like "$("$SRVSCOPE" flame "$TMP/bf.trace" --kind=off --comm bigframe)" \
	"^bigframe;clone3;start_thread;thread;big_outer;big_frame;big_inner;read;" \
	"the stack unwinds through a frame of absent pages"

# Frame pointers alone lose the -O2 build's chains (the contrast that makes dwarf the default).
f="$TMP/fp.trace"
"$SRVSCOPE" record -d 0.5 --call-graph=fp -o "$f" -- "$FIXTURES/stackfix-c-O2" >/dev/null 2>&1
ok $? "record --call-graph=fp"
"$SRVSCOPE" flame "$f" --kind=off >"$TMP/fp.folded"
whole=$(grep -c "start_thread;mutex_thread;mutex_outer;mutex_middle;mutex_inner;" "$TMP/fp.folded")
diag "frame pointers: $whole whole mutex chains; $(grep '^fix-mutex' "$TMP/fp.folded" | head -1 | cut -c1-120)"
is "$(grep -c '^fix-mutex' "$TMP/fp.folded" | sed 's/^0$/none/;s/^[0-9]*$/some/')" some \
	"--call-graph=fp still records the blocked threads"
info=$(strings "$f" | grep -m1 "^call_graph=")
is "$info" "call_graph=fp" "the trace says how its user stacks were taken"

# A smaller dump still works for shallow stacks; bad values are refused with a remedy.
"$SRVSCOPE" record -d 1 --call-graph=dwarf,4K -o "$TMP/small.trace" -- "$FIXTURES/stackfix-c-pie" >/dev/null 2>&1
ok $? "record --call-graph=dwarf,4K"
"$SRVSCOPE" flame "$TMP/small.trace" --kind=off >"$TMP/small.folded"
run_checker "$TOP/tests/fixtures/stackfix-c.expect" "$TMP/small.folded" $((_n + 1)) 90 \
	"dwarf,4K: " fix-pipe
for bad in dwarf,1 dwarf,128K dwarf,x lbr; do
	err=$("$SRVSCOPE" record --call-graph=$bad -d 1 -a -o "$TMP/bad.trace" 2>&1)
	rc=$?
	like "$rc: $err" "^2: srvscope: invalid .*--call-graph.*$" "--call-graph=$bad: a one-line error, exit 2"
done

# A program that has just exec'ed, its threads blocking within 10 ms of the recorder's last
# read of its maps (the old image's), on a loaded machine: the dumps are unwound again once
# the maps are read, before their events are written. Each stack of a blocked thread has
# user frames, in every one of 6 recordings beside two spinning processes (before, 7 in 20
# such recordings left some threads without any user frame). SRVSCOPE_MAPS_FORCE_MS makes
# the reads out of turn rarer (one a minute), so that the unwinds again are what helps.
spin=""
for _ in 1 2; do
	bash -c 'while [ $SECONDS -lt 30 ]; do :; done' & # ends by itself, and is killed at exit
	spin="$spin $!"
done
_pids="$_pids $spin"
bare=0
for i in 1 2 3 4 5 6; do
	SRVSCOPE_MAPS_FORCE_MS=60000 "$SRVSCOPE" record -d 1 --on-cpu=199 -o "$TMP/exec.trace" --force \
		-- "$FIXTURES/stackfix-c-debuglink" \
		>/dev/null 2>&1
	# The child's read of srvscope's start pipe, before the exec, is not the fixture's code;
	# nor is a wait inside the execve itself (reading the binary, faulting its pages in under
	# load), where the old image is being torn down and the new one has no user stack yet.
	n=$("$SRVSCOPE" flame "$TMP/exec.trace" --kind=off | grep '^fix-' | grep -v 'anon_pipe_read' |
		grep -v '_sys_execve_\[k\];' | grep -vc 'start_thread;\|_start;')
	[ "$n" = 0 ] || { bare=$((bare + 1)); diag "recording $i: $n stacks without user frames"; }
done
is "$bare" 0 "just after an exec, under load: every blocked thread's stacks have user frames"
kill $spin 2>/dev/null
done_testing
