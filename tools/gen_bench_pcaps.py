#!/usr/bin/python3
"""Generates the RoCEv2 traffic tools/bench replays (net_pcap, infinite_rx=1).

One pcap per frame size (wire size including the 4-byte FCS, which a pcap does not hold):
bench-64.pcap, bench-1024.pcap, bench-4096.pcap, plus bench-flows.json describing them.

Traffic (deterministic, seeded):
  - FLOWS flows (default 1024, at least 256), each a (source host, destination, UDP source port,
    destination QP) tuple; the UDP source port is the per-QP entropy (0xC000-0xFFFF, as Linux).
  - Destinations: 64 hosts in each of 8 /16 prefixes spread over 32.0.0.0/12..46.0.0.0/16
    (PREFIXES below), in different /24s, so a table of /24 routes over 32.0.0.0-47.255.255.0 or
    one /16 route per prefix covers them all.
  - Classes: 80 % RoCE RDMA WRITE (DSCP 26, ECN ECT(0)), 10 % CNP (BTH opcode 0x81, DSCP 48,
    Not-ECT), 10 % plain UDP (DSCP 0, Not-ECT, port 5201). At 64 B a CNP cannot hold its 16 zero
    bytes (the frame is 60 bytes before the FCS); it carries 2 and keeps the opcode.
  - RoCE frames carry a valid ICRC (scapy.contrib.roce) and a zero UDP checksum, as NICs send.
  - Packets of the flows are interleaved round-robin, PACKETS_PER_FLOW each.
  - Ethernet destination: the switch's ingress port MAC (--dst-mac); sources 10.0.1.0/24.

Usage: gen_bench_pcaps.py --out-dir DIR [--flows N] [--sizes 64,1024,4096] [--dst-mac MAC]
Frames above 1518 B need a port MTU of at least (size - 18); tools/bench sets 9000.
"""

import argparse
import json
import os
import random
import sys

from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapWriter

PREFIXES = ["32.1.0.0/16", "34.7.0.0/16", "36.20.0.0/16", "38.33.0.0/16",
            "40.99.0.0/16", "42.128.0.0/16", "44.200.0.0/16", "46.250.0.0/16"]
HOSTS_PER_PREFIX = 64
SRC_MAC = "02:00:00:00:01:02"
FCS = 4
ECT0 = 0b10


def destinations():
    out = []
    for i, p in enumerate(PREFIXES):
        a, b = (int(x) for x in p.split("/")[0].split(".")[:2])
        for h in range(HOSTS_PER_PREFIX):
            # spread over /24s: third octet varies, host part 2..254
            out.append(f"{a}.{b}.{(h * 37 + i * 11) % 256}.{2 + (h * 7) % 250}")
    return out


def make_flows(n, rng):
    dsts = destinations()
    flows = []
    for i in range(n):
        r = i % 10
        kind = "roce" if r < 8 else ("cnp" if r == 8 else "udp")
        flows.append({
            "kind": kind,
            "src": f"10.0.1.{2 + i % 200}",
            "dst": dsts[(i * 131) % len(dsts)],
            "sport": 0xC000 | rng.randrange(0x4000),
            "qp": rng.randrange(1, 1 << 24),
            "psn": rng.randrange(1 << 24),
        })
    return flows


def frame(flow, size, dst_mac, seq):
    cap = size - FCS
    eth = Ether(src=SRC_MAC, dst=dst_mac)
    if flow["kind"] == "udp":
        base = eth / IP(src=flow["src"], dst=flow["dst"], tos=0, ttl=64) / \
            UDP(sport=flow["sport"], dport=5201)
        pad = cap - len(base)
        return base / Raw(bytes(pad))
    if flow["kind"] == "roce":
        tos, opcode = (26 << 2) | ECT0, 0x07  # RC RDMA WRITE middle
    else:
        tos, opcode = 48 << 2, 0x81  # CNP
    hdr_len = 14 + 20 + 8 + 12 + 4  # Eth IP UDP BTH ICRC
    pad = cap - hdr_len
    if pad < 0:
        raise SystemExit(f"frame size {size} is below the RoCEv2 minimum {hdr_len + FCS}")
    payload = bytes(pad) if opcode == 0x81 else bytes((seq + k) & 0xFF for k in range(pad))
    p = eth / IP(src=flow["src"], dst=flow["dst"], tos=tos, ttl=64) / \
        UDP(sport=flow["sport"], dport=4791, chksum=0) / \
        BTH(opcode=opcode, dqpn=flow["qp"], psn=(flow["psn"] + seq) & 0xFFFFFF) / Raw(payload)
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--flows", type=int, default=1024)
    ap.add_argument("--packets-per-flow", type=int, default=2)
    ap.add_argument("--sizes", default="64,1024,4096")
    ap.add_argument("--dst-mac", default="02:00:00:00:01:01")
    ap.add_argument("--seed", type=int, default=8)
    a = ap.parse_args()
    if a.flows < 256:
        sys.exit("--flows must be at least 256")
    rng = random.Random(a.seed)
    flows = make_flows(a.flows, rng)
    os.makedirs(a.out_dir, exist_ok=True)
    meta = {"prefixes": PREFIXES, "flows": a.flows, "packets_per_flow": a.packets_per_flow,
            "dst_mac": a.dst_mac, "src_mac": SRC_MAC, "files": {}}
    for size in (int(s) for s in a.sizes.split(",")):
        path = os.path.join(a.out_dir, f"bench-{size}.pcap")
        w = PcapWriter(path + ".tmp", linktype=1, sync=False)
        n = 0
        for seq in range(a.packets_per_flow):
            for f in flows:
                p = frame(f, size, a.dst_mac, seq)
                if len(p) != size - FCS:
                    sys.exit(f"internal error: {len(p)} bytes for size {size}")
                p.time = n * 1e-6
                w.write(p)
                n += 1
        w.close()
        os.replace(path + ".tmp", path)
        meta["files"][str(size)] = {"path": path, "packets": n, "captured_len": size - FCS}
    mix = {k: sum(1 for f in flows if f["kind"] == k) for k in ("roce", "cnp", "udp")}
    meta["mix"] = mix
    meta["distinct_destinations"] = len({f["dst"] for f in flows})
    with open(os.path.join(a.out_dir, "bench-flows.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    print(json.dumps({k: meta[k] for k in ("flows", "mix", "distinct_destinations")}))


if __name__ == "__main__":
    main()
