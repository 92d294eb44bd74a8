#!/usr/bin/env python3
"""Checks that two recorders of the same process on the same host recorded the same
events: their programs run at the same tracepoints, so what one has and the other has not
is a record one of them lost. Compares, CPU by CPU over the time both recorded, the
switches, wakings, segments and IPI sends (every send on the host is written) of the two
traces (a wake-up is left out: one recorder folds it into its waking where the other may
not; so is the waker's context, which each recorder follows on its own from the
programs of the interrupts' entries and exits). Each recorder's program stamps its own
time, and a virtual CPU may be held up by its host between the two (34 ms seen): records
are compared as multisets between two switches both recorded.
Prints "matched M; only in A: X, only in B: Y" and a line for the first unmatched ones;
exits non-zero when a record is not matched (the caller checks that neither counted any
lost).
Usage: trace_same.py TRACE_A TRACE_B PID"""
import bisect
import collections
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_ipis import events  # noqa: E402

# Compared from this long after the later recorder's start (it attaches its programs one
# by one) to this long before the first one's end.
EDGE_NS = 100000000
QUIET_NS = 300000


def keyed(path, pid):
    per = {}
    for r in events(path)[1]:
        ts, typ, cpu, tid, rpid, aux = struct.unpack_from("<QHHIII", r, 0)
        if typ == 1:
            nt, npid = struct.unpack_from("<II", r, 24)
            if rpid != pid and npid != pid:
                continue
            # the switched-out task's CPU time up to this switch: this switch's alone
            key = (typ, tid, nt, aux, struct.unpack_from("<Q", r, 56)[0])
        elif typ == 2 and rpid == pid:
            key = (typ, tid)
        elif typ in (12, 13):
            key = (typ, tid) + struct.unpack_from("<IIHHII", r, 24)
        elif typ == 14:
            key = (typ, tid) + struct.unpack_from("<QQQQ", r, 24)
        else:
            continue
        per.setdefault(cpu, []).append((ts, key))
    for c in per:
        per[c].sort()
    return per


def stamp_of(xs):
    """Each key seen once in xs, with its time, when no IPI send is close to it: a
    program sends IPIs of its own (its ring's wake-up), which fall between the two
    recorders' records of the event it writes."""
    seen = collections.Counter(k for _, k in xs)
    sends = [ts for ts, k in xs if k[0] == 14]
    return {k: ts for ts, k in xs
            if seen[k] == 1 and not any(abs(t - ts) <= QUIET_NS for t in
                                        sends[max(0, bisect.bisect_left(sends, ts) - 1):
                                              bisect.bisect_left(sends, ts) + 1])}


def main():
    a, b, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pa, pb = keyed(a, pid), keyed(b, pid)
    matched, only = 0, {"A": [], "B": []}
    for cpu in sorted(set(pa) & set(pb)):
        xa, xb = pa[cpu], pb[cpu]
        lo = max(xa[0][0], xb[0][0]) + EDGE_NS
        hi = min(xa[-1][0], xb[-1][0]) - EDGE_NS
        # Two switches of a target (its CPU time makes each one's key its own) that both
        # recorded, one after the recordings' later start and one before their earlier
        # end: what each recorded between them is compared, whatever the times it stamped.
        sa, sb = stamp_of(xa), stamp_of(xb)
        both = sorted((sa[k], sb[k], k) for k in sa
                      if k in sb and k[0] == 1 and k[4] and lo <= sa[k] <= hi)
        if len(both) < 2:
            continue
        (a0, b0, _), (a1, b1, _) = both[0], both[-1]
        ca = collections.Counter(k for ts, k in xa if a0 <= ts <= a1)
        cb = collections.Counter(k for ts, k in xb if b0 <= ts <= b1)
        matched += sum((ca & cb).values())
        for side, xs, extra in (("A", xa, ca - cb), ("B", xb, cb - ca)):
            for ts, k in xs:
                if extra[k] and (a0 <= ts <= a1 if side == "A" else b0 <= ts <= b1):
                    only[side].append((ts, cpu, k))
                    extra[k] -= 1
    for side in ("A", "B"):
        for ts, cpu, k in sorted(only[side])[:int(os.environ.get("SHOW", "5"))]:
            print("# only in %s: cpu %d at %d: %s" % (side, cpu, ts, k))
    print("matched %d; only in A: %d, only in B: %d" % (matched, len(only["A"]), len(only["B"])))
    return 1 if only["A"] or only["B"] or not matched else 0


if __name__ == "__main__":
    sys.exit(main())
