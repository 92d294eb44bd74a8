#!/bin/bash
# A clone's background thread wakes as often as the original did at the clone's load
# (work.per_run, docs/clone.md): the memcached model (tests/fixtures/models) given two runs,
# its LRU maintainer woken 5 times a second at 100 requests/s and 500 at 2000; the clone's
# mc-lrumaint, counted by its voluntary switches, wakes about 500 times a second under 2000
# requests/s and hardly at all without load, then follows the load when it comes back. A
# clone that kept one period (the model's period_ms, 500 ms) fails the first check.
# With the model's wake_floor_us (what a wake-up alone cost a bare sleeper beside the
# original), the clone spins only the rest of on_cpu_us: 100 us a wake-up of which 90 are
# the wake-up's own leaves a spin of 10, so its CPU per wake-up is its own wake-up's cost
# (12 to 30 us here) and 10, far from the 100 a clone aiming at the total takes.
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
for c in m["clusters"]:
    if c["name"] == "mc-lrumaint":
        for r in c["work"]["per_run"]:
            r["on_cpu_us"] = 100
        c["work"].update(on_cpu_us=100, wake_floor_us=90, wake_floor_period_ms=2)
json.dump(m, open(sys.argv[2].replace(".json", "-floor.json"), "w"))
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

start_clone "$TMP/m-floor.json" || { ok 1 "the clone with a wake-up floor starts"; done_testing; }
task=""
for t in /proc/"$CLONE_PID"/task/*; do [ "$(cat "$t/comm")" = mc-lrumaint ] && task=$t; done
sleep 0.3
c0=$(cut -d' ' -f1 "$task/schedstat")
w0=$(wakes)
timeout -k 2 12 "$SRVSCOPE" load "memcached://127.0.0.1:$CLONE_PORT" -c 4 -r 2000 -d 2 >/dev/null 2>&1
c1=$(cut -d' ' -f1 "$task/schedstat")
w1=$(wakes)
per=$(((c1 - c0) / 1000 / (w1 - w0 + 1)))
check "with wake_floor_us 90 of on_cpu_us 100, $per us of CPU a wake-up over $((w1 - w0)) (10 to 60)" \
	[ "$per" -ge 10 -a "$per" -le 60 -a $((w1 - w0)) -ge 200 ]
stop_clone TERM "memcached clone with a wake-up floor"
done_testing
