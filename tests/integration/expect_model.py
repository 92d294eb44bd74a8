#!/usr/bin/env python3
# Checks a 'srvscope model' JSON against what /proc says of the server (the t71-model-*
# scripts): expect_model.py JSON PID NAME KEY=VALUE... (Ditto's keys and pool sizes); NAME
# (memcached, redis, nginx) adds the checks of that server's thread roles; skeleton=1 the
# checks of the server beside its skeleton (syscall_profile.cpu_beside_skeleton).
import json, os, sys
path, pid, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = dict(kv.split("=") for kv in sys.argv[4:])
d = json.load(open(path))
fails = 0
def check(what, cond):
    global fails
    print(("# fine: " if cond else "# WRONG: ") + "%s: %s" % (name, what))
    fails += not cond
nmc = d["network_model_characteristics"]
print("# %s: %s" % (name, json.dumps(nmc)))
for k in ("accept_dispatch", "network_dispatch", "network_epoll", "nonblocking"):
    if k in want:
        check("%s is %s" % (k, want[k]), str(nmc[k]).lower() == want[k])
for k in ("accept_thread_pool_size", "network_thread_pool_size"):
    if k in want:
        check("%s is %s" % (k, want[k]), nmc[k] == int(want[k]))
check("network_io is epoll", d["network_model"]["network_io"] == "epoll")
runs = d["runs"]
check("every run measured requests (%s)" % [r["requests"] for r in runs],
      all(r["requests"] > 100 for r in runs))
threads = {t["tid"]: t for t in d["threads"]}
clusters = {c["id"]: c for c in d["clusters"]}
def comm_of(tid):
    try:
        return open("/proc/%d/task/%d/comm" % (pid, tid)).read().strip()
    except OSError:
        for p in os.listdir("/proc"):
            if p.isdigit() and os.path.exists("/proc/%s/task/%d" % (p, tid)):
                return open("/proc/%s/task/%d/comm" % (p, tid)).read().strip()
    return None
acceptors = sorted(t for t in threads if threads[t]["accepts"] > 0)
servers = sorted(t for t in threads if threads[t]["io_syscalls"] > 0)
print("# %s: acceptors %s, threads doing connection I/O %s" % (name, acceptors, servers))
if name == "memcached":
    workers = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid) if comm_of(int(t)) == "mc-worker")
    check("4 mc-worker threads in /proc", len(workers) == 4)
    check("the main thread is the only acceptor", acceptors == [pid])
    wc = {threads[t]["cluster"] for t in workers if t in threads}
    check("the mc-workers are one cluster (%s)" % wc, len(wc) == 1)
    if len(wc) == 1:
        c = clusters[wc.pop()]
        check("that cluster is the mc-workers exactly, role network",
              sorted(c["threads"]) == workers and c["role"] == "network")
    check("the mc-workers do all the connection I/O", servers and set(servers) <= set(workers))
    check("the main thread's cluster has the roles main and acceptor",
          {"main", "acceptor"} <= set(clusters[threads[pid]["cluster"]]["roles"]))
elif name == "redis":
    check("the main thread accepts and serves", acceptors == [pid] and servers == [pid])
elif name == "nginx":
    def ppid(p):
        try:
            return int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    kids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and ppid(p) == pid)
    check("2 worker processes", len(kids) == 2)
    check("the workers (and only they) accept and serve (%s)" % kids,
          set(acceptors) <= set(kids) and set(servers) <= set(kids) and len(servers) == 2)
    wc = {threads[t]["cluster"] for t in kids if t in threads}
    check("the workers are one cluster, the master another",
          len(wc) == 1 and threads[pid]["cluster"] not in wc)
    check("multi_process", d["network_model"]["multi_process"] is True)
if want.get("skeleton") == "1":
    b = d["syscall_profile"].get("cpu_beside_skeleton")
    print("# %s: beside its skeleton: %s" % (name, json.dumps(b)))
    check("measured beside its skeleton", isinstance(b, dict))
    if isinstance(b, dict):
        sl = b["slice_ratios"]
        last = runs[-1]
        # 7 slices, 14 when they spread wide
        check("7 or 14 slices, the ratio their median (%s of %s)" % (b["ratio"], sl),
              len(sl) in (7, 14) and abs(sorted(sl)[len(sl) // 2] - b["ratio"]) < 1e-9)
        check("the ratio is the original's CPU per request over the skeleton's (%.1f / %.1f)"
              % (b["original_cpu_us_per_request"], b["skeleton_cpu_us_per_request"]),
              b["skeleton_cpu_us_per_request"] > 0 and
              abs(b["original_cpu_us_per_request"] / b["skeleton_cpu_us_per_request"] - b["ratio"]) < 1e-6)
        # both do the same syscalls a request: neither takes four times the other's CPU
        check("the ratio is between 0.25 and 4 (%.2f)" % b["ratio"], 0.25 < b["ratio"] < 4)
        # the last run's load on both: its rate over the slices, a third of its duration each
        expect = last["rate"] * min(last.get("duration_s", 2), 3) * len(sl) / 3
        check("the load at the last run's rate and connections on both (%d and %d requests of %d)"
              % (b["requests"], b["skeleton_requests"], expect),
              b["conns"] == last["conns"] and b["rate"] == last["rate"] and
              b["requests"] > 0.8 * expect and b["skeleton_requests"] > 0.8 * expect)
sys.exit(1 if fails else 0)
