#!/usr/bin/python3
"""Packet-format check of rocehost with scapy (an independent RoCEv2 encoder/decoder).

  rocehost_pcap.py make IN.pcap        data frames for rocehost's receiver: QP 0x300 WRITE
                                       first/middle/last, CE-marked; QP 0x301 WRITE only one
                                       PSN past the expected one (a gap)
  rocehost_pcap.py check OUT.pcap      what rocehost must have sent back and sent on its own:
                                       one CNP, one ACK, one NAK, three WRITE data frames, every
                                       ICRC valid as scapy computes it
  rocehost_pcap.py make-paused IN.pcap the same frames after a PFC frame pausing priority 3
                                       for 0xFFFF quanta (and priority 5, which is lossy)
  rocehost_pcap.py check-paused OUT    while priority 3 is paused only the CNP (priority 6)
                                       may leave: no data, no ACK, no NAK
  rocehost_pcap.py check-paused-ack OUT  the same with traffic {ack_dscp: 48, ack_priority: 6}:
                                       the CNP, the ACK and the NAK leave, all on DSCP 48
  rocehost_pcap.py make-nd IN.pcap     IPv6: a neighbour solicitation for rocehost's address
  rocehost_pcap.py check-nd OUT.pcap   the neighbour advertisement (checksum, flags, target
                                       link-layer address) and the IPv6 WRITE frames
  rocehost_pcap.py check-stream CAP.pcap MIN
                                       a capture of a routed rocehost stream: every frame is
                                       RoCEv2 over IPv4 with a valid IPv4 checksum and ICRC;
                                       WRITE data (TTL 63: one switch hop) in consecutive PSNs
                                       per QP, at least MIN of them
"""
import struct
import sys

from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap, wrpcap

HOST_MAC, GW_MAC = "02:00:00:00:01:02", "02:00:00:00:01:01"
HOST_IP, PEER_IP, FLOW_DST = "10.0.1.2", "10.0.2.2", "10.0.9.2"


def initial_psn(qpn):  # lib/roce/qp.h initial_psn()
    return (qpn * 2654435761) & 0xFFFFFF


def data(qpn, opcode, psn, payload, ackreq=0, reth=None, tos=26 << 2 | 3):
    body = (struct.pack("!QII", *reth) if reth else b"") + payload
    pad = (4 - len(payload) % 4) % 4
    return (Ether(src=GW_MAC, dst=HOST_MAC) /
            IP(src=PEER_IP, dst=HOST_IP, tos=tos, flags="DF") /
            UDP(sport=0xC001, dport=4791, chksum=0) /
            BTH(opcode=opcode, padcount=pad, dqpn=qpn, ackreq=ackreq, psn=psn) /
            Raw(body + b"\0" * pad))


def pfc_frame(enable, quanta):
    body = struct.pack("!HH8H", 0x0101, enable, *quanta)
    return Ether(dst="01:80:c2:00:00:01", src=GW_MAC, type=0x8808) / Raw(body + b"\0" * 26)


def make_paused(path):
    make(path, [pfc_frame(1 << 3 | 1 << 5, [0, 0, 0, 0xFFFF, 0, 0xFFFF, 0, 0])])


def make(path, first=()):
    p0 = initial_psn(0x300)
    frames = [
        data(0x300, 0x06, p0, b"a" * 1024, reth=(0x1000, 1, 2048 + 10)),
        data(0x300, 0x07, (p0 + 1) & 0xFFFFFF, b"b" * 1024),
        data(0x300, 0x08, (p0 + 2) & 0xFFFFFF, b"c" * 10, ackreq=1),
        data(0x301, 0x0A, (initial_psn(0x301) + 1) & 0xFFFFFF, b"d" * 7, ackreq=1,
             reth=(0x2000, 2, 7), tos=26 << 2 | 2),
    ]
    wrpcap(path, list(first) + frames)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


H1_V6, PEER_V6, FLOW_DST_V6 = "fd00:1::2", "fd00:1::1", "fd00:9::2"


def make_nd(path):
    from scapy.layers.inet6 import IPv6, ICMPv6ND_NS, ICMPv6NDOptSrcLLAddr
    ns = (Ether(src=GW_MAC, dst="33:33:ff:00:00:02") /
          IPv6(src=PEER_V6, dst="ff02::1:ff00:2", hlim=255) /
          ICMPv6ND_NS(tgt=H1_V6) / ICMPv6NDOptSrcLLAddr(lladdr=GW_MAC))
    wrpcap(path, [ns])


def check_nd(path):
    from scapy.layers.inet6 import IPv6, ICMPv6ND_NA, ICMPv6NDOptDstLLAddr
    na, data = [], []
    for fr in rdpcap(path):
        p = Ether(bytes(fr))
        if ICMPv6ND_NA in p:
            na.append(p)
        elif BTH in p:
            data.append(p)
        else:
            fail(f"unexpected frame {p.summary()}")
    if len(na) != 1:
        fail(f"expected one neighbour advertisement, got {len(na)}")
    a = na[0]
    q = a.copy()
    del q[ICMPv6ND_NA].cksum
    if IPv6(bytes(q[IPv6]))[ICMPv6ND_NA].cksum != a[ICMPv6ND_NA].cksum:
        fail("ICMPv6 checksum")
    if (a[IPv6].src, a[IPv6].dst, a[IPv6].hlim, a[Ether].dst) != (H1_V6, PEER_V6, 255, GW_MAC):
        fail(f"NA addressing: {a[IPv6].src} {a[IPv6].dst} {a[IPv6].hlim} {a[Ether].dst}")
    if a[ICMPv6ND_NA].tgt != H1_V6 or not a[ICMPv6ND_NA].S or not a[ICMPv6ND_NA].O or a[ICMPv6ND_NA].R:
        fail("NA target or flags")
    if a[ICMPv6NDOptDstLLAddr].lladdr != HOST_MAC:
        fail("NA target link-layer address")
    d = sorted(data, key=lambda p: (p[BTH].psn - data[0][BTH].psn) & 0xFFFFFF)
    if [p[BTH].opcode for p in d] != [0x06, 0x07, 0x08]:
        fail(f"IPv6 data opcodes {[p[BTH].opcode for p in d]}")
    for p in d:
        if p[IPv6].dst != FLOW_DST_V6 or p[IPv6].tc != 26 << 2 | 2 or p[UDP].dport != 4791:
            fail("IPv6 data addressing or traffic class")
        if p[IPv6].plen != len(bytes(p[IPv6].payload)):
            fail("IPv6 payload length")
        if icrc_v6(bytes(p)) != bytes(p)[-4:]:
            fail("IPv6 ICRC")
    print("PASS: neighbour advertisement and IPv6 RoCEv2 frames decode, ICRC valid")


def icrc_v6(frame):
    """IPv6 ICRC written from the RoCEv2 annex (scapy has none): CRC-32 over 8 bytes of ones,
    the IPv6 header with traffic class, flow label and hop limit set to ones, the UDP header
    with its checksum set to ones, the BTH with its reserved byte set to ones, and the rest up
    to the ICRC; stored least significant byte first."""
    import zlib
    ip = bytearray(frame[14:14 + 40])
    ip[0] |= 0x0F
    ip[1:4] = b"\xff\xff\xff"
    ip[7] = 0xFF
    udp = bytearray(frame[54:62])
    udp[6:8] = b"\xff\xff"
    bth = bytearray(frame[62:74])
    bth[4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth) + frame[74:-4])
    return struct.pack("<I", crc)


def check_paused(path):
    frames = [Ether(bytes(f)) for f in rdpcap(path)]
    ops = [p[BTH].opcode if BTH in p else None for p in frames]
    print("opcodes sent while paused:", ops)
    if ops != [0x81]:
        fail("expected exactly one frame, the CNP")
    print("PASS: priority 3 paused, the CNP on priority 6 still left")


def check_paused_ack(path):
    frames = [Ether(bytes(f)) for f in rdpcap(path)]
    ops = sorted(p[BTH].opcode if BTH in p else -1 for p in frames)
    print("opcodes sent while paused:", ops)
    if ops != [0x11, 0x11, 0x81]:
        fail("expected the CNP, the ACK and the NAK")
    for p in frames:
        if p[IP].tos != 48 << 2:
            fail(f"opcode {p[BTH].opcode:#x} left with TOS {p[IP].tos:#x}, not DSCP 48 Not-ECT")
    print("PASS: priority 3 paused, ACK/NAK on their own class (DSCP 48, priority 6) left")


def check_icrc_ipv4(fr, p, what):
    """scapy recomputes the ICRC (over the masked pseudo-header) and the IPv4 header checksum
    of frame `fr` (decoded as `p`); both must match what the frame carries."""
    q = Ether(bytes(fr))
    q[BTH].icrc = None
    if bytes(q)[-4:] != bytes(fr)[-4:]:
        fail(f"ICRC mismatch on {what}: {p.summary()}")
    ip = p[IP].copy()
    del ip.chksum
    if IP(bytes(ip)).chksum != p[IP].chksum:
        fail(f"IPv4 header checksum on {what}")


def check(path):
    got = {"cnp": [], "ack": [], "nak": [], "data": []}
    for fr in rdpcap(path):
        p = Ether(bytes(fr))
        if BTH not in p:
            fail(f"a frame that is not RoCEv2: {p.summary()}")
        b = p[BTH]
        check_icrc_ipv4(fr, p, "a frame")
        if b.opcode == 0x81:
            got["cnp"].append(p)
        elif b.opcode == 0x11:
            got["nak" if p[AETH].syndrome & 0xE0 == 0x60 else "ack"].append(p)
        else:
            got["data"].append(p)
    print({k: len(v) for k, v in got.items()})
    if len(got["cnp"]) != 1 or len(got["ack"]) != 1 or len(got["nak"]) != 1:
        fail("expected exactly one CNP, one ACK and one NAK")
    cnp = got["cnp"][0]
    if cnp[BTH].dqpn != 0x300 or not cnp[BTH].becn or cnp[IP].tos != 48 << 2:
        fail(f"CNP fields: dqpn {cnp[BTH].dqpn:#x} becn {cnp[BTH].becn} tos {cnp[IP].tos}")
    if cnp[IP].dst != PEER_IP or cnp[Ether].dst != GW_MAC or len(bytes(cnp[BTH])) != 12 + 16 + 4:
        fail("CNP addressing or length")
    ack = got["ack"][0]
    if (ack[BTH].dqpn, ack[BTH].psn, ack[AETH].syndrome, ack[AETH].msn) != (
            0x300, (initial_psn(0x300) + 2) & 0xFFFFFF, 0x1F, 1):
        fail(f"ACK fields: {ack[BTH].dqpn:#x} {ack[BTH].psn:#x} {ack[AETH].syndrome:#x}")
    nak = got["nak"][0]
    if (nak[BTH].dqpn, nak[BTH].psn) != (0x301, initial_psn(0x301)):
        fail(f"NAK fields: {nak[BTH].dqpn:#x} {nak[BTH].psn:#x}")
    # The default classes: ACK/NAK with the data's DSCP 26, Not-ECT; the CNP's DSCP 48 above.
    if ack[IP].tos != 26 << 2 or nak[IP].tos != 26 << 2:
        fail(f"ACK/NAK TOS {ack[IP].tos:#x} {nak[IP].tos:#x}, not DSCP 26 Not-ECT")
    d = sorted(got["data"], key=lambda p: (p[BTH].psn - got["data"][0][BTH].psn) & 0xFFFFFF)
    if [p[BTH].opcode for p in d] != [0x06, 0x07, 0x08]:
        fail(f"data opcodes {[p[BTH].opcode for p in d]}")
    qpn = d[0][BTH].dqpn
    p0 = initial_psn(qpn)
    for i, p in enumerate(d):
        if p[BTH].psn != (p0 + i) & 0xFFFFFF or p[BTH].dqpn != qpn:
            fail("data PSN sequence")
        if p[IP].dst != FLOW_DST or p[Ether].dst != GW_MAC or p[IP].tos != 26 << 2 | 2:
            fail("data addressing or DSCP/ECN")
        if p[UDP].sport & 0xC000 != 0xC000 or p[UDP].sport != d[0][UDP].sport:
            fail("UDP source port is not the QP's entropy port")
    reth = bytes(d[0][BTH].payload)[:16]
    if struct.unpack("!QII", reth)[2] != 3000:
        fail("RETH DMA length")
    lens = [len(bytes(p[BTH].payload)) for p in d]
    if lens != [16 + 1024, 1024, 952]:
        fail(f"payload lengths {lens}")
    print("PASS: rocehost frames decode as RoCEv2 with valid ICRC")


def check_stream(path, minimum):
    data, acks, psn = 0, 0, {}
    for fr in rdpcap(path):
        p = Ether(bytes(fr))
        if BTH not in p or IP not in p:
            fail(f"a frame that is not RoCEv2 over IPv4: {p.summary()}")
        check_icrc_ipv4(fr, p, f"frame {data + acks + 1}")
        b = p[BTH]
        if b.opcode in (0x06, 0x07, 0x08, 0x0A):
            if p[IP].ttl != 63:
                fail(f"data frame with TTL {p[IP].ttl}, not 63 (one routed hop)")
            if b.dqpn in psn and b.psn != (psn[b.dqpn] + 1) & 0xFFFFFF:
                fail(f"QP {b.dqpn:#x}: PSN {b.psn:#x} after {psn[b.dqpn]:#x}")
            psn[b.dqpn] = b.psn
            data += 1
        else:
            acks += 1
    print(f"{data} WRITE data frames on {len(psn)} QP(s), {acks} other RoCEv2 frames: "
          "IPv4 checksums and ICRCs valid, PSNs consecutive")
    if data < minimum:
        fail(f"only {data} data frames, expected at least {minimum}")


if __name__ == "__main__":
    if sys.argv[1] == "check-stream":
        check_stream(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    {"make": make, "check": check, "make-paused": make_paused, "check-paused": check_paused,
     "check-paused-ack": check_paused_ack,
     "make-nd": make_nd, "check-nd": check_nd}[sys.argv[1]](sys.argv[2])
