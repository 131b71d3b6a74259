#!/usr/bin/python3
"""Golden pcap test: roceswd over two net_pcap ports, input and expected output built by scapy.

Port p0 reads an input pcap written here: good IPv4/IPv6 traffic for hosts behind p1 (UDP, TCP,
ICMP, a static route, a VLAN-tagged frame, a RoCEv2 packet with a valid ICRC, boundary cases)
mixed with bad frames that must each be dropped with one named reason. The expected output of
p1 is built by scapy from the same construction parameters (destination MAC = the neighbour's,
source MAC = p1's, TTL / hop limit - 1, IPv4 checksum recomputed by scapy, VLAN tag removed),
never by dissecting what the switch wrote.

Checks:
  - p0 rx_packets reaches the number of input frames;
  - every drop counter (rocectl --json show drops --all) equals the expected count per port and
    reason, zeros included; p0 tx and p1 rx are 0; p1 tx is the number of forwarded frames;
  - SIGTERM: exit status 0, control socket removed (net_pcap writes the tx pcap on close);
  - p1-out.pcap equals the expected frames byte for byte, in order within each address family
    (the switch routes a burst's IPv4 packets before its IPv6 packets, so the two families may
    interleave differently; that is reported, not failed);
  - the RoCEv2 packet's ICRC is still valid (scapy.contrib.roce and an own CRC32) and its
    DSCP/ECN are unchanged;
  - tshark reads p1-out.pcap without error and counts the expected frames, none malformed;
  - p0-out.pcap holds no frame (nothing reflected).

Runs unprivileged or as root. Usage: /usr/bin/python3 test/system/test_golden_pcap.py [-v] [--keep]
Binaries: $ROCESWD / $ROCECTL, else build/app/{roceswd,rocectl} (BUILD_DIR overrides build/).
"""

import collections
import json
import os
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

from scapy.compat import raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_Router_Alert
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Padding, Raw
from scapy.utils import PcapWriter, hexdump, rdpcap

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD_DIR", os.path.join(REPO, "build"))
ROCESWD = os.environ.get("ROCESWD", os.path.join(BUILD, "app", "roceswd", "roceswd"))
ROCECTL = os.environ.get("ROCECTL", os.path.join(BUILD, "app", "rocectl", "rocectl"))
DROP_REASON_H = os.path.join(REPO, "lib", "common", "drop_reason.h")

VERBOSE = "-v" in sys.argv[1:]
KEEP = "--keep" in sys.argv[1:] or os.environ.get("RSW_KEEP") == "1"

# The switch (p0 towards h1, p1 towards h2) and its neighbours.
P0_MAC, P1_MAC = "02:00:00:00:01:01", "02:00:00:00:02:01"
H1_MAC, H2_MAC = "02:00:00:00:01:02", "02:00:00:00:02:02"
H1_V4, H2_V4 = "10.0.1.2", "10.0.2.2"
H1_V6, H2_V6 = "fd00:1::2", "fd00:2::2"
MTU = 1500
ROCE_PORT = 4791

CONFIG = """\
switch:
  name: {tag}
  workers: 1
  idle: busy
  mbufs: 4096
  file_prefix: {tag}
  control_socket: {sock}
  telemetry: false
  log_level: info
ports:
  - name: p0
    device: "net_pcap0,rx_pcap={d}/p0-in.pcap,tx_pcap={d}/p0-out.pcap"
    mac: "{p0}"
    mtu: {mtu}
    ipv4: ["10.0.1.1/24"]
    ipv6: ["fd00:1::1/64"]
  - name: p1
    device: "net_pcap1,rx_pcap={d}/p1-in.pcap,tx_pcap={d}/p1-out.pcap"
    mac: "{p1}"
    mtu: {mtu}
    ipv4: ["10.0.2.1/24"]
    ipv6: ["fd00:2::1/64"]
routes:
  - prefix: 10.9.0.0/16
    via: 10.0.2.2
  - prefix: "fd00:3::/64"
    via: "fd00:2::2"
neighbours:
  - ip: 10.0.1.2
    mac: "{h1}"
  - ip: 10.0.2.2
    mac: "{h2}"
  - ip: "fd00:1::2"
    mac: "{h1}"
  - ip: "fd00:2::2"
    mac: "{h2}"
"""


# ---------------------------------------------------------------------------------------------
# Frames. Each case is built by a function of its parameters; a forwarded case is built twice,
# once as it enters p0 and once as it must leave p1.

class Case:
    def __init__(self, name, frame, expect, out=None, family=None, roce=False):
        self.name = name
        self.frame = frame          # bytes entering p0
        self.expect = expect        # "fwd" or a drop reason
        self.out = out              # bytes expected on p1 ("fwd")
        self.family = family        # 4 or 6 ("fwd")
        self.roce = roce


CASES = []


def l2(side, vlan=None, src=None, dst=None):
    """Ethernet (+ 802.1Q) header for the ingress ("in": h1 -> p0) or egress ("out": p1 -> h2)
    side. Egress is always untagged."""
    if side == "in":
        e = Ether(src=src or H1_MAC, dst=dst or P0_MAC)
        return e / Dot1Q(prio=vlan[0], vlan=vlan[1]) if vlan else e
    return Ether(src=P1_MAC, dst=H2_MAC)


def ip4(side, dst, ttl=64, **kw):
    return IP(src=kw.pop("src", H1_V4), dst=dst, ttl=ttl if side == "in" else ttl - 1, **kw)


def ip6(side, dst, hlim=64, **kw):
    return IPv6(src=kw.pop("src", H1_V6), dst=dst, hlim=hlim if side == "in" else hlim - 1, **kw)


def fwd(name, build, family, roce=False):
    """build(side) -> scapy packet; the IPv4 checksum is left to scapy (None) on both sides."""
    frame, out = raw(build("in")), raw(build("out"))
    CASES.append(Case(name, frame, "fwd", out, family, roce))


def bad(name, frame, reason):
    CASES.append(Case(name, raw(frame) if not isinstance(frame, bytes) else frame, reason))


PAY = bytes(range(0x20, 0x60))  # 64 bytes


def roce_pkt(side):
    # RC SEND_ONLY with a 64-byte payload; DSCP 26, ECN ECT(0); UDP checksum 0 as RoCE NICs
    # send over IPv4; ICRC computed by scapy.contrib.roce (icrc=None).
    return (l2(side) / ip4(side, H2_V4, tos=(26 << 2) | 0b10, id=0x4242, flags="DF") /
            UDP(sport=0xC0DE, dport=ROCE_PORT, chksum=0) /
            BTH(opcode=0x04, dqpn=0x00ABCD, psn=0x000123, ackreq=1, icrc=None) / Raw(PAY))


def build_cases():
    # --- forwarded -----------------------------------------------------------------------
    fwd("ipv4_udp", lambda s: l2(s) / ip4(s, H2_V4, id=1) /
        UDP(sport=40000, dport=50001) / Raw(PAY), 4)
    fwd("ipv4_tcp", lambda s: l2(s) / ip4(s, H2_V4, id=2, flags="DF") /
        TCP(sport=40001, dport=5201, flags="PA", seq=1000, ack=2000) / Raw(PAY), 4)
    fwd("ipv4_icmp_echo", lambda s: l2(s) / ip4(s, H2_V4, id=3) /
        ICMP(type=8, id=0x77, seq=1) / Raw(PAY), 4)
    fwd("ipv4_static_route_10.9", lambda s: l2(s) / ip4(s, "10.9.1.2", id=4) /
        UDP(sport=40002, dport=50001) / Raw(PAY), 4)
    fwd("ipv6_udp", lambda s: l2(s) / ip6(s, H2_V6, fl=0x12345) /
        UDP(sport=40003, dport=50001) / Raw(PAY), 6)
    fwd("ipv6_tcp_static_route_fd00:3", lambda s: l2(s) / ip6(s, "fd00:3::5", tc=0x28) /
        TCP(sport=40004, dport=5201, flags="S", seq=7) / Raw(PAY), 6)
    fwd("ipv4_vlan100_udp_tag_stripped", lambda s: l2(s, vlan=(3, 100)) / ip4(s, H2_V4, id=5) /
        UDP(sport=40005, dport=50001) / Raw(PAY), 4)
    fwd("roce_v2_ipv4_dscp26_ect0", roce_pkt, 4, roce=True)
    fwd("ipv4_ttl2_boundary", lambda s: l2(s) / ip4(s, H2_V4, ttl=2, id=6) /
        UDP(sport=40006, dport=50001) / Raw(PAY), 4)
    fwd("ipv6_hlim2_boundary", lambda s: l2(s) / ip6(s, H2_V6, hlim=2) /
        UDP(sport=40007, dport=50001) / Raw(PAY), 6)
    # IP total length exactly the MTU: 1500 = 20 + 8 + 1472.
    fwd("ipv4_udp_exactly_mtu", lambda s: l2(s) / ip4(s, H2_V4, id=7) /
        UDP(sport=40008, dport=50001) / Raw(bytes(i & 0xFF for i in range(MTU - 28))), 4)
    # A minimum-size frame with Ethernet padding after the IP packet: forwarded as it came.
    fwd("ipv4_udp_ethernet_padding", lambda s: l2(s) / ip4(s, H2_V4, id=8) /
        UDP(sport=40009, dport=50001) / Raw(b"hi") / Padding(b"\x00" * 16), 4)

    # --- dropped, one reason each --------------------------------------------------------
    udp = UDP(sport=40100, dport=50001) / Raw(PAY)
    bad("ipv4_bad_checksum", l2("in") / IP(src=H1_V4, dst=H2_V4, chksum=0x1234) / udp,
        "ipv4_checksum_bad")
    bad("ipv4_ttl1", l2("in") / IP(src=H1_V4, dst=H2_V4, ttl=1) / udp, "ttl_expired")
    bad("ipv4_ttl0", l2("in") / IP(src=H1_V4, dst=H2_V4, ttl=0) / udp, "ttl_expired")
    bad("ipv6_hlim1", l2("in") / IPv6(src=H1_V6, dst=H2_V6, hlim=1) / udp, "ttl_expired")
    bad("ipv4_no_route_192.0.2.1", l2("in") / IP(src=H1_V4, dst="192.0.2.1") / udp, "no_route")
    bad("ipv6_no_route_2001:db8::1", l2("in") / IPv6(src=H1_V6, dst="2001:db8::1") / udp,
        "no_route")
    good = raw(l2("in") / IP(src=H1_V4, dst=H2_V4) / udp)
    bad("ipv4_truncated_header", good[:14 + 12], "ipv4_truncated")
    bad("ipv4_total_length_past_frame", good[:14 + 20 + 8 + 10], "ipv4_length_bad")
    bad("ipv4_ihl4", l2("in") / IP(src=H1_V4, dst=H2_V4, ihl=4) / udp, "ipv4_ihl_bad")
    bad("ipv4_ihl_past_frame", raw(l2("in") / IP(src=H1_V4, dst=H2_V4, ihl=15) / Raw(b"x" * 20)),
        "ipv4_length_bad")
    bad("ipv4_options_router_alert",
        l2("in") / IP(src=H1_V4, dst=H2_V4, options=[IPOption_Router_Alert()]) / udp,
        "ipv4_options")
    bad("src_mac_multicast", l2("in", src="01:00:5e:00:00:01") / IP(src=H1_V4, dst=H2_V4) / udp,
        "src_mac_multicast")
    bad("src_mac_broadcast", l2("in", src="ff:ff:ff:ff:ff:ff") / IP(src=H1_V4, dst=H2_V4) / udp,
        "src_mac_multicast")
    bad("ipv4_above_mtu_1600", l2("in") / IP(src=H1_V4, dst=H2_V4) /
        UDP(sport=40101, dport=50001) / Raw(b"\xab" * (1600 - 28)), "frame_too_long")
    bad("ipv4_mtu_plus_1", l2("in") / IP(src=H1_V4, dst=H2_V4) /
        UDP(sport=40102, dport=50001) / Raw(b"\xab" * (MTU + 1 - 28)), "frame_too_long")
    bad("ipv6_above_mtu", l2("in") / IPv6(src=H1_V6, dst=H2_V6) /
        UDP(sport=40103, dport=50001) / Raw(b"\xab" * (MTU + 1 - 48)), "frame_too_long")
    bad("dst_mac_other_host", l2("in", dst="02:00:00:00:99:99") / IP(src=H1_V4, dst=H2_V4) / udp,
        "dst_mac_mismatch")
    bad("eth_truncated_10_bytes", good[:10], "eth_truncated")
    bad("vlan_truncated", raw(Ether(src=H1_MAC, dst=P0_MAC, type=0x8100)) + b"\x00",
        "vlan_truncated")
    bad("qinq_stacked", Ether(src=H1_MAC, dst=P0_MAC, type=0x88A8) / Dot1Q(vlan=10) /
        IP(src=H1_V4, dst=H2_V4) / udp, "vlan_stacked")
    bad("ethertype_lldp", Ether(src=H1_MAC, dst="01:80:c2:00:00:0e", type=0x88CC) /
        Raw(b"\x02\x07\x04" + b"\x00" * 40), "ethertype_unsupported")
    bad("ip_version_6_in_ipv4_ethertype",
        Ether(src=H1_MAC, dst=P0_MAC, type=0x0800) / IPv6(src=H1_V6, dst=H2_V6) / udp,
        "ip_version_bad")
    bad("ipv6_truncated_header", raw(l2("in") / IPv6(src=H1_V6, dst=H2_V6) / udp)[:14 + 30],
        "ipv6_truncated")
    bad("ipv6_payload_length_past_frame",
        raw(l2("in") / IPv6(src=H1_V6, dst=H2_V6) / udp)[:14 + 40 + 20], "ipv6_length_bad")
    bad("ipv4_udp_truncated", l2("in") / IP(src=H1_V4, dst=H2_V4, proto=17) / Raw(b"\x9c\x40\x13"),
        "udp_truncated")
    bad("ipv4_udp_length_too_big", l2("in") / IP(src=H1_V4, dst=H2_V4) /
        UDP(sport=40104, dport=50001, len=200) / Raw(PAY), "udp_length_bad")
    bad("roce_bth_truncated", l2("in") / IP(src=H1_V4, dst=H2_V4) /
        UDP(sport=0xC0DF, dport=ROCE_PORT, chksum=0) / Raw(b"\x04" + b"\x00" * 10),
        "bth_truncated")
    bad("ipv4_src_multicast", l2("in") / IP(src="224.0.0.5", dst=H2_V4) / udp, "ipv4_src_bad")
    bad("ipv6_src_loopback", l2("in") / IPv6(src="::1", dst=H2_V6) / udp, "ipv6_src_bad")
    bad("ipv4_dst_multicast", Ether(src=H1_MAC, dst="01:00:5e:01:01:01") /
        IP(src=H1_V4, dst="224.1.1.1") / udp, "l3_multicast")
    bad("ipv4_udp_to_switch_address", l2("in") / IP(src=H1_V4, dst="10.0.1.1") / udp,
        "local_unhandled")

    # Guards against slips in the construction above.
    for c in CASES:
        if c.expect == "fwd":
            assert c.out != c.frame, c.name
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"


def drop_reason_names():
    import re
    with open(DROP_REASON_H) as f:
        return re.findall(r"^\s*X\((\w+),", f.read(), re.M)


# ---------------------------------------------------------------------------------------------
# ICRC, computed here as a second opinion to scapy.contrib.roce (IPv4 only).

def own_icrc_ok(frame):
    ip = bytearray(frame[14:])
    total = struct.unpack("!H", ip[2:4])[0]
    ip = ip[:total]
    ihl = (ip[0] & 0x0F) * 4
    body, icrc = ip[:-4], bytes(ip[-4:])
    b = bytearray(body)
    b[1] = 0xFF                      # TOS
    b[8] = 0xFF                      # TTL
    b[10] = b[11] = 0xFF             # header checksum
    b[ihl + 6] = b[ihl + 7] = 0xFF   # UDP checksum
    b[ihl + 8 + 4] = 0xFF            # BTH FECN/BECN/reserved
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF) == icrc


def scapy_icrc_ok(frame):
    p = Ether(frame)
    if BTH not in p:
        return False
    q = p.copy()
    q[BTH].icrc = None
    return raw(q) == raw(p)


# ---------------------------------------------------------------------------------------------

class Failures:
    def __init__(self):
        self.n = 0
        self.checks = 0

    def check(self, ok, what, detail=""):
        self.checks += 1
        if ok:
            print("PASS  " + what)
        else:
            self.n += 1
            print("FAIL  " + what + (": " + detail if detail else ""))
        return ok


def rocectl(sock, *args):
    r = subprocess.run([ROCECTL, "--socket", sock, "--json", *args], capture_output=True,
                       text=True, timeout=10)
    if r.returncode != 0:
        raise RuntimeError("rocectl %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                        r.stderr.strip()))
    return json.loads(r.stdout)


def ports_by_name(sock):
    return {p["name"]: p for p in rocectl(sock, "show", "ports")["ports"]}


def wait_for(pred, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def write_pcap(path, frames):
    """Classic pcap, link type Ethernet, microsecond timestamps 1700000000 + index s."""
    w = PcapWriter(path, linktype=1, sync=True)
    w._write_header(None)
    for i, f in enumerate(frames):
        w.write_packet(f, sec=1700000000 + i, usec=0)
    w.close()


def show_mismatch(i, got, want):
    print("    --- frame %d: expected (%d bytes)" % (i, len(want)))
    Ether(want).show()
    hexdump(want)
    print("    --- frame %d: got (%d bytes)" % (i, len(got)))
    Ether(got).show()
    hexdump(got)
    diffs = [k for k in range(min(len(got), len(want))) if got[k] != want[k]]
    print("    differing byte offsets: %s%s" % (diffs[:32], " (length differs)"
                                                  if len(got) != len(want) else ""))


def tshark_count(path, display_filter=None):
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.number"]
    if display_filter:
        cmd += ["-Y", display_filter]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    err = "\n".join(l for l in r.stderr.splitlines() if "Running as user" not in l
                    and "could be dangerous" not in l).strip()
    return r.returncode, len(lines), err


def main():
    build_cases()
    known = set(drop_reason_names())
    for c in CASES:
        if c.expect != "fwd" and c.expect not in known:
            sys.exit("case %s: unknown drop reason %s" % (c.name, c.expect))
    for tool in (ROCESWD, ROCECTL):
        if not os.access(tool, os.X_OK):
            print("FAIL  %s is not executable (build with: ninja -C %s)" % (tool, BUILD))
            return 1
    have_tshark = shutil.which("tshark") is not None

    fwd_cases = [c for c in CASES if c.expect == "fwd"]
    expected_drops = collections.Counter(c.expect for c in CASES if c.expect != "fwd")
    n_in = len(CASES)

    tag = "rsw" + secrets.token_hex(3)[:5]
    tmp = tempfile.mkdtemp(prefix=tag + ".", dir="/tmp")
    sock = os.path.join(tmp, "ctl.sock")
    logpath = os.path.join(tmp, "roceswd.log")
    proc = None
    logf = None
    f = Failures()
    print("== test_golden_pcap.py: %d input frames (%d to forward, %d to drop), tag %s, dir %s"
          % (n_in, len(fwd_cases), n_in - len(fwd_cases), tag, tmp))
    try:
        write_pcap(os.path.join(tmp, "p0-in.pcap"), [c.frame for c in CASES])
        write_pcap(os.path.join(tmp, "p1-in.pcap"), [])
        write_pcap(os.path.join(tmp, "expected-p1.pcap"), [c.out for c in fwd_cases])
        cfg = os.path.join(tmp, "switch.yaml")
        with open(cfg, "w") as fh:
            fh.write(CONFIG.format(tag=tag, sock=sock, d=tmp, p0=P0_MAC, p1=P1_MAC, h1=H1_MAC,
                                   h2=H2_MAC, mtu=MTU))
        with open(os.path.join(tmp, "cases.txt"), "w") as fh:
            for i, c in enumerate(CASES):
                fh.write("%3d %-36s %s\n" % (i + 1, c.name, c.expect))

        logf = open(logpath, "w")
        proc = subprocess.Popen([ROCESWD, "--config", cfg], stdout=logf, stderr=subprocess.STDOUT,
                                cwd=tmp, start_new_session=True)

        def started():
            if proc.poll() is not None:
                return "exited"
            with open(logpath, errors="replace") as lf:
                return " running: " in lf.read() and os.path.exists(sock)

        st = wait_for(started, 20, 0.1)
        if st is not True:
            f.check(False, "roceswd starts", "status %s; log tail:\n%s" % (
                "exited %s" % proc.returncode if st == "exited" else "not running after 20 s",
                "".join(open(logpath, errors="replace").readlines()[-25:])))
            return 1
        f.check(True, "roceswd starts (pid %d)" % proc.pid)

        rx = wait_for(lambda: ports_by_name(sock)["p0"]["rx_packets"] >= n_in, 20)
        ports = ports_by_name(sock)
        f.check(ports["p0"]["rx_packets"] == n_in, "p0 rx_packets == %d input frames" % n_in,
                "got %d" % ports["p0"]["rx_packets"])
        wait_for(lambda: ports_by_name(sock)["p1"]["tx_packets"] >= len(fwd_cases), 5)
        time.sleep(0.3)
        ports = ports_by_name(sock)
        f.check(ports["p1"]["tx_packets"] == len(fwd_cases),
                "p1 tx_packets == %d forwarded frames" % len(fwd_cases),
                "got %d" % ports["p1"]["tx_packets"])
        f.check(ports["p0"]["tx_packets"] == 0, "p0 tx_packets == 0 (nothing reflected)",
                "got %d" % ports["p0"]["tx_packets"])
        f.check(ports["p1"]["rx_packets"] == 0, "p1 rx_packets == 0",
                "got %d" % ports["p1"]["rx_packets"])

        drops = rocectl(sock, "show", "drops", "--all")
        got = {(d["port"], d["reason"]): d["packets"] for d in drops["drops"]}
        bad_lines = []
        for (port, reason), n in sorted(got.items()):
            want = expected_drops.get(reason, 0) if port == "p0" else 0
            if n != want:
                bad_lines.append("%s %s: got %d, expected %d" % (port, reason, n, want))
        for reason in expected_drops:
            if ("p0", reason) not in got:
                bad_lines.append("p0 %s: not listed by rocectl" % reason)
        f.check(not bad_lines, "drop counters exact per port and reason: %s" % ", ".join(
            "%s %d" % kv for kv in sorted(expected_drops.items())), "; ".join(bad_lines))
        f.check(drops["total"] == n_in - len(fwd_cases), "drops total == %d" % (n_in - len(fwd_cases)),
                "got %d" % drops["total"])
        # The accounting identity (doc/accounting.md), exact: every input frame is forwarded
        # or dropped by its reason, every forwarded one sent, nothing queued or generated.
        acct = rocectl(sock, "show", "accounting")
        r, s = acct["total"]["received"], acct["total"]["sent"]
        terms = (r["rx"], r["forwarded"], r["dropped"], r["local"], r["punted"], s["tx"],
                 s["dropped"], s["queued"], s["local_replies"] + s["pfc_frames"] + s["injected"])
        want = (n_in, len(fwd_cases), n_in - len(fwd_cases), 0, 0, len(fwd_cases), 0, 0, 0)
        f.check(acct["verdict"] == "balanced" and terms == want,
                "accounting balanced: rx %d = forwarded %d + dropped %d; tx %d" % (
                    n_in, len(fwd_cases), n_in - len(fwd_cases), len(fwd_cases)),
                "verdict %r, (rx, forwarded, dropped, local, punted, tx, egress dropped, queued, "
                "generated) = %r, expected %r" % (acct["verdict"], terms, want))
        f.check(proc.poll() is None, "roceswd alive after all input")

        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(10)
        except subprocess.TimeoutExpired:
            rc = "still running 10 s after SIGTERM"
        f.check(rc == 0, "roceswd exits 0 on SIGTERM", "got %s" % rc)
        f.check(not os.path.exists(sock), "control socket removed on exit")

        # --- p1 output against the expected frames ---------------------------------------
        out = [raw(p) for p in rdpcap(os.path.join(tmp, "p1-out.pcap"))]
        f.check(len(out) == len(fwd_cases), "p1-out.pcap has %d frames" % len(fwd_cases),
                "got %d" % len(out))
        for fam in (4, 6):
            want = [c for c in fwd_cases if c.family == fam]
            got_f = [o for o in out if Ether(o).haslayer(IP if fam == 4 else IPv6)]
            mism = []
            for i, c in enumerate(want):
                g = got_f[i] if i < len(got_f) else None
                if g != c.out:
                    mism.append(c.name)
                    if g is None:
                        print("    frame %s: missing from the output" % c.name)
                    else:
                        show_mismatch(i, g, c.out)
            if len(got_f) > len(want):
                mism.append("%d extra frames" % (len(got_f) - len(want)))
            f.check(not mism and len(got_f) == len(want),
                    "IPv%d frames on p1 equal the expected bytes, in order (%d: %s)" % (
                        fam, len(want), ", ".join(c.name for c in want)),
                    "mismatch: " + ", ".join(mism))
        if out != [c.out for c in fwd_cases] and sorted(out) == sorted(c.out for c in fwd_cases):
            print("note  IPv4 and IPv6 frames interleave differently from the input (the switch "
                  "routes a burst's IPv4 packets before its IPv6 packets)")

        roce_out = [o for o in out if Ether(o).haslayer(BTH)]
        ok = len(roce_out) == 1
        detail = "found %d RoCE frames" % len(roce_out)
        if ok:
            r = roce_out[0]
            ok = scapy_icrc_ok(r) and own_icrc_ok(r) and Ether(r)[IP].tos == (26 << 2) | 2
            detail = "scapy ICRC %s, own ICRC %s, tos 0x%02x" % (
                scapy_icrc_ok(r), own_icrc_ok(r), Ether(r)[IP].tos)
        f.check(ok, "RoCEv2 frame on p1: ICRC valid (scapy.contrib.roce and own CRC32), "
                "DSCP 26 / ECT(0) unchanged", detail)

        p0_out = rdpcap(os.path.join(tmp, "p0-out.pcap"))
        f.check(len(p0_out) == 0, "p0-out.pcap has 0 frames", "got %d" % len(p0_out))

        if have_tshark:
            rc_t, n_t, err = tshark_count(os.path.join(tmp, "p1-out.pcap"))
            f.check(rc_t == 0 and n_t == len(fwd_cases) and not err,
                    "tshark reads p1-out.pcap: %d frames, no error" % len(fwd_cases),
                    "exit %d, %d frames, stderr %r" % (rc_t, n_t, err))
            rc_m, n_m, _ = tshark_count(os.path.join(tmp, "p1-out.pcap"),
                                        "_ws.malformed || _ws.expert.severity == error")
            f.check(rc_m == 0 and n_m == 0, "tshark: no malformed frame or expert error in p1-out",
                    "%d flagged" % n_m)
            rc_i, n_i, _ = tshark_count(os.path.join(tmp, "p1-out.pcap"), "infiniband.bth")
            f.check(rc_i == 0 and n_i == 1, "tshark decodes 1 InfiniBand BTH (RoCEv2) in p1-out",
                    "%d" % n_i)
            rc_0, n_0, err0 = tshark_count(os.path.join(tmp, "p0-out.pcap"))
            f.check(rc_0 == 0 and n_0 == 0, "tshark reads p0-out.pcap: 0 frames",
                    "exit %d, %d frames, %r" % (rc_0, n_0, err0))
        else:
            print("note  tshark not installed: tshark checks skipped")

        if VERBOSE or f.n:
            print("    roceswd log: %s" % logpath)
            for line in open(logpath, errors="replace").readlines()[-15:]:
                print("    | " + line.rstrip())
    except Exception as e:  # report, then clean up in finally
        f.check(False, "test ran to the end", "%s: %s" % (type(e).__name__, e))
        if os.path.exists(logpath):
            for line in open(logpath, errors="replace").readlines()[-15:]:
                print("    | " + line.rstrip())
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if logf:
            logf.close()
        if KEEP:
            print("keeping %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            # EAL's runtime dir for this file prefix: /var/run/dpdk/<prefix> as root, else
            # $XDG_RUNTIME_DIR/dpdk/<prefix> or /tmp/dpdk/<prefix>.
            for base in ("/var/run", os.environ.get("XDG_RUNTIME_DIR") or "/tmp"):
                shutil.rmtree(os.path.join(base, "dpdk", tag), ignore_errors=True)
    if f.n:
        print("test_golden_pcap.py: FAIL (%d of %d checks failed)" % (f.n, f.checks))
        return 1
    if not f.checks:
        print("test_golden_pcap.py: FAIL (no check ran)")
        return 1
    print("test_golden_pcap.py: PASS (%d checks)" % f.checks)
    return 0


def _terminate(signum, _frame):
    # SIGTERM (e.g. from `timeout`) ends the test through SystemExit, so `finally` still stops
    # roceswd and removes the temp dir.
    sys.exit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    sys.exit(main())
