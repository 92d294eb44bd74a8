#!/bin/bash
# 'srvscope topology': the machine as 'lstopo-no-graphics --no-io' prints it, and the same
# counts in JSON as in lstopo's XML; with -p, two spinning threads pinned with taskset
# (the process to one CPU, then each thread to its own) show on exactly those CPUs.
. "$(dirname "$0")/lib.sh"
need_root
need_btf
command -v lstopo-no-graphics >/dev/null || skip_all "lstopo-no-graphics is missing (hwloc-nox)"
command -v python3 >/dev/null || skip_all "python3 is missing"

out=$("$SRVSCOPE" topology)
ok $? "topology exits 0"
is "$out" "$(lstopo-no-graphics --no-io)" "the same text as lstopo-no-graphics --no-io"
"$SRVSCOPE" topology -f json >"$TMP/t.json"
lstopo-no-graphics --no-io --of xml >"$TMP/t.xml"
python3 - "$TMP/t.json" "$TMP/t.xml" <<'PY'
import json, sys, xml.etree.ElementTree as ET
j = json.load(open(sys.argv[1]))
x = ET.parse(sys.argv[2]).getroot()
def count(t):
    return sum(1 for o in x.iter("object") if o.get("type") == t)
want = {"packages": count("Package"), "numa_nodes": count("NUMANode"),
        "cores": count("Core"), "pus": count("PU")}
got = {k: j[k] for k in want}
assert got == want, (got, want)
# each PU's core as lstopo nests them
pus = {}
for core in (o for o in x.iter("object") if o.get("type") == "Core"):
    for pu in (o for o in core.iter("object") if o.get("type") == "PU"):
        pus[int(pu.get("os_index"))] = sorted(int(p.get("os_index")) for p in core.iter("object") if p.get("type") == "PU")
for c in j["cpus"]:
    assert c["siblings"] == pus[c["cpu"]], (c, pus)
PY
ok $? "JSON: packages, NUMA nodes, cores, PUs and each CPU's siblings as in lstopo's XML"

last=$(($(nproc) - 1))
start_fixture taskset -c $last "$FIXTURES/spinners" 2 30 || exit 1
read -r _ pid t0 t1 <"$FOUT"
"$SRVSCOPE" topology -p $pid -d 1 -f json >"$TMP/p.json" 2>"$TMP/p.err"
ok $? "topology -p PID -d 1"
python3 - "$TMP/p.json" $t0 $t1 $last <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t0, t1, cpu = (int(a) for a in sys.argv[2:5])
th = {t["tid"]: t for t in j["process"]["threads"]}
for tid in (t0, t1):
    t = th[tid]
    assert t["samples"] > 0, t
    assert [w["cpu"] for w in t["cpus"]] == [cpu], t
    assert t["allowed_cpus"] == str(cpu), t
    assert t["migrations"] == 0, t
assert sum(m["kb"] for m in j["process"]["memory_per_node"]) > 0
PY
ok $? "both threads on CPU $last alone, allowed there, no migration; memory per node"

if [ "$last" -gt 0 ]; then
	taskset -pc 0 $t0 >/dev/null
	sleep 0.1
	"$SRVSCOPE" topology -p $pid -d 1 -f json >"$TMP/q.json" 2>"$TMP/q.err"
	python3 - "$TMP/q.json" $t0 $t1 $last <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t0, t1, cpu = (int(a) for a in sys.argv[2:5])
th = {t["tid"]: t for t in j["process"]["threads"]}
assert [w["cpu"] for w in th[t0]["cpus"]] == [0], th[t0]
assert [w["cpu"] for w in th[t1]["cpus"]] == [cpu], th[t1]
assert th[t0]["allowed_cpus"] == "0", th[t0]
PY
	ok $? "one thread moved to CPU 0: each on exactly its CPU"
	out=$("$SRVSCOPE" topology -p $pid -d 1)
	like "$out" "^ +$t0 spin-0 +0 +[0-9]+ +[0-9]+  cpu0 100.0% \(core L#[0-9]+, node 0\)$" "text: spin-0 on cpu0"
fi

out=$("$SRVSCOPE" topology -p 999999999 2>&1)
is $? 2 "a bad pid: exit 2"
out=$("$SRVSCOPE" topology -f xml 2>&1)
like "$out" "unknown format 'xml'" "a bad format: one line"
done_testing
