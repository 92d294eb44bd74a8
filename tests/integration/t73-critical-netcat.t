#!/bin/bash
# Seed 002's exchange: a server blocked in accept() in one namespace, a client in another,
# a delay line of D = 100 ms each way between them, each side under its own recorder with
# --net. The server's accept wait resolves to the network, crossing to the client: the
# ACK, the SYN-ACK and the SYN on the wire (3 x D, or what the fixtures saw under load), back
# to the client's connect().
. "$(dirname "$0")/lib.sh"
need_root
need_btf
[ -c /dev/net/tun ] || skip_all "no /dev/net/tun"
D=100
new_netns && A=$NETNS && new_netns && B=$NETNS || skip_all "cannot create network namespaces"
start_fixture "$FIXTURES/rec_delayline" "$A" nctun0 "$B" nctun1 $D || skip_all "delay line"
in_a() { nsenter --net="$A" "$@"; }
in_b() { nsenter --net="$B" "$@"; }
in_a ip link set lo up && in_b ip link set lo up &&
	in_a ip addr add 10.203.0.1 peer 10.203.0.2 dev nctun0 && in_a ip link set nctun0 up &&
	in_b ip addr add 10.203.0.2 peer 10.203.0.1 dev nctun1 && in_b ip link set nctun1 up
ok $? "two namespaces joined by a ${D} ms delay line"

in_b "$SRVSCOPE" record --net -o "$TMP/server.trace" -- "$FIXTURES/crit_tiers" db 7300 0 \
	>"$TMP/server.out" 2>"$TMP/server.err" &
r=$!
i=0
while ! grep -q '^listening' "$TMP/server.out" 2>/dev/null && [ $i -lt 1000 ]; do
	i=$((i + 1)); sleep 0.01
done
sleep 0.2 # the server sits in accept()
in_a timeout 30 "$SRVSCOPE" record --net --syscalls -o "$TMP/client.trace" -- "$FIXTURES/crit_tiers" \
	client 10.203.0.2 7300 1 >"$TMP/client.out" 2>"$TMP/client.err" && wait $r
ok $? "record the server and the client, each in its namespace"
spid=$(awk '/^pid/ {print $2}' "$TMP/server.out")
"$SRVSCOPE" critical --tid "$spid" --format=json "$TMP/server.trace" "$TMP/client.trace" \
	>"$TMP/c.json"
ok $? "critical over both traces"
python3 - "$TMP/c.json" "$TMP/server.out" "$TMP/client.out" $D <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
D = float(sys.argv[4]) * 1e6
a0, a1 = [[int(x) for x in l.split()[1:]] for l in open(sys.argv[2]) if l.startswith("accepted ")][0]
c0, c1 = [[int(x) for x in l.split()[1:]] for l in open(sys.argv[3]) if l.startswith("connect ")][0]
segs = [s for s in d["segments"] if s["end_ns"] > a0 and s["start_ns"] < a1]
def overlap(pred):
    return sum(max(0, min(a1, s["end_ns"]) - max(a0, s["start_ns"])) for s in segs if pred(s))
net = overlap(lambda s: s["state"] == "NETWORK")
hops = [s for s in segs if s["state"] == "NETWORK"]
client = overlap(lambda s: s["host"] == 2)
for s in hops:
    print("# NETWORK %.3f ms on host %d: %s (from host %s)" % ((s["end_ns"] - s["start_ns"]) / 1e6, s["host"], s["what"], s.get("from_host")))
print("# accept waited %.3f ms; the client connected %.3f ms after it started; NETWORK %.3f ms, %.3f ms on the client" %
      ((a1 - a0) / 1e6, (c0 - a0) / 1e6, net / 1e6, client / 1e6))
fails = 0
said = []
def check(what, cond):
    global fails
    said.append(("# fine: " if cond else "# WRONG: ") + what)
    print(said[-1])
    fails += not cond
# The delay line is D each way on an idle machine, more under load: the truth is what the
# fixtures saw, from the client's connect() to the server's accept() return. The server,
# woken by the last packet, may wait for a CPU (PREEMPTED) and then runs: its own time after
# the network.
n0 = min([s["start_ns"] for s in hops] or [a1])
n1 = max([s["end_ns"] for s in hops] or [a0])
own = sum(max(0, min(a1, s["end_ns"]) - max(n1, s["start_ns"])) for s in segs
          if s["host"] == 1 and s["state"] in ("RUNNING", "PREEMPTED"))
check("the wait resolves to the network: from the client's connect() to the accept's end, %.1f ms"
      " (%.1f ms NETWORK, then the server's own %.1f ms)" % ((a1 - c0) / 1e6, net / 1e6, own / 1e6),
      abs(net + own - (a1 - c0)) < 3e6)
check("that is at least 3 x %d ms" % (D / 1e6), net >= 3 * D - 2e6)
check("three packets crossed (ACK, SYN-ACK, SYN)", len(hops) >= 3)
check("one of them came from the client's host", any(s.get("from_host") == 2 for s in hops))
check("the path crosses to the client before its SYN", client > 0 and any(s["host"] == 2 for s in segs))
check("the network part starts where the client's connect() did (within 2 ms), in one piece",
      abs(n0 - max(c0, a0)) < 2e6 and net > n1 - n0 - 1e6)
if fails:  # prove shows stderr, not the diagnostics on stdout
    for s in segs:
        sys.stderr.write("#   %s host %d tid %s %.3f-%.3f ms: %s\n" % (s["state"], s["host"], s["tid"],
                         (s["start_ns"] - a0) / 1e6, (s["end_ns"] - a0) / 1e6, s["what"]))
    sys.stderr.write("#   accept %.3f ms, connect at %.3f to %.3f ms after its start\n" % ((a1 - a0) / 1e6, (c0 - a0) / 1e6, (c1 - a0) / 1e6))
    sys.stderr.write("\n".join(said) + "\n")
sys.exit(1 if fails else 0)
PY
ok $? "the accept wait is the network, 3 x ${D} ms, crossing to the client"
text=$("$SRVSCOPE" critical --tid "$spid" "$TMP/server.trace" "$TMP/client.trace")
like "$text" "NETWORK +10\.203\.0\.1:[0-9]+ -> 10\.203\.0\.2:7300" "the text names the client's packet"

# --syscall-span: the client's request (recorded with --syscalls), from its write() to the
# end of the read() of the answer, without giving times: the request's own 2 x D.
cpid=$(awk '/^pid/ {print $2}' "$TMP/client.out")
"$SRVSCOPE" critical --tid "$cpid" --syscall-span --format=json "$TMP/server.trace" \
	"$TMP/client.trace" >"$TMP/span.json"
ok $? "critical --syscall-span"
python3 - "$TMP/span.json" "$TMP/client.out" $D <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
D = float(sys.argv[3]) * 1e6
r0, r1 = [[int(x) for x in l.split()[1:]] for l in open(sys.argv[2]) if l.startswith("request ")][0]
net = sum(s["end_ns"] - s["start_ns"] for s in d["segments"] if s["state"] == "NETWORK")
print("# the span: %.3f ms from %.3f ms after the request's write; the client measured %.3f ms; NETWORK %.3f ms"
      % ((d["end_ns"] - d["start_ns"]) / 1e6, (d["start_ns"] - r0) / 1e6, (r1 - r0) / 1e6, net / 1e6))
assert d["host"] == 2
assert abs(d["start_ns"] - r0) < 1e6 and abs(d["end_ns"] - r1) < 1e6, "not the request's span"
assert 2 * D - 2e6 <= net <= d["end_ns"] - d["start_ns"]
PY
ok $? "the span is the client's request, and it waited on the network both ways"
out=$("$SRVSCOPE" critical --tid "$spid" --syscall-span "$TMP/server.trace" "$TMP/client.trace" 2>&1)
is "$?" 1 "--syscall-span on a trace without --syscalls fails"
like "$out" "^srvscope: critical: thread $spid has no request .* record it with 'record --syscalls'" "and says what to do"
done_testing
