#!/usr/bin/python3
"""rocesim against ns-3 on one scenario both can express (doc/rocesim.md, "Cross-check with ns-3").

N constant-rate UDP senders -> one switch -> one receiver (a star: hosts 0..N, switch N+1),
every link the same rate and delay, the bottleneck's queue drop-tail at T bytes (rocesim: a
lossy queue with a static threshold, no ECN, no PFC; ns-3: a DropTailQueue of T // L + 1
packets, see rocesw_xcheck.cc). Runs both and compares, packet by packet, which packets were
delivered and their one-way delays, and the drop counts.

  xcheck.py ROCESIM ROCESW_XCHECK [--senders 2] [--load 0.6] [--rate 100Gbps] [--delay 1us]
            [--frame 1000] [--packets 3000] [--queue-bytes 10000] [--stagger-ps 0]
            [--tolerance-ps 0] [--drop-tolerance 0] [--expect-drops] [--workdir DIR]

Exit 0 when they agree within the tolerance, 1 when not, 77 (meson's skip) when the ns-3
program was not built.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

RATE_UNITS = {"bps": 1, "Kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12}
PS_PER_S = 10**12


def parse_rate(s):
    for u in sorted(RATE_UNITS, key=len, reverse=True):
        if s.endswith(u):
            return int(s[: -len(u)]) * RATE_UNITS[u]
    raise ValueError(f"rate {s!r}")


def read_delays(path):
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            out[(int(row["flow"]), int(row["seq"]))] = (int(row["sent_ps"]), int(row["delay_ps"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rocesim")
    ap.add_argument("xcheck")
    ap.add_argument("--senders", type=int, default=2)
    ap.add_argument("--load", type=float, default=0.6, help="each sender's share of line rate")
    ap.add_argument("--rate", default="100Gbps")
    ap.add_argument("--delay", default="1us")
    ap.add_argument("--frame", type=int, default=1000, help="bytes, Ethernet header to payload")
    ap.add_argument("--packets", type=int, default=3000, help="per sender")
    ap.add_argument("--queue-bytes", type=int, default=10000)
    ap.add_argument("--stagger-ps", type=int, default=0, help="sender i starts at i x this")
    ap.add_argument("--tolerance-ps", type=int, default=0)
    ap.add_argument("--drop-tolerance", type=int, default=0)
    ap.add_argument("--expect-drops", action="store_true",
                    help="fail unless the queue overflowed (else the drop-tail is untested)")
    ap.add_argument("--workdir")
    a = ap.parse_args()

    if not os.path.exists(a.xcheck):
        print(f"SKIP: {a.xcheck} was not built (ns-3, libns3-dev, not installed: tools/bootstrap)")
        return 77

    tmp = None
    if a.workdir:
        work = a.workdir
    else:
        tmp = tempfile.TemporaryDirectory(prefix="rocesim_ns3_")
        work = tmp.name
    os.makedirs(work, exist_ok=True)
    n, rate = a.senders, parse_rate(a.rate)
    flow_rate = int(rate * a.load)
    wire_bits = (a.frame + 24) * 8
    period = wire_bits * PS_PER_S / flow_rate
    # Packet k is generated at start + floor(k * wire_bits * 1e12 / rate) while < stop:
    # stop just after packet (packets - 1) gives exactly `packets` packets.
    span = (wire_bits * (a.packets - 1) * PS_PER_S) // flow_rate + 1
    flows = [(i, n, flow_rate, a.frame, i * a.stagger_ps, i * a.stagger_ps + span)
             for i in range(n)]

    # rocesim: every DSCP to TC 0, TC n to queue n, every queue lossy drop-tail at T bytes.
    dscp = ", ".join(f"{d}: 0" for d in range(64))
    with open(f"{work}/qos.yaml", "w") as f:
        f.write(f"DSCP_TO_TC_MAP:\n  M: {{{dscp}}}\n"
                "TC_TO_QUEUE_MAP:\n  M: {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}\n"
                "BUFFER_POOL:\n  pool: {size: 100000000, mode: static}\n"
                f"BUFFER_PROFILE:\n  p: {{pool: pool, static_th: {a.queue_bytes}}}\n"
                "BUFFER_QUEUE:\n  default|0-7: {profile: p}\n"
                "PORT_QOS_MAP:\n  default: {dscp_to_tc_map: M, tc_to_queue_map: M}\n")
    with open(f"{work}/scenario.yaml", "w") as f:
        f.write(f"topology: {{type: star, hosts: {n + 1}, link_rate: {a.rate}, "
                f"link_delay: {a.delay}}}\nqos_profile: qos.yaml\ndelays: true\nudp_flows:\n")
        for i, (s, d, r, fr, t0, t1) in enumerate(flows):
            f.write(f"  - {{src: {s}, dst: {d}, rate: {r}bps, size: {fr}, start: {t0}ps, "
                    f"stop: {t1}ps, sport: {10000 + i}}}\n")
    with open(f"{work}/flows.txt", "w") as f:
        f.write("# src dst rate_bps frame_bytes start_ps stop_ps\n")
        for fl in flows:
            f.write(" ".join(map(str, fl)) + "\n")
    qpk = a.queue_bytes // a.frame + 1
    for d in ("rocesim", "ns3"):
        os.makedirs(f"{work}/{d}", exist_ok=True)
    subprocess.run([a.rocesim, "--scenario", f"{work}/scenario.yaml", "--out", f"{work}/rocesim",
                    "--write-topology", f"{work}/topology.txt"], check=True)
    subprocess.run([a.xcheck, "--topology", f"{work}/topology.txt", "--flows", f"{work}/flows.txt",
                    "--queue-packets", str(qpk), "--out", f"{work}/ns3"], check=True)

    r = read_delays(f"{work}/rocesim/udp_delays.csv")
    s = read_delays(f"{work}/ns3/udp_delays.csv")
    rs = json.load(open(f"{work}/rocesim/summary.json"))
    ns = json.load(open(f"{work}/ns3/summary.json"))
    r_drops = sum(rs["switch_drops"].values()) + sum(rs["link_drops"].values())
    s_drops = ns["queue_drops"] + ns["ip_drops"]

    print(f"scenario: {n} senders x {a.load:.0%} of {a.rate} -> 1 switch -> 1 receiver, "
          f"{a.delay} links, {a.frame} B frames, {a.packets} packets each, drop-tail "
          f"{a.queue_bytes} B (ns-3: {qpk} packets), stagger {a.stagger_ps} ps; in {work}")
    print(f"  sent: rocesim {rs['udp']['sent']}  ns-3 {ns['udp']['sent']}")
    print(f"  delivered: rocesim {len(r)}  ns-3 {len(s)}")
    print(f"  drops: rocesim {r_drops} {rs['switch_drops']}  ns-3 {s_drops}")
    ok = True
    if rs["udp"]["sent"] != ns["udp"]["sent"] or rs["udp"]["sent"] != n * a.packets:
        print(f"FAIL: sent counts differ (expected {n * a.packets})")
        ok = False
    if abs(r_drops - s_drops) > a.drop_tolerance:
        print(f"FAIL: drop counts differ by {abs(r_drops - s_drops)} > {a.drop_tolerance}")
        ok = False
    if a.expect_drops and not r_drops:
        print("FAIL: no drops: the scenario does not exercise the drop-tail queue")
        ok = False
    only_r, only_s = sorted(set(r) - set(s)), sorted(set(s) - set(r))
    if len(only_r) + len(only_s) > 2 * a.drop_tolerance:
        print(f"FAIL: delivered by one only: rocesim {len(only_r)} {only_r[:5]}, "
              f"ns-3 {len(only_s)} {only_s[:5]}")
        ok = False
    both = sorted(set(r) & set(s))
    worst, worst_key, exact, sent_diff = 0, None, 0, 0
    for k in both:
        if r[k][0] != s[k][0]:
            sent_diff += 1
        d = abs(r[k][1] - s[k][1])
        exact += d == 0
        if d > worst:
            worst, worst_key = d, k
    if sent_diff:
        print(f"FAIL: {sent_diff} packets have different generation times")
        ok = False
    dl = [v[1] for v in r.values()]
    print(f"  one-way delay (rocesim) ps: min {min(dl)} max {max(dl)} "
          f"mean {sum(dl) / len(dl):.0f}")
    print(f"  compared {len(both)} packets: {exact} identical to the ps, largest difference "
          f"{worst} ps" + (f" at (flow, seq) {worst_key}: rocesim {r[worst_key][1]} ns-3 "
                           f"{s[worst_key][1]}" if worst_key else "") +
          f"; tolerance {a.tolerance_ps} ps")
    if worst > a.tolerance_ps:
        print("FAIL: delays differ beyond the tolerance")
        ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
