# Three hosts for 'srvscope critical' (sourced after lib.sh): network namespaces C (the
# client), W (web) and DB, C and W joined by a delay line of D ms each way (tc0 - tw0), W
# and DB by a veth pair (vw - vd). The caller gives the devices their addresses.
in_ns() { local ns=$1; shift; nsenter --net="$ns" "$@"; }

# tiers_namespaces D: sets C, W and DB; skips the whole test when namespaces or the delay
# line cannot be had; returns non-zero when the devices cannot be set up.
tiers_namespaces() {
	local dbpid ns
	new_netns && C=$NETNS && new_netns && W=$NETNS && new_netns && DB=$NETNS ||
		skip_all "cannot create network namespaces"
	start_fixture "$FIXTURES/rec_delayline" "$C" tc0 "$W" tw0 "$1" || skip_all "delay line"
	dbpid=${DB#/proc/}
	dbpid=${dbpid%%/*}
	for ns in "$C" "$W" "$DB"; do in_ns "$ns" ip link set lo up || return 1; done
	in_ns "$C" ip link set tc0 up && in_ns "$W" ip link set tw0 up &&
		in_ns "$W" ip link add vw type veth peer name vd &&
		in_ns "$W" ip link set vd netns "$dbpid" && in_ns "$W" ip link set vw up &&
		in_ns "$DB" ip link set vd up
}

wait_line() { # wait_line FILE WORD: until FILE has a line starting with WORD (10 s at most)
	local i=0
	while ! grep -q "^$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 1000 ] && return 1; sleep 0.01
	done
}

# tiers_run NAME PORT WEB_SKEW DB_SKEW WEB_ADDR DB_ADDR [-6]: records the three tiers (N
# requests; db computing 30 ms each) into $TMP/NAME-*.trace, the servers listening on IPv6
# with -6; the skews are record options (--clock-skew=...) or "".
tiers_run() {
	local n=$1 port=$2 wskew=$3 dskew=$4 waddr=$5 dbaddr=$6 six=${7:-} r1 r2
	in_ns "$DB" "$SRVSCOPE" record --net $dskew -o "$TMP/$n-db.trace" -- \
		"$FIXTURES/crit_tiers" $six db $((port + 1)) 30 >"$TMP/$n-db.out" 2>"$TMP/$n-db.err" &
	r1=$!
	wait_line "$TMP/$n-db.out" listening || return 1
	in_ns "$W" "$SRVSCOPE" record --net $wskew -o "$TMP/$n-web.trace" -- \
		"$FIXTURES/crit_tiers" $six web $port "$dbaddr" $((port + 1)) \
		>"$TMP/$n-web.out" 2>"$TMP/$n-web.err" &
	r2=$!
	wait_line "$TMP/$n-web.out" listening || return 1
	in_ns "$C" timeout 30 "$SRVSCOPE" record --net -o "$TMP/$n-client.trace" -- \
		"$FIXTURES/crit_tiers" client "$waddr" $port $N \
		>"$TMP/$n-client.out" 2>"$TMP/$n-client.err" || return 1
	wait $r1 && wait $r2
}

# tiers_judge NAME WIRE WEB_SKEW DB_SKEW: critical over NAME's three traces, from the
# client's thread, into $TMP/NAME.json (one check), then tiers_judge.py's verdict (one).
tiers_judge() {
	local n=$1 cpid
	cpid=$(awk '/^pid/ {print $2}' "$TMP/$n-client.out")
	"$SRVSCOPE" critical --tid "$cpid" --format=json "$TMP/$n-client.trace" \
		"$TMP/$n-web.trace" "$TMP/$n-db.trace" >"$TMP/$n.json"
	ok $? "$n: critical over the three traces"
	python3 "$TOP/tests/integration/tiers_judge.py" "$TMP/$n.json" "$TMP" "$n" "$D" "$2" "$3" "$4"
}
