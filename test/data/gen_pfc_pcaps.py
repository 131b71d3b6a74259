#!/usr/bin/python3
"""Writes the MAC-control test vectors for lib/pfc/frame.h: pfc_cases.pcap (one frame per case)
and pfc_cases.json (per frame: name, expected error or "none", and for valid frames pfc,
enable and quanta). Frames are encoded by scapy (scapy.contrib.mac_control), independently of
rocesw; the expected values come from the parameters each case is built with.

Deterministic. Run from anywhere:  /usr/bin/python3 test/data/gen_pfc_pcaps.py
"""

import json
import os
import struct

from scapy.compat import raw
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = "02:00:00:00:00:0a"
DST = "01:80:c2:00:00:01"
cases = []


def add(name, frame, error="none", pfc=None, enable=None, quanta=None):
    c = {"name": name, "error": error}
    if error == "none":
        c.update(pfc=pfc, enable=enable, quanta=quanta)
    cases.append((c, raw(frame)))


def pfc(enable_times):
    """enable_times: {priority: quanta}."""
    kw = {}
    for p, t in enable_times.items():
        kw["c%d_enabled" % p] = 1
        kw["c%d_pause_time" % p] = t
    return MACControlClassBasedFlowControl(**kw)


def ok_pfc(name, enable_times):
    enable = sum(1 << p for p in enable_times)
    quanta = [enable_times.get(p, 0) for p in range(8)]
    add(name, Ether(src=SRC, dst=DST) / pfc(enable_times), pfc=True, enable=enable, quanta=quanta)


ok_pfc("pfc_p3_ffff", {3: 0xFFFF})
ok_pfc("pfc_p3_xon", {3: 0})
ok_pfc("pfc_p3_p4", {3: 1000, 4: 2})
ok_pfc("pfc_all", {p: 100 * (p + 1) for p in range(8)})
ok_pfc("pfc_p0_1", {0: 1})
ok_pfc("pfc_none_enabled", {})
add("pause_100", Ether(src=SRC, dst=DST) / MACControlPause(pause_time=100), pfc=False,
    enable=0xFF, quanta=[100, 0, 0, 0, 0, 0, 0, 0])
add("pause_0", Ether(src=SRC, dst=DST) / MACControlPause(pause_time=0), pfc=False, enable=0xFF,
    quanta=[0] * 8)
add("bad_dst_unicast", Ether(src=SRC, dst="02:00:00:00:00:fe") / pfc({3: 5}), "bad_dst")
add("bad_dst_lldp", Ether(src=SRC, dst="01:80:c2:00:00:0e") / pfc({3: 5}), "bad_dst")
add("tagged", Ether(src=SRC, dst=DST) / Dot1Q(vlan=5, prio=3) / pfc({3: 5}), "tagged")
add("truncated_34", raw(Ether(src=SRC, dst=DST) / pfc({3: 5}))[:34], "truncated")
add("truncated_59", raw(Ether(src=SRC, dst=DST) / pfc({3: 5}))[:59], "truncated")
add("bad_opcode_gate", Ether(src=SRC, dst=DST, type=0x8808) / Raw(struct.pack("!H", 0x0002) +
    bytes(44)), "bad_opcode")
add("bad_vector_upper_byte", Ether(src=SRC, dst=DST, type=0x8808) /
    Raw(struct.pack("!HH", 0x0101, 0x0108) + struct.pack("!8H", 0, 0, 0, 5, 0, 0, 0, 0) +
        bytes(26)), "bad_vector")


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i, 0, len(fr), len(fr)))
            f.write(fr)


write_pcap(os.path.join(HERE, "pfc_cases.pcap"), [fr for _, fr in cases])
with open(os.path.join(HERE, "pfc_cases.json"), "w") as f:
    json.dump([c for c, _ in cases], f, indent=1)
    f.write("\n")
print("%d cases -> pfc_cases.pcap, pfc_cases.json" % len(cases))
