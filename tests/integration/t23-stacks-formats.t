#!/bin/bash
# The output formats agree with each other: raw (gdb style, aggregated the way poor man's
# profiler scripts do it), folded and json describe the same stacks; -n aggregates samples.
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
"$SRVSCOPE" stacks -p "$FPID" --mode=ptrace >"$TMP/text"
like "$(head -1 "$TMP/text")" "^pid $FPID \\(fix-main\\): $threads threads, 1 sample, mode ptrace, stall per thread mean [0-9]+ us, max [0-9]+ us$" \
	"text header: pid, name, threads, mode, stall"
like "$(cat "$TMP/text")" '3 threads \([0-9.]+%\): fix-mutex/' "text groups: count, share, names"
done_testing
