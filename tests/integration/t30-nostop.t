#!/bin/bash
# --mode=nostop: the exact-stack fixtures (C and C++, all three builds, dynamic and static
# binary) come out exact while the target never stops: the kernel's scheduler events show
# no thread switching out traced or stopped, and TracerPid stays 0. Kernel frames with
# --kernel: the pipe reader sits in the kernel's pipe read path.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || skip_all "python3 is needed to check the stacks"

# Every switch-out of a thread in TASK_STOPPED (4) or TASK_TRACED (8), as it happens, from
# the kernel's own sched_switch event in a tracefs instance of this test's own (its filter
# and buffer apart from the machine's): no BPF in the counter, nothing to compile, so it
# counts from its first moment (bpftrace, used before, was seen not to start within three
# minutes on its first run after a fresh install). record-tgid puts each line's process in
# parentheses: stops are counted by process, whichever thread stopped.
TRACEFS=/sys/kernel/tracing
[ -d "$TRACEFS/instances" ] || TRACEFS=/sys/kernel/debug/tracing
if [ ! -d "$TRACEFS/instances" ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
	TRACEFS=/sys/kernel/tracing
fi
[ -d "$TRACEFS/instances" ] || skip_all "no tracefs (mount -t tracefs nodev /sys/kernel/tracing)"
INST="$TRACEFS/instances/srvscope-t30-$$"
mkdir "$INST" || skip_all "cannot make a tracefs instance in $TRACEFS/instances"
stop_counter() {
	[ -n "${CAT:-}" ] && kill "$CAT" 2>/dev/null && wait "$CAT" 2>/dev/null
	CAT=""
	[ -d "$INST" ] || return 0
	echo 0 >"$INST/events/sched/sched_switch/enable" 2>/dev/null
	rmdir "$INST" 2>/dev/null
}
trap 'stop_counter; cleanup' EXIT
echo 1 >"$INST/options/record-tgid" &&
	echo 'prev_state & 12' >"$INST/events/sched/sched_switch/filter" &&
	echo 1 >"$INST/events/sched/sched_switch/enable"
ok $? "the stop counter is set up (tracefs instance, sched_switch filtered on prev_state)"
cat "$INST/trace_pipe" >"$TMP/bt.out" &
CAT=$!
# stops_of PID: the stops seen of PID's threads (a line's '(PID)' is its process).
stops_of() { grep -c -E "\( *$1\) +\[[0-9]+\]" "$TMP/bt.out"; }
# ptrace_seen PID: ptrace mode samples PID until the counter has seen it stop (10 s at most).
ptrace_seen() {
	for _ in $(seq 20); do
		"$SRVSCOPE" stacks -p "$1" --mode=ptrace >/dev/null 2>&1
		for _ in $(seq 10); do [ "$(stops_of "$1")" -gt 0 ] && return 0; sleep 0.05; done
	done
	return 1
}
# The counter counts before anything is measured: ptrace mode on a canary shows up in it.
start_fixture "$FIXTURES/stackfix-c-pie" || ok 1 "start the canary"
ptrace_seen "$FPID"
ok $? "the stop counter counts before the nostop runs (ptrace mode's stops seen)"
kill -KILL "$FPID"
wait "$FPID" 2>/dev/null

# Watches TracerPid of $1 every few ms until $2 exists; writes what it saw to $3.
watch_tracer() {
	local seen=0
	: >"$3"
	while [ ! -e "$2" ]; do
		t=$(tracer_of "$1" 2>/dev/null)
		[ -n "$t" ] && [ "$t" != 0 ] && seen=$t
		sleep 0.002
	done
	echo "$seen" >"$3"
}

check_exact() { # LABEL FIXTURE JSON
	local out next
	out=$(python3 "$TOP/tests/integration/expect_stacks.py" \
		"$TOP/tests/fixtures/stackfix-${2%%-*}.expect" "$FIXTURES/stackfix-$2" "$3" \
		$((_n + 1)) "$1: " 2>&1)
	printf '%s\n' "$out" | grep -v '^# next'
	next=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
	if [ -z "$next" ]; then
		ok 1 "$1: the stacks can be checked"
		printf '%s\n' "$out" | sed 's/^/#   /'
		return
	fi
	_n=$((next - 1))
	_failed=$((_failed + $(printf '%s\n' "$out" | grep -c '^not ok')))
}

WATCHED=""
for bin in "$SRVSCOPE" "${SRVSCOPE}-static"; do
	[ -x "$bin" ] || { [ -n "${SRVSCOPE_NO_STATIC:-}" ] && continue; }
	b=$(basename "$bin")
	for fix in c-pie c-debuglink c-O2 cxx-pie cxx-debuglink cxx-O2; do
		start_fixture "$FIXTURES/stackfix-$fix" || { ok 1 "start stackfix-$fix"; continue; }
		WATCHED="$WATCHED $FPID"
		rm -f "$TMP/done"
		watch_tracer "$FPID" "$TMP/done" "$TMP/tracer" &
		"$bin" stacks -p "$FPID" --mode=nostop --format=json >"$TMP/out.json" 2>"$TMP/err"
		rc=$?
		touch "$TMP/done"
		wait $!
		is "$rc" 0 "$b stacks --mode=nostop $fix exits 0"
		[ -s "$TMP/err" ] && sed 's/^/#   stderr: /' "$TMP/err"
		like "$(cat "$TMP/out.json")" '"mode": "nostop"' "$b $fix: nostop mode used"
		check_exact "$b nostop $fix" "$fix" "$TMP/out.json"
		is "$(cat "$TMP/tracer")" 0 "$b $fix: TracerPid stayed 0 while sampling"
		like "$(states_of "$FPID")" '^[SR]+$' "$b $fix: no thread stopped afterwards"
		kill -KILL "$FPID"
		wait "$FPID" 2>/dev/null
	done
done

# The fallback copy, page by page up to the first page that faults (taken when the stack's
# mapping cannot be looked up), gives the same stacks.
start_fixture "$FIXTURES/stackfix-cxx-O2" || ok 1 "start stackfix-cxx-O2"
WATCHED="$WATCHED $FPID"
SRVSCOPE_NOSTOP_PAGE_COPY=1 "$SRVSCOPE" stacks -p "$FPID" --mode=nostop --format=json \
	>"$TMP/pages.json" 2>"$TMP/err"
is "$?" 0 "page-by-page copy: exits 0"
check_exact "nostop page-by-page cxx-O2" cxx-O2 "$TMP/pages.json"
kill -KILL "$FPID"
wait "$FPID" 2>/dev/null

# auto picks nostop on this kernel; repeated samples in one process reuse the iterator.
start_fixture "$FIXTURES/stackfix-c-O2" || ok 1 "start stackfix-c-O2"
WATCHED="$WATCHED $FPID"
"$SRVSCOPE" stacks -p "$FPID" -n 20 -i 5 --format=json >"$TMP/auto.json" 2>"$TMP/err"
is "$?" 0 "auto mode, 20 samples: exits 0"
like "$(cat "$TMP/auto.json")" '"mode": "nostop"' "auto mode chooses nostop here"
like "$(cat "$TMP/auto.json")" '"samples": 20' "20 samples aggregated"
like "$(cat "$TMP/auto.json")" '"total": 0,' "no stall reported in nostop mode"

# Kernel frames: below the user frames, marked, and the pipe reader in the pipe read path.
"$SRVSCOPE" stacks -p "$FPID" --mode=nostop --kernel --format=json >"$TMP/k.json" 2>"$TMP/err"
is "$?" 0 "--kernel: exits 0"
python3 - "$TMP/k.json" >"$TMP/k.check" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for g in doc["groups"]:
    names = {t["name"] for t in g["threads"]}
    kern = [f for f in g["frames"] if f["kernel"]]
    user = [f for f in g["frames"] if not f["kernel"]]
    first_user = next((i for i, f in enumerate(g["frames"]) if not f["kernel"]), len(g["frames"]))
    ordered = all(f["kernel"] for f in g["frames"][:first_user]) and not any(f["kernel"] for f in g["frames"][first_user:])
    if "fix-pipe" in names:
        print("pipe_kernel", ";".join(f["symbol"] or "?" for f in kern))
        print("pipe_user", ";".join(f["symbol"] or "?" for f in user))
    if names & {"fix-mutex", "fix-cond", "fix-sleep", "fix-epoll", "fix-pipe"}:
        print("blocked_has_kernel", 1 if kern else 0, sorted(names)[0])
    print("ordered", 1 if ordered else 0)
EOF
like "$(grep '^pipe_kernel' "$TMP/k.check")" 'pipe_read' "--kernel: the pipe reader shows the kernel's pipe read path"
like "$(grep '^pipe_kernel' "$TMP/k.check")" 'ksys_read|vfs_read' "--kernel: ... entered through read"
like "$(grep '^pipe_user' "$TMP/k.check")" 'pipe_inner;pipe_middle;pipe_outer;pipe_thread' \
	"--kernel: the user frames are still there, below"
is "$(grep -c '^blocked_has_kernel 0' "$TMP/k.check")" 0 "--kernel: every blocked group has kernel frames"
is "$(grep -c '^ordered 0' "$TMP/k.check")" 0 "--kernel: kernel frames come before (inside) the user frames"
check_exact "nostop --kernel c-O2" c-O2 "$TMP/k.json"
"$SRVSCOPE" stacks -p "$FPID" --mode=nostop --kernel --format=folded >"$TMP/k.folded" 2>"$TMP/err"
like "$(grep '^fix-pipe' "$TMP/k.folded")" 'pipe_inner;.*pipe_read_\[k\]' "--kernel folded: kernel frames marked _[k]"

# Without the right to load BPF (a process without capabilities, on one of its kind): nostop says
# what is missing and fails; auto falls back to ptrace with a one-line notice.
if command -v setpriv >/dev/null; then
	# setpriv itself, not the function: FPID must be the fixture, not a subshell.
	start_fixture setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
		"$FIXTURES/stackfix-c-pie" || ok 1 "start stackfix-c-pie without capabilities"
	unprivileged "$SRVSCOPE" stacks -p "$FPID" --mode=nostop >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check "no BPF allowed: --mode=nostop fails" [ "$rc" -ne 0 ]
	is "$(wc -l <"$TMP/err" | tr -d ' ')" 1 "no BPF allowed: one line on stderr"
	like "$(cat "$TMP/err")" 'nostop is not available: it needs permission to load BPF programs' \
		"no BPF allowed: says what is missing"
	unprivileged "$SRVSCOPE" stacks -p "$FPID" --format=json >"$TMP/out" 2>"$TMP/err"
	is "$?" 0 "no BPF allowed: auto mode still works"
	like "$(cat "$TMP/err")" '^srvscope: nostop mode needs .*; using ptrace$' \
		"no BPF allowed: auto falls back to ptrace with a one-line notice"
	like "$(cat "$TMP/out")" '"mode": "ptrace"' "no BPF allowed: the sample was taken with ptrace"
	kill -KILL "$FPID"
	wait "$FPID" 2>/dev/null
fi

# The stop counter still works: ptrace mode on another fixture shows up in it.
start_fixture "$FIXTURES/stackfix-c-pie" || ok 1 "start stackfix-c-pie"
PT=$FPID
ptrace_seen "$PT"
pt_stops=$(stops_of "$PT")
check "the stop counter sees ptrace mode's stops (so it works)" [ "${pt_stops:-0}" -gt 0 ]
[ "${pt_stops:-0}" -gt 0 ] || { diag "the counter saw:"; tail -20 "$TMP/bt.out" | sed 's/^/#   /'; }
sleep 0.2 # the last lines through the pipe
stop_counter
total=0
for p in $WATCHED; do
	s=$(stops_of "$p")
	[ "$s" -gt 0 ] && diag "process $p: $s stops" && total=$((total + s))
done
is "$total" 0 "nostop: zero thread stops in the kernel's scheduler events (all $(echo $WATCHED | wc -w) targets)"
done_testing
