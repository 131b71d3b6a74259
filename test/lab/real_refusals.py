#!/usr/bin/python3
"""rocelab's real engine refuses, with a clear message, what it cannot run as the simulator
does (tools/rocelab_lib/real.py check_supported): a UDP flow that never ends (no stop, no
until), and a job with a pg from a lab description without its ranks' classes; it accepts flows
and collective jobs with a class of their own, UDP flows, and hands rocehost the classes and PFC
priorities rocesim resolves. The lab descriptions come from rocesim --emit-lab
(no processes started)."""
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


def emit(scenario):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "s.yaml"), "w") as f:
            f.write(TOPO + scenario)
        subprocess.run([ROCESIM, "--scenario", os.path.join(d, "s.yaml"), "--emit-lab",
                        os.path.join(d, "lab.json")], check=True)
        return json.load(open(os.path.join(d, "lab.json")))


def refusal(scenario):
    lab = emit(scenario)
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


def same(what, got, expected):
    global failed
    ok = got == expected
    print("%s: %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        print("      got: %r, expected %r" % (got, expected))
        failed += 1


CLASSED = ("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n"
           "  - {src: 1, dst: 2, size: 1000, start: 5us, pg: 0}\n"
           "  - {src: 2, dst: 0, size: 1000, start: 6us, pg: 4}\n")
UDP = "udp_flows:\n  - {src: 1, dst: 2, rate: 1Mbps, stop: 10us}\n"
check(CLASSED, "")
check("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n" + UDP, "")
check("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n", "")
check("roce_flows:\n  - {src: 0, dst: 1, size: 1000}\n"
      "udp_flows:\n  - {src: 1, dst: 2, rate: 1Mbps}\n",
      "rocelab: udp_flows[0] has no stop and the scenario no until: the real engine's UDP flows "
      "must end")
check("until: 1ms\nroce_flows:\n  - {src: 0, dst: 1, size: 1000}\n"
      "udp_flows:\n  - {src: 1, dst: 2, rate: 1Mbps}\n", "")

# What rocehost gets (real.py), as rocesim resolves it (the built-in SONiC profile: DSCP 8 ->
# TC 0, DSCP 26 -> TC 1 (so the hosts' default class is not TC 3), TCs 3 and 4 lossless).
lab = emit(CLASSED + UDP)
same("a flow in hosts.traffic's class gets no class line", real.flow_class_yaml(lab["flows"][0]), "")
same("pg 0: the lowest DSCP of TC 0, priority 0, ACKs with the data",
     real.flow_class_yaml(lab["flows"][1]),
     ', class: {"ack_dscp": 8, "ack_priority": 0, "data_dscp": 8, "data_priority": 0}')
same("pg 4 is lossless at the switch: the hosts honour PFC for 3 (hosts.traffic) and 4",
     real.traffic_yaml(lab["hosts_profile"]), ['traffic: {"pfc_priorities": [3, 4]}'])
same("a UDP flow: its DSCP's TC as its PFC priority",
     real.udp_flows_yaml(lab, {0: "h0", 1: "h1", 2: "h2"}),
     ["udp_flows:", '  - {src: "h1", dst: "h2", rate: 1M, frame_bytes: 1000, start_ns: 0, '
      'stop_ns: 10000, dscp: 0, ecn: false, priority: 1, sport: 10000, dport: 100}'])
JOB_PG = "workloads:\n  - {type: ring_allreduce, hosts: [0, 1, 2], bytes: 3000, pg: 4}\n"
check(JOB_PG, "")
check("workloads:\n  - {type: all_to_all, hosts: [0, 1, 2], bytes: 3000, iterations: 2}\n", "")

# A job's pg: every rank's class as rocesim resolves it (pg 4 with the SONiC profile: DSCP 4,
# lossless, so the hosts honour PFC for it too), handed to rocehost with the job.
lab = emit(JOB_PG)
hostname = {0: "h0", 1: "h1", 2: "h2"}
same("a job with a pg: one class for its ranks in rocehost's job line", real.jobs_yaml(lab, hostname),
     ["jobs:", '  - {kind: ring_allreduce, hosts: ["h0", "h1", "h2"], bytes: 3000, iterations: 1, '
      'compute_gap_ns: 0, step_gap_ns: 0, schedule: simultaneous, start_ns: 0, class: '
      '{"ack_dscp": 4, "ack_priority": 4, "data_dscp": 4, "data_priority": 4}}'])
same("the job's lossless pg is among the priorities the hosts honour",
     real.traffic_yaml(lab["hosts_profile"]), ['traffic: {"pfc_priorities": [3, 4]}'])
job = dict(lab["jobs"][0])
job["classes"] = [None, job["classes"][0], None]
same("ranks in different classes: one class per rank, null for hosts.traffic's",
     real.job_class_yaml(job),
     ', class: [null, {"ack_dscp": 4, "ack_priority": 4, "data_dscp": 4, "data_priority": 4}, null]')
same("a job without a pg: no class", real.job_class_yaml(emit(
    "workloads:\n  - {type: all_to_all, hosts: [0, 1], bytes: 3000}\n")["jobs"][0]), "")
del lab["jobs"][0]["classes"]
try:
    real.check_supported(lab)
    got = ""
except SystemExit as e:
    got = str(e)
same("a lab description without the ranks' classes (an older rocesim's) is refused", got,
     "rocelab: collective job 0 (ring_allreduce) has pg 4 but the lab description has no class "
     "per rank: emit it again with this rocesim (rocesim --emit-lab)")
sys.exit(1 if failed else 0)
