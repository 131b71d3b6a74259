#!/usr/bin/python3
"""rocelab's real engine refuses, with a clear message, what it cannot run as the simulator
does (tools/rocelab_lib/real.py check_supported): UDP flows, and flows or collective jobs with
a traffic class of their own (pg), which rocehost would otherwise run silently in the hosts'
class; collective jobs without one are accepted. The lab descriptions come from rocesim --emit-lab (no processes started)."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from rocelab_lib import real  # noqa: E402

ROCESIM = os.environ.get("ROCESIM", os.path.join(ROOT, "build", "app", "rocesim", "rocesim"))
TOPO = "topology: {type: star, hosts: 3, link_rate: 1Gbps, link_delay: 1us}\n"
failed = 0


def refusal(scenario):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "s.yaml"), "w") as f:
            f.write(TOPO + scenario)
        subprocess.run([ROCESIM, "--scenario", os.path.join(d, "s.yaml"), "--emit-lab",
                        os.path.join(d, "lab.json")], check=True)
        lab = json.load(open(os.path.join(d, "lab.json")))
    try:
        real.check_supported(lab)
    except SystemExit as e:
        return str(e)
    return ""


def check(scenario, expected):
    global failed
    got = refusal(scenario)
    ok = got == expected
    print("%s: %s" % ("ok  " if ok else "FAIL", expected or "accepted"))
    if not ok:
        print("      got: %r" % got)
        failed += 1


check("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n"
      "  - {src: 1, dst: 2, size: 1000, start: 5us, pg: 0}\n",
      "rocelab: per-flow classes (pg) are not yet in the real engine: flows with a pg: 1 of 2 "
      "(first: flow 1); rocehost would run them in hosts.traffic's class")
check("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n"
      "udp_flows:\n  - {src: 1, dst: 2, rate: 1Mbps, stop: 10us}\n",
      "rocelab: the real engine runs RoCE hosts only (udp_flows: not yet)")
check("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n", "")
check("workloads:\n  - {type: ring_allreduce, hosts: [0, 1, 2], bytes: 3000, pg: 3}\n",
      "rocelab: per-flow classes (pg) are not yet in the real engine: collective job 0 "
      "(ring_allreduce) has pg 3; rocehost would run it in hosts.traffic's class")
check("workloads:\n  - {type: all_to_all, hosts: [0, 1, 2], bytes: 3000, iterations: 2}\n", "")
sys.exit(1 if failed else 0)
