#!/usr/bin/env python3
"""Reads a pprof profile the way its users do, through `go tool pprof -raw`, and prints
it as srvscope's folded lines ("thread;outer;...;inner VALUE", kernel frames "_[k]"),
summed per line, sorted. Only what go tool pprof printed is used, so a profile it cannot
read fails here.

usage: pprof_folded.py PROFILE [--type TYPE/UNIT] [--divide N] [--info]
  --type     the sample type whose values are printed (default: the first)
  --divide   divide each line's total by N (exactly: a remainder is an error)
  --info     print the sample types, period, mappings and labels instead
"""
import collections
import os
import re
import subprocess
import sys


def go_pprof_raw(path):
    env = dict(os.environ)
    env.setdefault("HOME", "/tmp")  # go wants a cache directory
    env["PPROF_TMPDIR"] = env.get("TMPDIR", "/tmp")
    p = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                       env=env, timeout=120)
    if p.returncode != 0:
        sys.exit("go tool pprof -raw %s failed (%d): %s" % (path, p.returncode, p.stderr.strip()))
    return p.stdout


def parse(text):
    prof = {"types": [], "samples": [], "locations": {}, "mappings": {}, "period": None,
            "period_type": None}
    section = None
    value_re = re.compile(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$")
    # go tool pprof shows a simplified (demangled) name, then the name as written, in
    # parentheses, when they differ: the name as written is srvscope's.
    loc_re = re.compile(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(?:\[F\] )?(.*?) (\S*):(-?\d+)"
                        r"(?::\d+)? s=(-?\d+)(?:\((.*)\))?$")
    cont_re = re.compile(r"^\s{13}(.*?) (\S*):(-?\d+)(?::\d+)? s=(-?\d+)(?:\((.*)\))?$")
    map_re = re.compile(r"^\s*(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S*) ?(\S*)")
    label_re = re.compile(r"^\s+(\S+):\[(.*)\]$")
    last_loc = None
    for line in text.splitlines():
        if line.startswith("PeriodType: "):
            prof["period_type"] = line.split(": ", 1)[1]
            continue
        if line.startswith("Period: "):
            prof["period"] = int(line.split(": ", 1)[1])
            continue
        if line == "Samples:":
            section = "types"
            continue
        if line == "Locations":
            section = "locations"
            continue
        if line == "Mappings":
            section = "mappings"
            continue
        if section == "types":
            prof["types"] = line.split()
            section = "samples"
            continue
        if section == "samples":
            m = value_re.match(line)
            if m:
                prof["samples"].append({"values": [int(v) for v in m.group(1).split()],
                                        "locs": [int(v) for v in m.group(2).split()],
                                        "labels": {}})
                continue
            m = label_re.match(line)
            if m and prof["samples"]:
                prof["samples"][-1]["labels"][m.group(1)] = m.group(2)
                continue
            sys.exit("unexpected sample line: %r" % line)
        if section == "locations":
            m = loc_re.match(line)
            if m:
                last_loc = int(m.group(1))
                prof["locations"][last_loc] = {
                    "addr": int(m.group(2), 16),
                    "mapping": int(m.group(3)) if m.group(3) else 0,
                    "lines": [m.group(8) or m.group(4)], "file": m.group(5)}
                continue
            m = cont_re.match(line)
            if m and last_loc is not None:
                prof["locations"][last_loc]["lines"].append(m.group(5) or m.group(1))
                continue
            sys.exit("unexpected location line: %r" % line)
        if section == "mappings":
            m = map_re.match(line)
            if m:
                prof["mappings"][int(m.group(1))] = {"file": m.group(5), "build_id": m.group(6)}
                continue
            sys.exit("unexpected mapping line: %r" % line)
    return prof


def folded(prof, type_index):
    kernel = {i for i, m in prof["mappings"].items() if m["file"] == "[kernel.kallsyms]"}
    out = collections.Counter()
    for s in prof["samples"]:
        names = []
        for lid in s["locs"]:  # leaf first
            loc = prof["locations"][lid]
            k = loc["mapping"] in kernel
            # Inlined functions: the location's lines are innermost first too.
            names.extend(n + ("_[k]" if k else "") for n in loc["lines"])
        thread = s["labels"].get("thread", "?")
        out[";".join([thread] + names[::-1])] += s["values"][type_index]
    return out


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path = args.pop(0)
    want_type, divide, info = None, 1, False
    while args:
        a = args.pop(0)
        if a == "--type":
            want_type = args.pop(0)
        elif a == "--divide":
            divide = int(args.pop(0))
        elif a == "--info":
            info = True
        else:
            sys.exit("unknown argument %s" % a)
    prof = parse(go_pprof_raw(path))
    if info:
        print("types", " ".join(prof["types"]))
        print("period_type", prof["period_type"])
        print("period", prof["period"])
        for i, m in sorted(prof["mappings"].items()):
            print("mapping", m["file"], m["build_id"] or "-")
        for s in prof["samples"]:
            print("sample", " ".join(str(v) for v in s["values"]),
                  " ".join("%s=%s" % kv for kv in sorted(s["labels"].items())))
        return
    idx = prof["types"].index(want_type) if want_type else 0
    for stack, v in sorted(folded(prof, idx).items()):
        if v % divide:
            sys.exit("%s: %d is not a multiple of %d" % (stack, v, divide))
        print(stack, v // divide)


if __name__ == "__main__":
    main()
