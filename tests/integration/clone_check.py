#!/usr/bin/env python3
"""Helpers of t72 (srvscope clone), all read what they expect from the model file.

usage:
  clone_check.py tree MODEL PID      the clone's process tree against the model: threads by
                                     name, processes; prints what differs, exits 1
  clone_check.py load PORT PROTO N [GAP_MS]
                                     N request/response cycles on one connection (closed
                                     loop; memcached | redis | http), each answer framed and
                                     checked, GAP_MS between them; prints the count
  clone_check.py hold PORT PROTO K   K connections, one request each, held open until stdin
                                     closes; prints "held" once all are answered
  clone_check.py mix MODEL STRACE N  strace -c -f output against the model's syscalls per
                                     request (those of 0.5 and more): within 10 %
  clone_check.py compare ORIG CLONE  two models (srvscope model of the original and of its
                                     clone): the network model field for field, syscalls
                                     per request (0.5 and more) within 10 %, the answers'
                                     commonest iov layouts and median size the same"""
import json
import os
import re
import socket
import sys
import time


def model_of(path):
    return json.load(open(path))


def tree(path, pid):
    m = model_of(path)
    nm = m["network_model"]
    roles = nm["roles"]
    byid = {c["id"]: c for c in m["clusters"]}
    want, seen = {}, set()
    for role in ("main", "acceptor", "network", "background", "idle"):
        for cid in roles.get(role, []):
            c = byid[cid]
            if cid in seen or c.get("grows_with_conns"):
                continue  # per-connection threads: none without connections
            seen.add(cid)
            n = c["size_per_run"][-1] if c.get("size_per_run") else len(c["threads"])
            want[c["name"]] = want.get(c["name"], 0) + n
    pids = [pid]
    i = 0
    while i < len(pids):  # the whole tree, by parent pid
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    st = open("/proc/%s/stat" % p).read()
                except OSError:
                    continue
                if int(st[st.rindex(")") + 2:].split()[1]) == pids[i]:
                    pids.append(int(p))
        i += 1
    got = {}
    for p in pids:
        for t in os.listdir("/proc/%d/task" % p):
            name = open("/proc/%d/task/%s/comm" % (p, t)).read().strip()
            got[name] = got.get(name, 0) + 1
    procs = 1
    if nm.get("multi_process") and nm.get("per_connection", "none") == "none":
        procs = 1 + sum(byid[c]["processes"] for c in roles["network"])
    bad = []
    if got != want:
        bad.append("threads by name: got %s, want %s" % (sorted(got.items()), sorted(want.items())))
    if len(pids) != procs:
        bad.append("processes: got %d, want %d" % (len(pids), procs))
    print("; ".join(bad) if bad else "threads %s in %d process(es)" % (sorted(got.items()), len(pids)))
    return 1 if bad else 0


class Conn:
    def __init__(self, port, proto):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.proto, self.buf, self.i = proto, b"", 0

    def need(self, frame):
        while True:
            k = frame(self.buf)
            if k:
                r, self.buf = self.buf[:k], self.buf[k:]
                return r
            d = self.s.recv(65536)
            if not d:
                raise SystemExit("the clone closed the connection")
            self.buf += d

    def request(self):
        key = b"key%d" % (self.i % 50)
        val = b"v" * 100
        setp = self.i % 10 == 0
        self.i += 1
        if self.proto == "memcached":
            if setp:
                self.s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(val), val))
                r = self.need(line)
                assert r == b"STORED\r\n", r
            else:
                self.s.sendall(b"get %s\r\n" % key)
                r = self.need(lambda b: b.find(b"END\r\n") + 5 if b"END\r\n" in b else 0)
                assert r.startswith((b"VALUE ", b"END")), r[:40]
        elif self.proto == "redis":
            if setp:
                self.s.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(val), val))
            else:
                self.s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(key), key))
            r = self.need(resp)
            assert r[:1] in b"+$", r[:40]
        else:
            self.s.sendall(b"GET / HTTP/1.1\r\nHost: clone\r\n\r\n")
            r = self.need(http)
            assert r.startswith(b"HTTP/1.1 200"), r[:40]
        return r


def line(b):
    i = b.find(b"\r\n")
    return i + 2 if i >= 0 else 0


def resp(b):
    if b[:1] in (b"+", b"-", b":"):
        return line(b)
    if b[:1] == b"$":
        h = line(b)
        if not h:
            return 0
        n = int(b[1:h - 2])
        return h if n < 0 else (h + n + 2 if len(b) >= h + n + 2 else 0)
    return 0


def http(b):
    i = b.find(b"\r\n\r\n")
    if i < 0:
        return 0
    m = re.search(rb"content-length: *(\d+)", b[:i], re.I)
    n = i + 4 + (int(m.group(1)) if m else 0)
    return n if len(b) >= n else 0


def mix(path, strace, n):
    m = model_of(path)
    counts = {}
    for l in open(strace):
        f = l.split()
        if len(f) >= 5 and f[-1].isidentifier() and f[3].isdigit():
            counts[f[-1]] = int(f[3])
    bad, shown = [], []
    for s in m["syscall_profile"]["syscalls"]:
        if s["per_request"] < 0.5:
            continue
        got = counts.get(s["name"], 0) / n
        shown.append("%s %.2f/%.2f" % (s["name"], got, s["per_request"]))
        if abs(got - s["per_request"]) > 0.1 * s["per_request"]:
            bad.append("%s: %.3f per request, the model %.3f" % (s["name"], got, s["per_request"]))
    print("; ".join(bad) if bad else "per request (clone/model): " + ", ".join(shown))
    return 1 if bad or not shown else 0


def compare(orig, clone):
    a, b = model_of(orig), model_of(clone)
    bad, good = [], []
    for k in ("network_model_characteristics", "network_model"):
        for f in a[k]:
            if f == "roles":
                continue
            if a[k][f] != b[k][f]:
                bad.append("%s.%s: %s, the clone's %s" % (k, f, a[k][f], b[k][f]))
            else:
                good.append(f)
    sb = {s["name"]: s for s in b["syscall_profile"]["syscalls"]}
    writes = {s["syscall"] for s in a["syscall_profile"]["cycle"]}
    for s in a["syscall_profile"]["syscalls"]:
        c = sb.get(s["name"], {"per_request": 0, "iov": None})
        if s["per_request"] >= 0.5:
            if abs(c["per_request"] - s["per_request"]) > 0.1 * s["per_request"]:
                bad.append("%s: %.3f per request, the clone %.3f" % (s["name"], s["per_request"], c["per_request"]))
            else:
                good.append("%s %.2f/%.2f" % (s["name"], s["per_request"], c["per_request"]))
        if s["name"] in writes and s.get("iov"):
            la = max(s["iov"], key=lambda l: l["share"])["layout"]
            lb = max(c["iov"], key=lambda l: l["share"])["layout"] if c.get("iov") else None
            if la != lb:
                bad.append("%s iov: %s, the clone's %s" % (s["name"], la, lb))
            else:
                good.append("%s iov %s" % (s["name"], la))
    ra, rb = a["request"]["response_bytes"]["p50"], b["request"]["response_bytes"]["p50"]
    if ra != rb:
        bad.append("response p50: %s bytes, the clone's %s" % (ra, rb))
    print("; ".join(bad) if bad else "the same: " + ", ".join(good) + ", response p50 %s" % ra)
    return 1 if bad else 0


def main():
    cmd = sys.argv[1]
    if cmd == "tree":
        return tree(sys.argv[2], int(sys.argv[3]))
    if cmd == "compare":
        return compare(sys.argv[2], sys.argv[3])
    if cmd == "mix":
        return mix(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    port, proto, n = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    if cmd == "load":
        c = Conn(port, proto)
        gap = float(sys.argv[5]) / 1000 if len(sys.argv) > 5 else 0
        for _ in range(n):
            c.request()
            if gap:
                time.sleep(gap)
        print(n)
        return 0
    conns = [Conn(port, proto) for _ in range(n)]
    for c in conns:
        c.request()
    print("held", flush=True)
    sys.stdin.read()
    return 0


sys.exit(main())
