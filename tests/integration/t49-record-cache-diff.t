#!/bin/bash
# Differential check of the recorder's stack cache on real servers under load: the demo
# server (under demo-client) and memcached (under memcslap) are recorded by two recorders at
# once, one with the default cache and one with --stack-refresh 0 (every stack taken
# afresh), so both see the same episodes. For every episode both have (paired by thread and
# start, which differ by the other recorder's run time), the user stack where
# the thread blocked, and the waker's, must be the same, and so must the kernel stacks (the
# blocked thread's, and the waker's where both saw the same kind of waker).
. "$(dirname "$0")/lib.sh"
need_root
need_btf
command -v python3 >/dev/null || skip_all "python3 is needed to compare the recordings"

SERVER=""
LOAD=""
cleanup_servers() {
	[ -n "$LOAD" ] && kill "$LOAD" 2>/dev/null && wait "$LOAD" 2>/dev/null
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	LOAD="" SERVER=""
}
trap 'cleanup_servers; cleanup' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# compare NAME: records $SERVER twice at once for 2 s and compares the episodes. Each
# recorder's programs take a third of a second of verifier time to load, and on a loaded
# machine one can start a second after the other: 2 s leave them a second in common.
compare() {
	local name=$1
	rm -f "$TMP/cached.trace" "$TMP/fresh.trace"
	"$SRVSCOPE" record -p "$SERVER" -d 2 -o "$TMP/cached.trace" 2>"$TMP/cached.err" &
	local a=$!
	"$SRVSCOPE" record -p "$SERVER" -d 2 --stack-refresh 0 -o "$TMP/fresh.trace" 2>"$TMP/fresh.err"
	ok $? "$name: record with --stack-refresh 0"
	wait $a
	ok $? "$name: record with the cache"
	for t in cached fresh; do
		"$SRVSCOPE" blocking "$TMP/$t.trace" --stacks --format=json >"$TMP/$t.json" 2>/dev/null
	done
	python3 - "$TMP/cached.json" "$TMP/fresh.json" >"$TMP/cmp" <<'EOF'
import bisect, json, sys

def episodes(path):
    d = json.load(open(path))
    table = d.get("stacks", {})
    frames_of = lambda i: table.get(str(i)) if i is not None else None
    out = {}
    for t in d["tasks"]:
        for b in t.get("blocks", []):
            if b.get("from_start") or b.get("unfinished"):
                continue
            def part(frames, kernel):
                return tuple(f["symbol"] for f in frames or [] if f["kernel"] == kernel)
            start = d["trace_start_ns"] + b["start_ns"]
            out.setdefault(t["tid"], []).append((start, start + b["duration_ns"], b["syscall"],
                b["wakeup"]["kind"], part(frames_of(b.get("stack_id")), False),
                part(frames_of(b.get("waker_stack_id")), False),
                part(frames_of(b.get("stack_id")), True),
                part(frames_of(b.get("waker_stack_id")), True)))
    return out

# The two recorders' programs run one after the other on each event: times differ by their
# run time. An episode is paired with the other's that starts and ends within 100 us of it,
# in the same syscall, the nearest; one lost by either recorder (a full ring buffer) has no pair.
a, b = episodes(sys.argv[1]), episodes(sys.argv[2])
pairs = []
for tid, la in a.items():
    lb = sorted(b.get(tid, []))
    starts = [x[0] for x in lb]
    for x in la:
        i = bisect.bisect_left(starts, x[0] - 100000)
        best = None
        while i < len(lb) and lb[i][0] <= x[0] + 100000:
            y = lb[i]
            d = abs(y[0] - x[0]) + abs(y[1] - x[1])
            if abs(y[1] - x[1]) < 100000 and y[2] == x[2] and (not best or d < best[0]):
                best = (d, y)
            i += 1
        if best:
            pairs.append((tid, x, best[1]))
both = lambda i: [p for p in pairs if p[1][i] and p[2][i]]
user = [p for p in both(4) if p[1][4] != p[2][4]]
# A waker's stack where both saw the same kind of waker.
waker = [p for p in both(5) if p[1][3] == p[2][3] and p[1][5] != p[2][5]]
kern = [p for p in both(6) if p[1][6] != p[2][6]]
wkern = [p for p in both(7) if p[1][3] == p[2][3] and p[1][7] != p[2][7]]
print(len(pairs), len(both(4)), len(user), len(both(5)), len(waker), len(kern), len(both(7)),
      len(wkern))
for p in kern[:3]:
    print("# kernel differs:", p[0], p[1][0], p[1][2], ";".join(p[1][6]), "<>", ";".join(p[2][6]),
          file=sys.stderr)
for p in wkern[:3]:
    print("# waker's kernel differs:", p[0], p[1][0], p[1][3], ";".join(p[1][7]), "<>",
          ";".join(p[2][7]), file=sys.stderr)
for p in user[:3] + waker[:3]:
    print("# differs:", p[0], p[1][0], p[1][2], ";".join(p[1][4]), "<>", ";".join(p[2][4]),
          file=sys.stderr)
EOF
	read -r n nu user nw waker kern nwk wkern <"$TMP/cmp"
	diag "$name: $n episodes in both; of those with a user stack in both ($nu), $user differ; wakers' user stacks: $waker of $nw differ; kernel stacks: $kern differ; wakers' kernel stacks: $wkern of $nwk differ"
	check "$name: hundreds of episodes in both recordings ($n)" [ "${n:-0}" -gt 200 ]
	check "$name: they have user stacks ($nu)" [ "${nu:-0}" -gt 200 ]
	check "$name: every user stack is the same with the cache and without" [ "$user" = 0 ]
	check "$name: every waker's user stack is the same" [ "$waker" = 0 ]
	check "$name: every kernel stack is the same ($kern of $n differ)" [ "$kern" = 0 ]
	check "$name: every waker's kernel stack is the same ($wkern of $nwk differ)" [ "$wkern" = 0 ]
}

# The demo server under its client.
port=$(free_port)
"$BUILD/demo-server" -p "$port" -w 4 -l "$TMP/demo.log" >/dev/null 2>&1 &
SERVER=$!
sleep 0.3
"$BUILD/demo-client" -p "$port" -c 8 -d 6 >/dev/null 2>&1 &
LOAD=$!
sleep 0.3
compare "demo server"
cleanup_servers

if command -v memcached >/dev/null; then
	port=$(free_port)
	memcached -u root -t 4 -p "$port" -U 0 -l 127.0.0.1 -m 64 &
	SERVER=$!
	sleep 0.3
	# 6 s of gets and sets at a fixed rate, however fast the machine (memcslap's fixed
	# count of requests could be over before the recorders started).
	"$SRVSCOPE" load "memcached://127.0.0.1:$port" -c 8 -r 15000 -d 6 >/dev/null 2>&1 &
	LOAD=$!
	sleep 0.5
	compare "memcached"
	cleanup_servers
else
	[ "${CI:-}" = true ] && ok 1 "memcached is installed (scripts/install-deps.sh)"
	diag "memcached missing: the memcached comparison is left out"
fi

done_testing
