#!/bin/bash
# srvscope clone refuses a bad model before anything starts: one line on stderr, a non-zero
# exit, no scratch directory made and no port listened on. Each bad model is a good one
# (tests/fixtures/models/memcached.json) with one field broken.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t72-clone-lib.sh"
good="$MODELS/memcached.json"
mkdir -p "$TMP/scratch"

# bad NAME PYTHON-EXPRESSION-ON-m REGEX: writes the model changed by the expression, runs
# the clone on it, checks the one line.
bad() {
	local f="$TMP/$1.json" out rc lines
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(m, open(sys.argv[3], "w"))' "$good" "$2" "$f" || { ok 1 "$1: model written"; return; }
	out=$(TMPDIR="$TMP/scratch" timeout 10 "$SRVSCOPE" clone "$f" --port 0 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$out" | wc -l)
	check "$1: refused with a non-zero exit" [ $rc -ne 0 ] && [ $rc -ne 124 ]
	is "$lines" 1 "$1: one line"
	like "$out" "$3" "$1: the line says what is wrong"
}

bad pool-0 'm["network_model"]["network_pool"] = 0' 'network_model.network_pool is 0'
bad size-minus-1 'm["request"]["response_bytes"]["p50"] = -1' 'response_bytes.p50 is -1'
bad threads-1e9 'm["network_model"]["network_pool"] = 10**9' 'network_pool is 1000000000'
bad bg-threads-1e9 'm["clusters"][2]["size_per_run"] = [10**9]' 'size_per_run ends with 1000000000'
bad newer-version 'm["version"] = 2' 'model version 2 is newer than this srvscope reads \(1\)'
bad other-schema 'm["schema"] = "pprof"' "schema is 'pprof'"
bad no-network-model 'del m["network_model"]' 'network_model is missing'
bad unknown-io 'm["network_model"]["network_io"] = "carrier-pigeon"' "network_io is 'carrier-pigeon'"
# strings of the model file in the line are escaped: no terminal escape, no second line
bad escaped-io 'm["network_model"]["network_io"] = "\x1b[2J\nfake"' "network_io is '\\\\x1b\\[2J\\\\x0afake'"
bad escaped-pool 'm["network_model"]["network_pool"] = "\x1b]0;t\x07"' "network_pool is '\\\\x1b\\]0\\\\x3bt\\\\x07'"
bad escaped-schema 'm["schema"] = "\x9b31m"' "schema is '\\\\xc2\\\\x9b31m'"
bad iov-negative 'm["syscall_profile"]["cycle"][1]["iov"] = [19, -5]' 'cycle\[1\].iov\[1\] is not a length'
bad unknown-cluster 'm["network_model"]["roles"]["network"] = [42]' 'names cluster 42, which is not in clusters'
bad string-size 'm["request"]["request_bytes"]["p50"] = "ten"' 'request_bytes.p50 is not a number'
bad cpu-wakeups-negative 'm["syscall_profile"]["cpu_unrecorded"] = [{"cpu_us_per_request": 20, "wakeups_per_request": 1}, {"cpu_us_per_request": 7, "wakeups_per_request": -1}]' 'cpu_unrecorded\[1\].wakeups_per_request is -1'
bad cpu-not-array 'm["syscall_profile"]["cpu_unrecorded"] = 5' 'cpu_unrecorded is not an array'
bad ratio-0 'm["syscall_profile"]["cpu_beside_skeleton"] = {"ratio": 0}' 'cpu_beside_skeleton.ratio is 0'
bad ratio-1e9 'm["syscall_profile"]["cpu_beside_skeleton"] = {"ratio": 1e9}' 'cpu_beside_skeleton.ratio is 1000000000: a number from 0.01 to 100'
bad ratio-missing 'm["syscall_profile"]["cpu_beside_skeleton"] = {"slice_ratios": [1]}' 'cpu_beside_skeleton.ratio is missing'
bad beside-not-object 'm["syscall_profile"]["cpu_beside_skeleton"] = [1.2]' 'cpu_beside_skeleton is not an object'

printf '{"schema": "srvscope-model", "version": 1, ' >"$TMP/cut.json"
out=$("$SRVSCOPE" clone "$TMP/cut.json" 2>&1); rc=$?
check "malformed JSON: refused" [ $rc -ne 0 ]
like "$out" "cut.json: not JSON \(line 1" "malformed JSON: the line says where"
out=$("$SRVSCOPE" clone "$TMP/none.json" 2>&1); rc=$?
check "a missing file: refused" [ $rc -ne 0 ]
like "$out" "cannot read .*none.json" "a missing file: said so"
out=$("$SRVSCOPE" clone "$TMP" 2>&1); rc=$?
like "$out" "cannot read .*: .*directory" "a directory: refused, said so"
out=$("$SRVSCOPE" clone "$good" --port 70000 2>&1); rc=$?
is "$rc" 2 "--port 70000: a usage error"
is "$(ls -A "$TMP/scratch")" "" "no scratch directory was made for any refused model"
done_testing
