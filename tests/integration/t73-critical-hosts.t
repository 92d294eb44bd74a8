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
. "$TOP/tests/integration/tiers.sh"

# tiers_missing NAME: when a verdict failed, whether the recordings themselves are whole
# (comments only): each fixture thread's switches in and out alternate, and each data
# segment sent by one tier was recorded received by the other and the other way round. A
# path built from a recording that lost records is wrong whatever the analysis does (a
# lost switch-out leaves a blocked thread RUNNING; a lost receive leaves a wait unexplained).
tiers_missing() {
	python3 - "$TOP" "$TMP" "$1" <<'PY' >&2 # prove shows stderr
import struct, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
from trace_ipis import events
tmp, name = sys.argv[2:4]
sent, got = {}, {}
for tier in ("client", "web", "db"):
    pid = [int(l.split()[1]) for l in open("%s/%s-%s.out" % (tmp, name, tier)) if l.startswith("pid ")][0]
    where, last = {}, {}  # last: per CPU, the task the last switch recorded there went to
    recs = events("%s/%s-%s.trace" % (tmp, name, tier))[1]
    for r in sorted(recs, key=lambda r: struct.unpack_from("<Q", r, 0)[0]):
        ts, typ, cpu, tid, rpid, aux = struct.unpack_from("<QHHIII", r, 0)
        if typ == 1:
            ntid, npid = struct.unpack_from("<II", r, 24)
            for t, p, now in ((tid, rpid, "out"), (ntid, npid, "in")):
                if p == pid and t and where.get(t) == now:
                    # the kernel traces nothing of the sandbox agent's threads (pid 1,
                    # docs/record.md): a switch away from one has no event at all
                    lt, lp = last.get(cpu, (0, 0))
                    print("# %s: %s's thread %d switched %s twice, at %d (cpu %d): a switch lost;"
                          " the last switch recorded on cpu %d went to tid %d of pid %d%s"
                          % (name, tier, t, now, ts, cpu, cpu, lt, lp,
                             " (the agent's: its switches out are not traced here)"
                             if lp == 1 else ""))
                if p == pid and t:
                    where[t] = now
            last[cpu] = (ntid, npid)
        elif typ in (12, 13) and struct.unpack_from("<H", r, 44)[0]:
            (sent if typ == 12 else got).setdefault(r[24:44], (tier, ts))
for a, b, what in ((sent, got, "sent, never received"), (got, sent, "received, never sent")):
    for k, (tier, ts) in a.items():
        if k not in b:
            print("# %s: a data segment %s by the recordings (%s at %d)" % (name, what, tier, ts))
PY
}
tiers_namespaces $D &&
	in_ns "$C" ip addr add 10.201.0.1 peer 10.201.0.2 dev tc0 &&
	in_ns "$W" ip addr add 10.201.0.2 peer 10.201.0.1 dev tw0 &&
	in_ns "$W" ip addr add 10.202.0.1/24 dev vw && in_ns "$DB" ip addr add 10.202.0.2/24 dev vd
ok $? "client -($D ms)- web -(veth)- db: three namespaces"

# Scenario 3: one clock for all (the namespaces share the kernel's).
tiers_run s3 7100 "" "" 10.201.0.2 10.202.0.2
ok $? "record the three tiers, each in its namespace"
tiers_judge s3 10.201.0. "" "" || { tiers_missing s3; false; }
ok $? "scenario 3: the client's requests resolve through web to db's work and back"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s3-client.out")
text=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s3-client.trace" "$TMP/s3-web.trace" "$TMP/s3-db.trace")
like "$text" "host 3 .*: clock accurate from [0-9]+ packets with host 2" "the text says how each clock was synchronised"
like "$text" "tier-db [0-9]+ +RUNNING" "the text shows db's work on the path"

# Scenario 4: web 5 s ahead and 100 ppm fast, db 5 s behind and 100 ppm slow.
tiers_run s4 7200 "--clock-skew=5000000000,100" "--clock-skew=-5000000000,-100" 10.201.0.2 \
	10.202.0.2
ok $? "record the three tiers with web's and db's clocks skewed"
tiers_judge s4 10.201.0. "5000000000,100" "-5000000000,-100" || { tiers_missing s4; false; }
ok $? "scenario 4: clocks recovered within 100 us, and the path as right as without skew"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s4-client.out")

# Two hosts that never talked to each other.
out=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s4-client.trace" "$TMP/s4-db.trace" 2>&1)
is "$?" 1 "a pair that shares no packet fails"
like "$out" "^srvscope: critical: cannot synchronise the clock of .* they share no TCP packet" \
	"and says it cannot synchronise, in one line"
done_testing
