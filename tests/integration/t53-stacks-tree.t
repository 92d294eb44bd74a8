#!/bin/bash
# 'stacks -p' and 'top -p' sample the whole tree of the process: on an nginx master with 2
# workers (its own instance on a loopback port), every process's threads are in the
# snapshot with their pid, in nostop and ptrace mode; --no-children keeps the master alone;
# top follows the tree as it changes (a reload replaces the workers).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/servers.sh"
need_root
need_servers nginx

# pids_of: "PROCESSES pid pid ..." (the distinct thread pids) of each JSON document on stdin
pids_of() {
	python3 -c '
import json, sys
for line in sys.stdin.read().strip().split("\n") if sys.argv[1] == "lines" else [sys.stdin.read()]:
    d = json.loads(line)
    pids = sorted({t["pid"] for g in d["groups"] for t in g["threads"]})
    print(d["processes"], " ".join(map(str, pids)))' "$1"
}
tree() { echo "$(($(children_of "$NGINX_PID" | wc -w) + 1)) $( (echo "$NGINX_PID"; children_of "$NGINX_PID") | sort -n | tr '\n' ' ' | sed 's/ $//')"; }

start_nginx 2 || exit 1
want=$(tree)
diag "the tree: $want"
for mode in nostop ptrace; do
	"$SRVSCOPE" stacks -p "$NGINX_PID" --mode=$mode --format=json >"$TMP/$mode.json" 2>"$TMP/$mode.err"
	ok $? "stacks -p MASTER --mode=$mode"
	is "$(pids_of one <"$TMP/$mode.json")" "$want" "$mode: the 3 processes, each thread with its pid"
done
"$SRVSCOPE" stacks -p "$NGINX_PID" --no-children --format=json >"$TMP/alone.json" 2>/dev/null
is "$(pids_of one <"$TMP/alone.json")" "1 $NGINX_PID" "--no-children: the master alone"
like "$("$SRVSCOPE" stacks -p "$NGINX_PID" 2>/dev/null | head -1)" "^pid $NGINX_PID \(nginx\): 3 threads in 3 processes" \
	"text: the header counts the processes"

# 24 refreshes (6 s): the reload has 5 s to end before the last one (on a fresh machine
# it once had not ended 1.4 s after the HUP, when the last of 8 refreshes came)
"$SRVSCOPE" top -p "$NGINX_PID" -n 24 -i 250 --format=json >"$TMP/top.json" 2>"$TMP/top.err" &
topp=$!
sleep 0.6
old=$(children_of "$NGINX_PID" | tr '\n' ' ')
kill -HUP "$NGINX_PID" # a reload: new workers, the old ones leave
t0=$(date +%s%N) reloaded=""
for _ in $(seq 200); do
	new=$(children_of "$NGINX_PID" | tr '\n' ' ')
	[ "$new" != "$old" ] && [ "$(echo $new | wc -w)" = 2 ] && reloaded=1 && break
	sleep 0.02
done
[ -n "$reloaded" ] && diag "reloaded in $((($(date +%s%N) - t0) / 1000000)) ms" ||
	echo "# the reload had not ended after 4 s: workers '$new', before '$old'" >&2
wait $topp
ok $? "top -p MASTER -n 24 while nginx reloads"
seen=$(pids_of lines <"$TMP/top.json")
is "$(echo "$seen" | sed -n 1p)" "$want" "top: the first refresh has the 3 processes"
is "$(echo "$seen" | sed -n '$p')" "$(tree)" "top: the last has the new workers, not the old ones"
is "$(cat "$TMP/top.err")" "" "top: no message about the workers that left"
done_testing
