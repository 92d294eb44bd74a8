#!/bin/bash
# TCP over IPv6 in record --net and critical. The three tiers of t73-critical-hosts (client
# -D ms- web -veth- db), every link IPv6 only, web's and db's clocks offset by +-5 s and
# drifting by +-100 ppm: db's clock can be synchronised only over IPv6 segments matched
# between hosts, and the path crosses the three hosts as it does over IPv4. Then
# record --net=all on IPv6 loopback (::1): its segments recorded with their addresses and
# ports, which plain --net leaves out, and the client's waits followed to the server.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
[ -c /dev/net/tun ] || skip_all "no /dev/net/tun"
[ -e /proc/net/if_inet6 ] || skip_all "this kernel has no IPv6 (no /proc/net/if_inet6)"
D=20
N=20
. "$TOP/tests/integration/tiers.sh"
# nodad: usable at once, without the seconds of duplicate address detection.
tiers_namespaces $D &&
	in_ns "$C" ip -6 addr add fd06::1/64 dev tc0 nodad &&
	in_ns "$W" ip -6 addr add fd06::2/64 dev tw0 nodad &&
	in_ns "$W" ip -6 addr add fd07::1/64 dev vw nodad &&
	in_ns "$DB" ip -6 addr add fd07::2/64 dev vd nodad
ok $? "client -($D ms, IPv6)- web -(veth, IPv6)- db: three namespaces"

tiers_run s6 7600 "--clock-skew=5000000000,100" "--clock-skew=-5000000000,-100" fd06::2 \
	fd07::2 -6
ok $? "record the three tiers talking IPv6, web's and db's clocks skewed"
tiers_judge s6 "[fd06::" "5000000000,100" "-5000000000,-100"
ok $? "the client's requests resolve through web to db's work and back, clocks within 100 us"
cpid=$(awk '/^pid/ {print $2}' "$TMP/s6-client.out")
text=$("$SRVSCOPE" critical --tid "$cpid" "$TMP/s6-client.trace" "$TMP/s6-web.trace" \
	"$TMP/s6-db.trace")
like "$text" "host 3 .*: clock accurate from [0-9]+ packets with host 2" \
	"db's clock synchronised with web's over IPv6"
like "$text" "NETWORK +\[fd06::2\]:7600 -> \[fd06::1\]:[0-9]+" "web's answers named by address"
like "$text" "NETWORK +\[fd07::2\]:7601 -> \[fd07::1\]:[0-9]+" "db's answers named by address"

# Loopback, in a namespace of its own: the server and the client under one recorder.
new_netns || skip_all "cannot create network namespaces"
L=$NETNS
# (run twice: the first run's "listening" is removed first, or the wait for the second's
# could see it before the new server truncates the file, and the client would find no
# server; db, left waiting for a client then, is bounded too)
cat >"$TMP/lo.sh" <<EOF
rm -f "$TMP/lo-db.out"
timeout 30 "$FIXTURES/crit_tiers" -6 db 7700 20 >"$TMP/lo-db.out" &
i=0; until grep -q '^listening' "$TMP/lo-db.out" 2>/dev/null || [ \$i -gt 500 ]; do i=\$((i + 1)); sleep 0.01; done
"$FIXTURES/crit_tiers" client ::1 7700 5 >"$TMP/lo-client.out"
wait
EOF
in_ns "$L" ip link set lo up && in_ns "$L" "$SRVSCOPE" record --net=all -o "$TMP/lo.trace" -- \
	bash "$TMP/lo.sh" 2>"$TMP/lo.err"
ok $? "record --net=all of a client and a server over ::1"
python3 "$TOP/tests/integration/trace_net.py" "$TMP/lo.trace" >"$TMP/lo.net"
ok $? "read its segments"
sed 's/^/#   /' "$TMP/lo.net" | head -8
# The client's port, from its SYN to 7700 (flags 2).
cport=$(awk '$2 == 6 && $6 == 7700 && $8 == 2 {print $4; exit}' "$TMP/lo.net")
is "$(awk -v c="$cport" '$2 != 6 || $3 != "::1" || $5 != "::1" ||
	!(($4 == c && $6 == 7700) || ($4 == 7700 && $6 == c)) {n++} END {print n + 0}' "$TMP/lo.net")" 0 \
	"every segment is IPv6 from ::1 to ::1 between port 7700 and the client's ($cport)"
is "$(awk -v c="$cport" '$1 == "tx" && $4 == c && $7 == 8 {n++} END {print n + 0}' "$TMP/lo.net")" 5 \
	"the 5 requests of 8 bytes sent, with their payload length"
is "$(awk '$1 == "rx" && $4 == 7700 && $7 == 8 {n++} END {print n + 0}' "$TMP/lo.net")" 5 \
	"the 5 answers received"

cpid=$(awk '/^pid/ {print $2}' "$TMP/lo-client.out")
dbpid=$(awk '/^pid/ {print $2}' "$TMP/lo-db.out")
"$SRVSCOPE" critical --tid "$cpid" --format=json "$TMP/lo.trace" >"$TMP/lo.json"
ok $? "critical over the loopback trace"
python3 - "$TMP/lo.json" "$dbpid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
db = int(sys.argv[2])
net = [s for s in d["segments"] if s["state"] == "NETWORK"]
for s in net:
    print("# NETWORK %.3f ms: %s from %s" % ((s["end_ns"] - s["start_ns"]) / 1e6, s["what"], s["from_tid"]))
answers = [s for s in net if s["what"].startswith("[::1]:7700 -> [::1]:") and s["from_tid"] == db]
# db computes 20 ms before each answer: the client waits for it unless the machine kept it
# from its read() that long after its write().
assert len(answers) >= 4, "%d answers from db's thread" % len(answers)
assert all(s["what"].startswith("[::1]:7700 -> [::1]:") for s in net), "a packet misnamed"
assert any(s["tid"] == db and s["state"] == "RUNNING" for s in d["segments"]), "db's work not on the path"
PY
ok $? "the client's waits cross to the server's thread through its answers over ::1"

in_ns "$L" "$SRVSCOPE" record --net -o "$TMP/lo2.trace" -- bash "$TMP/lo.sh" 2>"$TMP/lo2.err"
ok $? "record --net of the same"
is "$(python3 "$TOP/tests/integration/trace_net.py" "$TMP/lo2.trace" | wc -l)" 0 \
	"without =all, no loopback segment"
done_testing
