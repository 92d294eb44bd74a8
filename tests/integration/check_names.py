#!/usr/bin/env python3
"""Checks that an output of srvscope shows hostile thread names safely.

usage: check_names.py KIND FILE [NAMED]
KIND: text (no control byte), json (also one valid UTF-8 JSON document), jsonl (one per
line), folded (also every line is 'frame;...;frame COUNT' and the NAMED threads' lines have
the same frames after the name), svg (also well-formed XML). Prints what is wrong, exits 1.
NAMED: how many distinct escaped thread names (containing \\x) folded must show."""
import json
import re
import sys
import xml.etree.ElementTree as ET

kind, path = sys.argv[1], sys.argv[2]
named = int(sys.argv[3]) if len(sys.argv) > 3 else 0
data = open(path, "rb").read()
bad = [b for b in data if (b < 0x20 and b not in (9, 10)) or b == 0x7F]
if bad:
    sys.exit("%s: raw control bytes %s" % (path, sorted(set(bad))))
if re.search(rb"\xc2[\x80-\x9f]", data):
    sys.exit("%s: a C1 control character" % path)
text = data.decode("utf-8")  # strict: invalid UTF-8 fails here
if len(data) == 0:
    sys.exit("%s: empty" % path)
if kind == "json":
    json.loads(text)
elif kind == "jsonl":
    for line in text.splitlines():
        json.loads(line)
elif kind == "svg":
    ET.fromstring(data)
elif kind == "folded":
    depth = {}
    for line in text.splitlines():
        m = re.fullmatch(r"(\S.*) (\d+)", line)
        if not m:
            sys.exit("%s: not a folded line: %r" % (path, line))
        frames = m.group(1).split(";")
        if "\\x" in frames[0] and "named_sleep" in frames:
            depth.setdefault(frames[0], set()).add(frames.index("named_sleep"))
    # The same stack under every name: a name split by ';' would push named_sleep deeper.
    if len(depth) != named or len(set().union(*depth.values())) != 1:
        sys.exit("%s: want %d escaped thread names with named_sleep at one depth, got %s"
                 % (path, named, depth))
if "\\x1b]0\\x3bpwned" not in text and "\\\\x1b]0\\\\x3bpwned" not in text:
    sys.exit("%s: the escaped window-title name is missing" % path)
