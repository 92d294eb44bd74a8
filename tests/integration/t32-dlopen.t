#!/bin/bash
# One long top session while the target loads and unloads a library (dlopener): the
# cached maps, unwind tables and symbols must follow every change. Each load lands at a
# new address; the library's thread must always be named right, never with stale symbols.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || skip_all "python3 is needed to check the JSON"

# Summarises a top --format=json stream: per snapshot, is the library thread there, is its
# chain right, where was the library; anything named wrongly.
cat >"$TMP/check.py" <<'EOF'
import json, sys
own = set(open(sys.argv[2]).read().split())
snaps = lib_snaps = lib_right = home_right = wrong = 0
addrs = set()
for line in open(sys.argv[1]):
    d = json.loads(line)
    snaps += 1
    home_ok = False
    for g in d["groups"]:
        user = [f for f in g["frames"] if not f["kernel"]]
        syms = [f["symbol"] for f in user]
        for f in user:
            mod = f["module"] or ""
            # Code of the library is only ever named as one of the library's functions.
            if mod.endswith("fixlibone.so") and f["symbol"] and f["symbol"] not in own:
                wrong += 1
                print("# wrong: %s in %s" % (f["symbol"], mod))
            if f["symbol"] in ("lib_inner", "lib_outer", "lib_thread", "fixlib_start",
                               "fixlib_stop") and not mod.endswith("fixlibone.so"):
                wrong += 1
                print("# wrong: %s in %s" % (f["symbol"], mod))
        for t in g["threads"]:
            if t["name"] == "dl-lib":
                lib_snaps += 1
                chain = [s for s in syms if s in ("lib_inner", "lib_outer", "lib_thread")]
                if chain == ["lib_inner", "lib_outer", "lib_thread"] and all(syms) \
                        and any(s and "start_thread" in s for s in syms[-3:]):
                    lib_right += 1
                    addrs.add(next(f["addr"] for f in user if f["symbol"] == "lib_inner"))
                else:
                    print("# dl-lib: %s" % ";".join(str(s) for s in syms))
            if t["name"] == "dl-home":
                home_ok = [s for s in syms if s and s.startswith("home_")] == \
                    ["home_inner", "home_outer", "home_thread"]
    home_right += home_ok
print("snapshots %d" % snaps)
print("lib_snapshots %d" % lib_snaps)
print("lib_right %d" % lib_right)
print("home_right %d" % home_right)
print("lib_addresses %d" % len(addrs))
print("wrong %d" % wrong)
EOF
val() { sed -n "s/^$1 //p" "$TMP/summary"; }
nm --defined-only "$FIXTURES/fixlibone.so" | awk '$2 ~ /^[tTwW]$/ { print $3 }' >"$TMP/libsyms"
check "the library's functions are listed" grep -qx lib_inner "$TMP/libsyms"

# Signal-driven: load, sample a while, unload, sample a while; four times, one session.
for mode in nostop ptrace; do
	start_fixture "$FIXTURES/dlopener" || { ok 1 "dlopener starts"; continue; }
	out="$TMP/fixture.$$.dl"
	"$SRVSCOPE" top -p "$FPID" --mode=$mode -i 40 -n 80 --format=json >"$TMP/$mode.json" \
		2>"$TMP/$mode.err" &
	top=$!
	sleep 0.3
	for i in 1 2 3 4; do
		kill -USR1 "$FPID"
		sleep 0.35
		kill -USR2 "$FPID"
		sleep 0.25
	done
	wait $top
	is "$?" 0 "$mode: top ran through the map changes"
	[ -s "$TMP/$mode.err" ] && sed 's/^/#   stderr: /' "$TMP/$mode.err"
	python3 "$TMP/check.py" "$TMP/$mode.json" "$TMP/libsyms" >"$TMP/summary"
	grep '^#' "$TMP/summary" | head -5
	is "$(val snapshots)" 80 "$mode: 80 snapshots"
	check "$mode: the library's thread seen in many snapshots ($(val lib_snapshots))" \
		[ "$(val lib_snapshots)" -ge 20 ]
	# A sample that lands as the library is being unloaded finds it gone by the time it is
	# symbolized: at most one such sample per unload may leave frames unnamed.
	check "$mode: its chain lib_thread;lib_outer;lib_inner right ($(val lib_right) of $(val lib_snapshots), all but at most one per unload)" \
		[ "$(val lib_right)" -ge $(($(val lib_snapshots) - 4)) ]
	check "$mode: the library was met at several addresses ($(val lib_addresses))" \
		[ "$(val lib_addresses)" -ge 2 ]
	is "$(val home_right)" 80 "$mode: the home thread right in every snapshot"
	is "$(val wrong)" 0 "$mode: no frame named wrongly"
	is "$(tracer_of "$FPID")" 0 "$mode: target not traced afterwards"
	kill -KILL "$FPID"
	wait "$FPID" 2>/dev/null
done

# Stress: the library reloads every 30 ms at a new address while top samples every 10 ms.
# A sample may catch the maps mid-change: then a frame may stay unnamed, never misnamed.
start_fixture "$FIXTURES/dlopener" 30 || ok 1 "dlopener 30 starts"
"$SRVSCOPE" top -p "$FPID" --mode=nostop -i 10 -n 150 --format=json >"$TMP/stress.json" 2>"$TMP/err"
is "$?" 0 "stress: top ran through 150 samples of a library reloading every 30 ms"
python3 "$TMP/check.py" "$TMP/stress.json" "$TMP/libsyms" >"$TMP/summary"
grep '^#' "$TMP/summary" | head -5
is "$(val wrong)" 0 "stress: no frame named wrongly"
check "stress: the library thread's chain right in >= 90% of the snapshots that have it ($(val lib_right)/$(val lib_snapshots))" \
	[ $(($(val lib_right) * 10)) -ge $(($(val lib_snapshots) * 9)) ]
check "stress: the library was met at both of its alternating addresses ($(val lib_addresses))" \
	[ "$(val lib_addresses)" -ge 2 ]
is "$(val home_right)" 150 "stress: the home thread right in every snapshot"
done_testing
