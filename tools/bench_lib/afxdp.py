"""tools/bench --afxdp: roceswd over kernel interfaces, side by side in one run (issue 19).

  gen --veth-- [DUT] --veth-- sink      (net_tap: gen --TAP-- [roceswd] --TAP-- sink)

  testpmd-xdp   dpdk-testpmd --forward-mode=io over net_af_xdp on the two veth ends (the floor)
  rsw-xdp       roceswd with af_xdp ports (rocesw's XDP program, dedicated, copy mode)
  rsw-packet    roceswd with net_af_packet ports on the same veth ends
  rsw-tap       roceswd with net_tap ports (its own TAP interfaces replace the veth pairs)

The generator is dpdk-testpmd txonly on net_af_packet on the far end of the first veth (or the
first TAP), UDP 10.0.1.2 -> 10.0.2.2 to the DUT's p0 MAC; the sink is dpdk-testpmd rxonly on
net_af_packet on the far end of the second (promiscuous). Mpps is what the sink counts over
the window; the generator's offered rate is printed next to it (when they are equal the
generator, not the DUT, was the limit). roceswd runs the bench's rsw-pass QoS (one class, no
optional stage), one busy worker; every process floats over CPUs 0-1, so on a 2-CPU machine
the three pollers share two CPUs (their CPU shares are recorded). Each round runs every DUT
once, in alternating order. Figures, never a pass/fail.

Frame sizes: 64 B and the largest that veth's native XDP takes without multi-buffer: XDP on a
veth refuses an MTU above about 3.5 KB (the frame plus XDP headroom and skb_shared_info must
fit one page), and DPDK 22.11's net_af_xdp has no multi-buffer; 4 KB frames cannot cross an
AF_XDP port on veth, so the large size is 3000 B. rsw-tap does not forward 3000 B frames
(DPDK 22.11's net_tap reports a 1522-byte maximum frame): its row stays empty. Results and how
to read them: doc/ports.md.

Latency at half load (64 B, after the throughput rounds): per DUT, rocegen (TSC-paced, on
net_af_packet on the first far end) offers half of that DUT's median Mpps, and wire_latency.py
sends a probe every millisecond beside it, stamped by the kernel where it leaves the first far
end and where it arrives on the second: p50/p99 of that wire-to-wire time. No sink runs (the
kernel drops the frames after the tap), so the DUT and the generator are the only pollers.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import control  # noqa: E402
import wire_latency  # noqa: E402
from memif import Proc, proc_cpu  # noqa: E402

DUTS = ["testpmd-xdp", "rsw-xdp", "rsw-packet", "rsw-tap"]
SW_MAC = ["02:00:00:00:01:01", "02:00:00:00:02:01"]
GEN_MAC, SINK_MAC = "02:00:00:00:01:02", "02:00:00:00:02:02"
LINK_MTU = 3200  # the veths' and TAPs' MTU: room for 3000 B frames, below veth's XDP limit
SIZES = [64, 3000]
# net_af_xdp lays its UMEM over the mempool: an mbuf (header, private area, data room) must
# fit a 4 KB chunk, and in copy mode the kernel keeps the mbuf headroom plus XDP's 256 bytes
# in front of the frame: a 3000 B frame needs 3000 + 128 + 256 bytes of data room.
# net_af_packet reports a 1518-byte max frame, so the generator and the sink keep their default
# MTU and send/receive the large frames through the 3200-byte link MTU.
AF_XDP_MBUF = 3584
LAT_SIZE = 64  # latency at half load: this frame size
LAT_LOAD = 0.5  # of the DUT's median Mpps
LAT_PROBE_INTERVAL_S = 0.001


def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Links:
    """Two veth pairs s0/g0 and s1/g1 (s*: the DUT's ends), removed on close."""

    def __init__(self, tag):
        self.s = [f"{tag}s0", f"{tag}s1"]
        self.g = [f"{tag}g0", f"{tag}g1"]
        for s, g in zip(self.s, self.g):
            sh("ip", "link", "add", s, "type", "veth", "peer", "name", g)
            for i in (s, g):
                sh("sysctl", "-qw", f"net.ipv6.conf.{i}.disable_ipv6=1")
                sh("ip", "link", "set", "dev", i, "mtu", str(LINK_MTU), "up")
            sh("ethtool", "-K", g, "tx", "off")  # doc/ports.md, "veth"

    def close(self):
        for s in self.s:
            subprocess.run(["ip", "link", "del", s], stderr=subprocess.DEVNULL)


def testpmd(bench, prefix, vdevs, mode, size, extra=(), mbuf_size=4224):
    cmd = ["dpdk-testpmd", "--lcores=" + bench.LCORES, "--no-huge", "-m", "1024",
           "--file-prefix=" + prefix, "--no-pci"]
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd += ["--", "--forward-mode=" + mode, "--nb-cores=1", f"--burst={bench.BURST}",
            f"--rxd={bench.DESC}", f"--txd={bench.DESC}", f"--total-num-mbufs={bench.MBUFS}",
            f"--mbuf-size={mbuf_size}", "--auto-start", "--stats-period=0"] + list(extra)
    if mode == "txonly":
        cmd += [f"--txpkts={size - 4}", "--tx-ip=10.0.1.2,10.0.2.2", "--tx-udp=49152,5201",
                "--eth-peer=0," + SW_MAC[0], "--port-topology=loop"]
    elif mode == "rxonly":
        cmd += ["--port-topology=loop"]
    return cmd


def af_packet(idx, iface):
    # Ring frames of 4 KB (room for 3000 B frames). framesz must divide blocksz: DPDK 22.11
    # addresses ring frames as contiguous, the kernel per block (3328 in 4096 stalls TX). The
    # PMD needs framesz - 32 bytes of mbuf data room: testpmd's 4224-byte mbufs, roceswd's port
    # MTU 4100 (rsw-packet).
    return f"net_af_packet{idx},iface={iface},framesz=4096,blocksz=4096,framecnt=4096"


def write_switch_config(bench, path, dut, prefix, sock_dir, links, taps):
    if dut == "rsw-xdp":
        devs = [f"af_xdp: {{interface: {links.s[i]}}}" for i in range(2)]
    elif dut == "rsw-packet":
        devs = [f'device: "{af_packet(i, links.s[i])}"' for i in range(2)]
    else:
        devs = [f'device: "net_tap{i},iface={taps[i]}"' for i in range(2)]
    # The mbuf size follows the largest MTU: af_xdp needs it within a 4 KB UMEM chunk,
    # af_packet at least its ring frame (af_packet()).
    mtu = 4100 if dut == "rsw-packet" else 3400
    qos = os.path.join(sock_dir, "qos-pass.yaml")
    with open(qos, "w") as f:
        f.write(bench.PASS_QOS)
    with open(path, "w") as f:
        f.write(f"""# generated by tools/bench --afxdp
switch:
  name: {prefix}
  workers: 1
  idle: busy
  burst: {bench.BURST}
  mbufs: {bench.MBUFS}
  memory_mb: 1024
  cpus: [0, 1]
  file_prefix: {prefix}
  control_socket: {sock_dir}/ctl.sock
  log_level: warn
  telemetry: true
  qos: {qos}
ports:
  - {{name: p0, {devs[0]}, mac: "{SW_MAC[0]}", mtu: {mtu}, speed: 800G, ipv4: ["10.0.1.1/24"]}}
  - {{name: p1, {devs[1]}, mac: "{SW_MAC[1]}", mtu: {mtu}, speed: 800G, ipv4: ["10.0.2.1/24"]}}
neighbours:
  - {{ip: 10.0.1.2, mac: "{GEN_MAC}"}}
  - {{ip: 10.0.2.2, mac: "{SINK_MAC}"}}
telemetry:
  prometheus: {{enabled: false}}
""")


def start_af_packet(p, attempts=5):
    """Starts a testpmd on net_af_packet, again when it exits because PACKET_FANOUT failed:
    DPDK 22.11's net_af_packet takes the fanout group id from its pid XOR the interface index,
    and two processes whose ids collide on different interfaces refuse each other (EINVAL)."""
    for _ in range(attempts):
        p.start()
        deadline = time.monotonic() + 10
        while p.alive() and time.monotonic() < deadline:
            with open(p.log_path, errors="replace") as f:
                if "Press enter to exit" in f.read():
                    return
            time.sleep(0.1)
        if p.alive():
            return
        with open(p.log_path, errors="replace") as f:
            if "PACKET_FANOUT" not in f.read():
                return  # another failure: wait_for reports it
        p.stop()
    return


def wait_for(cond, what, procs, timeout):
    deadline = time.monotonic() + timeout
    while not cond():
        for p in procs:
            if not p.alive():
                raise RuntimeError(f"{p.name} exited with {p.proc.returncode}, see {p.log_path}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {timeout} s")
        time.sleep(0.2)


def sysfs_count(iface, name):
    with open(f"/sys/class/net/{iface}/statistics/{name}") as f:
        return int(f.read())


def rocegen_cmd(ctx, prefix, iface, pcap, rate, seconds):
    # net_af_packet's default 2 KB ring frames: rocegen's default mbufs hold them (64 B here)
    return [ctx["rocegen"], "--lcores=0@(0,1)", "--no-huge", "-m", "256", "--no-pci",
            "--file-prefix=" + prefix, "--log-level=error", "--vdev",
            f"net_af_packet0,iface={iface}", "--", "--pcap", pcap, "--rate", str(int(rate)),
            "--duration", str(seconds), "--warmup", "0", "--link-timeout", "20"]


def latency_phase(args, ctx, ends, procs, prefix, run_dir, rate, out):
    """rocegen at `rate` pps on ends[0] and probes ends[0] -> ends[1] (module doc)."""
    gen = None
    for _ in range(5):  # PACKET_FANOUT id collisions with an af_packet DUT: start again
        gen = Proc("gen", rocegen_cmd(ctx, prefix + "-gen", ends[0], ctx["lat_pcap"], rate,
                                      args.warmup + args.duration + 120),
                   prefix + "-gen", os.path.join(run_dir, "gen.log"))
        gen.start()
        rx0 = sysfs_count(ends[1], "rx_packets")
        deadline = time.monotonic() + args.start_timeout
        while gen.alive() and sysfs_count(ends[1], "rx_packets") - rx0 < 100 and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        if gen.alive():
            break
        gen.stop()
        with open(gen.log_path, errors="replace") as f:
            if "PACKET_FANOUT" not in f.read():
                raise RuntimeError(f"rocegen exited, see {gen.log_path}")
    procs.append(gen)
    if sysfs_count(ends[1], "rx_packets") - rx0 < 100:
        raise RuntimeError("latency: nothing crossed the DUT under rocegen's load")
    time.sleep(args.warmup)
    tx0, rx0 = sysfs_count(ends[0], "tx_packets"), sysfs_count(ends[1], "rx_packets")
    c0 = {p.name: ctx["bench"].thread_cpu(p.proc.pid) for p in procs}
    l0, w0 = ctx["bench"].loadavg(), time.monotonic()
    probe = wire_latency.Probe(ends[0], ends[1], GEN_MAC, SW_MAC[0], "10.0.1.2", "10.0.2.2")
    try:
        r = probe.run(args.duration, LAT_PROBE_INTERVAL_S, LAT_SIZE)
    finally:
        probe.close()
    wall = time.monotonic() - w0
    c1 = {p.name: ctx["bench"].thread_cpu(p.proc.pid) for p in procs}
    out.update(r)
    out.update({"target_mpps": rate / 1e6,
                "offered_mpps": (sysfs_count(ends[0], "tx_packets") - tx0) / wall / 1e6,
                "mpps": (sysfs_count(ends[1], "rx_packets") - rx0) / wall / 1e6,
                "window_s": round(wall, 3), "loadavg1": l0, "cpu": {}})
    for p in procs:
        busy, total = proc_cpu(ctx["bench"], p.proc.pid, c0[p.name], c1[p.name], wall)
        out["cpu"][p.name] = {"busiest_thread": busy, "process": total}


def one_run(bench, args, dut, size, seq, ctx, lat_rate=None):
    """One DUT at one size: the throughput window, or with lat_rate (pps) the latency phase."""
    tag = f"rbx{os.getpid() % 10000:04d}{seq % 100:02d}"  # interface names: <= 15 characters
    prefix = f"rbxdp-{os.getpid()}-{seq}"
    run_dir = os.path.join(ctx["run_dir"], f"{seq:03d}-{dut}-{size}")
    os.makedirs(run_dir)
    links = None if dut == "rsw-tap" else Links(tag)
    taps = [f"{tag}t0", f"{tag}t1"]
    procs, out = [], {"dut": dut, "size": size, "seq": seq}
    try:
        if dut == "testpmd-xdp":
            d = Proc(dut, testpmd(bench, prefix + "-dut",
                                  [f"net_af_xdp{i},iface={links.s[i]},force_copy=1"
                                   for i in range(2)], "io", size,
                                  ["--port-topology=paired", f"--max-pkt-len={LINK_MTU + 14}"],
                                  mbuf_size=AF_XDP_MBUF),
                     prefix + "-dut", os.path.join(run_dir, "dut.log"))
        else:
            cfg = os.path.join(run_dir, "sw.yaml")
            write_switch_config(bench, cfg, dut, prefix + "-dut", run_dir, links, taps)
            d = Proc("roceswd", [ctx["roceswd"], "--config", cfg], prefix + "-dut",
                     os.path.join(run_dir, "dut.log"))
        d.start()
        procs.append(d)
        if dut == "rsw-tap":
            wait_for(lambda: all(os.path.exists(f"/sys/class/net/{t}") for t in taps),
                     "no TAP interfaces", procs, args.start_timeout)
            for t in taps:
                sh("sysctl", "-qw", f"net.ipv6.conf.{t}.disable_ipv6=1")
                sh("ip", "link", "set", "dev", t, "mtu", str(LINK_MTU), "up")
            ends = taps
        else:
            def dut_ready():
                if d.name == "roceswd":
                    return os.path.exists(os.path.join(run_dir, "ctl.sock"))
                try:
                    return d.telemetry().ethdev_stats(1) is not None
                except (OSError, KeyError, ValueError):
                    d.tel = None
                    return False
            wait_for(dut_ready, f"{dut} not ready", procs, args.start_timeout)
            ends = links.g
        if lat_rate is not None:
            out["phase"] = "latency"
            latency_phase(args, ctx, ends, procs, prefix, run_dir, lat_rate, out)
            return out
        sink = Proc("sink", testpmd(bench, prefix + "-rx", [af_packet(0, ends[1])], "rxonly",
                                    size), prefix + "-rx", os.path.join(run_dir, "sink.log"))
        gen = Proc("gen", testpmd(bench, prefix + "-tx", [af_packet(0, ends[0])], "txonly",
                                  size), prefix + "-tx", os.path.join(run_dir, "gen.log"))
        for p in (sink, gen):
            start_af_packet(p)
            procs.append(p)

        def received():
            try:
                return (sink.telemetry().ethdev_stats(0) or {}).get("ipackets", 0) > 0
            except (OSError, KeyError, ValueError):
                sink.tel = None
                return False
        wait_for(received, f"{dut}: the sink got nothing", procs, args.start_timeout)
        time.sleep(args.warmup)
        r0, t0 = sink.telemetry().ethdev_stats(0), gen.telemetry().ethdev_stats(0)
        c0 = {p.name: bench.thread_cpu(p.proc.pid) for p in procs}
        l0, w0 = bench.loadavg(), time.monotonic()
        time.sleep(args.duration)
        r1, t1 = sink.telemetry().ethdev_stats(0), gen.telemetry().ethdev_stats(0)
        c1 = {p.name: bench.thread_cpu(p.proc.pid) for p in procs}
        wall = time.monotonic() - w0
        out.update({"mpps": (r1["ipackets"] - r0["ipackets"]) / wall / 1e6,
                    "offered_mpps": (t1["opackets"] - t0["opackets"]) / wall / 1e6,
                    "window_s": round(wall, 3), "loadavg1": l0, "cpu": {}})
        for p in procs:
            busy, total = proc_cpu(bench, p.proc.pid, c0[p.name], c1[p.name], wall)
            out["cpu"][p.name] = {"busiest_thread": busy, "process": total}
        if d.name == "roceswd":
            ctl = control.Control(os.path.join(run_dir, "ctl.sock"))
            ports = {p["name"]: p for p in ctl.request("ports")["ports"]}
            out["dut_rx_missed"] = ports["p0"]["rx_missed"]
            xsk = (ports["p0"].get("af_xdp") or {}).get("sockets")
            if xsk:
                out["dut_rx_ring_full"] = xsk["rx_ring_full"]
            ctl.close()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        bench.log(f"afxdp run {dut} {size} B failed: {e}")
        out.update({"mpps": None, "error": str(e)})
    finally:
        for p in reversed(procs):
            p.stop()
        if links:
            links.close()
        if not args.keep_logs:
            shutil.rmtree(run_dir, ignore_errors=True)
    return out


def summarize(runs):
    s = {}
    for size in sorted({r["size"] for r in runs}):
        s[size] = {}
        for dut in DUTS:
            rs = [r for r in runs if r["size"] == size and r["dut"] == dut and r.get("mpps")
                  and r.get("phase") != "latency"]
            if not rs:
                continue
            s[size][dut] = {
                "mpps_median": statistics.median(r["mpps"] for r in rs),
                "mpps_min": min(r["mpps"] for r in rs), "mpps_max": max(r["mpps"] for r in rs),
                "offered_mpps_median": statistics.median(r["offered_mpps"] for r in rs),
                "dut_cpu_median": statistics.median(
                    r["cpu"][[n for n in r["cpu"] if n not in ("gen", "sink")][0]]
                    ["busiest_thread"] for r in rs),
                "runs": len(rs)}
        floor = s[size].get("testpmd-xdp", {}).get("mpps_median")
        for dut, e in s[size].items():
            e["vs_testpmd_xdp"] = e["mpps_median"] / floor if floor else None
    return s


def print_summary(s, fmt):
    print()
    print("kernel-interface ports: gen (af_packet) -> [DUT] -> sink (af_packet), Mpps at the sink")
    print(f"{'size':>5} {'DUT':<12} {'Mpps med':>9} {'min-max':>13} {'offered':>8} "
          f"{'DUT cpu':>8} {'x testpmd-xdp':>14}")
    for size, per in s.items():
        for dut, e in per.items():
            print(f"{size:>5} {dut:<12} {fmt(e['mpps_median'], '{:.3f}'):>9} "
                  f"{fmt(e['mpps_min'], '{:.3f}') + '-' + fmt(e['mpps_max'], '{:.3f}'):>13} "
                  f"{fmt(e['offered_mpps_median'], '{:.3f}'):>8} "
                  f"{fmt(e['dut_cpu_median']):>8} {fmt(e['vs_testpmd_xdp']):>14}")
    print("goal: rsw-xdp >= 0.8 x testpmd-xdp, well ahead of rsw-packet (figures, not a test)")


def print_latency(lat, fmt):
    if not lat:
        return
    print()
    print(f"latency at half load, {LAT_SIZE} B: wire to wire (far end out -> far end in), "
          f"a probe every {LAT_PROBE_INTERVAL_S * 1e3:g} ms")
    print(f"{'DUT':<12} {'target':>8} {'offered':>8} {'through':>8} {'p50 us':>8} {'p99 us':>9} "
          f"{'max us':>9} {'probes':>13} {'DUT cpu':>8} {'load':>5}")
    for r in lat:
        dut_cpu = r.get("cpu", {}).get("roceswd" if r["dut"] != "testpmd-xdp" else r["dut"], {})
        print(f"{r['dut']:<12} {fmt(r.get('target_mpps'), '{:.4f}'):>8} "
              f"{fmt(r.get('offered_mpps'), '{:.4f}'):>8} {fmt(r.get('mpps'), '{:.4f}'):>8} "
              f"{fmt(r.get('p50_us'), '{:.1f}'):>8} {fmt(r.get('p99_us'), '{:.1f}'):>9} "
              f"{fmt(r.get('max_us'), '{:.0f}'):>9} "
              f"{str(r.get('probes_received', '-')) + '/' + str(r.get('probes_sent', '-')):>13} "
              f"{fmt(dut_cpu.get('busiest_thread')):>8} {fmt(r.get('loadavg1'), '{:.1f}'):>5}")


def main(args, bench):
    """Entry point from tools/bench (--afxdp); `bench` is tools/bench's module."""
    for tool in ("ip", "ethtool", "dpdk-testpmd"):
        if not shutil.which(tool):
            sys.exit(f"bench --afxdp: {tool} not found")
    run_dir = os.path.join(args.work_dir, f"afxdp-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.makedirs(run_dir)
    ctx = {"run_dir": run_dir, "roceswd": bench.roceswd_bin(args), "bench": bench,
           "rocegen": os.path.join(ROOT, args.build_dir, "app", "rocegen", "rocegen")}
    # 64 B as asked; 4096 (in tools/bench's default list) becomes 3000, the largest frame an
    # AF_XDP port on veth takes (module doc); other sizes are left out.
    sizes = sorted({64 if s == 64 else 3000 for s in args.sizes if s in (64, 3000, 4096)})
    started = time.time()
    runs, seq = [], 0
    for rd in range(args.pairs):
        for size in sizes:
            order = DUTS if rd % 2 == 0 else list(reversed(DUTS))
            for dut in order:
                seq += 1
                if dut == "rsw-tap" and size > 1500:  # module doc: net_tap takes 1522 B at most
                    runs.append({"dut": dut, "size": size, "seq": seq, "round": rd, "mpps": None,
                                 "error": "not run: DPDK 22.11's net_tap takes 1522-byte frames"})
                    continue
                r = one_run(bench, args, dut, size, seq, ctx)
                r["round"] = rd
                runs.append(r)
                bench.log(f"afxdp round {rd} {size:>4} B {dut:<12} "
                          f"{bench.fmt(r.get('mpps'), '{:.3f}')} Mpps (offered "
                          f"{bench.fmt(r.get('offered_mpps'), '{:.3f}')})  load {r.get('loadavg1')}")
    s = summarize(runs)
    # Latency at half load: each DUT at half its own median rate at LAT_SIZE.
    lat_runs = []
    if LAT_SIZE in s and os.path.exists(ctx["rocegen"]):
        from scapy.layers.inet import IP, UDP
        from scapy.layers.l2 import Ether
        from scapy.utils import wrpcap
        ctx["lat_pcap"] = os.path.join(run_dir, "load.pcap")
        wrpcap(ctx["lat_pcap"], [Ether(src=GEN_MAC, dst=SW_MAC[0]) / IP(src="10.0.1.2", dst="10.0.2.2")
                                 / UDP(sport=49152, dport=5201) / (b"\0" * (LAT_SIZE - 4 - 42))])
        for dut in DUTS:
            e = s[LAT_SIZE].get(dut)
            if not e:
                continue
            seq += 1
            r = one_run(bench, args, dut, LAT_SIZE, seq, ctx,
                        lat_rate=e["mpps_median"] * 1e6 * LAT_LOAD)
            lat_runs.append(r)
            runs.append(r)
            bench.log(f"afxdp latency {dut:<12} at {bench.fmt(r.get('target_mpps'), '{:.4f}')} "
                      f"Mpps: p50 {bench.fmt(r.get('p50_us'), '{:.1f}')} us, p99 "
                      f"{bench.fmt(r.get('p99_us'), '{:.1f}')} us  load {r.get('loadavg1')}")
    elif LAT_SIZE in s:
        bench.log(f"afxdp: no latency runs, {ctx['rocegen']} missing (ninja -C {args.build_dir})")
    print_summary(s, bench.fmt)
    print_latency(lat_runs, bench.fmt)
    doc = {"command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
           "mode": "afxdp", "started": time.strftime("%Y-%m-%d %H:%M:%S",
                                                     time.localtime(started)),
           "duration_s": round(time.time() - started), "machine": bench.machine_info(),
           "params": {"pairs": args.pairs, "duration_s": args.duration, "warmup_s": args.warmup,
                      "sizes": sizes, "burst": bench.BURST, "lcores": bench.LCORES},
           "summary": {str(k): v for k, v in s.items()},
           "latency": {"size": LAT_SIZE, "load": LAT_LOAD, "runs": lat_runs}, "runs": runs}
    out = args.out or os.path.join(args.work_dir,
                                   f"afxdp-results-{time.strftime('%Y%m%d-%H%M%S')}.json")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\nJSON: {out}")
    if not args.keep_logs:
        shutil.rmtree(run_dir, ignore_errors=True)
