"""tools/bench's lossless check: offered load above the port speed with PFC on, senders that
honor PFC, drops per class (lossless ones expected 0) and the pause counts.

The lab of test/system/test_rocehost_switch.sh ("incast, DCQCN off: PFC carries the load"),
reused as it is: config/rocehost/incast-switch-roceswd.yaml (roceswd, three memif ports at
1 Gb/s, the memif servers) with config/rocehost/qos-dcqcn-lab.yaml (NVIDIA RoCE maps: DSCP 26
-> TC3 lossless, PG 3 pauses at 64 KB with 4 MB of headroom; ECN on queue 3) and
config/rocehost/incast-switch.yaml (one rocehost process emulating h1, h2, h3 at 1 Gb/s each,
honoring PFC for priority 3). h1 and h2 each write SIZE bytes to h3 at once with DCQCN off:
2 Gb/s offered to p2's 1 Gb/s. PFC from the switch pauses h1 and h2.
"""

import json
import os
import shutil
import signal
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


def run(args, bench, size="16M"):
    """Runs the check once; returns a dict (also with "error" when it could not run)."""
    d = os.path.join(args.work_dir, f"lossless-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    os.makedirs(d)
    prefix = f"rblossless-{os.getpid()}"
    qos = os.path.join(ROOT, QOS_CFG)

    def sub(src, dst, extra=""):
        with open(os.path.join(ROOT, src)) as f:
            s = f.read()
        s = s.replace("SOCKDIR", d).replace("QOSFILE", qos).replace("PREFIX", prefix + "-sw")
        with open(dst, "w") as f:
            f.write(s + extra)

    sw_cfg, hosts_cfg = os.path.join(d, "sw.yaml"), os.path.join(d, "incast.yaml")
    sub(SWITCH_CFG, sw_cfg, "telemetry:\n  prometheus: {enabled: false}\n")
    sub(HOSTS_CFG, hosts_cfg)
    with open(hosts_cfg) as f:
        s = f.read()
    with open(hosts_cfg, "w") as f:
        f.write(s.replace("  size: 4M\n", f"  size: {size}\n"))
    out = {"lab": {"switch": SWITCH_CFG, "hosts": HOSTS_CFG, "qos": QOS_CFG,
                   "senders": 2, "sender_rate": "1G", "bottleneck": "p2 1G", "size": size,
                   "dcqcn": "off", "offered_over_port": 2.0}}
    sw_log = open(os.path.join(d, "roceswd.log"), "w")
    sw = subprocess.Popen([bench.roceswd_bin(args), "--config", sw_cfg], stdout=sw_log,
                          stderr=subprocess.STDOUT, start_new_session=True)
    ctl = None
    try:
        sock = os.path.join(d, "roceswd.sock")
        deadline = time.monotonic() + args.start_timeout
        while True:
            if sw.poll() is not None:
                raise RuntimeError(f"roceswd exited with {sw.returncode}")
            try:
                ctl = control.Control(sock)
                ctl.request("ports")
                break
            except OSError:
                ctl = None
            if time.monotonic() > deadline:
                raise RuntimeError("roceswd did not answer on its control socket")
            time.sleep(0.2)
        tc_map = control.qos_map(qos)
        t0 = time.monotonic()
        r = subprocess.run([rocehost_bin(args), "--config", hosts_cfg, "--out",
                            os.path.join(d, "out"), "--dcqcn", "off",
                            "--file-prefix", prefix + "-hosts"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=180)
        out["rocehost_s"] = round(time.monotonic() - t0, 2)
        if r.returncode != 0:
            raise RuntimeError(f"rocehost exited with {r.returncode}: {r.stdout[-2000:]}")
        with open(os.path.join(d, "out", "summary.json")) as f:
            summ = json.load(f)
        c = control.class_drops(ctl, tc_map, "p2")
        out["egress_p2"] = c["classes"]
        out["lossless_drops"] = c["lossless_drops"]
        out["switch_drops"] = c["switch_drops"]
        pfc = ctl.request("pfc")["ports"]
        out["pfc"] = {p["port"]: {"tx_pause": sum(x["tx_pause"] for x in p["priorities"]),
                                  "tx_xon": sum(x["tx_xon"] for x in p["priorities"]),
                                  "tx_pause_us": sum(x["tx_pause_us"] for x in p["priorities"]),
                                  "headroom_drops": sum(g["headroom_drops"] for g in p["pgs"]),
                                  "pg_watermark_bytes": max([g["watermark_bytes"]
                                                             for g in p["pgs"]] or [0]),
                                  "headroom_watermark_bytes": max(
                                      [g["headroom_watermark_bytes"] for g in p["pgs"]] or [0])}
                      for p in pfc}
        out["hosts"] = {h["name"]: {k: h.get(k) for k in ("pause_frames", "paused_us",
                                                           "tx_data")}
                        for h in summ.get("hosts", [])}
        out["receiver"] = {k: summ["receiver"].get(k) for k in ("psn_gaps", "missing_packets",
                                                                "ce_packets", "messages")}
        out["flows_completed"] = summ.get("flows_completed")
        out["headroom_drops"] = sum(v["headroom_drops"] for v in out["pfc"].values())
    except (RuntimeError, OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        out["error"] = str(e)
        bench.log(f"lossless check failed: {e} (logs in {d})")
    finally:
        if ctl:
            ctl.close()
        if sw.poll() is None:
            sw.send_signal(signal.SIGINT)
            try:
                sw.wait(timeout=15)
            except subprocess.TimeoutExpired:
                sw.kill()
                sw.wait()
        sw_log.close()
        for p in (prefix + "-sw", prefix + "-hosts"):
            telemetry.remove_runtime_dir(p)
        if "error" not in out and not args.keep_logs:
            shutil.rmtree(d, ignore_errors=True)
    return out


def print_result(r):
    print()
    print("lossless check: 2 rocehost senders x 1 Gb/s -> roceswd p2 at 1 Gb/s, PFC on "
          "(priority 3), DCQCN off")
    if "error" in r:
        print(f"  FAILED to run: {r['error']}")
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
