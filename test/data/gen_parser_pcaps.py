#!/usr/bin/python3
"""Writes the parser test vectors: parser_cases.pcap (one frame per case) and parser_cases.json
(the manifest: for every frame, in order, its name, the expected parse result and, for valid
frames, the expected PacketMeta fields).

The frames are encoded by scapy, independently of rocesw's own code; the expected values come
from the parameters each case is built with, never from dissecting the bytes again. The RoCEv2
ICRC is computed here (for IPv4 and IPv6) and cross-checked against scapy.contrib.roce for IPv4.

Deterministic: fixed addresses, ports, payloads and timestamps, so re-running it reproduces both
files byte for byte. Run from anywhere:  /usr/bin/python3 test/data/gen_parser_pcaps.py
"""

import json
import os
import re
import struct
import sys
import zlib

from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_Router_Alert, IPOption_RR
from scapy.layers.inet6 import ICMPv6EchoRequest, ICMPv6ND_NS, IPv6, IPv6ExtHdrFragment, \
    IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, LLC, STP, Dot1Q, Dot3, Ether
from scapy.packet import Raw
from scapy.contrib.roce import AETH, BTH, CNPPadding

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PCAP = os.path.join(HERE, "parser_cases.pcap")
MANIFEST = os.path.join(HERE, "parser_cases.json")
DROP_REASON_H = os.path.join(REPO, "lib", "common", "drop_reason.h")

MAC_SRC = "02:00:00:00:00:01"      # a host (locally administered unicast)
MAC_DST = "02:00:00:00:00:fe"      # the switch port
MAC_BCAST = "ff:ff:ff:ff:ff:ff"
IP4_SRC, IP4_DST = "10.0.1.2", "10.0.2.3"
IP6_SRC, IP6_DST = "fd00:1::2", "fd00:2::3"
ROCE_PORT = 4791
MAX_L3_LEN = 1500                  # ParseOptions.max_l3_len the test runs with

PAYLOAD16 = bytes(range(0x40, 0x50))
PAYLOAD64 = bytes(range(0x80, 0xC0))

cases = []  # (name, frame bytes, expect, meta dict or None, note)


def drop_reason_names():
    with open(DROP_REASON_H) as f:
        return re.findall(r"^\s*X\((\w+),", f.read(), re.M)


def mac_is_mcast(mac):
    return int(mac.split(":")[0], 16) & 1 == 1


def add(name, frame, expect, meta=None, note=""):
    frame = raw(frame) if not isinstance(frame, (bytes, bytearray)) else bytes(frame)
    if meta is not None:  # guard against encoder slips: the EtherType must match the L3 type
        off = meta["l3_offset"]
        ethertype = struct.unpack("!H", frame[off - 2:off])[0]
        want = {"ipv4": 0x0800, "ipv6": 0x86DD, "arp": 0x0806, "mac_control": 0x8808}[meta["l3"]]
        if ethertype != want or (meta["vlan"] and frame[12:14] != b"\x81\x00"):
            sys.exit("%s: EtherType 0x%04x, expected 0x%04x" % (name, ethertype, want))
    cases.append((name, frame, expect, meta, note))


def bad(name, frame, reason, note=""):
    add(name, frame, reason, None, note)


# ---------------------------------------------------------------------------------------------
# Layer 2 helpers. Each returns (scapy layers, expected meta for the Ethernet/VLAN part).

def l2(vlan=None, src=MAC_SRC, dst=MAC_DST):
    """vlan: None for untagged, else (pcp, vid) or (pcp, vid, dei)."""
    e = Ether(src=src, dst=dst)
    m = {
        "dst_bcast": dst.lower() == MAC_BCAST,
        "dst_mcast": mac_is_mcast(dst) and dst.lower() != MAC_BCAST,
    }
    if vlan is None:
        m.update(vlan=False, pcp=0, vid=0, l3_offset=14)
        return e, m
    pcp, vid = vlan[0], vlan[1]
    dei = vlan[2] if len(vlan) > 2 else 0
    m.update(vlan=True, pcp=pcp, vid=vid, l3_offset=18)
    return e / Dot1Q(prio=pcp, id=dei, vlan=vid), m


def ip4_int(s):
    return struct.unpack("!I", bytes(int(x) for x in s.split(".")))[0]


# ---------------------------------------------------------------------------------------------
# RoCEv2 ICRC, computed here independently of scapy: CRC32 over 8 bytes of 1s (the pseudo LRH),
# the IP header with the variant fields set to 1s, the UDP header with its checksum set to 1s,
# the BTH with its reserved byte (FECN/BECN) set to 1s, and the payload. Stored little-endian.

def icrc(l3, v6):
    b = bytearray(l3)
    if v6:
        b[0] |= 0x0F           # traffic class (high nibble)
        b[1] = b[2] = b[3] = 0xFF  # traffic class (low nibble) + flow label
        b[7] = 0xFF            # hop limit
        udp = 40
    else:
        b[1] = 0xFF            # TOS
        b[8] = 0xFF            # TTL
        b[10] = b[11] = 0xFF   # header checksum
        udp = (b[0] & 0x0F) * 4
    b[udp + 6] = b[udp + 7] = 0xFF  # UDP checksum
    b[udp + 8 + 4] = 0xFF      # BTH reserved byte (FECN, BECN, 6 reserved bits)
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def roce_frame(l2layers, ip, sport, bth, after_bth):
    """Builds l2/ip/UDP(sport, 4791)/bth/after_bth with a correct ICRC. For IPv4 the ICRC is
    also computed by scapy.contrib.roce and the two must agree."""
    v6 = isinstance(ip, IPv6)
    udp_cs = {} if v6 else {"chksum": 0}  # RoCE NICs send UDP checksum 0 over IPv4
    bth0 = bth.copy()
    bth0.icrc = 0
    pkt = ip.copy() / UDP(sport=sport, dport=ROCE_PORT, **udp_cs) / bth0 / after_bth
    l3 = raw(pkt)
    mine = icrc(l3[:-4], v6)
    if not v6:
        bth_s = bth.copy()
        bth_s.icrc = None
        theirs = raw(ip.copy() / UDP(sport=sport, dport=ROCE_PORT, **udp_cs) / bth_s /
                     after_bth)[-4:]
        if theirs != mine:
            sys.exit("ICRC mismatch with scapy.contrib.roce: %s vs %s" % (theirs.hex(), mine.hex()))
    bth1 = bth.copy()
    bth1.icrc = struct.unpack("!I", mine)[0]
    frame = raw(l2layers / ip.copy() / UDP(sport=sport, dport=ROCE_PORT, **udp_cs) / bth1 /
                after_bth)
    assert frame.endswith(mine)
    return frame


def reth(va, rkey, dmalen):
    return Raw(struct.pack("!QII", va, rkey, dmalen))


# ---------------------------------------------------------------------------------------------
# Valid-frame builders: expected meta is derived from the construction parameters.

def ok_ipv4(name, l4="udp", vlan=None, tos=0, ttl=64, src=IP4_SRC, dst=IP4_DST, sport=12345,
            dport=5000, payload=PAYLOAD16, proto=None, flags=0, frag=0, mac_dst=MAC_DST,
            pad_to=0, note="", ip_id=1, udp_len=None):
    e, m = l2(vlan, dst=mac_dst)
    ipkw = dict(src=src, dst=dst, tos=tos, ttl=ttl, id=ip_id, flags=flags, frag=frag)
    has_l4 = False
    if l4 == "udp":
        ip = IP(**ipkw) / UDP(sport=sport, dport=dport, len=udp_len) / Raw(payload)
        proto, has_l4 = 17, frag == 0
    elif l4 == "tcp":
        ip = IP(**ipkw) / TCP(sport=sport, dport=dport, flags="S", seq=1000) / Raw(payload)
        proto, has_l4 = 6, frag == 0
    elif l4 == "icmp":
        ip = IP(**ipkw) / ICMP(type=8, id=7, seq=1) / Raw(payload)
        proto = 1
    else:  # raw payload with the given protocol number
        ip = IP(proto=proto, **ipkw) / Raw(payload)
    l3 = raw(ip)
    frame = raw(e / ip)
    if pad_to and len(frame) < pad_to:
        frame += b"\x00" * (pad_to - len(frame))
    m.update(l3="ipv4", l3_len=len(l3), ip_proto=proto, ttl=ttl, dscp=tos >> 2, ecn=tos & 3,
             src_ip4=src, dst_ip4=dst, l4=has_l4, roce=False,
             fragment=bool(flags & 1) or frag != 0)
    if has_l4:
        m.update(l4_offset=m["l3_offset"] + 20, src_port=sport, dst_port=dport)
    add(name, frame, "ok", m, note)


def ok_ipv6(name, l4="udp", vlan=None, tc=0, hlim=64, src=IP6_SRC, dst=IP6_DST, sport=12345,
            dport=5000, payload=PAYLOAD16, mac_dst=MAC_DST, ext=None, trailer=b"", note="",
            fl=0x12345):
    e, m = l2(vlan, dst=mac_dst)
    ip = IPv6(src=src, dst=dst, tc=tc, hlim=hlim, fl=fl)
    has_l4 = False
    if ext is not None:
        ip = ip / ext
    if l4 == "udp":
        pkt = ip / UDP(sport=sport, dport=dport) / Raw(payload)
        has_l4 = ext is None
    elif l4 == "tcp":
        pkt = ip / TCP(sport=sport, dport=dport, flags="S", seq=1000) / Raw(payload)
        has_l4 = ext is None
    elif l4 == "icmp6":
        pkt = ip / ICMPv6EchoRequest(id=7, seq=1, data=payload)
    elif l4 == "ns":
        pkt = ip / ICMPv6ND_NS(tgt=IP6_DST)
    l3 = raw(pkt)
    nh = l3[6]
    frame = raw(e / pkt) + trailer
    m.update(l3="ipv6", l3_len=len(l3), ip_proto=nh, ttl=hlim, dscp=tc >> 2, ecn=tc & 3,
             l4=has_l4, roce=False, fragment=False)
    if has_l4:
        m.update(l4_offset=m["l3_offset"] + 40, src_port=sport, dst_port=dport)
    add(name, frame, "ok", m, note)


def ok_roce(name, v6=False, vlan=None, tos=0, ttl=64, sport=0xC123, bth=None, after=None,
            note=""):
    e, m = l2(vlan)
    if v6:
        ip = IPv6(src=IP6_SRC, dst=IP6_DST, tc=tos, hlim=ttl, fl=0xABCDE)
    else:
        ip = IP(src=IP4_SRC, dst=IP4_DST, tos=tos, ttl=ttl, id=0x4242, flags="DF")
    frame = roce_frame(e, ip, sport, bth, after if after is not None else Raw(b""))
    l3_len = len(frame) - m["l3_offset"]
    m.update(l3="ipv6" if v6 else "ipv4", l3_len=l3_len, ip_proto=17, ttl=ttl, dscp=tos >> 2,
             ecn=tos & 3, l4=True, l4_offset=m["l3_offset"] + (40 if v6 else 20),
             src_port=sport, dst_port=ROCE_PORT, roce=True, bth_opcode=bth.opcode,
             dest_qp=bth.dqpn, psn=bth.psn, fragment=False)
    if not v6:
        m.update(src_ip4=IP4_SRC, dst_ip4=IP4_DST)
    add(name, frame, "ok", m, note)


def ok_arp(name, op, vlan=None, dst=MAC_DST):
    e, m = l2(vlan, dst=dst)
    arp = ARP(op=op, hwsrc=MAC_SRC, psrc=IP4_SRC,
              hwdst="00:00:00:00:00:00" if op == 1 else MAC_DST, pdst="10.0.1.1")
    frame = raw(e / arp)
    m.update(l3="arp", l4=False, roce=False, fragment=False)
    add(name, frame, "ok", m)


# ---------------------------------------------------------------------------------------------
# Valid frames

ok_ipv4("ipv4_udp")
ok_ipv4("ipv4_tcp", l4="tcp", sport=40000, dport=443)
ok_ipv4("ipv4_icmp", l4="icmp")
ok_ipv4("ipv4_gre_no_l4", l4=None, proto=47, note="unknown protocol: ok, no L4")
ok_ipv6("ipv6_udp", sport=33333, dport=53)
ok_ipv6("ipv6_tcp", l4="tcp", sport=40001, dport=8080)
ok_ipv6("ipv6_icmpv6", l4="icmp6")
ok_ipv6("ipv6_hopbyhop_udp", ext=IPv6ExtHdrHopByHop(),
        note="extension header: ok, no L4, ip_proto is the first next header")
ok_ipv6("ipv6_fraghdr_udp", ext=IPv6ExtHdrFragment(offset=0, m=1, id=99),
        note="IPv6 fragment header: ok, no L4, not an IPv4 fragment")

# VLAN tags: PCP 0..7, IPv4 and IPv6, VID 0 (priority-tagged), 4094, DEI set.
ok_ipv4("vlan_pcp0_ipv4", vlan=(0, 1))
ok_ipv6("vlan_pcp1_ipv6", vlan=(1, 100))
ok_ipv4("vlan_pcp2_ipv4_tcp", vlan=(2, 200), l4="tcp", sport=1234, dport=80)
ok_ipv4("vlan_pcp3_ipv4_vid0", vlan=(3, 0), note="priority-tagged frame (VID 0)")
ok_ipv6("vlan_pcp4_ipv6_tcp", vlan=(4, 2000), l4="tcp", sport=5555, dport=22)
ok_ipv4("vlan_pcp5_ipv4_dei", vlan=(5, 3000, 1), note="DEI bit set: not part of vid")
ok_ipv6("vlan_pcp6_ipv6_vid4094", vlan=(6, 4094))
ok_ipv4("vlan_pcp7_ipv4_vid4095", vlan=(7, 0xFFF), tos=(48 << 2))

# RoCEv2
ok_roce("roce4_write_first", tos=(26 << 2) | 2,
        bth=BTH(opcode=0x06, dqpn=0xABCDEF, psn=0x123456, ackreq=0, pkey=0xFFFF),
        after=reth(0x00007F0012345000, 0x1234ABCD, 4096) / Raw(PAYLOAD64))
ok_roce("roce4_write_only", tos=(26 << 2) | 1,
        bth=BTH(opcode=0x0A, dqpn=0x000011, psn=0xFFFFFE, ackreq=1, solicited=1),
        after=reth(0x1000, 0x77, 64) / Raw(PAYLOAD64),
        note="A bit set next to the PSN, SE bit set: psn must be the 24 bits only")
ok_roce("roce4_ack", tos=(26 << 2),
        bth=BTH(opcode=0x11, dqpn=0x800001, psn=0x000100, fecn=1),
        after=AETH(syndrome=0x1F, msn=0x000042), note="FECN set next to dest QP")
ok_roce("roce4_cnp", tos=(48 << 2), bth=BTH(opcode=0x81, becn=1, dqpn=0xABCDEF, psn=0),
        after=CNPPadding())
ok_roce("roce4_cnp_vlan_pcp6", vlan=(6, 100), tos=(48 << 2),
        bth=BTH(opcode=0x81, becn=1, dqpn=0x000002, psn=0), after=CNPPadding())
ok_roce("roce4_send_only_min", tos=(26 << 2) | 2,
        bth=BTH(opcode=0x04, dqpn=0x00ABCD, psn=0x000001), after=Raw(b""),
        note="UDP payload exactly BTH + ICRC (16 bytes)")
ok_roce("roce4_vlan_write_only", vlan=(3, 100), tos=(26 << 2) | 3,
        bth=BTH(opcode=0x0A, dqpn=0x123456, psn=0x654321),
        after=reth(0x2000, 0x88, 64) / Raw(PAYLOAD64), note="CE-marked RoCE")
ok_roce("roce6_write_only", v6=True, tos=(26 << 2) | 2,
        bth=BTH(opcode=0x0A, dqpn=0xFEDCBA, psn=0xABCDEF, ackreq=1),
        after=reth(0x3000, 0x99, 64) / Raw(PAYLOAD64))
ok_roce("roce6_write_first", v6=True, tos=(26 << 2) | 2,
        bth=BTH(opcode=0x06, dqpn=0x000777, psn=0x000010),
        after=reth(0x4000, 0xAA, 128) / Raw(PAYLOAD64))
ok_roce("roce6_ack", v6=True, tos=(26 << 2),
        bth=BTH(opcode=0x11, dqpn=0x000778, psn=0x000011), after=AETH(syndrome=0, msn=1))
ok_roce("roce6_cnp", v6=True, tos=(48 << 2), ttl=255,
        bth=BTH(opcode=0x81, becn=1, dqpn=0x000779, psn=0), after=CNPPadding())
ok_roce("roce6_vlan_write_only", v6=True, vlan=(3, 100), tos=(26 << 2) | 2, ttl=63,
        bth=BTH(opcode=0x0A, dqpn=0x00ABCD, psn=0xFFFFFF),
        after=reth(0x5000, 0xBB, 64) / Raw(PAYLOAD64))
ok_ipv4("udp_sport_4791_not_roce", sport=ROCE_PORT, dport=5000,
        note="only the destination port makes RoCE")
ok_ipv6("ipv6_udp_sport_4791_not_roce", sport=ROCE_PORT, dport=5001)

# ECN codepoints and DSCPs
for ecn in range(4):
    ok_ipv4("ipv4_ecn%d" % ecn, tos=ecn)
    ok_ipv6("ipv6_ecn%d" % ecn, tc=(10 << 2) | ecn)
for dscp, ecn in ((0, 2), (26, 0), (46, 1), (48, 3), (63, 2)):
    ok_ipv4("ipv4_dscp%d" % dscp, tos=(dscp << 2) | ecn)
for dscp, ecn in ((26, 2), (46, 0), (63, 3)):
    ok_ipv6("ipv6_dscp%d" % dscp, tc=(dscp << 2) | ecn)

# ARP
ok_arp("arp_request", 1, dst=MAC_BCAST)
ok_arp("arp_reply", 2)
ok_arp("vlan_arp_request", 1, vlan=(0, 10), dst=MAC_BCAST)

# IPv4 fragments: first (MF, offset 0) keeps L4 and its UDP length covers the whole datagram;
# later fragments have no L4. DF alone is not a fragment.
ok_ipv4("ipv4_frag_first", flags=1, frag=0, udp_len=8 + 3000, payload=bytes(64), ip_id=0x777,
        note="UDP length is the reassembled length, larger than this fragment")
ok_ipv4("ipv4_frag_middle", flags=1, frag=185, payload=bytes(64), ip_id=0x777, l4=None,
        proto=17)
ok_ipv4("ipv4_frag_last", flags=0, frag=370, payload=bytes(64), ip_id=0x777, l4=None, proto=17)
ok_ipv4("ipv4_df_not_fragment", flags=2)

# TTL / hop limit 0 and 1 parse fine (expiry is the route stage's job)
ok_ipv4("ipv4_ttl0", ttl=0)
ok_ipv4("ipv4_ttl1", ttl=1)
ok_ipv4("ipv4_ttl255", ttl=255)
ok_ipv6("ipv6_hlim0", hlim=0)
ok_ipv6("ipv6_hlim1", hlim=1)

# Multicast / broadcast destinations parse fine (l3_multicast is decided later)
ok_ipv4("ipv4_dst_mcast_224_0_0_5", l4=None, proto=89, dst="224.0.0.5", ttl=1,
        mac_dst="01:00:5e:00:00:05", payload=bytes(24))
ok_ipv4("ipv4_dst_bcast", dst="255.255.255.255", mac_dst=MAC_BCAST, sport=68, dport=67)
ok_ipv6("ipv6_dst_mcast_ns", l4="ns", dst="ff02::1:ff00:3", mac_dst="33:33:ff:00:00:03",
        hlim=255)

# Ethernet padding beyond the IP length is allowed
ok_ipv4("ipv4_padded_28", l4="icmp", payload=b"", pad_to=60,
        note="60-byte frame carrying a 28-byte IPv4 packet")
ok_ipv4("ipv4_udp_padded", payload=b"\x01\x02", pad_to=60,
        note="UDP length checked against the IP payload, not the frame")
ok_ipv4("vlan_ipv4_padded", vlan=(1, 5), l4="icmp", payload=b"", pad_to=64)
ok_ipv6("ipv6_trailing_bytes", trailer=b"\xde\xad\xbe\xef")

# TCP needs only its port words for L4 (lead's assumption); fewer than 4 bytes: ok, no L4
e, m = l2(None)
for name, tcpb, l4 in (("ipv4_tcp_ports_only", struct.pack("!HH", 2222, 3333), True),
                       ("ipv4_tcp_2_bytes", struct.pack("!H", 2222), False)):
    ipl = IP(src=IP4_SRC, dst=IP4_DST, proto=6, id=5) / Raw(tcpb)
    ip = raw(ipl)
    mm = dict(m, l3="ipv4", l3_len=len(ip), ip_proto=6, ttl=64, dscp=0, ecn=0, src_ip4=IP4_SRC,
              dst_ip4=IP4_DST, l4=l4, roce=False, fragment=False)
    if l4:
        mm.update(l4_offset=34, src_port=2222, dst_port=3333)
    add(name, raw(e / ipl), "ok", mm, "TCP shorter than 20 bytes: L4 only when ports present")

# Length limits: exactly max_l3_len is fine
big = 1500 - 20 - 8
ok_ipv4("ipv4_len_1500", payload=bytes(big))
ok_ipv4("vlan_ipv4_len_1500", vlan=(3, 100), payload=bytes(big))
ok_ipv6("ipv6_len_1500", payload=bytes(1500 - 40 - 8))

# ---------------------------------------------------------------------------------------------
# Frames the parser must drop

good4 = Ether(src=MAC_SRC, dst=MAC_DST) / IP(src=IP4_SRC, dst=IP4_DST, id=9) / \
    UDP(sport=1111, dport=2222) / Raw(PAYLOAD16)
good4b = raw(good4)

bad("eth_truncated_13", good4b[:13], "eth_truncated")
bad("eth_truncated_1", good4b[:1], "eth_truncated")
bad("vlan_truncated_14", raw(Ether(src=MAC_SRC, dst=MAC_DST, type=0x8100)), "vlan_truncated")
bad("vlan_truncated_17", raw(Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(vlan=5))[:17],
    "vlan_truncated")
bad("vlan_stacked_8100_8100", Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(vlan=5) / Dot1Q(vlan=6) /
    IP(src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "vlan_stacked")
bad("vlan_stacked_88a8_8100", Ether(src=MAC_SRC, dst=MAC_DST, type=0x88A8) / Dot1Q(vlan=5) /
    Dot1Q(vlan=6) / IP(src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "vlan_stacked")
bad("ethertype_lldp", Ether(src=MAC_SRC, dst="01:80:c2:00:00:0e", type=0x88CC) /
    Raw(bytes.fromhex("0207046c000000000204030c0000000603020078") + bytes(26)),
    "ethertype_unsupported")
bad("ethertype_roce_v1", Ether(src=MAC_SRC, dst=MAC_DST, type=0x8915) / Raw(bytes(64)),
    "ethertype_unsupported", "RoCE v1 (GRH) is not routed")
bad("ethertype_8023_llc_stp", Dot3(src=MAC_SRC, dst="01:80:c2:00:00:00") / LLC() / STP(),
    "ethertype_unsupported", "802.3 length field, not an EtherType")
bad("vlan_ethertype_lldp", Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(vlan=7, type=0x88CC) /
    Raw(bytes(46)), "ethertype_unsupported")
# MAC control (PFC / PAUSE): the parser only recognises the EtherType; lib/pfc validates the
# rest (test/unit/pfc_frame_test.cc), so a tagged one still parses as mac_control here.
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
for _name, _vlan, _ctl in (
        ("mac_control_pfc", None, MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=0xFFFF)),
        ("mac_control_pause", None, MACControlPause(pause_time=100)),
        ("vlan_mac_control_pfc", (3, 5), MACControlClassBasedFlowControl(c4_enabled=1, c4_pause_time=7))):
    _e, _m = l2(_vlan, dst="01:80:c2:00:00:01")
    _m.update(l3="mac_control", l4=False, roce=False, fragment=False)
    add(_name, raw(_e / _ctl), "ok", _m)
bad("src_mac_multicast", Ether(src="01:00:5e:00:00:01", dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "src_mac_multicast")
bad("src_mac_broadcast", Ether(src=MAC_BCAST, dst=MAC_DST) / IP(src=IP4_SRC, dst=IP4_DST) /
    UDP() / Raw(PAYLOAD16), "src_mac_multicast")

# IP version vs EtherType. IPv4 id 0 so that, read as IPv6, the payload length would be 0.
bad("ethertype_ipv6_version4", Ether(src=MAC_SRC, dst=MAC_DST, type=0x86DD) /
    IP(src=IP4_SRC, dst=IP4_DST, id=0) / UDP() / Raw(bytes(32)), "ip_version_bad")
bad("ethertype_ipv4_version6", Ether(src=MAC_SRC, dst=MAC_DST, type=0x0800) /
    IPv6(src=IP6_SRC, dst=IP6_DST) / UDP() / Raw(PAYLOAD16), "ip_version_bad")
bad("ipv4_version5", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(version=5, src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "ip_version_bad")
bad("ipv6_version0", Ether(src=MAC_SRC, dst=MAC_DST) /
    IPv6(version=0, src=IP6_SRC, dst=IP6_DST) / UDP() / Raw(PAYLOAD16), "ip_version_bad")

# IPv4 header
bad("ipv4_truncated_0", good4b[:14], "ipv4_truncated")
bad("ipv4_truncated_10", good4b[:24], "ipv4_truncated")
bad("ipv4_truncated_19", good4b[:33], "ipv4_truncated")
bad("vlan_ipv4_truncated", raw(Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(vlan=5) /
    IP(src=IP4_SRC, dst=IP4_DST))[:18 + 12], "ipv4_truncated")
for ihl in (4, 0):
    bad("ipv4_ihl%d" % ihl, Ether(src=MAC_SRC, dst=MAC_DST) /
        IP(ihl=ihl, src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "ipv4_ihl_bad")
bad("ipv4_ihl_past_frame", raw(Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(ihl=15, len=60, src=IP4_SRC, dst=IP4_DST, proto=17))[:14 + 20] + raw(UDP()),
    "ipv4_length_bad", "IHL says 60 bytes, the frame holds 28 of IPv4")
bad("ipv4_totlen_past_frame", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(len=20 + 8 + 16 + 10, src=IP4_SRC, dst=IP4_DST) / UDP(len=8 + 16) / Raw(PAYLOAD16),
    "ipv4_length_bad")
bad("ipv4_totlen_past_frame_by_1", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(len=20 + 8 + 16 + 1, src=IP4_SRC, dst=IP4_DST) / UDP(len=8 + 16) / Raw(PAYLOAD16),
    "ipv4_length_bad")
bad("ipv4_totlen_below_ihl", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(len=19, src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "ipv4_length_bad")
bad("ipv4_totlen_0", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(len=0, src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(PAYLOAD16), "ipv4_length_bad")
good_cs = IP(raw(IP(src=IP4_SRC, dst=IP4_DST, id=9) / UDP() / Raw(PAYLOAD16))).chksum
bad("ipv4_checksum_bad", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST, id=9, chksum=good_cs ^ 0x0100) / UDP() / Raw(PAYLOAD16),
    "ipv4_checksum_bad")
bad("ipv4_checksum_zero", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST, id=9, chksum=0) / UDP() / Raw(PAYLOAD16),
    "ipv4_checksum_bad", "checksum not filled in")
bad("ipv4_options_router_alert", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST, options=[IPOption_Router_Alert()]) / UDP() / Raw(PAYLOAD16),
    "ipv4_options")
bad("ipv4_options_record_route", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST, options=[IPOption_RR(routers=["10.9.9.9", "10.8.8.8"])]) /
    UDP() / Raw(PAYLOAD16), "ipv4_options")
for name, src in (("multicast", "224.0.0.1"), ("broadcast", "255.255.255.255"),
                  ("loopback", "127.0.0.1"), ("loopback_127_255", "127.255.255.254")):
    bad("ipv4_src_" + name, Ether(src=MAC_SRC, dst=MAC_DST) / IP(src=src, dst=IP4_DST) /
        UDP() / Raw(PAYLOAD16), "ipv4_src_bad")

# IPv6 header
good6b = raw(Ether(src=MAC_SRC, dst=MAC_DST) / IPv6(src=IP6_SRC, dst=IP6_DST) /
             UDP(sport=1111, dport=2222) / Raw(PAYLOAD16))
bad("ipv6_truncated_0", good6b[:14], "ipv6_truncated")
bad("ipv6_truncated_30", good6b[:14 + 30], "ipv6_truncated")
bad("ipv6_truncated_39", good6b[:14 + 39], "ipv6_truncated")
bad("vlan_ipv6_truncated", raw(Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(vlan=5) /
    IPv6(src=IP6_SRC, dst=IP6_DST))[:18 + 20], "ipv6_truncated")
bad("ipv6_plen_past_frame", Ether(src=MAC_SRC, dst=MAC_DST) /
    IPv6(src=IP6_SRC, dst=IP6_DST, plen=8 + 16 + 8) / UDP(len=8 + 16) / Raw(PAYLOAD16),
    "ipv6_length_bad")
bad("ipv6_plen_past_frame_by_1", Ether(src=MAC_SRC, dst=MAC_DST) /
    IPv6(src=IP6_SRC, dst=IP6_DST, plen=8 + 16 + 1) / UDP(len=8 + 16) / Raw(PAYLOAD16),
    "ipv6_length_bad")
bad("ipv6_src_multicast", Ether(src=MAC_SRC, dst=MAC_DST) / IPv6(src="ff02::1", dst=IP6_DST) /
    UDP() / Raw(PAYLOAD16), "ipv6_src_bad")
bad("ipv6_src_loopback", Ether(src=MAC_SRC, dst=MAC_DST) / IPv6(src="::1", dst=IP6_DST) /
    UDP() / Raw(PAYLOAD16), "ipv6_src_bad")
# Sources one 8-byte word away from ::1 are routable (the parser compares the two words).
ok_ipv6("ipv6_src_low_word_one", src="1::1")
ok_ipv6("ipv6_src_high_word_one", src="0:0:0:1::")
ok_ipv6("ipv6_src_two", src="::2")

# UDP
udp4b = raw(UDP(sport=1111, dport=2222) / Raw(PAYLOAD16))
bad("udp_truncated_ipv4", Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST, proto=17) / Raw(udp4b[:4]), "udp_truncated")
bad("udp_truncated_ipv4_padded", raw(Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST, proto=17) / Raw(udp4b[:7])) + bytes(60 - 14 - 27),
    "udp_truncated", "IP total length says 7 bytes of UDP; padding must not count")
bad("udp_truncated_ipv6", Ether(src=MAC_SRC, dst=MAC_DST) /
    IPv6(src=IP6_SRC, dst=IP6_DST, nh=17) / Raw(udp4b[:6]), "udp_truncated")
bad("udp_length_past_ip", Ether(src=MAC_SRC, dst=MAC_DST) / IP(src=IP4_SRC, dst=IP4_DST) /
    UDP(len=8 + 16 + 4) / Raw(PAYLOAD16), "udp_length_bad")
bad("udp_length_7", Ether(src=MAC_SRC, dst=MAC_DST) / IP(src=IP4_SRC, dst=IP4_DST) /
    UDP(len=7) / Raw(PAYLOAD16), "udp_length_bad")
bad("udp_length_0", Ether(src=MAC_SRC, dst=MAC_DST) / IP(src=IP4_SRC, dst=IP4_DST) /
    UDP(len=0) / Raw(PAYLOAD16), "udp_length_bad")
bad("udp_length_past_ip_padded", raw(Ether(src=MAC_SRC, dst=MAC_DST) /
    IP(src=IP4_SRC, dst=IP4_DST) / UDP(len=8 + 10) / Raw(b"\x01\x02")) + bytes(60 - 44),
    "udp_length_bad", "UDP length reaches into the Ethernet padding")
bad("ipv6_udp_length_past_ip", Ether(src=MAC_SRC, dst=MAC_DST) /
    IPv6(src=IP6_SRC, dst=IP6_DST) / UDP(len=8 + 16 + 1) / Raw(PAYLOAD16), "udp_length_bad")

# BTH: UDP 4791 needs BTH (12) + ICRC (4) bytes of payload
for n in (15, 12, 0):
    bad("bth_truncated_%d" % n, Ether(src=MAC_SRC, dst=MAC_DST) /
        IP(src=IP4_SRC, dst=IP4_DST, flags="DF") / UDP(sport=0xC000, dport=ROCE_PORT) /
        Raw(bytes([0x0A]) + bytes(n - 1) if n else b""), "bth_truncated")
bad("vlan_bth_truncated_15", Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(prio=3, vlan=100) /
    IP(src=IP4_SRC, dst=IP4_DST, flags="DF") / UDP(sport=0xC000, dport=ROCE_PORT) /
    Raw(bytes([0x0A]) + bytes(14)), "bth_truncated")
bad("ipv6_bth_truncated_13", Ether(src=MAC_SRC, dst=MAC_DST) / IPv6(src=IP6_SRC, dst=IP6_DST) /
    UDP(sport=0xC000, dport=ROCE_PORT) / Raw(bytes([0x0A]) + bytes(12)), "bth_truncated")

# Longer than max_l3_len (1500)
bad("frame_too_long_ipv4", Ether(src=MAC_SRC, dst=MAC_DST) / IP(src=IP4_SRC, dst=IP4_DST) /
    UDP() / Raw(bytes(1600 - 14 - 28)), "frame_too_long", "1600-byte frame, total length 1586")
bad("frame_too_long_ipv4_1501", Ether(src=MAC_SRC, dst=MAC_DST) / Dot1Q(vlan=5) /
    IP(src=IP4_SRC, dst=IP4_DST) / UDP() / Raw(bytes(1501 - 28)), "frame_too_long")
bad("frame_too_long_ipv6", Ether(src=MAC_SRC, dst=MAC_DST) / IPv6(src=IP6_SRC, dst=IP6_DST) /
    UDP() / Raw(bytes(1600 - 14 - 48)), "frame_too_long")
bad("frame_too_long_roce4", roce_frame(Ether(src=MAC_SRC, dst=MAC_DST),
    IP(src=IP4_SRC, dst=IP4_DST, tos=26 << 2, flags="DF"), 0xC001,
    BTH(opcode=0x0A, dqpn=5, psn=6), reth(0, 1, 4096) / Raw(bytes(4096))), "frame_too_long",
    "4 KiB RoCE write on a 1500 port")

# ARP
arpb = raw(Ether(src=MAC_SRC, dst=MAC_BCAST) / ARP(op=1, hwsrc=MAC_SRC, psrc=IP4_SRC,
                                                   pdst="10.0.1.1"))
bad("arp_truncated_20", arpb[:14 + 20], "arp_invalid")
bad("arp_truncated_27", arpb[:14 + 27], "arp_invalid")
# Anything but an Ethernet/IPv4 request or reply is malformed, not ours to answer or consume.
for field, value, why in (("hwtype", 6, "hardware type 6 (IEEE 802)"),
                          ("ptype", 0x86DD, "protocol type IPv6"),
                          ("hwlen", 8, "hardware address length 8"),
                          ("plen", 16, "protocol address length 16"),
                          ("op", 3, "opcode 3 (RARP request)")):
    # One field of the valid request changed, the 28-byte Ethernet/IPv4 layout kept.
    f = bytearray(arpb)
    off = {"hwtype": 14, "ptype": 16, "hwlen": 18, "plen": 19, "op": 20}[field]
    if field in ("hwtype", "ptype", "op"):
        f[off:off + 2] = struct.pack("!H", value)
    else:
        f[off] = value
    bad("arp_bad_" + field, bytes(f), "arp_invalid", why)


# ---------------------------------------------------------------------------------------------

def write_pcap(path, frames):
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, f in enumerate(frames):
        out.append(struct.pack("<IIII", 1700000000 + i, 0, len(f), len(f)))
        out.append(f)
    with open(path, "wb") as fh:
        fh.write(b"".join(out))


def main():
    reasons = set(drop_reason_names())
    if not reasons:
        sys.exit("no drop reasons found in " + DROP_REASON_H)
    names = set()
    manifest = []
    for name, frame, expect, meta, note in cases:
        if name in names:
            sys.exit("duplicate case name " + name)
        names.add(name)
        if expect != "ok" and expect not in reasons:
            sys.exit("%s: unknown drop reason %s" % (name, expect))
        entry = {"name": name, "len": len(frame), "expect": expect}
        if meta is not None:
            for k in ("l3", "l3_offset", "l4_offset", "l3_len", "ip_proto", "ttl", "dscp", "ecn",
                      "pcp", "vid", "vlan", "l4", "src_port", "dst_port", "roce", "bth_opcode",
                      "dest_qp", "psn", "src_ip4", "dst_ip4", "fragment", "dst_bcast",
                      "dst_mcast"):
                if k in meta:
                    entry[k] = meta[k]
            if expect == "ok" and meta.get("l3") in ("ipv4", "ipv6"):
                assert meta["l3_len"] <= MAX_L3_LEN, name
                assert meta["l3_offset"] + meta["l3_len"] <= len(frame), name
        if note:
            entry["note"] = note
        manifest.append(entry)
    write_pcap(PCAP, [c[1] for c in cases])
    with open(MANIFEST, "w") as fh:
        fh.write("[\n" + ",\n".join(json.dumps(e) for e in manifest) + "\n]\n")
    print("%d cases (%d ok, %d drop) -> %s, %s" % (
        len(cases), sum(1 for c in cases if c[2] == "ok"), sum(1 for c in cases if c[2] != "ok"),
        os.path.relpath(PCAP, REPO), os.path.relpath(MANIFEST, REPO)))


if __name__ == "__main__":
    main()
