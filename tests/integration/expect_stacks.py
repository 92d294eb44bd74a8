#!/usr/bin/env python3
"""Checks a `srvscope stacks --format=json` document against a fixture's .expect file.

Each .expect line is NAME<TAB>COUNT<TAB>outermost;...;innermost listing the fixture's own
functions. For every thread of that name, the frames from the fixture's binary, read
outermost first, must be exactly that chain; every frame must be named; a blocked thread
must sit in libc (innermost frame from libc), and the stack must reach the thread's start
(clone3/start_thread, or __libc_start_main for the main thread). Prints TAP lines (no
plan) and exits 1 on any failure.
"""
import json
import os
import sys


def main():
    expect_path, binary, json_path, first = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    prefix = sys.argv[5] if len(sys.argv) > 5 else ""
    doc = json.load(open(json_path))
    n = first
    failed = 0

    def ok(cond, desc, diag=None):
        nonlocal n, failed
        print("%sok %d - %s%s" % ("" if cond else "not ", n, prefix, desc))
        if not cond:
            failed += 1
            if diag:
                for line in str(diag).splitlines():
                    print("#   " + line)
        n += 1

    threads = {}
    for g in doc["groups"]:
        for t in g["threads"]:
            threads.setdefault(t["name"], []).append((t, g))
    real = os.path.realpath(binary)
    for line in open(expect_path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        name, count, chain = line.split("\t")
        chain = chain.split(";")
        got = threads.get(name, [])
        ok(len(got) == int(count), "%s: %s threads" % (name, count), "got %d" % len(got))
        for t, g in got:
            frames = [f for f in g["frames"] if not f["kernel"]]
            # The fixture's own functions; _start is the C runtime's, linked into it.
            own = [f["symbol"] for f in reversed(frames)
                   if f["module"] and os.path.realpath(f["module"]) == real
                   and f["symbol"] != "_start"]
            ok(own == chain, "%s/%d: chain %s" % (name, t["tid"], ";".join(chain)),
               "got %s" % ";".join(str(s) for s in own))
            unnamed = [f for f in frames if not f["symbol"]]
            ok(not unnamed, "%s/%d: every frame named" % (name, t["tid"]),
               "\n".join("%s %s+%s" % (f["addr"], f["module"], f["offset"]) for f in unnamed))
            outer = [f["symbol"] for f in frames[-3:]]
            start = "__libc_start_main" if name.endswith("main") else "start_thread"
            ok(any(s and start in s for s in outer), "%s/%d: reaches %s" % (name, t["tid"], start),
               "outermost: %s" % outer)
            if t["state"] != "R" and frames:
                inner = frames[0]["module"] or ""
                ok("libc.so" in inner, "%s/%d: innermost frame in libc" % (name, t["tid"]),
                   "innermost: %s in %s" % (frames[0]["symbol"], inner))
    print("# next %d" % n)
    sys.exit(1 if failed else 0)


main()
