#!/usr/bin/env python3
"""Checks folded stacks from `srvscope flame` against a stack fixture's .expect file.

Each .expect line is NAME<TAB>COUNT<TAB>outermost;...;innermost listing the fixture's own
functions. For every thread name given on the command line, the heaviest folded line of
that name must hold, in its user frames (those before the first _[k] frame), exactly that
chain, contiguous; before it the thread's start (start_thread, or __libc_start_main for the
main thread), after it at least one frame (the libc function that blocks); no unnamed
frame. At least SHARE % of that name's weight must be in lines holding the chain. With --on-cpu (on-CPU
samples of a spinning thread) nothing needs to be below the chain. Prints TAP lines (no
plan), then "# next N", and exits 1 on any failure.
Usage: expect_folded.py [--on-cpu] EXPECT FOLDED FIRST SHARE PREFIX NAME...
"""
import sys


def main():
    args = sys.argv[1:]
    on_cpu = args[0] == "--on-cpu"
    if on_cpu:
        args = args[1:]
    expect_path, folded_path, first, minimum, prefix = args[:5]
    names = args[5:]
    what = "on-CPU" if on_cpu else "off-CPU"
    n, failed = int(first), 0

    def ok(cond, desc, diag=None):
        nonlocal n, failed
        print("%sok %d - %s%s" % ("" if cond else "not ", n, prefix, desc))
        if not cond:
            failed += 1
            for line in str(diag or "").splitlines():
                print("#   " + line)
        n += 1

    expect = {}
    for line in open(expect_path):
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            name, count, chain = line.split("\t")
            expect[name] = (int(count), chain.split(";"))
    lines = []
    for line in open(folded_path):
        stack, _, weight = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        lines.append((frames[0], frames[1:], int(weight)))
    for name in names:
        count, chain = expect[name]
        mine = sorted((l for l in lines if l[0] == name), key=lambda l: -l[2])
        ok(mine, "%s: has %s stacks" % (name, what))
        if not mine:
            continue
        _, frames, weight = mine[0]
        user = []
        for f in frames:
            if f.endswith("_[k]"):
                break
            user.append(f)
        shown = ";".join(user)
        at = next((i for i in range(len(user)) if user[i:i + len(chain)] == chain), -1)
        ok(at >= 0, "%s: the chain %s" % (name, ";".join(chain)), "user frames: " + shown)
        start = "__libc_start_main" if name.endswith("main") else "start_thread"
        ok(at > 0 and start in user[:at], "%s: starts at %s" % (name, start), "user frames: " + shown)
        if not on_cpu:
            ok(at >= 0 and len(user) > at + len(chain), "%s: blocks in a libc function below it" % name,
               "user frames: " + shown)
        bad = [f for f in user if f.startswith("[") or "+0x" in f]
        ok(not bad, "%s: every frame named" % name, "unnamed: %s" % bad)
        def has_chain(fr):
            u = []
            for f in fr:
                if f.endswith("_[k]"):
                    break
                u.append(f)
            return any(u[i:i + len(chain)] == chain for i in range(len(u)))
        total = sum(l[2] for l in mine)
        with_chain = sum(l[2] for l in mine if has_chain(l[1]))
        ok(with_chain > 0 and with_chain * 100 >= total * int(minimum),
           "%s: %d of its weight %d (at least %s %%) in stacks with the chain" %
           (name, with_chain, total, minimum))
    print("# next %d" % n)
    sys.exit(1 if failed else 0)


main()
