#!/bin/bash
# The critical path across three hosts (network namespaces, each under its own recorder
# with --net): client -> web over a delay line of D ms each way, web -> db over a veth pair,
# db computing 30 ms per request (crit_tiers). Scenario 3: the client's requests cross both
# hosts, the db's work on db's thread and the wire on the network (>= 95 % right against
# the fixtures' own times). Scenario 4: the same with web's and db's clocks offset by +-5 s
# and drifting by +-100 ppm (record --clock-skew): the clocks are recovered within 100 us,
# their quality reported. Then a pair that shares no packet cannot be synchronised.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
[ -c /dev/net/tun ] || skip_all "no /dev/net/tun"
D=20
N=20
new_netns && C=$NETNS && new_netns && W=$NETNS && new_netns && DB=$NETNS ||
	skip_all "cannot create network namespaces"
start_fixture "$FIXTURES/rec_delayline" "$C" tc0 "$W" tw0 $D || skip_all "delay line"
in_ns() { local ns=$1; shift; nsenter --net="$ns" "$@"; }
dbpid=${DB#/proc/}
dbpid=${dbpid%%/*}
for ns in "$C" "$W" "$DB"; do in_ns "$ns" ip link set lo up || break; done &&
	in_ns "$C" ip addr add 10.201.0.1 peer 10.201.0.2 dev tc0 && in_ns "$C" ip link set tc0 up &&
	in_ns "$W" ip addr add 10.201.0.2 peer 10.201.0.1 dev tw0 && in_ns "$W" ip link set tw0 up &&
	in_ns "$W" ip link add vw type veth peer name vd && in_ns "$W" ip link set vd netns "$dbpid" &&
	in_ns "$W" ip addr add 10.202.0.1/24 dev vw && in_ns "$W" ip link set vw up &&
	in_ns "$DB" ip addr add 10.202.0.2/24 dev vd && in_ns "$DB" ip link set vd up
ok $? "client -($D ms)- web -(veth)- db: three namespaces"

wait_line() { # wait_line FILE WORD: until FILE has a line starting with WORD (10 s at most)
	local i=0
	while ! grep -q "^$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 1000 ] && return 1; sleep 0.01
	done
}

# run NAME PORT WEB_SKEW DB_SKEW: records the three tiers into $TMP/NAME-*.trace
run() {
	local n=$1 port=$2 wskew=$3 dskew=$4 r1 r2
	in_ns "$DB" "$SRVSCOPE" record --net $dskew -o "$TMP/$n-db.trace" -- \
		"$FIXTURES/crit_tiers" db $((port + 1)) 30 >"$TMP/$n-db.out" 2>"$TMP/$n-db.err" &
	r1=$!
	wait_line "$TMP/$n-db.out" listening || return 1
	in_ns "$W" "$SRVSCOPE" record --net $wskew -o "$TMP/$n-web.trace" -- \
		"$FIXTURES/crit_tiers" web $port 10.202.0.2 $((port + 1)) \
		>"$TMP/$n-web.out" 2>"$TMP/$n-web.err" &
	r2=$!
	wait_line "$TMP/$n-web.out" listening || return 1
	in_ns "$C" timeout 30 "$SRVSCOPE" record --net -o "$TMP/$n-client.trace" -- \
		"$FIXTURES/crit_tiers" client 10.201.0.2 $port $N \
		>"$TMP/$n-client.out" 2>"$TMP/$n-client.err" || return 1
	wait $r1 && wait $r2
}

cat >"$TMP/judge.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tmp, name, D = sys.argv[2], sys.argv[3], float(sys.argv[4]) * 1e6
skews = [s.split(",") for s in sys.argv[5:]]  # web, db: "OFFSET_NS,PPM" or ""
def lines(tier, word):
    return [[int(x) for x in l.split()[1:]] for l in open("%s/%s-%s.out" % (tmp, name, tier)) if l.startswith(word + " ")]
db = lines("db", "pid")[0][0]
reqs, works, passes = lines("client", "request"), lines("db", "work"), lines("web", "pass")
segs = d["segments"]
def overlap(a0, a1, pred):
    return sum(max(0, min(a1, s["end_ns"]) - max(a0, s["start_ns"])) for s in segs if pred(s))
fails = 0
said = []
def check(what, cond):
    global fails
    said.append(("# fine: " if cond else "# WRONG: ") + what)
    print(said[-1])
    fails += not cond
total = right = work = work_right = 0
wire_ok = crossed = 0
for (s, e), (w0, w1), (p0, p1) in zip(reqs, works, passes):
    chain = lambda g: g["state"] in ("NETWORK", "RUNNING", "PREEMPTED")
    on_db = lambda g: g["host"] == 3 and g["tid"] == db and g["state"] in ("RUNNING", "PREEMPTED")
    got = overlap(w0, w1, on_db)
    work += w1 - w0; work_right += got
    total += e - s
    right += got + overlap(s, w0, chain) + overlap(w1, e, chain)
    wire = overlap(s, e, lambda g: g["state"] == "NETWORK" and "10.201.0." in (g["what"] or ""))
    # At least the delay line's 2 x D; at most the request's time outside web (the delay
    # line is a user-space forwarder: on a loaded machine it can take longer than D).
    wire_ok += 2 * D - 1e6 <= wire <= (e - s) - (p1 - p0) + 1e6
    crossed += all(overlap(s, e, lambda g, h=h: g["host"] == h) > 0 for h in (1, 2, 3))
said.append("# %d requests: %.1f %% of the client's waits right, db's work %.1f %% on db's thread" %
            (len(reqs), 100.0 * right / total, 100.0 * work_right / work))
print(said[-1])
check("as many requests as db works (%d)" % len(reqs), len(reqs) == len(works) >= 10)
check(">= 95 % of the client's waits on the right segments", right >= 0.95 * total)
check(">= 95 % of db's work on db's thread (host 3)", work_right >= 0.95 * work)
check("the delay line is NETWORK, 2 x %d ms or more, per request (%d of %d)" % (D / 1e6, wire_ok, len(reqs)), wire_ok == len(reqs))
check("every request's path crosses the three hosts (%d of %d)" % (crossed, len(reqs)), crossed == len(reqs))
hosts = d["hosts"]
check("host 1 is the reference clock", hosts[0]["clock"]["quality"] == "reference")
t0, t1 = reqs[0][0], reqs[-1][1]
for h, sk in zip(hosts[1:], skews):
    c = h["clock"]
    off, ppm = (int(sk[0]), float(sk[1])) if sk[0] else (0, 0.0)
    start = h["start_ns"] - off  # the recorder's start on the true clock
    worst = 0
    for i in range(11):
        t = t0 + (t1 - t0) * i // 10
        local = t + off + int((t - start) * ppm / 1e6)
        ref = local + c["offset_ns"] + c["drift_ppb"] / 1e9 * (local - c["origin_ns"])
        worst = max(worst, abs(ref - t))
    check("host %d (skew %s): clock %s from %d packets with host %s, within %.1f us of the truth" %
          (h["host"], sk, c["quality"], c["packets"], c["parent"], worst / 1e3),
          c["quality"] == "accurate" and worst < 100e3)
if fails:  # prove shows a failing test's stderr, not its comments
    print("t73 %s:\n%s" % (name, "\n".join(said)), file=sys.stderr)
sys.exit(1 if fails else 0)
PY

# Scenario 3: one clock for all (the namespaces share the kernel's).
run s3 7100 "" ""
ok $? "record the three tiers, each in its namespace"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s3-client.out")
"$SRVSCOPE" critical --tid "$cpid" --format=json "$TMP/s3-client.trace" "$TMP/s3-web.trace" \
	"$TMP/s3-db.trace" >"$TMP/s3.json"
ok $? "critical over the three traces"
python3 "$TMP/judge.py" "$TMP/s3.json" "$TMP" s3 $D "" ""
ok $? "scenario 3: the client's requests resolve through web to db's work and back"
text=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s3-client.trace" "$TMP/s3-web.trace" "$TMP/s3-db.trace")
like "$text" "host 3 .*: clock accurate from [0-9]+ packets with host 2" "the text says how each clock was synchronised"
like "$text" "tier-db [0-9]+ +RUNNING" "the text shows db's work on the path"

# Scenario 4: web 5 s ahead and 100 ppm fast, db 5 s behind and 100 ppm slow.
run s4 7200 "--clock-skew=5000000000,100" "--clock-skew=-5000000000,-100"
ok $? "record the three tiers with web's and db's clocks skewed"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s4-client.out")
"$SRVSCOPE" critical --tid "$cpid" --format=json "$TMP/s4-client.trace" "$TMP/s4-web.trace" \
	"$TMP/s4-db.trace" >"$TMP/s4.json"
ok $? "critical over the three skewed traces"
python3 "$TMP/judge.py" "$TMP/s4.json" "$TMP" s4 $D "5000000000,100" "-5000000000,-100"
ok $? "scenario 4: clocks recovered within 100 us, and the path as right as without skew"

# Two hosts that never talked to each other.
out=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s4-client.trace" "$TMP/s4-db.trace" 2>&1)
is "$?" 1 "a pair that shares no packet fails"
like "$out" "^srvscope: critical: cannot synchronise the clock of .* they share no TCP packet" \
	"and says it cannot synchronise, in one line"
done_testing
