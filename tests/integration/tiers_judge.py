#!/usr/bin/env python3
"""Judges srvscope critical's JSON path of the client of a three-tier run (tiers.sh's
tiers_run: crit_tiers client -> web -> db, each under its own recorder) against the
fixtures' own times: the client's waits on the chain that explains them, db's work on db's
thread, the wire between client and web (its segments name WIRE, an address prefix) as
NETWORK, every request across the three hosts, and each skewed clock recovered.
Usage: tiers_judge.py JSON TMP NAME D_MS WIRE WEB_SKEW DB_SKEW (a skew: "OFFSET_NS,PPM" or "")"""
import json, os, struct, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_ipis import events  # noqa: E402
d = json.load(open(sys.argv[1]))
tmp, name, D, wire_addr = sys.argv[2], sys.argv[3], float(sys.argv[4]) * 1e6, sys.argv[5]
skews = [s.split(",") for s in sys.argv[6:]]  # web, db: "OFFSET_NS,PPM" or ""
def lines(tier, word):
    return [[int(x) for x in l.split()[1:]] for l in open("%s/%s-%s.out" % (tmp, name, tier)) if l.startswith(word + " ")]
db = lines("db", "pid")[0][0]
reqs, works, passes = lines("client", "request"), lines("db", "work"), lines("web", "pass")
segs = d["segments"]
def overlap(a0, a1, pred):
    return sum(max(0, min(a1, s["end_ns"]) - max(a0, s["start_ns"])) for s in segs if pred(s))
fails = 0
said = []
def check(what, cond):
    global fails
    said.append(("# fine: " if cond else "# WRONG: ") + what)
    print(said[-1])
    fails += not cond
total = right = work = work_right = 0
bad_reqs = []
wire_ok = crossed = 0
for (s, e), (w0, w1), (p0, p1) in zip(reqs, works, passes):
    chain = lambda g: g["state"] in ("NETWORK", "RUNNING", "PREEMPTED")
    on_db = lambda g: g["host"] == 3 and g["tid"] == db and g["state"] in ("RUNNING", "PREEMPTED")
    got = overlap(w0, w1, on_db)
    work += w1 - w0; work_right += got
    total += e - s
    right += got + overlap(s, w0, chain) + overlap(w1, e, chain)
    wire = overlap(s, e, lambda g: g["state"] == "NETWORK" and wire_addr in (g["what"] or ""))
    # At least the delay line's 2 x D; at most the request's time outside web (the delay
    # line is a user-space forwarder: on a loaded machine it can take longer than D).
    good = 2 * D - 1e6 <= wire <= (e - s) - (p1 - p0) + 1e6
    wire_ok += good
    if not good:
        said.append("# request at %.3f s: %.3f ms on the wire, want %.3f to %.3f; states: %s" % (
            (s - reqs[0][0]) / 1e9, wire / 1e6, (2 * D - 1e6) / 1e6, ((e - s) - (p1 - p0) + 1e6) / 1e6,
            ", ".join("%s %s %.3f" % (g["host"], g["state"], (min(e, g["end_ns"]) - max(s, g["start_ns"])) / 1e6)
                      for g in segs if g["end_ns"] > s and g["start_ns"] < e)))
        print(said[-1])
        bad_reqs.append((s, e))
    crossed += all(overlap(s, e, lambda g, h=h: g["host"] == h) > 0 for h in (1, 2, 3))
said.append("# %d requests: %.1f %% of the client's waits right, db's work %.1f %% on db's thread" %
            (len(reqs), 100.0 * right / total, 100.0 * work_right / work))
print(said[-1])
check("as many requests as db works (%d)" % len(reqs), len(reqs) == len(works) >= 10)
check(">= 95 % of the client's waits on the right segments", right >= 0.95 * total)
check(">= 95 % of db's work on db's thread (host 3)", work_right >= 0.95 * work)
check("the delay line is NETWORK, 2 x %d ms or more, per request (%d of %d)" % (D / 1e6, wire_ok, len(reqs)), wire_ok == len(reqs))
check("every request's path crosses the three hosts (%d of %d)" % (crossed, len(reqs)), crossed == len(reqs))
hosts = d["hosts"]
check("host 1 is the reference clock", hosts[0]["clock"]["quality"] == "reference")
t0, t1 = reqs[0][0], reqs[-1][1]
for h, sk in zip(hosts[1:], skews):
    c = h["clock"]
    off, ppm = (int(sk[0]), float(sk[1])) if sk[0] else (0, 0.0)
    start = h["start_ns"] - off  # the recorder's start on the true clock
    worst = 0
    for i in range(11):
        t = t0 + (t1 - t0) * i // 10
        local = t + off + int((t - start) * ppm / 1e6)
        ref = local + c["offset_ns"] + c["drift_ppb"] / 1e9 * (local - c["origin_ns"])
        worst = max(worst, abs(ref - t))
    check("host %d (skew %s): clock %s from %d packets with host %s, within %.1f us of the truth"
          " (drift %.1f ppm, true %.1f; accuracy said %.1f us)" %
          (h["host"], sk, c["quality"], c["packets"], c["parent"], worst / 1e3,
           c["drift_ppb"] / 1e3, -ppm, c.get("accuracy_ns", 0) / 1e3),
          c["quality"] == "accurate" and worst < 100e3)
def web_records(s, e):
    """web's switches, wakings and segments over [s, e] (the reference clock), from its
    own trace, on its own clock: what the path's web segments were made of."""
    web = lines("web", "pid")[0][0]
    sk = skews[0] if skews and skews[0][0] else None
    off, ppm = (int(sk[0]), float(sk[1])) if sk else (0, 0.0)
    start = hosts[1]["start_ns"] - off
    loc = lambda t: t + off + int((t - start) * ppm / 1e6)
    a, b = loc(s) - 1000000, loc(e) + 1000000
    out = []
    for r in events("%s/%s-web.trace" % (tmp, name))[1]:
        ts, typ, cpu, tid, pid, aux = struct.unpack_from("<QHHIII", r, 0)
        if not a <= ts <= b:
            continue
        if typ == 1:
            nt, = struct.unpack_from("<I", r, 24)
            if web in (tid, nt):
                out.append("%.3f cpu %d switch out %d (state %d) in %d" % ((ts - loc(s)) / 1e6, cpu, tid, aux, nt))
        elif typ in (2, 3) and tid == web:
            out.append("%.3f cpu %d %s %d (aux %#x)" % ((ts - loc(s)) / 1e6, cpu, "waking" if typ == 2 else "wakeup", tid, aux))
        elif typ in (12, 13):
            out.append("%.3f cpu %d %s tid %d" % ((ts - loc(s)) / 1e6, cpu, "tx" if typ == 12 else "rx", tid))
    return out[:60]
if fails:  # prove shows a failing test's stderr, not its comments
    print("t73 %s:\n%s" % (name, "\n".join(said)), file=sys.stderr)
    if bad_reqs:
        print("# web's records around the request at %.3f s (ms from its start, web's clock):\n# %s" %
              ((bad_reqs[0][0] - reqs[0][0]) / 1e9, "\n# ".join(web_records(*bad_reqs[0]))), file=sys.stderr)
sys.exit(1 if fails else 0)
