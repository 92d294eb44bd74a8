#!/bin/bash
# Wake-up attribution ground truth: threads "ping" and "pong" hand a byte over two pipes,
# so every read of one is ended by the other. 'blocking' must name the right waker (tid
# and name) and the pipe, with --stacks both threads' stacks, and the wake-up graph must end
# in the waker.
. "$(dirname "$0")/lib.sh"
need_root
need_btf

f="$TMP/pp.trace"
record_pingpong "$f"
diag "ping $ping, pong $pong"

"$SRVSCOPE" blocking --format=json "$f" >"$TMP/b.json"
ok $? "blocking --format=json"
python3 - "$TMP/b.json" "$ping" "$pong" "$TMP/pp.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ping, pong = int(sys.argv[2]), int(sys.argv[3])
# The kernel's count of each thread's voluntary switches (the fixture's last field).
vol = {int(w[2]): int(w[5]) for w in map(str.split, open(sys.argv[4])) if w[0] == "cpu"}
tasks = {t["tid"]: t for t in d["tasks"]}
assert d["lost_events"] == 0, d["lost_events"]
said = []
def say(line):
    print(line)
    said.append(line)
def check(cond, why):
    if not cond:  # prove shows a failing test's stderr, not its comments
        sys.exit("\n".join(said + [why]))
# pong blocks in every read (ping pauses between rounds), and once more to see the pipe
# closed; ping blocks in its 201 sleeps (200 pauses, one before the rounds) and in a read
# only when pong is slower to answer, which varies with the load: each thread's blocked
# reads are its voluntary switches less its sleeps, and for ping less perhaps its
# pthread_join.
for me, other, name, sleeps in ((pong, ping, "ping", 0), (ping, pong, "pong", 201)):
    reads = [b for b in tasks[me]["blocks"] if b["syscall"] == "read"]
    right = [b for b in reads if b["wakeup"] == {"kind": "task", "detail": None, "waker_tid": other, "waker_comm": name}]
    pipes = [b for b in reads if (b["fd_desc"] or "").startswith("pipe [")]
    want = vol[me] - sleeps
    say("# %d: %d reads (kernel: %d voluntary switches, so %d), %d woken by %s %d, %d on a pipe"
          % (me, len(reads), vol[me], want, len(right), name, other, len(pipes)))
    for b in reads:
        if b not in right or b not in pipes:
            say("# odd read: %s" % b)
    check(me == ping or len(reads) >= 150, "too few reads")
    check(want - 2 <= len(reads) <= want, "blocked reads not the kernel's voluntary switches")
    check(len(right) >= 0.95 * len(reads), "wrong wakers")
    check(len(pipes) == len(reads), "fd not described")
s = [x for x in tasks[pong]["summary"] if x["syscall"] == "read"][0]
assert s["count"] >= 150 and s["min_ns"] <= s["mean_ns"] <= s["max_ns"] and s["sum_ns"] >= s["count"] * s["min_ns"]
PY
ok $? "every blocked read of each thread is counted, woken by the other one, on its pipe"

text=$("$SRVSCOPE" blocking --comm pong --min-ms 0.1 "$f")
like "$text" "Blocking report for task pong \[pid [0-9]+, tid $pong\]" "text report per task"
like "$text" "read +[0-9]+ pipe \[[0-9]+\] +TASK ping $ping" "text names the waker"
like "$text" "Syscall +Count +Sum \(ms\) +Min \(ms\) +Max \(ms\) +Mean \(ms\) +Stddev \(ms\)" \
	"per-syscall summary"
check "--comm filters the other thread out" sh -c "! printf '%s' \"\$1\" | grep -q 'task ping'" - "$text"

# --stacks: pong blocks in read() called from pong(), and is woken by ping's write() from
# ping() (the fixture's thread function) through the kernel's pipe write path.
"$SRVSCOPE" blocking --format=json --stacks --tid "$pong" "$f" >"$TMP/s.json"
ok $? "blocking --stacks --format=json"
python3 - "$TMP/s.json" <<'PY'
import sys, json
d = json.load(open(sys.argv[1]))
# Each distinct stack is in the "stacks" table once; episodes refer to it by id.
stacks = d["stacks"]
blocks = [dict(b, stack=stacks[str(b["stack_id"])] if b["stack_id"] else [],
               waker_stack=stacks[str(b["waker_stack_id"])] if b["waker_stack_id"] else [])
          for t in d["tasks"] for b in t["blocks"] if b["syscall"] == "read"]
assert len(stacks) < len(blocks) / 10, "stacks written per episode (%d stacks, %d reads)" % (len(stacks), len(blocks))
assert all(str(b["stack_id"]) in stacks for t in d["tasks"] for b in t["blocks"] if b["stack_id"])
def user(st): return [f["symbol"] for f in st if not f["kernel"]]
def kernel(st): return [f["symbol"] for f in st if f["kernel"]]
def follows(names, seq):
    return any(names[i:i + len(seq)] == seq for i in range(len(names)))
right = [b for b in blocks
         if follows(user(b["stack"]), ["read", "pong", "start_thread"])
         and any("pipe_read" in k for k in kernel(b["stack"]))
         and follows(user(b["waker_stack"]), ["write", "ping", "start_thread"])
         and any("pipe_write" in k for k in kernel(b["waker_stack"]))]
good = len(blocks) >= 150 and len(right) >= 0.95 * len(blocks)
out = sys.stdout if good else sys.stderr  # prove shows a failing test's stderr
print("# %d of %d reads: read <- pong <- start_thread, woken by write <- ping via pipe_write" % (len(right), len(blocks)), file=out)
for b in [b for b in blocks if b not in right][:3]:
    print("# e.g. at %d: stack %s / waker %s" % (b["start_ns"], [f["symbol"] for f in b["stack"]], [f["symbol"] for f in b["waker_stack"]]), file=out)
sys.exit(0 if good else 1)
PY
ok $? "each read's stack is pong's, and its waker's stack is ping's write"
text=$("$SRVSCOPE" blocking --stacks --tid "$pong" --min-ms 0.1 "$f")
like "$text" "blocked at:" "text --stacks: where it blocked"
like "$text" "woken from:" "text --stacks: the waker's stack"
like "$text" "#[0-9]+ +ping$" "text --stacks: user frames named"

wake=$("$SRVSCOPE" flame "$f" --kind=wake --tid "$pong")
like "$wake" "^pong;.*;--;.*;ping [0-9]+$" "the wake-up graph of pong ends in ping"

# With --syscalls every syscall is traced: blocked reads get their return value.
"$SRVSCOPE" record --syscalls -o "$TMP/sc.trace" -- "$FIXTURES/rec_pingpong" 50 300 >/dev/null 2>&1
ok $? "record --syscalls"
"$SRVSCOPE" blocking --format=json --comm pong "$TMP/sc.trace" >"$TMP/sc.json"
python3 - "$TMP/sc.json" <<'PY'
import json, sys
b = [b for t in json.load(open(sys.argv[1]))["tasks"] for b in t["blocks"] if b["syscall"] == "read"]
# The last read sees the pipe closed: 0.
sys.exit(0 if len([x for x in b if x["ret"] == 1]) >= 40 and all(x["ret"] in (0, 1) for x in b) else 1)
PY
ok $? "with --syscalls, each blocked read has its return value (1 byte)"
done_testing
