#!/usr/bin/python3
"""Writes the ECN marking vectors (TESTPLAN E2) for test/pipeline/qos_ecn_test.cc:

  qos_ecn_in.pcap        frames as they reach the egress queue (one per case)
  qos_ecn_expected.pcap  the same frames as they must leave a queue that marks every ECT packet
  qos_ecn_cases.json     per case, in order: name, l3, dscp, ecn_in, ecn_out, marked, roce

Both pcaps are encoded by scapy, independently of rocesw. An expected frame is built from the
same parameters as its input with the IP ECN field set to CE (11) when the input is ECT(0) or
ECT(1), and unchanged otherwise (CE stays CE, Not-ECT is never marked); scapy computes the IPv4
header checksum afresh (not incrementally, as rocesw does). For RoCEv2 frames the ICRC of the
expected frame is computed again over the marked packet -- by scapy.contrib.roce for IPv4, by
this script for IPv6 (scapy has no IPv6 ICRC) -- and the script stops unless it equals the
input's ICRC: marking must keep the ICRC valid, and the C++ test compares bytes exactly.

Deterministic (fixed addresses, payloads and timestamps): re-running reproduces all three files
byte for byte.  Run:  /usr/bin/python3 test/data/gen_qos_pcaps.py
"""

import json
import os
import struct
import sys
import zlib

from scapy.compat import raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

HERE = os.path.dirname(os.path.abspath(__file__))
PCAP_IN = os.path.join(HERE, "qos_ecn_in.pcap")
PCAP_EXPECTED = os.path.join(HERE, "qos_ecn_expected.pcap")
MANIFEST = os.path.join(HERE, "qos_ecn_cases.json")

MAC_HOST = "02:00:00:00:bb:02"     # the next hop (test/pipeline/fixture.h kH2)
MAC_PORT = "02:00:00:00:00:11"     # the switch's egress port p1
IP4_SRC, IP4_DST = "10.0.1.2", "10.0.2.2"
IP6_SRC, IP6_DST = "fd00:1::2", "fd00:2::2"
ROCE_PORT = 4791
CE = 3
NAMES = {0: "notect", 1: "ect1", 2: "ect0", 3: "ce"}

cases = []  # (manifest entry, input frame, expected frame)


def icrc(l3, v6):
    """RoCEv2 ICRC over an IP packet without its trailing ICRC: CRC32 of 8 bytes of 1s (the
    pseudo LRH) and the packet with the variant fields masked to 1s (IPv4 TOS, TTL, checksum;
    IPv6 traffic class, flow label, hop limit; UDP checksum; BTH reserved byte)."""
    b = bytearray(l3)
    if v6:
        b[0] |= 0x0F
        b[1] = b[2] = b[3] = 0xFF
        b[7] = 0xFF
        udp = 40
    else:
        b[1] = 0xFF
        b[8] = 0xFF
        b[10] = b[11] = 0xFF
        udp = (b[0] & 0x0F) * 4
    b[udp + 6] = b[udp + 7] = 0xFF
    b[udp + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def l2(vlan_pcp):
    e = Ether(src=MAC_PORT, dst=MAC_HOST)
    return e if vlan_pcp is None else e / Dot1Q(prio=vlan_pcp, vlan=100)


def ip_layer(v6, dscp, ecn):
    tos = dscp << 2 | ecn
    if v6:
        return IPv6(src=IP6_SRC, dst=IP6_DST, tc=tos, fl=0x12345, hlim=63)
    return IP(src=IP4_SRC, dst=IP4_DST, tos=tos, ttl=63, id=0x1234, flags="DF")


def roce(v6, dscp, ecn, vlan_pcp, index):
    """A RoCEv2 RC SEND-only frame with a valid ICRC; returns (frame bytes, ICRC bytes)."""
    bth = BTH(opcode=0x04, dqpn=0x00ABCD, psn=1000 + index, ackreq=1)
    payload = Raw(bytes((index * 7 + i) & 0xFF for i in range(64)))
    udp = UDP(sport=49152 + index, dport=ROCE_PORT, chksum=0) if not v6 else \
        UDP(sport=49152 + index, dport=ROCE_PORT)
    if v6:
        b0 = bth.copy()
        b0.icrc = 0
        l3 = raw(ip_layer(v6, dscp, ecn) / udp / b0 / payload)
        crc = icrc(l3[:-4], True)
        b1 = bth.copy()
        b1.icrc = struct.unpack("!I", crc)[0]
        frame = raw(l2(vlan_pcp) / ip_layer(v6, dscp, ecn) / udp / b1 / payload)
    else:
        b1 = bth.copy()
        b1.icrc = None  # scapy.contrib.roce computes it
        frame = raw(l2(vlan_pcp) / ip_layer(v6, dscp, ecn) / udp / b1 / payload)
        l3_off = 14 if vlan_pcp is None else 18
        mine = icrc(frame[l3_off:-4], False)
        if mine != frame[-4:]:
            sys.exit("ICRC mismatch with scapy.contrib.roce: %s vs %s" %
                     (frame[-4:].hex(), mine.hex()))
    return frame, frame[-4:]


def plain_udp(v6, dscp, ecn, vlan_pcp, index):
    payload = Raw(bytes((index + i) & 0xFF for i in range(100)))
    return raw(l2(vlan_pcp) / ip_layer(v6, dscp, ecn) / UDP(sport=1000 + index, dport=2000) /
               payload), None


def add(kind, v6, dscp, ecn, vlan_pcp=None):
    index = len(cases)
    build = roce if kind == "roce" else plain_udp
    frame_in, icrc_in = build(v6, dscp, ecn, vlan_pcp, index)
    marked = ecn in (1, 2)
    ecn_out = CE if marked else ecn
    frame_out, icrc_out = build(v6, dscp, ecn_out, vlan_pcp, index)
    if kind == "roce" and icrc_out != icrc_in:
        sys.exit("case %d: marking changed the ICRC (%s -> %s)" % (index, icrc_in.hex(),
                                                                   icrc_out.hex()))
    if marked == (frame_in == frame_out):
        sys.exit("case %d: expected frame inconsistent with 'marked'" % index)
    name = "%s%s%s_dscp%d_%s" % (kind, "6" if v6 else "4", "_vlan" if vlan_pcp is not None else "",
                                 dscp, NAMES[ecn])
    cases.append(({"name": name, "l3": "ipv6" if v6 else "ipv4", "dscp": dscp, "ecn_in": ecn,
                   "ecn_out": ecn_out, "marked": marked, "roce": kind == "roce",
                   "len": len(frame_in)}, frame_in, frame_out))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i, 0, len(fr), len(fr)))
            f.write(fr)


def main():
    for v6 in (False, True):
        for ecn in (2, 1, 3, 0):               # ECT(0), ECT(1), CE, Not-ECT
            add("roce", v6, 26, ecn)
        add("roce", v6, 48, 2)                 # another DSCP: kept as is
        add("roce", v6, 63, 1)                 # every DSCP bit set: the mark must not touch them
        add("roce", v6, 26, 2, vlan_pcp=3)     # tagged: the IP header starts at 18
        add("udp", v6, 0, 2)
        add("udp", v6, 46, 3)
        add("udp", v6, 10, 0, vlan_pcp=5)
    write_pcap(PCAP_IN, [c[1] for c in cases])
    write_pcap(PCAP_EXPECTED, [c[2] for c in cases])
    with open(MANIFEST, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(c[0], sort_keys=True) for c in cases) + "\n]\n")
    print("wrote %d cases" % len(cases))


if __name__ == "__main__":
    main()
