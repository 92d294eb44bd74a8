#!/usr/bin/env python3
"""Reads the IPI sends (record type 14) and the wake-ups from IPI handlers (type 2, kind 5)
of a trace file, on its own (docs/trace-format.md), and checks them: a send names a target
CPU below the header's nr_cpus and inside its mask, counts at least as many targets as its
mask has bits, and has a sender context that is a wake kind (0-5); a wake-up's handler was
entered before it and less than 5 ms before (a handler runs with interrupts off: an older
entry is a context left stale by a missed exit). Prints "sends N call M resched R task T
bad B; ipi wakes W by vector {...} stale S" and exits non-zero when a record is bad or
stale. Compressed sections are read with the zstd command.
Usage: trace_ipis.py TRACE"""
import struct
import subprocess
import sys

SEC_EVENTS = 1
REC_WAKING = 2
REC_IPI_SEND = 14
WAKE_IPI = 5


def events(path):
    data = open(path, "rb").read()
    if data[:8] != b"SRVSCTRC":
        sys.exit("not a trace")
    version, header_size, record_size, nr_cpus = struct.unpack_from("<IIII", data, 8)
    if version not in (2, 3) or record_size != 64:
        sys.exit("unexpected version %d or record size %d" % (version, record_size))
    off = header_size
    recs = []
    while off + 24 <= len(data):
        magic, typ, flags, size = struct.unpack_from("<IHHQ", data, off)
        if magic != 0x4B434853:
            sys.exit("bad section magic at %d" % off)
        payload = data[off + 24:off + 24 + size]
        if typ == SEC_EVENTS:
            if flags & 1:
                payload = subprocess.run(["zstd", "-dc"], input=payload,
                                         stdout=subprocess.PIPE, check=True).stdout
            for i in range(0, len(payload) - 63, 64):
                recs.append(payload[i:i + 64])
        off += 24 + ((size + 7) & ~7)
    return nr_cpus, recs


def main():
    nr_cpus, recs = events(sys.argv[1])
    n = call = resched = task = bad = wakes = stale = 0
    vectors = {}
    for r in recs:
        ts, typ, cpu, tid, pid, aux = struct.unpack_from("<QHHIII", r, 0)
        if typ == REC_WAKING and aux & 0xFF == WAKE_IPI:
            detail, since = struct.unpack_from("<IQ", r, 28)
            wakes += 1
            vectors[detail] = vectors.get(detail, 0) + 1
            if not since <= ts < since + 5000000:
                if stale < 5:
                    print("# stale: tid %d woken at %d from vector %d entered at %d"
                          % (tid, ts, detail, since))
                stale += 1
        if typ != REC_IPI_SEND:
            continue
        callsite, callback, m0, m1, target, nr = struct.unpack_from("<QQQQII", r, 24)
        mask = m0 | m1 << 64
        n += 1
        call += callback != 0
        resched += callback == 0
        task += (aux & 0xFF) == 0
        ok = (target < nr_cpus and mask >> target & 1 and nr >= bin(mask).count("1")
              and mask < 1 << nr_cpus and (aux & 0xFF) <= 5 and callsite >> 47 == 0x1FFFF
              and cpu < nr_cpus)
        if not ok and bad < 5:
            print("# bad: cpu %d tid %d aux %#x callsite %#x callback %#x mask %#x target %d "
                  "nr %d" % (cpu, tid, aux, callsite, callback, mask, target, nr))
        bad += not ok
    print("sends %d call %d resched %d task %d bad %d; ipi wakes %d by vector %s stale %d"
          % (n, call, resched, task, bad, wakes, dict(sorted(vectors.items())), stale))
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
