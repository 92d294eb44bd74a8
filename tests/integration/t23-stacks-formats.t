#!/bin/bash
# The output formats agree with each other: raw (gdb style, aggregated the way poor man's
# profiler scripts do it), folded, json and speedscope describe the same stacks; -n
# aggregates samples.
. "$(dirname "$0")/lib.sh"
need_root
start_fixture "$FIXTURES/stackfix-c-O2" || { ok 1 "fixture starts"; done_testing; }
threads=$(ls /proc/"$FPID"/task | wc -l)
for mode in ptrace nostop; do
	"$SRVSCOPE" stacks -p "$FPID" --mode=$mode --format=raw >"$TMP/raw" 2>"$TMP/err"
	is "$?" 0 "$mode: raw format exits 0"
	"$SRVSCOPE" stacks -p "$FPID" --mode=$mode --format=folded >"$TMP/folded" 2>>"$TMP/err"
	is "$?" 0 "$mode: folded format exits 0"
	is "$(grep -c '^Thread ' "$TMP/raw")" "$threads" "$mode: raw has one block per thread"
	# Aggregate raw like a gdb-based poor man's profiler: per thread, the function names
	# from "#N 0xADDR in NAME (...)" lines, innermost first, joined by commas; then count.
	awk '/^Thread / { if (s != "") print s; s = "" }
	     /^#/ { v = ($3 == "in") ? $4 : $2; s = (s == "") ? v : s "," v }
	     END { if (s != "") print s }' "$TMP/raw" | sort | uniq -c |
		awk '{ print $2, $1 }' | sort >"$TMP/raw.agg"
	# The same from folded: drop the thread name, reverse to innermost first.
	awk '{ n = split($1, f, ";"); s = ""; for (i = n; i >= 2; i--) s = (s == "") ? f[i] : s "," f[i];
	       c[s] += $2 } END { for (s in c) print s, c[s] }' "$TMP/folded" | sort >"$TMP/folded.agg"
	check "$mode: raw aggregated like pt-pmp equals folded" cmp -s "$TMP/raw.agg" "$TMP/folded.agg"
	cmp -s "$TMP/raw.agg" "$TMP/folded.agg" || diff "$TMP/raw.agg" "$TMP/folded.agg" | sed 's/^/#   /' | head -10
	like "$(head -1 "$TMP/folded")" '^fix-[a-z]+;.+ [0-9]+$' "$mode: folded lines are name;frames count"
done

"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace -n 3 -i 10 --format=json >"$TMP/n3.json"
is "$?" 0 "-n 3 exits 0"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["samples"], sum(g["count"] for g in d["groups"]), d["threads"])' "$TMP/n3.json")" \
	"3 $((3 * threads)) $threads" "-n 3: 3 samples, 3 thread-samples per thread"
python3 - "$TMP/n3.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
need = {"pid", "comm", "mode", "samples", "threads", "stall_us", "groups"}
assert need <= set(d), need - set(d)
assert {"total", "mean", "max"} <= set(d["stall_us"])
for g in d["groups"]:
    assert {"count", "threads", "frames"} <= set(g)
    for t in g["threads"]:
        assert {"tid", "name", "state", "syscall"} <= set(t)
    for f in g["frames"]:
        assert {"addr", "symbol", "module", "offset", "kernel"} <= set(f)
        assert f["addr"].startswith("0x") and f["offset"].startswith("0x")
PY
ok $? "json has every field of the documented schema"
# speedscope: a profile per thread name, its weights the folded counts, frames root first.
"$SRVSCOPE" stacks -p "$FPID" --format=speedscope >"$TMP/ss.json"
is "$?" 0 "speedscope format exits 0"
"$SRVSCOPE" stacks -p "$FPID" --format=folded >"$TMP/folded2"
python3 - "$TMP/ss.json" "$TMP/folded2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
frames = [f["name"] for f in d["shared"]["frames"]]
got = {}
for p in d["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "none" and len(p["samples"]) == len(p["weights"])
    for s, w in zip(p["samples"], p["weights"]):
        got[";".join([p["name"]] + [frames[i] for i in s])] = w
want = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]).read().splitlines()}
assert got == want, (sorted(got.items())[:3], sorted(want.items())[:3])
PY
ok $? "speedscope holds exactly the folded stacks and counts"
"$SRVSCOPE" top -p "$FPID" -n 2 -i 50 --format=speedscope >"$TMP/top.ss"
is "$(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["profiles"]))' "$TMP/top.ss")" 2 \
	"top --format=speedscope: one document per refresh"

"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace >"$TMP/text"
like "$(head -1 "$TMP/text")" "^pid $FPID \\(fix-main\\): $threads threads, 1 sample, mode ptrace, stall per thread mean [0-9]+ us, max [0-9]+ us$" \
	"text header: pid, name, threads, mode, stall"
like "$(cat "$TMP/text")" '3 threads \([0-9.]+%\): fix-mutex/' "text groups: count, share, names"
done_testing
