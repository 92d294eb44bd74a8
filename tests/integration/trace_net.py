#!/usr/bin/env python3
"""Reads the TCP segments of a trace file (record types 12 net_tx and 13 net_rx, with the
type 22 records that carry an IPv6 segment's addresses), on its own from
docs/trace-format.md, and prints one line per segment:
"tx|rx 4|6 SADDR SPORT DADDR DPORT LEN FLAGS". An IPv6 segment whose type 22 record is
missing, or does not match it (time, CPU, ports, sequence number, the addresses' folds),
is printed with "?" for its addresses.
Usage: trace_net.py TRACE"""
import ipaddress
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_ipis import events  # noqa: E402

REC_NET_TX, REC_NET_RX, REC_NET6 = 12, 13, 22


def fold(a):
    w = struct.unpack("<4I", a)
    return w[0] ^ w[1] ^ w[2] ^ w[3]


def main():
    _, recs = events(sys.argv[1])
    # The file is in time order nearly, not exactly: a segment's type 22 record is found by
    # its time and CPU, not by its place.
    addrs = {}
    for r in recs:
        ts, typ, cpu = struct.unpack_from("<QHH", r, 0)
        if typ == REC_NET6:
            addrs[(ts, cpu)] = struct.unpack_from("<16s16sHHI", r, 24)
    for r in recs:
        ts, typ, cpu = struct.unpack_from("<QHH", r, 0)
        if typ not in (REC_NET_TX, REC_NET_RX):
            continue
        sa, da, sp, dp, seq, ack, ln, flags, family = struct.unpack_from("<IIHHIIHBB", r, 24)
        sport, dport = struct.unpack(">HH", struct.pack("<HH", sp, dp))
        a = addrs.get((ts, cpu))
        if family == 0:
            s, d = (str(ipaddress.IPv4Address(struct.pack("<I", x))) for x in (sa, da))
        elif family == 6 and a and a[2:] == (sp, dp, seq) and (fold(a[0]), fold(a[1])) == (sa, da):
            s, d = (str(ipaddress.IPv6Address(x)) for x in a[:2])
        else:
            s, d = "?", "?"
        print("%s %d %s %d %s %d %d %d" % ("tx" if typ == REC_NET_TX else "rx",
                                          family or 4, s, sport, d, dport, ln, flags))


if __name__ == "__main__":
    main()
