#!/bin/bash
# 'srvscope cpu' components on a loopback TCP stream (iperf3, 128 KiB writes), perf
# sampling every CPU at the same time (the two processes picked from its samples by pid):
# the components total 100 % of the kernel samples, data copy is among the two largest (as
# SIGCOMM'21 finds for large messages; here the lock share, mostly the unlocks where
# interrupts come back on, is within 1 to 3 points of it on a quiet machine and was above
# it in CI), srvscope's largest is perf's, each within 2 points of perf's self time
# classified by the same table, and the unmatched functions are named. A components
# file's rules win over the built-in ones; its bad lines are named with their number.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/perf.sh"
need_root
need_btf
command -v perf >/dev/null || skip_all "perf is missing (scripts/install-deps.sh)"
command -v iperf3 >/dev/null || skip_all "iperf3 is missing (scripts/install-deps.sh)"

port=$(free_port)
iperf3 -s -p "$port" -B 127.0.0.1 >"$TMP/server.log" 2>&1 &
spid=$!
_pids="$_pids $spid"
for _ in $(seq 200); do
	ss -ltnH "sport = :$port" | grep -q . && break
	sleep 0.05
done
timeout 60 iperf3 -c 127.0.0.1 -p "$port" -t 50 -l 128K >"$TMP/client.log" 2>&1 &
cpid=$!
_pids="$_pids $cpid"
for _ in $(seq 200); do
	ss -tnH state established "dport = :$port" | grep -q . && break
	sleep 0.05
done
client=$(pgrep -f "iperf3 -c 127.0.0.1 -p $port" | grep -v "^$cpid$" | head -1)
[ -n "$client" ] || client=$cpid
sleep 1

# perf samples the same window as srvscope does (perf.sh): a cpu-clock event on every CPU
# (-a), not per task (-p). Per-task events are switched out and in with the threads,
# interrupts off: a period that ends in the switch is carried over and fires 10 us after the
# thread runs again, so perf -p moved up to 3-4 points of samples into 'sched' and out of
# 'lock' (docs/cpu.md). Per-CPU events, perf's and srvscope's alike, take the sample where
# the CPU is when the period ends (or where interrupts come back on). With equal periods
# one timer keeps firing just after the other's interrupt and lands in its softirq work
# (seen: handle_softirqs 19 % in one, 10 % in the other). 5 kHz for 8 s: on a loaded
# machine iperf3 may get a fifth of a CPU, and the shares of a few thousand samples would
# differ by their noise alone.
# Two samplers of fixed periods on one window still part now and then: perf against perf
# (190011 and 200040 ns, the same window, 4 runs) 0.7 to 2.2 points at most, srvscope
# against perf 0.3 to 2.0 in the same runs and 6.4 once in CI (lock 31.4 % against 25.0),
# either way round, as iperf3's 128 KiB writes come every 40 us or so and each sampler can
# keep to one phase of them for seconds. When a component is more than 2 points off, the
# window is measured again, twice at most, and the last must agree: its figures are checked.
measure() {
	perf_start "$TMP/perf.data"
	"$SRVSCOPE" cpu -p $spid,$client -F 4999 -d 8 -f json >"$TMP/s.json" 2>"$TMP/s.err"
	cpu_rc=$?
	perf_folded "$TMP/perf.data" "$spid,$client" "$TMP/s.json" "$TMP/perf.folded"
	"$SRVSCOPE" cpu --folded "$TMP/perf.folded" -f json >"$TMP/p.json" 2>"$TMP/p.err"
	folded_rc=$?
}
# off: true when a component of the window just measured is more than 2 points off perf's.
off() {
	python3 -c '
import json, sys
s, p = (json.load(open(f)) for f in sys.argv[1:3])
pc = {c["name"]: c["percent"] for c in p["components"]}
off = [(c["name"], c["percent"], pc.get(c["name"], 0)) for c in s["components"]
       if abs(c["percent"] - pc.get(c["name"], 0)) > 2]
for n, a, b in off:
    print("# window %s: %s %.2f %% against perf'"'"'s %.2f %%: measured again" % (sys.argv[3], n, a, b))
sys.exit(0 if off else 1)' "$TMP/s.json" "$TMP/p.json" "$1" 2>/dev/null
}
# Up to three windows (make check runs saw the second window part too, now and then): the
# last one measured is checked.
measure
for w in 1 2; do off "$w" || break; measure; done
ok $cpu_rc "cpu -p SERVER,CLIENT -d 8 exits 0"
ok $folded_rc "perf's samples classified by the same table"

python3 - "$TMP/s.json" "$TMP/p.json" >"$TMP/checks" <<'PY'
import json, sys
s, p = (json.load(open(f)) for f in sys.argv[1:3])
def ok(cond, desc):
    print("PASS" if cond else "FAIL", desc)
sc = {c["name"]: c for c in s["components"]}
pc = {c["name"]: c for c in p["components"]}
k = s["kernel_samples"]
print("diag srvscope: %d samples, %d kernel; perf: %d samples, %d kernel"
      % (s["samples"], k, p["samples"], p["kernel_samples"]))
for n in sc:
    print("diag %-10s %6.2f %%  perf %6.2f %%" % (n, sc[n]["percent"], pc[n]["percent"]))
ok(abs((s["end_ns"] - s["start_ns"]) / 1e9 - s["duration_s"]) < 1e-6 and 7.95 < s["duration_s"] < 8.5,
   "the window (start_ns, end_ns) spans duration_s, -d 8 (%.3f s)" % s["duration_s"])
ok(k > 1000, "kernel samples taken (%d)" % k)
ok(s["stacks_lost"] == 0, "no sample lost its stack (%d did)" % s["stacks_lost"])
ok(p["kernel_samples"] > 1000, "and by perf (%d)" % p["kernel_samples"])
ok(sum(c["samples"] for c in s["components"]) == k, "the components total the kernel samples")
ok(abs(sum(c["percent"] for c in s["components"]) - 100) < 0.01, "and 100 %")
named = sorted((c for c in s["components"] if c["name"] != "unmatched"), key=lambda c: -c["samples"])
ok("data_copy" in [c["name"] for c in named[:2]],
   "data copy is one of the two largest components (%s, %s are)" % (named[0]["name"], named[1]["name"]))
top = max(c["percent"] for c in p["components"] if c["name"] != "unmatched")
ok(pc[named[0]["name"]]["percent"] >= top - 2,
   "the largest, %s, is perf's largest or within 2 points of it (%.2f %% against %.2f %%)"
   % (named[0]["name"], pc[named[0]["name"]]["percent"], top))
for n in sc:
    ok(abs(sc[n]["percent"] - pc[n]["percent"]) <= 2,
       "%s %.2f %% within 2 points of perf's %.2f %%" % (n, sc[n]["percent"], pc[n]["percent"]))
ok(all(u["percent"] >= 0.1 and u["function"] for u in s["unmatched"]),
   "the unmatched list names functions above 0.1 %")
listed = sum(u["samples"] for u in s["unmatched"])
ok(sc["unmatched"]["samples"] - listed <= 0.001 * k * max(1, len(s["unmatched"]) + 50),
   "what is unmatched but not listed is below 0.1 % each")
copy = [f for f in s["functions"] if f["component"] == "data_copy" and f["kernel"]]
ok(copy, "functions carry their component (%s)" % (copy[0]["function"] if copy else "none"))
PY
ok $? "the JSON checks ran"
while read -r verdict desc; do
	case $verdict in
	PASS) ok 0 "$desc" ;;
	FAIL) ok 1 "$desc" ;;
	*) diag "$desc" ;;
	esac
done <"$TMP/checks"

# A components file: an exact rule and a prefix rule that win over the built-in ones.
printf '%s\n' '# a file of rules' '_copy_to_iter  rxcopy   # the receive side' \
	'_copy_from_iter* txcopy kernel' 'main  app user' >"$TMP/comp"
"$SRVSCOPE" cpu -p $spid,$client -d 1 --components "$TMP/comp" >"$TMP/c.txt" 2>&1
ok $? "--components FILE"
like "$(cat "$TMP/c.txt")" '^  rxcopy +[0-9.]+ %' "its component rxcopy"
like "$(cat "$TMP/c.txt")" '^  txcopy +[1-9][0-9.]* %' "and txcopy, by prefix, with samples"
# --inclusive: each sample by its innermost classified kernel frame.
"$SRVSCOPE" cpu -p $spid,$client -F 4999 -d 2 --inclusive -f json >"$TMP/i.json" 2>&1
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["name"]: x["percent"] for x in d["components"]}
assert d["inclusive"] and c["data_copy"] > 10, "components: %s" % c
' "$TMP/i.json"
ok $? "--inclusive: data copy still counted"

printf '%s\n' 'tcp_* tcp' '' 'only_one_field' 'a b c d' >"$TMP/bad"
out=$("$SRVSCOPE" cpu -p $spid -d 1 --components "$TMP/bad" 2>&1)
rc=$?
is $rc 2 "a bad components file: exit 2"
is "$out" "srvscope: $TMP/bad:3: expected 'PATTERN COMPONENT [kernel|user]', found 1 field" \
	"named with its line number, one line"
printf 'x* y sideways\n' >"$TMP/bad2"
out=$("$SRVSCOPE" cpu -p $spid -d 1 --components "$TMP/bad2" 2>&1)
like "$out" "bad2:1: the third field must be 'kernel' or 'user'" "a bad third field"

stop_pid $cpid
stop_pid $spid
done_testing
