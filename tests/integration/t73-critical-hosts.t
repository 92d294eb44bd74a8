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
tiers_namespaces $D &&
	in_ns "$C" ip addr add 10.201.0.1 peer 10.201.0.2 dev tc0 &&
	in_ns "$W" ip addr add 10.201.0.2 peer 10.201.0.1 dev tw0 &&
	in_ns "$W" ip addr add 10.202.0.1/24 dev vw && in_ns "$DB" ip addr add 10.202.0.2/24 dev vd
ok $? "client -($D ms)- web -(veth)- db: three namespaces"

# Scenario 3: one clock for all (the namespaces share the kernel's).
tiers_run s3 7100 "" "" 10.201.0.2 10.202.0.2
ok $? "record the three tiers, each in its namespace"
tiers_judge s3 10.201.0. "" ""
ok $? "scenario 3: the client's requests resolve through web to db's work and back"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s3-client.out")
text=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s3-client.trace" "$TMP/s3-web.trace" "$TMP/s3-db.trace")
like "$text" "host 3 .*: clock accurate from [0-9]+ packets with host 2" "the text says how each clock was synchronised"
like "$text" "tier-db [0-9]+ +RUNNING" "the text shows db's work on the path"

# Scenario 4: web 5 s ahead and 100 ppm fast, db 5 s behind and 100 ppm slow.
tiers_run s4 7200 "--clock-skew=5000000000,100" "--clock-skew=-5000000000,-100" 10.201.0.2 \
	10.202.0.2
ok $? "record the three tiers with web's and db's clocks skewed"
tiers_judge s4 10.201.0. "5000000000,100" "-5000000000,-100"
ok $? "scenario 4: clocks recovered within 100 us, and the path as right as without skew"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s4-client.out")

# Two hosts that never talked to each other.
out=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s4-client.trace" "$TMP/s4-db.trace" 2>&1)
is "$?" 1 "a pair that shares no packet fails"
like "$out" "^srvscope: critical: cannot synchronise the clock of .* they share no TCP packet" \
	"and says it cannot synchronise, in one line"
done_testing
