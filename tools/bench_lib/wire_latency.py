"""Wire-to-wire latency probes between two kernel interfaces of this namespace (tools/bench
--afxdp): a UDP frame every `interval` seconds sent on `src`, towards the device under test;
the kernel stamps each probe where it leaves `src` (the transmit tap, SO_TIMESTAMPNS on a
packet socket) and where it arrives on `dst`; latency = arrival - departure, one clock, so
neither Python's nor the generator's scheduling is in it. What is in it: `src`'s transmit path
(veth or TAP), the DUT's receive, forwarding and transmit, `dst`'s receive up to the tap.

Probes are told apart from other traffic by their UDP destination port (a classic BPF filter
on the capture sockets, so a loaded link costs the capture nothing) and a magic + sequence
number in the payload. Needs root (packet sockets)."""

import ctypes
import select
import socket
import statistics
import struct
import threading
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SO_ATTACH_FILTER = 26
PROBE_SPORT, PROBE_DPORT = 7001, 7002
MAGIC = b"RSWLAT01"


def _ip_checksum(h):
    s = sum(struct.unpack(f"!{len(h) // 2}H", h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def _mac(s):
    return bytes.fromhex(s.replace(":", ""))


class Probe:
    def __init__(self, src, dst, src_mac, dst_mac, src_ip, dst_ip):
        self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.tx.bind((src, 0))
        # ldh [12]; jeq IPv4; ldb [23]; jeq UDP; ldh [36] (UDP dport, IHL 5); jeq PORT; accept
        insns = [(0x28, 0, 0, 12), (0x15, 0, 5, 0x0800), (0x30, 0, 0, 23), (0x15, 0, 3, 17),
                 (0x28, 0, 0, 36), (0x15, 0, 1, PROBE_DPORT), (0x06, 0, 0, 0x40000),
                 (0x06, 0, 0, 0)]
        self._filter = ctypes.create_string_buffer(
            b"".join(struct.pack("HBBI", *i) for i in insns))
        fprog = struct.pack("HL", len(insns), ctypes.addressof(self._filter))
        self.caps = {}
        for role, ifname in (("out", src), ("in", dst)):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            s.bind((ifname, 0))
            s.setblocking(False)
            self.caps[s] = role
        self.eth = _mac(dst_mac) + _mac(src_mac) + b"\x08\x00"
        self.src_ip, self.dst_ip = socket.inet_aton(src_ip), socket.inet_aton(dst_ip)
        self.stamps = {"out": {}, "in": {}}
        self._stop = threading.Event()

    def frame(self, seq, size):
        """A probe frame of `size` bytes on the wire (FCS included, as tools/bench counts)."""
        payload = MAGIC + struct.pack("!Q", seq)
        payload += b"\0" * max(0, size - 4 - 14 - 20 - 8 - len(payload))
        udp = struct.pack("!HHHH", PROBE_SPORT, PROBE_DPORT, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0, 64, 17, 0,
                         self.src_ip, self.dst_ip)
        ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
        return self.eth + ip + udp

    def _capture(self):
        socks = list(self.caps)
        while not self._stop.is_set():
            ready, _, _ = select.select(socks, [], [], 0.05)
            for s in ready:
                role = self.caps[s]
                while True:
                    try:
                        data, anc, _, addr = s.recvmsg(4096, socket.CMSG_SPACE(16))
                    except BlockingIOError:
                        break
                    # "out": the probe leaving src; "in": arriving on dst, not leaving it
                    if (addr[2] == socket.PACKET_OUTGOING) != (role == "out"):
                        continue
                    i = data.find(MAGIC)
                    if i < 0:
                        continue
                    seq = struct.unpack("!Q", data[i + 8:i + 16])[0]
                    for lvl, typ, d in anc:
                        if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                            sec, ns = struct.unpack("qq", d[:16])
                            self.stamps[role].setdefault(seq, sec * 10**9 + ns)

    def run(self, seconds, interval, size):
        """Sends probes for `seconds`; returns counts and p50/p99/max latency in microseconds."""
        t = threading.Thread(target=self._capture, daemon=True)
        t.start()
        n, now = 0, time.monotonic()
        nxt, end = now, now + seconds
        while time.monotonic() < end:
            self.tx.send(self.frame(n, size))
            n += 1
            nxt += interval
            d = nxt - time.monotonic()
            if d > 0:
                time.sleep(d)
        time.sleep(0.5)  # the last probes cross
        self._stop.set()
        t.join()
        out, into = self.stamps["out"], self.stamps["in"]
        lat = [(into[k] - v) / 1e3 for k, v in out.items() if k in into]
        q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [None] * 99
        return {"probes_sent": n, "probes_stamped": len(out), "probes_received": len(lat),
                "p50_us": q[49], "p99_us": q[98], "max_us": max(lat) if lat else None}

    def close(self):
        for s in list(self.caps) + [self.tx]:
            s.close()
