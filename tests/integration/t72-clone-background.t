#!/bin/bash
# A clone's background thread wakes as often as the original did at the clone's load
# (work.per_run, docs/clone.md): the memcached model (tests/fixtures/models) given two runs,
# its LRU maintainer woken 5 times a second at 100 requests/s and 500 at 2000; the clone's
# mc-lrumaint, counted by its voluntary switches, wakes about 500 times a second under 2000
# requests/s and hardly at all without load, then follows the load when it comes back. A
# clone that kept one period (the model's period_ms, 500 ms) fails the first check.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t72-clone-lib.sh"

python3 - "$MODELS/memcached.json" "$TMP/m.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
base = m["runs"][0]
m["runs"] = [dict(base, index=i, rate=r, throughput_rps=r, requests=3 * r) for i, r in enumerate((100, 2000))]
for c in m["clusters"]:
    c["size_per_run"] = [c["size_per_run"][0]] * 2
    if c["name"] == "mc-lrumaint":
        c["work"]["per_run"] = [{"run": 0, "wakes_per_s": 5, "period_ms": None, "on_cpu_us": 20},
                                {"run": 1, "wakes_per_s": 500, "period_ms": 2, "on_cpu_us": 20}]
json.dump(m, open(sys.argv[2], "w"))
PY
start_clone "$TMP/m.json" || { ok 1 "the clone starts"; done_testing; }
task=""
for t in /proc/"$CLONE_PID"/task/*; do [ "$(cat "$t/comm")" = mc-lrumaint ] && task=$t; done
check "the clone has its LRU maintainer thread" [ -n "$task" ]
wakes() { awk '/^voluntary_ctxt_switches/ {print $2}' "$task/status"; }
# rate WHAT SECONDS: its wake-ups a second while WHAT (a load, or "idle") runs
rate() {
	local a b
	a=$(wakes)
	if [ "$1" = idle ]; then sleep "$2"; else
		timeout -k 2 $(($2 + 10)) "$SRVSCOPE" load "memcached://127.0.0.1:$CLONE_PORT" -c 4 -r "$1" -d "$2" >/dev/null 2>&1
	fi
	b=$(wakes)
	echo $(((b - a) / $2))
}
sleep 0.3
r=$(rate 2000 3)
check "at 2000 requests/s it wakes as the model's run at 2000 did: $r a second (300 to 600)" [ "$r" -ge 300 -a "$r" -le 600 ]
sleep 0.3 # the load's last 100 ms window
r=$(rate idle 3)
check "without load it wakes far less: $r a second (at most 10)" [ "$r" -le 10 ]
r=$(rate 2000 2)
check "the load back, its pace back within a second: $r a second over 2 s (at least 200)" [ "$r" -ge 200 ]
stop_clone TERM "memcached clone"
done_testing
