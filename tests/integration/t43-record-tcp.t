#!/bin/bash
# Network waits ground truth (seed 002): a TCP server and client in two network namespaces
# joined by a delay line of D ms each way (a TUN device pair and rec_delayline: this kernel
# has no netem). connect() must block about 2D, accept() from its start until the third
# packet of the handshake (the client's connect start + 3D), the client's read of the
# reply about 2D; each woken by the NET_RX softirq.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
[ -c /dev/net/tun ] || skip_all "no /dev/net/tun"
D=40
new_netns && A=$NETNS && new_netns && B=$NETNS || skip_all "cannot create network namespaces"

start_fixture "$FIXTURES/rec_delayline" $A sstun0 $B sstun1 $D || skip_all "delay line"
in_a() { nsenter --net="$A" "$@"; }
in_b() { nsenter --net="$B" "$@"; }
in_a ip link set lo up && in_b ip link set lo up &&
	in_a ip addr add 10.199.0.1 peer 10.199.0.2 dev sstun0 && in_a ip link set sstun0 up &&
	in_b ip addr add 10.199.0.2 peer 10.199.0.1 dev sstun1 && in_b ip link set sstun1 up
ok $? "two namespaces joined by a ${D} ms delay line"
# A first exchange, unrecorded, so that nothing on the path is cold.
"$FIXTURES/rec_tcp" $B 10.199.0.2 $A 18765 >"$TMP/warm" 2>&1
ok $? "a warm-up exchange goes through"

f="$TMP/tcp.trace"

cat >"$TMP/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
D = float(sys.argv[3]) * 1e6
seen = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(sys.argv[2])}
tasks = {t["comm"]: t for t in d["tasks"]}
fails = 0

def block(comm, syscall, t0):
    """The block of that syscall that began nearest to where the program began it (t0,
    CLOCK_MONOTONIC as the trace): not the longest one, which on a loaded machine can be
    the child's read of the pipe on which srvscope holds it until the exec."""
    bs = [b for b in tasks[comm]["blocks"] if b["syscall"] == syscall]
    assert bs, "%s has no %s block" % (comm, syscall)
    return min(bs, key=lambda b: abs(d["trace_start_ns"] + b["start_ns"] - t0))

def waits(comm, syscall, t0, t1):
    """The call's waits: its blocks that began between where the program began and ended
    it. A wait can be cut short by a wake-up that finds nothing to read (once, a read's
    first 2.4 ms of 81, woken in a softirq, the rest woken by NET_RX): the call blocked
    from its first wait's start to its last one's end, and was woken by the last one's
    waker. Else the nearest block, as before."""
    start = lambda b: d["trace_start_ns"] + b["start_ns"]
    ws = sorted((b for b in tasks[comm]["blocks"]
                 if b["syscall"] == syscall and t0 - 1e6 <= start(b) <= t1), key=start)
    if not ws:
        b = block(comm, syscall, t0)
        return b, b["duration_ns"], 1
    last = ws[-1]
    return last, start(last) + last["duration_ns"] - start(ws[0]), len(ws)

info = ""
windows = []

def check(what, cond):
    """A wrong one on stderr too, with its block's line: prove shows stderr."""
    global fails
    print(("# fine: " if cond else "# WRONG: ") + what)
    if not cond:
        print("# WRONG: %s\n%s" % (what, info), file=sys.stderr)
    fails += not cond

for comm, syscall, name, lo, hi in (
        ("tcpclient", "connect", "connect", 2 * D - 2e6, 2 * D + 25e6),
        ("tcpclient", "read", "read", 2 * D - 2e6, 2 * D + 25e6),
        ("tcpserver", "accept", "accept", None, None)):
    t0, t1 = seen[name]
    b, dur, nw = waits(comm, syscall, t0, t1)
    if name == "accept":
        c0 = seen["connect"][0]
        lo, hi = c0 - t0 + 3 * D - 2e6, c0 - t0 + 3 * D + 25e6
    info = ("# %s %s: blocked %.3f ms in %d wait(s), the program saw %.3f ms, expected %.1f..%.1f ms, woken by %s; "
            "the (last) wait began %.6f s into the trace, the call %.6f s by the program's clock" %
            (comm, syscall, dur / 1e6, nw, (t1 - t0) / 1e6, lo / 1e6, hi / 1e6, b["wakeup"],
             b["start_ns"] / 1e9, (t0 - d["trace_start_ns"]) / 1e9))
    print(info)
    windows.append((name, lo, hi))
    check("%s %s lasts what the delay implies" % (comm, syscall), lo <= dur <= hi)
    check("%s %s matches what the program measured (3 ms)" % (comm, syscall), abs(dur - (t1 - t0)) < 3e6)
    check("%s %s is woken by the NET_RX softirq" % (comm, syscall),
          b["wakeup"]["kind"] == "softirq" and b["wakeup"]["detail"] == "NET_RX")
    desc = b["fd_desc"] or ""
    want = "(listening)" if name == "accept" else "-> 10.199.0.2:" + sys.argv[4]
    check("%s %s's fd is described (%s)" % (comm, syscall, desc), want in desc)
# The program's own times outside the window: the line itself was late (a loaded machine
# once held a handshake 96 ms), not a question of srvscope's: 2 asks for another exchange.
late = [n for n, lo, hi in windows if not lo <= seen[n][1] - seen[n][0] <= hi]
if late and fails:
    print("# the delay line was late for %s: the program itself saw it" % " ".join(late),
          file=sys.stderr)
    sys.exit(2)
sys.exit(1 if fails else 0)
PY
# record_checked PORT NAME [VAR=VALUE...]: records an exchange on PORT (under those
# variables), checks its waits against the delay line; once more on another port if the
# line was late by the program's own clock.
record_checked() {
	local port=$1 name=$2 try rc
	shift 2
	for try in 1 2; do
		env "$@" "$SRVSCOPE" record -o "$f.$port" -- "$FIXTURES/rec_tcp" $B 10.199.0.2 $A $port \
			>"$TMP/out" 2>"$TMP/err" || return 1
		sed 's/^/# /' "$TMP/out"
		"$SRVSCOPE" blocking --format=json "$f.$port" >"$TMP/b.json" || return 1
		python3 "$TMP/check.py" "$TMP/b.json" "$TMP/out" "$D" "$port"
		rc=$?
		if [ $rc != 0 ]; then # what the recorder said (lost events?) and every wait seen
			sed 's/^/# record: /' "$TMP/err" >&2
			"$SRVSCOPE" blocking "$f.$port" 2>&1 | head -60 | sed 's/^/# blocking: /' >&2
		fi
		[ $rc = 2 ] && [ $try = 1 ] || break
		diag "$name: the delay line itself was late; once more"
		port=$((port + 10))
	done
	last="$f.$port"
	return $rc
}

record_checked 18766 default
ok $? "recorded; accept, connect and read waits match the delay line, woken by NET_RX"

text=$("$SRVSCOPE" blocking --comm tcpserver "$last")
like "$text" "accept +[0-9]+ tcp 0\.0\.0\.0:[0-9]+ \(listening\) +SOFTIRQ NET_RX" \
	"the text report reads like seed 002's: accept ... SOFTIRQ"

# The vector of a softirq waker comes from its kernel stack (the action function it passes,
# net_rx_action), so that softirq_entry can be left off once each CPU's preempt count is
# found: with every vector taken from the stacks from the start, the waits are woken as
# before.
record_checked 18768 from-stack SRVSCOPE_SOFTIRQ_FROM_STACK=1
ok $? "record with every softirq vector from the stacks: the waits are still woken by NET_RX"

# Whether a softirq runs is read from the kernel's preempt count, at an address found from
# the BTF. A wrong one (as on a kernel whose layout the BTF misdescribed) fails the check at
# the first softirq: softirq_exit is attached instead, and the waits are woken as before.
record_checked 18767 wrong-pc SRVSCOPE_PREEMPT_COUNT_OFF=8
ok $? "record with a wrong preempt count address: the waits are still woken by NET_RX"
like "$(cat "$TMP/err")" "preempt count could not be read: softirqs are followed by their exits" \
	"... says it follows softirqs by their exits"
done_testing
