"""tools/bench's lossless check: offered load above the port speed with PFC on, senders that
honor PFC, drops per class (lossless ones expected 0) and the pause counts.

The lab of test/system/test_rocehost_switch.sh ("incast, DCQCN off: PFC carries the load"),
reused as it is: config/rocehost/incast-switch-roceswd.yaml (roceswd, three memif ports at
1 Gb/s, the memif servers) with config/rocehost/qos-dcqcn-lab.yaml (NVIDIA RoCE maps: DSCP 26
-> TC3 lossless, PG 3 pauses at 64 KB with 4 MB of headroom; ECN on queue 3) and
config/rocehost/incast-switch.yaml (one rocehost process emulating h1, h2, h3 at 1 Gb/s each,
honoring PFC for priority 3). h1 and h2 each write SIZE bytes to h3 at once with DCQCN off:
2 Gb/s offered to p2's 1 Gb/s. PFC from the switch pauses h1 and h2.

The load sweep (RFC 2544 style, TESTPLAN "Load"): the same switch with a fourth port (p3, h4),
telemetry.latency on. At each offered load L (--lossless-loads, a fraction of p2's 1 Gb/s) h1,
h2 and h4 each send h3 L/3 of 1 Gb/s (wire bits, 1024-byte frames) for --lossless-seconds, in
two constant-rate UDP streams: 90 % in the lossless class (DSCP 26, ECT(0), priority 3 -> TC 3)
and 10 % lossy (DSCP 0 -> TC 0). The hosts pause their streams on PFC (rocehost's UDP flows,
doc/rocehost.md). Per load: every stream's frames sent and received (sequence-checked by the
receiver: loss end to end), the switch's drops per class (lossless expected 0; lossy loss equals
its queue's drops), PFC frames sent, and the switch's added latency per class (p50/p99/max,
`rocectl clear latency` before each load)."""

import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import control  # noqa: E402
import telemetry  # noqa: E402

SWITCH_CFG = "config/rocehost/incast-switch-roceswd.yaml"
HOSTS_CFG = "config/rocehost/incast-switch.yaml"
QOS_CFG = "config/rocehost/qos-dcqcn-lab.yaml"


def rocehost_bin(args):
    return os.path.join(ROOT, args.build_dir, "app", "rocehost", "rocehost")


SWEEP_LOADS = "0.5,0.9,1.0,1.5,2.0,3.0"
SWEEP_FRAME = 1024        # bytes, Ethernet header to payload end (FCS excluded)
SWEEP_LOSSY_SHARE = 0.1   # of each sender's offered load: the lossy stream beside the lossless
SWEEP_SENDERS = ("h1", "h2", "h4")
LOSSLESS_TC, LOSSY_TC = 3, 0


def add_args(ap):
    g = ap.add_argument_group("lossless check (--lossless, and after the throughput runs)")
    g.add_argument("--lossless-loads", default=SWEEP_LOADS,
                   help="the sweep's offered loads in the lossless class, fractions of the "
                        "bottleneck's 1 Gb/s (0.01-3; 3 senders at up to 1 Gb/s each)")
    g.add_argument("--lossless-seconds", type=float, default=0.5,
                   help="how long each load's streams send (0.05-10 s)")
    g.add_argument("--lossless-parts", default="incast,sweep",
                   help="which parts run: incast (the 2:1 RoCE check), sweep, or both")
    g.add_argument("--lossless-prefix", default=f"rblossless-{os.getpid()}",
                   help="file prefix of the DPDK processes (PREFIX-sw, PREFIX-sweep-...)")


def parse_loads(text):
    """The sweep's loads from --lossless-loads; ValueError with the reason."""
    loads = []
    for x in text.split(","):
        try:
            v = float(x)
        except ValueError:
            raise ValueError(f"--lossless-loads: '{x}' is not a number") from None
        if not 0.01 <= v <= 3.0:
            raise ValueError(f"--lossless-loads: {v} is outside 0.01-3 (3 senders at 1 Gb/s)")
        loads.append(v)
    return loads


def sub_template(src, d, qos, prefix):
    with open(os.path.join(ROOT, src)) as f:
        s = f.read()
    return s.replace("SOCKDIR", d).replace("QOSFILE", qos).replace("PREFIX", prefix)


def start_switch(args, bench, cfg, log_path):
    """roceswd on `cfg`, once it answers on its control socket: (process, Control, log file)."""
    sw_log = open(log_path, "w")
    sw = subprocess.Popen([bench.roceswd_bin(args), "--config", cfg], stdout=sw_log,
                          stderr=subprocess.STDOUT, start_new_session=True)
    sock = os.path.join(os.path.dirname(cfg), "roceswd.sock")
    deadline = time.monotonic() + args.start_timeout
    try:
        while True:
            if sw.poll() is not None:
                raise RuntimeError(f"roceswd exited with {sw.returncode} (log {log_path})")
            try:
                ctl = control.Control(sock)
                ctl.request("ports")
                return sw, ctl, sw_log
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("roceswd did not answer on its control socket")
            time.sleep(0.2)
    except BaseException:
        stop_switch(sw, None, sw_log)
        raise


def stop_switch(sw, ctl, sw_log):
    if ctl:
        ctl.close()
    telemetry.end_process(sw)
    sw_log.close()


def with_switch(args, bench, d, cfg, out, what, prefixes, body):
    """Runs body(Control) against roceswd on `cfg` (its log in `d`). An error of the start or
    of the body goes to out["error"] and the bench's log; then the switch stops, the EAL runtime
    dirs of `prefixes` go, and so does `d` unless there was an error or --keep-logs."""
    sw = ctl = sw_log = None
    try:
        sw, ctl, sw_log = start_switch(args, bench, cfg, os.path.join(d, "roceswd.log"))
        body(ctl)
    except (RuntimeError, OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        out["error"] = str(e)
        bench.log(f"{what} failed: {e} (logs in {d})")
    finally:
        if sw:
            stop_switch(sw, ctl, sw_log)
        for p in prefixes:
            telemetry.remove_runtime_dir(p)
        if "error" not in out and not args.keep_logs:
            shutil.rmtree(d, ignore_errors=True)


def run_rocehost(args, cfg, out_dir, prefix, timeout=180):
    r = subprocess.run([rocehost_bin(args), "--config", cfg, "--out", out_dir, "--dcqcn", "off",
                        "--file-prefix", prefix],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"rocehost exited with {r.returncode}: {r.stdout[-2000:]}")
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)


def pfc_by_port(ctl):
    return {p["port"]: {"tx_pause": sum(x["tx_pause"] for x in p["priorities"]),
                        "tx_xon": sum(x["tx_xon"] for x in p["priorities"]),
                        "tx_pause_us": sum(x["tx_pause_us"] for x in p["priorities"]),
                        "headroom_drops": sum(g["headroom_drops"] for g in p["pgs"]),
                        "pg_watermark_bytes": max([g["watermark_bytes"] for g in p["pgs"]] or [0]),
                        "headroom_watermark_bytes": max(
                            [g["headroom_watermark_bytes"] for g in p["pgs"]] or [0])}
            for p in ctl.request("pfc")["ports"]}


def run(args, bench, size="16M"):
    """Runs the 2:1 RoCE check, then the load sweep (--lossless-parts); returns the check's
    dict (with "error" when it could not run) and the sweep's under "sweep" (its own
    "error")."""
    parts = set(args.lossless_parts.split(","))
    if not parts or parts - {"incast", "sweep"}:
        return {"error": f"--lossless-parts {args.lossless_parts}: incast, sweep or both"}
    out = {}
    if "incast" in parts:
        out = incast(args, bench, size)
    if "sweep" in parts:
        out["sweep"] = sweep(args, bench)
    return out


def incast(args, bench, size):
    """The 2:1 RoCE check (module docstring)."""
    d = os.path.join(args.work_dir, f"lossless-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.makedirs(d)
    prefix = args.lossless_prefix
    qos = os.path.join(ROOT, QOS_CFG)
    sw_cfg, hosts_cfg = os.path.join(d, "sw.yaml"), os.path.join(d, "incast.yaml")
    with open(sw_cfg, "w") as f:
        f.write(sub_template(SWITCH_CFG, d, qos, prefix + "-sw") +
                "telemetry:\n  prometheus: {enabled: false}\n")
    with open(hosts_cfg, "w") as f:
        f.write(sub_template(HOSTS_CFG, d, qos, prefix + "-sw").replace(
            "  size: 4M\n", f"  size: {size}\n"))
    out = {"lab": {"switch": SWITCH_CFG, "hosts": HOSTS_CFG, "qos": QOS_CFG,
                   "senders": 2, "sender_rate": "1G", "bottleneck": "p2 1G", "size": size,
                   "dcqcn": "off", "offered_over_port": 2.0}}

    def body(ctl):
        tc_map = control.qos_map(qos)
        t0 = time.monotonic()
        summ = run_rocehost(args, hosts_cfg, os.path.join(d, "out"), prefix + "-hosts")
        out["rocehost_s"] = round(time.monotonic() - t0, 2)
        c = control.class_drops(ctl, tc_map, "p2")
        out["egress_p2"] = c["classes"]
        out["lossless_drops"] = c["lossless_drops"]
        out["switch_drops"] = c["switch_drops"]
        out["pfc"] = pfc_by_port(ctl)
        out["hosts"] = {h["name"]: {k: h.get(k) for k in ("pause_frames", "paused_us",
                                                           "tx_data")}
                        for h in summ.get("hosts", [])}
        out["receiver"] = {k: summ["receiver"].get(k) for k in ("psn_gaps", "missing_packets",
                                                                "ce_packets", "messages")}
        out["flows_completed"] = summ.get("flows_completed")
        out["headroom_drops"] = sum(v["headroom_drops"] for v in out["pfc"].values())

    with_switch(args, bench, d, sw_cfg, out, "lossless check",
                (prefix + "-sw", prefix + "-hosts"), body)
    return out


def sweep_switch_config(d, qos, prefix):
    """The check's switch with p3 (toward h4) and telemetry.latency: the incast template, one
    more port and neighbour."""
    s = sub_template(SWITCH_CFG, d, qos, prefix)
    p3 = ("  - name: p3\n"
          f'    device: "net_memif3,role=server,id=0,socket={d}/p3.sock,socket-abstract=no"\n'
          '    mac: "02:00:00:00:04:01"\n'
          "    speed: 1G\n"
          '    ipv4: ["10.0.4.1/24"]\n\n')
    if s.count("\nneighbours:\n") != 1:
        raise RuntimeError(f"{SWITCH_CFG}: expected one 'neighbours:' section after the ports")
    s = s.replace("\nneighbours:\n", "\n" + p3 + "neighbours:\n")
    s += ('  - ip: 10.0.4.2\n    mac: "02:00:00:00:04:02"\n'
          "telemetry:\n  allow_clear: true\n  latency: true\n  prometheus: {enabled: false}\n")
    return s


SWEEP_HOSTS = {"h1": 0, "h2": 1, "h3": 2, "h4": 3}  # host: its switch port (p0-p3)


def hosts_yaml(d, names):
    """rocehost's `hosts` entries for the sweep lab's hosts `names` (memif clients of the
    switch's sockets in `d`, static gateways); the others go under `peers` (peers_yaml) when
    several rocehost processes share the lab."""
    out = ""
    for i, name in enumerate(names):
        port = SWEEP_HOSTS[name]
        n = port + 1
        out += (f"  - name: {name}\n"
                f'    device: "net_memif{i},role=client,id=0,socket={d}/p{port}.sock,'
                'socket-abstract=no"\n'
                f'    mac: "02:00:00:00:0{n}:02"\n'
                f"    ip: 10.0.{n}.2/24\n"
                f"    gateway: 10.0.{n}.1\n"
                f'    gateway_mac: "02:00:00:00:0{n}:01"\n'
                "    line_rate: 1G\n")
    return out


def peers_yaml(names):
    return "".join(f"  - {{name: {h}, ip: 10.0.{SWEEP_HOSTS[h] + 1}.2, line_rate: 1G}}\n"
                   for h in names)


def rocehost_header(name, duration_ms=120000):
    """The sections of a rocehost config of the lab before `hosts`: the NVIDIA classes (DSCP 26
    lossless on priority 3), DCQCN off; the run ends when its flows are done."""
    return (f"rocehost:\n  name: {name}\n  duration_ms: {duration_ms}\n  start_delay_ms: 300\n"
            "  linger_ms: 200\n"
            "traffic:\n  data_dscp: 26\n  data_priority: 3\n  cnp_dscp: 48\n  cnp_priority: 6\n"
            "  pfc_priorities: [3]\n"
            "dcqcn:\n  enabled: false\n")


def sweep_hosts_config(d, load, seconds):
    """rocehost's config for one load: h1, h2 and h4 each offer h3 load / 3 of 1 Gb/s, 90 % of
    it in the lossless class and 10 % lossy; returns (text, streams)."""
    stop = int(seconds * 1e9)
    streams = []
    for i, h in enumerate(SWEEP_SENDERS):
        streams.append({"src": h, "class": "lossless", "tc": LOSSLESS_TC,
                        "mbps": max(1, round(load * 1000 * (1 - SWEEP_LOSSY_SHARE) / 3)),
                        "dscp": 26, "ecn": True, "priority": 3, "sport": 10001 + i})
        streams.append({"src": h, "class": "lossy", "tc": LOSSY_TC,
                        "mbps": max(1, round(load * 1000 * SWEEP_LOSSY_SHARE / 3)),
                        "dscp": 0, "ecn": False, "priority": 0, "sport": 10101 + i})
    hosts = hosts_yaml(d, ("h1", "h2", "h3", "h4"))
    flows = "".join(f"  - {{src: {u['src']}, dst: h3, rate: {u['mbps']}M, frame_bytes: "
                    f"{SWEEP_FRAME}, start_ns: 0, stop_ns: {stop}, dscp: {u['dscp']}, "
                    f"ecn: {str(u['ecn']).lower()}, priority: {u['priority']}, "
                    f"sport: {u['sport']}}}\n" for u in streams)
    text = ("# generated by tools/bench (tools/bench_lib/lossless.py): one load of the sweep\n" +
            rocehost_header("sweep") +
            "hosts:\n" + hosts +
            "workload:\n  pattern: list\n  flows: []\n"
            "udp_flows:\n" + flows)
    return text, streams


def udp_rows(path):
    """udp_flows.csv: one dict per flow, in the config's order."""
    with open(path) as f:
        head = f.readline().strip().split(",")
        return [dict(zip(head, line.strip().split(","))) for line in f if line.strip()]


def sweep_point(args, ctl, tc_map, d, prefix, load):
    """One load: clears the latency window and watermarks, runs the streams, returns the
    point's figures (counters as differences over the point)."""
    text, streams = sweep_hosts_config(d, load, args.lossless_seconds)
    name = f"load-{load:g}"
    cfg = os.path.join(d, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(text)
    ctl.request("clear", "watermarks")
    ctl.request("clear", "latency")
    c0, pfc0 = control.class_drops(ctl, tc_map, "p2"), pfc_by_port(ctl)
    t0 = time.monotonic()
    summ = run_rocehost(args, cfg, os.path.join(d, name), f"{prefix}-{name}")
    secs = round(time.monotonic() - t0, 2)
    c1, pfc1 = control.class_drops(ctl, tc_map, "p2"), pfc_by_port(ctl)
    lat = {c["tc"]: c for c in ctl.request("latency")["classes"]}
    rows = udp_rows(os.path.join(d, name, "udp_flows.csv"))
    if len(rows) != len(streams):
        raise RuntimeError(f"{name}: {len(rows)} rows in udp_flows.csv for {len(streams)} "
                           "streams")
    classes = {}
    for u, r in zip(streams, rows):
        u.update({k: int(r[k]) for k in ("sent", "received", "out_of_order")})
        e = classes.setdefault(u["class"], {"tc": u["tc"], "offered_mbps": 0, "sent": 0,
                                            "received": 0, "out_of_order": 0,
                                            "max_delay_us": 0.0})
        e["offered_mbps"] += u["mbps"]
        e["sent"] += int(r["sent"])
        e["received"] += int(r["received"])
        e["out_of_order"] += int(r["out_of_order"])
        e["max_delay_us"] = max(e["max_delay_us"], int(r["max_delay_ps"]) / 1e6)
    for e in classes.values():
        q = str(tc_map[e["tc"]][0])
        a, b = c0["classes"][q], c1["classes"][q]
        e["lost"] = e["sent"] - e["received"]
        e["switch_enqueued"] = b["enq"] - a["enq"]
        e["switch_drops"] = b["drops"] - a["drops"]
        e["switch_drops_by_reason"] = {k: v - a["drops_by_reason"].get(k, 0)
                                       for k, v in b["drops_by_reason"].items()
                                       if v - a["drops_by_reason"].get(k, 0)}
        e["ecn_marked"] = b["ecn_marked"] - a["ecn_marked"]
        e["queue_watermark_bytes"] = b["watermark_bytes"]
        la = lat.get(e["tc"], {})
        e["latency_us"] = {k: la.get(k + "_us") for k in ("p50", "p99", "p999", "max")}
        e["latency_packets"] = la.get("packets", 0)
    pfc = {p: {k: v - pfc0[p][k] if k in ("tx_pause", "tx_xon", "tx_pause_us", "headroom_drops")
               else v for k, v in x.items()} for p, x in pfc1.items()}
    return {"load": load,
            "offered_over_port": round(sum(u["mbps"] for u in streams) / 1000, 3),
            "streams": streams,
            "seconds": args.lossless_seconds, "rocehost_s": secs, "classes": classes,
            "pfc_sent": sum(x["tx_pause"] for x in pfc.values()),
            "paused_peer_ms": round(sum(x["tx_pause_us"] for x in pfc.values()) / 1000, 1),
            "headroom_drops": sum(x["headroom_drops"] for x in pfc.values()),
            "pg_watermark_bytes": max(x["pg_watermark_bytes"] for x in pfc.values()),
            "hosts_paused": {h["name"]: h.get("pause_frames") for h in summ.get("hosts", [])
                             if h.get("pause_frames")},
            "switch_drops": {k: v - c0["switch_drops"].get(k, 0)
                             for k, v in c1["switch_drops"].items()
                             if v - c0["switch_drops"].get(k, 0)}}


def sweep(args, bench):
    """The load sweep (module docstring); returns {"points": [...], "lossless_lost": n, ...}
    or {"error": ...}."""
    out = {"lab": {"switch": SWITCH_CFG + " + p3/h4", "qos": QOS_CFG, "bottleneck": "p2 1G",
                   "senders": list(SWEEP_SENDERS), "frame_bytes": SWEEP_FRAME,
                   "lossless": "DSCP 26 -> TC 3, priority 3",
                   "lossy_share": SWEEP_LOSSY_SHARE, "lossy": "DSCP 0 -> TC 0",
                   "seconds_per_load": args.lossless_seconds}, "points": []}
    try:
        loads = parse_loads(args.lossless_loads)
        if not 0.05 <= args.lossless_seconds <= 10:
            raise ValueError(f"--lossless-seconds {args.lossless_seconds}: 0.05-10")
    except ValueError as e:
        out["error"] = str(e)
        return out
    d = os.path.join(args.work_dir, f"sweep-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.makedirs(d)
    prefix = args.lossless_prefix + "-sweep"
    qos = os.path.join(ROOT, QOS_CFG)
    cfg = os.path.join(d, "sw.yaml")
    with open(cfg, "w") as f:
        f.write(sweep_switch_config(d, qos, prefix + "-sw"))

    def body(ctl):
        tc_map = control.qos_map(qos)
        for load in loads:
            out["points"].append(sweep_point(args, ctl, tc_map, d, prefix, load))

    with_switch(args, bench, d, cfg, out, "lossless sweep",
                [prefix + "-sw"] + [f"{prefix}-load-{load:g}" for load in loads], body)
    pts = out["points"]
    out["lossless_lost"] = sum(p["classes"]["lossless"]["lost"] for p in pts)
    out["lossless_switch_drops"] = sum(p["classes"]["lossless"]["switch_drops"] for p in pts)
    out["headroom_drops"] = sum(p["headroom_drops"] for p in pts)
    return out


def print_result(r):
    if "egress_p2" not in r and "error" not in r:  # the sweep alone (--lossless-parts sweep)
        if "sweep" in r:
            print_sweep(r["sweep"])
        return
    print()
    print("lossless check: 2 rocehost senders x 1 Gb/s -> roceswd p2 at 1 Gb/s, PFC on "
          "(priority 3), DCQCN off")
    if "error" in r:
        print(f"  FAILED to run: {r['error']}")
        if "sweep" in r:
            print_sweep(r["sweep"])
        return
    print(f"  flows completed {r['flows_completed']}, receiver PSN gaps "
          f"{r['receiver']['psn_gaps']}, missing packets {r['receiver']['missing_packets']}")
    print(f"  {'queue':>5} {'TCs':<8} {'lossless':<8} {'enq':>9} {'drops':>6} {'ECN marks':>9} "
          f"{'watermark B':>11}")
    for q, c in sorted(r["egress_p2"].items(), key=lambda kv: int(kv[0])):
        if not (c["enq"] or c["drops"] or c["lossless"]):
            continue
        print(f"  {q:>5} {','.join(map(str, c['tcs'])):<8} {str(c['lossless']):<8} "
              f"{c['enq']:>9} {c['drops']:>6} {c['ecn_marked']:>9} {c['watermark_bytes']:>11}")
    verdict = "met" if r["lossless_drops"] == 0 and r["headroom_drops"] == 0 else "MISSED"
    print(f"  lossless drops {r['lossless_drops']} (queues), {r['headroom_drops']} (PG "
          f"headroom)  target 0: {verdict}")
    for p, v in r["pfc"].items():
        if v["tx_pause"] or v["tx_xon"]:
            print(f"  {p}: sent {v['tx_pause']} PFC XOFF, {v['tx_xon']} XON, paused the peer "
                  f"{v['tx_pause_us'] / 1000:.1f} ms; PG watermark {v['pg_watermark_bytes']} B, "
                  f"headroom used {v['headroom_watermark_bytes']} B")
    for h, v in r["hosts"].items():
        if v.get("pause_frames"):
            print(f"  {h}: honored {v['pause_frames']} pause frames (XOFF), paused "
                  f"{(v.get('paused_us') or 0) / 1000:.1f} ms")
    other = {k: v for k, v in r["switch_drops"].items() if v}
    print(f"  switch drops by reason: {other or 'none'}")
    if "sweep" in r:
        print_sweep(r["sweep"])


def print_sweep(w):
    print()
    print(f"lossless load sweep: {', '.join(w['lab']['senders'])} -> h3 over roceswd p2 at "
          f"1 Gb/s, constant-rate streams, {100 - round(100 * SWEEP_LOSSY_SHARE)} % in the "
          f"lossless class (TC {LOSSLESS_TC}, PFC on), {round(100 * SWEEP_LOSSY_SHARE)} % lossy "
          f"(TC {LOSSY_TC}), {w['lab']['seconds_per_load']} s per load; load = offered / p2's "
          "rate")
    if "error" in w:
        print(f"  FAILED: {w['error']}")
    if not w["points"]:
        return
    print(f"  {'load':>5} {'class':<8} {'sent':>8} {'lost':>6} {'sw drops':>8} {'ECN':>6} "
          f"{'p50 us':>8} {'p99 us':>8} {'max us':>9} {'XOFF':>6} {'paused ms':>9} "
          f"{'PG wm B':>8}")
    for p in w["points"]:
        for name in ("lossless", "lossy"):
            c = p["classes"][name]
            lat = c["latency_us"]
            f = (lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "-")
            tail = (f"{p['pfc_sent']:>6} {p['paused_peer_ms']:>9} {p['pg_watermark_bytes']:>8}"
                    if name == "lossless" else "")
            print(f"  {p['offered_over_port'] if name == 'lossless' else '':>5} {name:<8} "
                  f"{c['sent']:>8} {c['lost']:>6} {c['switch_drops']:>8} {c['ecn_marked']:>6} "
                  f"{f(lat['p50']):>8} {f(lat['p99']):>8} {f(lat['max']):>9} {tail}")
    verdict = ("met" if w["lossless_lost"] == 0 and w["lossless_switch_drops"] == 0 and
               w["headroom_drops"] == 0 and "error" not in w else "MISSED")
    print(f"  lossless class: {w['lossless_lost']} lost end to end, "
          f"{w['lossless_switch_drops']} switch drops, {w['headroom_drops']} headroom drops over "
          f"{len(w['points'])} loads; target 0 at every load: {verdict}")
