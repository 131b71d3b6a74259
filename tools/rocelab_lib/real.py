"""The real engine: a scenario as real processes on this machine (doc/rocelab.md).

One roceswd per switch, joined by memif links (the lower-numbered node of a link is the memif
server), the hosts as one rocehost process whose hosts sit on memif ports of their leaves;
static routes from the lab description (rocesim's shortest-path ECMP). The workload runs, the
counters of every switch are collected (rocectl --json), and the results are written in
rocesim's files. Every process started here is stopped by its PID and every socket removed,
whatever the exit path (an error, Ctrl-C, SIGTERM).
"""
import argparse
import csv
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import bgp
from . import lab as labmod
from . import mgmt
from . import render

# The real engine marks a run "distorted" when a process that moves frames stopped for longer
# than this while traffic flowed (doc/rocelab.md, "Distortion").
DISTORTION_GAP_US = 1000
# Go-back-N timeout floor: scheduling stalls of tens of ms on a shared machine must not fire it
# (a spurious timeout resends the whole window and multiplies the FCT).
MIN_RTO_US = 200_000
# rocehost's start delay: the workload's time 0 after its loop starts (memif links come up).
START_DELAY_S = 0.3
# Host faults: a storm frame or an XOFF refresh at most this often (a frame every us of the
# scenario would only load the shared cores; 0xFFFF quanta last 33 ms at 1 Gb/s).
MIN_FAULT_INTERVAL_US = 100
# The fastest link the real engine runs unless --any-rate: two shared cores emulate about
# 200 Mb/s of fabric (doc/rocelab.md, "Defaults for two cores"); faster scenarios have -lab
# variants at 1 Gb/s.
MAX_RATE_BPS = 1_000_000_000
# How the switches get their routes (--routing; doc/rocelab.md, "Routing").
DEFAULT_ROUTING = "bgp"
# Each switch's event trace (telemetry.trace: every PFC frame it sends and receives, watchdog
# storms, with the switch's time): the source of pfc_events.csv's switch rows and, from its
# periodic queue samples, of queue_depth.csv. The samples follow the scenario's
# sample_interval, rounded up to whole ms (roceswd's unit) and at least TRACE_MIN_INTERVAL_MS;
# without a sample_interval (rocesim then writes no samples either), every TRACE_INTERVAL_MS.
TRACE_INTERVAL_MS = 1000
# roceswd's minimum (telemetry.trace.interval_ms >= 1): the control loop holds it to about a ms.
TRACE_MIN_INTERVAL_MS = 1
# Bound on a trace's size: at most this many sample rounds over a run that lasts its whole
# --timeout (a round is 4 lines of ~30 B per queue that has held a packet: ~1 KB for a leaf of
# 4 ports with 2 queues in use, so <= ~200 MB per switch for a run that hits its timeout and a
# few MB for a run of a few seconds); a longer --timeout coarsens the interval.
TRACE_MAX_ROUNDS = 200_000


class Interrupted(Exception):
    pass


def add_arguments(p):
    p.add_argument("--timeout", type=float, default=100,
                   help="seconds the workload may take (default 100)")
    p.add_argument("--keep", action="store_true",
                   help="keep the work directory (configs, memif sockets) and print it")
    p.add_argument("--any-rate", action="store_true",
                   help="real engine: run links faster than 1 Gb/s too (the run will be distorted)")
    p.add_argument("--routing", choices=["bgp", "static"], default=DEFAULT_ROUTING,
                   help="real engine: bgp: every switch in its own network namespace with BIRD "
                        "speaking eBGP per fabric link (root); static: the lab's routes set over "
                        f"the control socket (default {DEFAULT_ROUTING})")
    p.add_argument("--hold", type=float, default=0, metavar="SECONDS",
                   help="real engine: keep the lab running up to SECONDS once the workload is "
                        "over and its counters are collected, to scrape it (OUT/prometheus.yml) "
                        "or look around; Ctrl-C or SIGTERM ends the hold and the run normally")


def log(msg):
    print(f"rocelab: {msg}", file=sys.stderr, flush=True)


class Lab:
    """The processes of one run; stop() ends each by PID (SIGTERM, then SIGKILL)."""

    def __init__(self, out, work):
        self.out, self.work = out, work
        self.procs = []  # (name, Popen, log path)
        self.netns = bgp.Netns()  # removed once every process is stopped
        self.mgmt = mgmt.Network()  # the management veths (BGP routing), removed on every path

    def runtime_dirs(self, tag):
        """The DPDK runtime directories of this run's processes (EAL leaves its config and
        fbarray files behind): <runtime>/dpdk/<tag>-*, named by this run's tag only."""
        base = "/var/run/dpdk" if os.geteuid() == 0 else os.path.join(
            os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
        try:
            return [os.path.join(base, d) for d in os.listdir(base) if d.startswith(tag + "-")]
        except OSError:
            return []

    def start(self, name, argv, logname):
        path = os.path.join(self.out, "logs", logname)
        f = open(path, "w")
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)  # Ctrl-C reaches us, not them directly
        f.close()
        self.procs.append((name, p, path))
        return p

    def stop(self, grace=10.0):
        for _, p, _ in reversed(self.procs):
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace
        for _, p, _ in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def check_alive(what, procs):
    """Stops the run (SystemExit with its log's tail) when one of `procs` exited."""
    for name, p, path in procs:
        if p.poll() is not None:
            tail = open(path).read().strip().splitlines()[-5:]
            raise SystemExit(f"rocelab: {name} exited ({p.returncode}) while waiting for "
                             f"{what}:\n  " + "\n  ".join(tail))


def wait_for(what, cond, timeout, procs=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        check_alive(what, procs)
        if cond():
            return
        time.sleep(0.2)
    raise SystemExit(f"rocelab: timed out after {timeout:.0f} s waiting for {what}")


def ctl(sock, *args):
    p = subprocess.run([labmod.binary("rocectl"), "--socket", sock, "--json", *args],
                       capture_output=True, text=True, timeout=20)
    if p.returncode != 0:
        raise RuntimeError(f"rocectl {' '.join(args)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def ctl_many(calls):
    """rocectl for each (socket, args...) of `calls`, all started at once; raises as ctl()."""
    ps = [(c, subprocess.Popen([labmod.binary("rocectl"), "--socket", c[0], "--json", *c[1:]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
          for c in calls]
    for c, p in ps:
        _, err = p.communicate(timeout=20)
        if p.returncode != 0:
            raise RuntimeError(f"rocectl {' '.join(c[1:])}: {err.strip()}")


def check_supported(lab, any_rate=False):
    check_udp_flows(lab)
    check_jobs_supported(lab)
    if not lab["flows"] and not lab["jobs"]:
        raise SystemExit("rocelab: the scenario has no RoCE flows")
    for h in labmod.hosts(lab):
        if len(h["ports"]) != 1:
            raise SystemExit(f"rocelab: host {h['name']} has {len(h['ports'])} links; the real "
                             "engine supports one NIC per host")
    nodes = render.node_by_id(lab)
    fast = max((l["rate_bps"] for l in lab["links"]), default=0)
    if fast > MAX_RATE_BPS and not any_rate:
        raise SystemExit(f"rocelab: the real engine runs links up to {MAX_RATE_BPS // 10**9} Gb/s "
                         f"on two cores; this scenario has {fast / 1e9:g} Gb/s links (use its -lab "
                         "variant, the sim engine, or --any-rate for a distorted run)")
    for e in lab["events"]:
        if e["kind"] in ("link_down", "link_up") and "host" in (nodes[e["a"]]["kind"],
                                                                 nodes[e["b"]]["kind"]):
            raise SystemExit(f"rocelab: {e['kind']} at {e['at_ns']} ns: the real engine sets "
                             "switch-to-switch links down only (link "
                             f"{nodes[e['a']]['name']} - {nodes[e['b']]['name']} ends at a host)")


def check_udp_flows(lab):
    """UDP flows run in rocehost (doc/rocelab.md, "Traffic classes and UDP flows") when each
    ends: at its stop, or at the scenario's `until`."""
    for i, u in enumerate(lab["udp_flows"]):
        if u["stop_ns"] is None and not lab["until_ns"]:
            raise SystemExit(f"rocelab: udp_flows[{i}] has no stop and the scenario no until: "
                             "the real engine's UDP flows must end")


def traffic_yaml(hp):
    """rocehost's `traffic` section: the scenario's hosts.traffic as written, with the
    priorities the hosts honour PFC for as rocesim resolves them (hosts.traffic's plus the
    lossless pgs of flows with a class of their own: the lab's hosts_profile.pfc_priorities)."""
    t = dict(hp.get("traffic") or {})
    if "pfc_priorities" in hp:
        t["pfc_priorities"] = hp["pfc_priorities"]
    return ["traffic: " + json.dumps(t)] if t else []


def flow_class_yaml(f):
    """A list flow's own class (the lab's resolution of its pg), as rocehost reads it; "" for a
    flow in hosts.traffic's class."""
    c = f.get("class")
    return f", class: {json.dumps(c)}" if c else ""


def udp_flows_yaml(lab, hostname):
    """rocehost's `udp_flows`: the scenario's UDP flows (an unbounded one stops at `until`)."""
    if not lab["udp_flows"]:
        return []
    y = ["udp_flows:"]
    for u in lab["udp_flows"]:
        stop = u["stop_ns"] if u["stop_ns"] is not None else lab["until_ns"]
        y.append(f"  - {{src: {json.dumps(hostname[u['src']])}, dst: {json.dumps(hostname[u['dst']])}, "
                 f"rate: {labmod.mbps(u['rate_bps'], 'udp flow')}M, frame_bytes: {u['frame_bytes']}, "
                 f"start_ns: {u['start_ns']}, stop_ns: {stop}, dscp: {u['dscp']}, "
                 f"ecn: {str(u['ecn']).lower()}, priority: {u['priority']}, sport: {u['sport']}, "
                 f"dport: {u['dport']}}}")
    return y


def udp_results(lab, out, hosts_dir, hsum):
    """OUT/udp_flows.csv in rocesim's columns (rocehost's, with its host indexes turned into
    node ids) and summary.json's `udp` key; nothing when the scenario has no UDP flows."""
    if not lab["udp_flows"]:
        return {}
    node_of = [h["id"] for h in labmod.hosts(lab)]
    rows = []
    p = os.path.join(hosts_dir, "udp_flows.csv")
    if os.path.exists(p):
        with open(p) as f:
            rows = list(csv.DictReader(f))
    cols = ["flow", "src", "dst", "sport", "dport", "sent", "received", "out_of_order",
            "min_delay_ps", "mean_delay_ps", "max_delay_ps"]
    with open(os.path.join(out, "udp_flows.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            r["src"], r["dst"] = node_of[int(r["src"])], node_of[int(r["dst"])]
            f.write(",".join(str(r[c]) for c in cols) + "\n")
    u = hsum.get("udp", {})
    return {"udp": {"flows": len(lab["udp_flows"]), "sent": u.get("sent", 0),
                    "received": u.get("received", 0)}}


def queue_classes(socks):
    """Per switch, each egress queue's totals over its ports (rocectl show queues): packets
    enqueued, dropped (by reason) and ECN-marked, so that a run shows which classes took the
    drops and which were held by PFC. Queues that saw nothing are left out."""
    out = {}
    for name, sock in socks.items():
        qs = {}
        for q in ctl(sock, "show", "queues").get("queues", []):
            t = qs.setdefault(str(q["queue"]), {"enq_packets": 0, "drops": 0, "ecn_marked": 0,
                                                "drops_by_reason": {}})
            t["enq_packets"] += q["enq_packets"]
            t["drops"] += q["drops"]
            t["ecn_marked"] += q["ecn_marked"]
            for r, n in q["drops_by_reason"].items():
                t["drops_by_reason"][r] = t["drops_by_reason"].get(r, 0) + n
        out[name] = {q: t for q, t in qs.items() if t["enq_packets"] or t["drops"]}
    return out


LATENCY_COLUMNS = ["node", "tc", "packets", "p50_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns"]


def switch_latency(socks, out):
    """Each switch's time per class (rocectl show latency: telemetry.latency, RX burst to TX
    burst, doc/observability.md "Latency") into OUT/switch_latency.csv, rocesim's columns (node
    = the switch's node id, ns; the maximum is the exact all-time one, as rocesim's). `socks`:
    node id -> (name, control socket). Returns name -> {tc: row} for summary.json."""
    rows, per_switch = [], {}
    for node, (name, sock) in sorted(socks.items()):
        lat = ctl(sock, "show", "latency")
        per_switch[name] = {}
        if not lat.get("enabled"):
            continue
        for c in lat["classes"]:
            if not c["packets"]:
                continue
            r = {"node": node, "tc": c["tc"], "packets": c["packets"],
                 **{f"{k}_ns": round(c[f"{k}_us"] * 1000) for k in ("p50", "p99", "p999", "mean")},
                 "max_ns": round(c["max_all_us"] * 1000)}
            rows.append(r)
            per_switch[name][str(c["tc"])] = {k: r[k] for k in LATENCY_COLUMNS[2:]}
    with open(os.path.join(out, "switch_latency.csv"), "w") as f:
        f.write(",".join(LATENCY_COLUMNS) + "\n")
        for r in rows:
            f.write(",".join(str(r[k]) for k in LATENCY_COLUMNS) + "\n")
    return per_switch


def check_jobs_supported(lab):
    """Collective jobs run in rocehost (doc/rocehost.md "Collective jobs"). A job with a pg of
    its own runs in the class rocesim resolves for each rank (the lab's `classes`); a lab
    description without them (an older rocesim's) cannot say which, and is refused."""
    for i, j in enumerate(lab["jobs"]):
        if j.get("pg") is not None and len(j.get("classes") or []) != len(j["hosts"]):
            raise SystemExit(f"rocelab: collective job {i} ({j['kind']}) has pg {j['pg']} but the "
                             "lab description has no class per rank: emit it again with this "
                             "rocesim (rocesim --emit-lab)")


def job_class_yaml(j):
    """A job's class for rocehost (its pg resolved per rank, as flow_class_yaml's): one class
    when every rank has the same, else one per rank (null: hosts.traffic's); "" when every
    rank is in hosts.traffic's class."""
    cs = j.get("classes") or []
    if not any(cs):
        return ""
    if all(c == cs[0] for c in cs):
        return f", class: {json.dumps(cs[0])}"
    return f", class: {json.dumps(cs)}"


def jobs_yaml(lab, hostname):
    """rocehost's `jobs` section: the scenario's collective jobs, expanded and driven by rocehost
    with rocesim's code (roce/collective.h). Every host is in the one rocehost process, so a
    rank's step can wait for its own receive (doc/rocelab.md, "Collective jobs")."""
    if not lab["jobs"]:
        return []
    y = ["jobs:"]
    for j in lab["jobs"]:
        y.append(f"  - {{kind: {j['kind']}, hosts: {json.dumps([hostname[h] for h in j['hosts']])}, "
                 f"bytes: {j['bytes']}, iterations: {j['iterations']}, "
                 f"compute_gap_ns: {j['compute_gap_ns']}, step_gap_ns: {j['step_gap_ns']}, "
                 f"schedule: {j['schedule']}, start_ns: {j['start_ns']}{job_class_yaml(j)}}}")
    return y


def job_flow_table(lab, hosts_dir, flow_rows):
    """The flows rocehost added for collective jobs (hosts/job_flows.csv; their ends from its
    flows.csv rows `flow_rows`), by rocehost's flow id, in lab["flows"]'s form for fct.txt:
    source ports numbered per source host after the lab's flows' in the order rocehost added
    them (rocesim numbers them in the order it adds them), rocesim's standalone FCT from the lab
    description; start_ns on the scenario's clock."""
    p = os.path.join(hosts_dir, "job_flows.csv")
    if not os.path.exists(p):
        return {}
    with open(p) as f:
        rows = list(csv.DictReader(f))
    node = {h["name"]: h["id"] for h in labmod.hosts(lab)}
    by_id = {int(r["flow"]): r for r in flow_rows}
    sport = {}
    for fl in lab["flows"]:
        sport[fl["src"]] = max(sport.get(fl["src"], 10000), fl["sport"] + 1)
    out = {}
    for r in sorted(rows, key=lambda r: int(r["flow"])):
        fr = by_id.get(int(r["flow"]))
        if not fr:
            continue
        j = lab["jobs"][int(r["job"])]
        src = node[fr["src"]]
        out[int(r["flow"])] = {"src": src, "dst": node[fr["dst"]], "size": int(r["size_bytes"]),
                               "sport": sport.setdefault(src, 10000), "dport": j["dport"],
                               "start_ns": scenario_ns(fr["start_ns"]),
                               "standalone_fct_ns": j["standalone_fct_ns"][int(r["job_flow"])]}
        sport[src] += 1
    return out


def copy_jobs_results(out, hosts_dir, hsum, summary):
    """OUT/jobs.csv (rocehost's, on the scenario's clock as rocesim's) and summary.json's
    `jobs` (rocesim's key: jobs, completed, iterations, iterations_completed)."""
    p = os.path.join(hosts_dir, "jobs.csv")
    if os.path.exists(p):
        shutil.copyfile(p, os.path.join(out, "jobs.csv"))
    if hsum.get("jobs"):
        summary["jobs"] = hsum["jobs"]


def jobs_complete(lab, summary):
    """Every collective job finished every iteration (printed when there are jobs)."""
    if not lab["jobs"]:
        return True
    j = summary.get("jobs") or {}
    ok = j.get("completed") == len(lab["jobs"]) and j.get("iterations_completed") == j.get("iterations")
    print(f"rocelab: collective jobs: {j.get('completed', 0)}/{len(lab['jobs'])} completed, "
          f"{j.get('iterations_completed', 0)}/{j.get('iterations', '?')} iterations (jobs.csv)")
    return ok


def memif(index, role, sock):
    return f"net_memif{index},role={role},id=0,socket={sock},socket-abstract=no"


def pow2_mtu(m):
    """RoCE path MTUs are powers of two (256..4096): the smallest at least m."""
    v = 256
    while v < m and v < 4096:
        v *= 2
    return v


def run_real(scenario, out_dir, args):
    """rocelab run --engine real: the entry the CLI calls. Returns the exit status (130 when
    interrupted)."""
    return run(argparse.Namespace(scenario=scenario, out=out_dir,
                                  timeout=getattr(args, "timeout", 100),
                                  keep=getattr(args, "keep", False),
                                  any_rate=getattr(args, "any_rate", False),
                                  routing=getattr(args, "routing", DEFAULT_ROUTING),
                                  hold=getattr(args, "hold", 0)))


def run(a):
    t0 = time.monotonic()
    out = os.path.abspath(a.out)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    lab = labmod.emit(a.scenario, os.path.join(out, "lab.json"),
                      topology=os.path.join(out, "topology.txt"))
    check_supported(lab, getattr(a, "any_rate", False))
    if a.routing == "bgp":
        bgp.check_tools()
    tag = "rl" + secrets.token_hex(3)[:5]
    # Short: memif and control socket paths must fit sockaddr_un (107 bytes).
    work = tempfile.mkdtemp(prefix=tag + ".", dir="/tmp")
    procs = Lab(out, work)
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    def on_signal(signum, _frame):
        raise Interrupted(signal.Signals(signum).name)

    for s in old:
        signal.signal(s, on_signal)
    try:
        return _run(a, lab, tag, work, out, procs, t0)
    except Interrupted as e:
        log(f"{e}: stopping the lab")
        return 130
    finally:
        for s in old:
            signal.signal(s, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        procs.stop()
        procs.mgmt.remove()
        if all(p.poll() is not None for _, p, _ in procs.procs):
            procs.netns.remove()
            for d in procs.runtime_dirs(tag):
                shutil.rmtree(d, ignore_errors=True)
        if a.keep:
            log(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)


def _run(a, lab, tag, work, out, procs, t0):
    nodes = render.node_by_id(lab)
    sws = labmod.switches(lab)
    use_bgp = a.routing == "bgp"
    sock_of_link = {l["index"]: os.path.join(work, f"l{l['index']}.sock") for l in lab["links"]}
    ctl_sock = {}
    # Prometheus: with BGP each switch's exporter on its management address (mgmt.py), else on
    # 127.0.0.1, any free port.
    prom = {sw["name"]: "127.0.0.1:0" for sw in sws}
    if use_bgp:  # the namespaces first: the management veths end in them
        for sw in sws:
            procs.netns.add(bgp.netns_name(tag, sw))
        addr = procs.mgmt.create(tag, {sw["name"]: bgp.netns_name(tag, sw) for sw in sws},
                                 start=int(tag[2:], 16))
        prom = {n: f"{a}:{mgmt.EXPORTER_PORT}" for n, a in addr.items()}
    # --- switches. A memif client whose server socket does not exist yet never connects
    # (DPDK 22.11 does not retry), so switches start in waves: each once every socket it is a
    # client of exists (leaves, then spines).
    cfgs, clients = {}, {}
    os.makedirs(os.path.join(out, "switches"), exist_ok=True)
    for sw in sws:
        devices, clients[sw["id"]] = [], []
        for p in sw["ports"]:
            server = sw["id"] < p["peer"] or nodes[p["peer"]]["kind"] == "host"
            devices.append(memif(p["port"], "server" if server else "client", sock_of_link[p["link"]]))
            if not server:
                clients[sw["id"]].append(sock_of_link[p["link"]])
        name = f"{tag}-{sw['name']}"
        ctl_sock[sw["id"]] = os.path.join(work, f"{sw['name']}.ctl")
        text = render.switch_yaml(
            lab, sw, name, devices,
            switch_extra={"workers": 1, "idle": "adaptive", "mbufs": 8192,
                          "control_socket": ctl_sock[sw["id"]], "file_prefix": name},
            static_routes=False,  # static: installed over the control socket once it runs
            host_interfaces=use_bgp,  # bgp: TAPs p0.. in the switch's namespace, BIRD on them
            allow=("port_link",) if use_bgp else ("route_learn", "port_link"),
            telemetry=["latency: true",  # each class's time in the switch: switch_latency.csv
                       f"prometheus: {{listen: \"{prom[sw['name']]}\"}}",
                       f"trace: {{file: {json.dumps(trace_path(out, sw))}, "
                       f"interval_ms: {trace_interval_ms(lab, a.timeout)}}}"],
            header=f"# rocelab real engine: switch {sw['name']} (node {sw['id']}) of {lab['source']}")
        cfgs[sw["id"]] = os.path.join(out, "configs", f"{sw['name']}.yaml")
        os.makedirs(os.path.dirname(cfgs[sw["id"]]), exist_ok=True)
        with open(cfgs[sw["id"]], "w") as f:
            f.write(text)
    pending = list(sws)
    started = []
    while pending:
        wave = [sw for sw in pending if all(os.path.exists(c) for c in clients[sw["id"]])]
        if not wave:
            wait_for("memif server sockets", lambda: any(
                all(os.path.exists(c) for c in clients[sw["id"]]) for sw in pending), 60, procs.procs)
            continue
        for sw in wave:
            argv = [labmod.binary("roceswd"), "--config", cfgs[sw["id"]]]
            if use_bgp:  # `ip netns exec` execs: the process is roceswd itself
                argv = ["ip", "netns", "exec", bgp.netns_name(tag, sw)] + argv
            procs.start(sw["name"], argv, f"{sw['name']}.log")
            pending.remove(sw)
            started.append(sw)
    log(f"{len(sws)} switches starting")

    def running():
        return all(" running: " in open(path).read() and os.path.exists(ctl_sock[sw["id"]])
                   for sw, (_, _, path) in zip(sws, procs.procs))
    wait_for("the switches to run", running, 90, procs.procs)

    def fabric_up():
        for sw in sws:
            ports = ctl(ctl_sock[sw["id"]], "show", "ports")
            ports = ports.get("ports", ports) if isinstance(ports, dict) else ports
            for p in sw["ports"]:
                if nodes[p["peer"]]["kind"] == "switch" and not ports[p["port"]]["link"]["up"]:
                    return False
        return True
    wait_for("the fabric links (memif) to come up", fabric_up, 60, procs.procs)
    log(f"fabric up in {time.monotonic() - t0:.1f} s")
    write_scrape_config(out, {sw["name"]: ctl(ctl_sock[sw["id"]], "show", "info").get("prometheus_port")
                              for sw in sws},
                        {n: t.rsplit(":", 1)[0] for n, t in prom.items()},
                        {sw["name"]: bgp.netns_name(tag, sw) for sw in sws} if use_bgp else None)
    names = {sw["id"]: sw["name"] for sw in sws}
    by_name = {sw["name"]: ctl_sock[sw["id"]] for sw in sws}
    routing_info = {"routing": a.routing}
    if use_bgp:  # BIRD per switch; the workload waits for every session and every FIB
        confs, asn_of = bgp.bird_configs(lab, out, sws, mgmt=mgmt.MGMT_NET)
        bird_sock = {sw["name"]: os.path.join(work, f"{sw['name']}.bird") for sw in sws}
        for sw in sws:
            procs.start(f"{sw['name']}.bird", bgp.bird_argv(bgp.netns_name(tag, sw), confs[sw["id"]],
                                                            bird_sock[sw["name"]]),
                        f"{sw['name']}.bird.log")
        want = bgp.expected_routes(lab, {sw["id"]: sw["routes"] for sw in sws})
        fabric_ports = {sw["name"]: sum(nodes[p["peer"]]["kind"] == "switch" for p in sw["ports"])
                        for sw in sws}
        conv = bgp.wait_converged(ctl, bird_sock, by_name,
                                  {names[i]: r for i, r in want.items()}, fabric_ports, 60,
                                  lambda: check_alive("BGP", procs.procs))
        routing_info["bgp"] = dict(conv, asn={sw["name"]: asn_of[sw["id"]] for sw in sws},
                                   namespaces={sw["name"]: bgp.netns_name(tag, sw) for sw in sws},
                                   management=procs.mgmt.links,
                                   routes={names[i]: len(r) for i, r in want.items()})
        os.makedirs(os.path.join(out, "switches"), exist_ok=True)
        for sw in sws:  # what BGP installed, as the workload starts
            with open(os.path.join(out, "switches", f"{sw['name']}.routes.json"), "w") as f:
                json.dump({v: ctl(ctl_sock[sw["id"]], "show", v) for v in ("routes", "lb")}, f, indent=1)
        log(f"BGP: {conv['sessions']} sessions Established in {conv['established_s']:.1f} s, "
            f"every FIB converged in {conv['converged_s']:.1f} s")
    else:
        for sw in sws:  # the simulator's ECMP routes, as learned routes (rocectl call route_learn)
            learn_routes(ctl_sock[sw["id"]], sw["routes"])
    t_up = time.monotonic()  # routes in place: the set-up ends, the workload starts

    # --- hosts: one rocehost process
    hp = lab["hosts_profile"]
    mtu = pow2_mtu(hp["mtu"])
    rto_us = max(hp["rto_ns"] // 1000, MIN_RTO_US)
    until_ms = lab["until_ns"] // 1_000_000 if lab["until_ns"] else 0
    duration_ms = int(a.timeout * 1000) if not until_ms else until_ms + 1000
    hs = labmod.hosts(lab)
    hostname = {h["id"]: h["name"] for h in hs}
    y = ["# rocelab real engine: the hosts of " + lab["source"],
         "rocehost:",
         f"  name: {tag}",
         f"  mtu: {mtu}",
         f"  duration_ms: {duration_ms}",
         f"  start_delay_ms: {int(START_DELAY_S * 1000)}",
         "  linger_ms: 100",
         f"  out_dir: {json.dumps(os.path.join(out, 'hosts'))}",
         f"  ack_every: {hp['ack_every']}",
         f"  window: {hp['window']}",
         f"  rto_us: {rto_us}"]
    y += traffic_yaml(hp)
    if hp.get("dcqcn"):
        y.append("dcqcn: " + json.dumps(hp["dcqcn"]))
    y.append("hosts:")
    for i, h in enumerate(hs):
        p = h["ports"][0]
        y.append(f"  - name: {json.dumps(h['name'])}")
        y.append(f"    device: {json.dumps(memif(i, 'client', sock_of_link[p['link']]))}")
        y.append(f"    mac: {json.dumps(p['mac'])}")
        y.append(f"    ip: {h['ip']}")
        y.append(f"    gateway: {h['gateway']}")
        y.append(f"    gateway_mac: {json.dumps(h['gateway_mac'])}")
        y.append(f"    line_rate: {labmod.mbps(p['rate_bps'], h['name'])}M")
    y.append("workload:")
    y.append("  pattern: list")
    y.append("  flows:" if lab["flows"] else "  flows: []")
    for f in lab["flows"]:
        y.append(f"    - {{src: {json.dumps(hostname[f['src']])}, dst: {json.dumps(hostname[f['dst']])}, "
                 f"size: {f['size']}, start_ns: {f['start_ns']}{flow_class_yaml(f)}}}")
    # Host events: rocehost's faults (it applies them on the workload's clock itself).
    host_events = [e for e in lab["events"] if e["kind"] in ("pfc_storm", "slow_receiver")]
    if host_events:
        y.append("faults:")
    for e in host_events:
        iv = max(MIN_FAULT_INTERVAL_US, e["interval_ns"] // 1000)
        extra = f", xoff_bytes: {e['xoff_bytes']}" if e["kind"] == "slow_receiver" else ""
        y.append(f"  - {{host: {json.dumps(hostname[e['host']])}, {e['kind']}: "
                 f"{{at_us: {e['at_ns'] // 1000}, until_us: {max(e['until_ns'] // 1000, e['at_ns'] // 1000 + 1)}, "
                 f"priority: {e['priority']}, interval_us: {iv}{extra}}}}}")
    y += udp_flows_yaml(lab, hostname)
    y += jobs_yaml(lab, hostname)
    hcfg = os.path.join(out, "configs", "hosts.yaml")
    with open(hcfg, "w") as f:
        f.write("\n".join(y) + "\n")
    # Link events: at `at` both ends of the link stop sending (rocectl call port_link PORT
    # down|up: frames lost on it are counted as port_stopped drops); at at + convergence every
    # switch's routes move to the simulator's converged ones.
    actions = []
    # With BGP, no route move: the link going down reaches BIRD (its carrier) and BGP moves
    # the routes; the engine watches every FIB until it holds the event's routes.
    for e in lab["events"]:
        if e["kind"] in ("link_down", "link_up"):
            actions.append((e["at_ns"], 0, "link", e))
            if not use_bgp:
                actions.append((e["at_ns"] + e["convergence_ns"], 1, "routes", e))
    down_links = set()
    converging = []  # bgp.Converger per link event until every FIB holds its routes
    actions.sort(key=lambda x: (x[0], x[1]))
    skipped = []
    rh = procs.start("rocehost", [labmod.binary("rocehost"), "--config", hcfg,
                                  "--file-prefix", f"{tag}-hosts"], "rocehost.log")
    log(f"rocehost: {len(hs)} hosts, {len(lab['flows'])} flows, {len(lab['jobs'])} collective jobs")
    rh_log = procs.procs[-1][2]
    t_ref = None  # wall time of the workload's time 0 (rocehost's loop start + start delay)
    applied = []
    link_applied = {}  # id(event) -> its events_applied entry
    deadline = time.monotonic() + a.timeout + 30
    while rh.poll() is None:
        if t_ref is None and " running: " in open(rh_log).read():
            t_ref = time.monotonic() + START_DELAY_S
        while t_ref is not None and actions:
            at_ns, _, what, e = actions[0]
            due = t_ref + at_ns / 1e9
            if time.monotonic() < due:
                break
            pair = f"{nodes[e['a']]['name']}-{nodes[e['b']]['name']}"
            if what == "link":
                state = "down" if e["kind"] == "link_down" else "up"
                ln = next(l for i, l in enumerate(lab["links"]) if l.get("index", i) == e["link"])
                # Both ends at once, as a cable: with BGP each end's carrier follows, and the
                # kernel, shared by every switch here, handles a second carrier change up to
                # 1 s after the first (linkwatch), so the two must not trail each other.
                ctl_many([(ctl_sock[n], "call", "port_link", f"p{port}", state)
                          for n, port in ((ln["a"], ln["port_a"]), (ln["b"], ln["port_b"]))])
                late = time.monotonic() - due
                entry = {"kind": e["kind"], "link": e["link"], "at_ns": e["at_ns"],
                         "convergence_ns": e["convergence_ns"],
                         "link_set_at_ns": int((time.monotonic() - t_ref) * 1e9),
                         "link_late_us": int(late * 1e6)}
                link_applied[id(e)] = entry
                applied.append(entry)
                log(f"{e['kind']} {pair}: link set {state} {late * 1e3:.1f} ms after at")
                if use_bgp:
                    for c in [c for c in converging if c.entry["link"] == e["link"]]:
                        c.entry["bgp_superseded"] = True  # the link changed again first
                        converging.remove(c)
                    (down_links.add if state == "down" else down_links.discard)((e["a"], e["b"]))
                    after = {int(k): v for k, v in e["routes_after"].items()}
                    want = bgp.expected_routes(lab, after, down_links)
                    entry["bgp_converged"] = False
                    converging.append(bgp.Converger(ctl, by_name, {names[i]: r for i, r in want.items()},
                                                    entry, time.monotonic()))
            else:
                for sid in route_update_order(lab, e["routes_after"]):
                    learn_routes(ctl_sock[sid], e["routes_after"][str(sid)])
                late = time.monotonic() - due
                link_applied[id(e)].update({
                    "routes_moved_at_ns": int((time.monotonic() - t_ref) * 1e9),
                    "late_us": int(late * 1e6)})
                log(f"{e['kind']} {pair}: routes moved {late * 1e3:.1f} ms after at + convergence")
            actions.pop(0)
        for c in list(converging):
            if c.poll(time.monotonic()):
                now = time.monotonic()
                c.entry.update({"bgp_converged": True,
                                "routes_moved_at_ns": int((now - t_ref) * 1e9),
                                "convergence_us": int((now - c.t_set) * 1e6)})
                log(f"{c.entry['kind']}: every FIB holds BGP's new routes "
                    f"{(now - c.t_set) * 1e3:.0f} ms after the link was set")
                converging.remove(c)
        for name, p, path in procs.procs[:-1]:
            if p.poll() is not None:
                raise SystemExit(f"rocelab: {'BIRD of ' + name[:-5] if name.endswith('.bird') else 'switch ' + name} "
                                 f"exited ({p.returncode}) during the run; see {path}")
        if time.monotonic() > deadline:
            log("the workload did not finish in time: stopping rocehost (its results are kept)")
            rh.send_signal(signal.SIGTERM)
            rh.wait(timeout=30)
            break
        time.sleep(0.01 if actions or converging else 0.2)
    t_done = time.monotonic()

    # --- counters of every switch
    switches = {}
    os.makedirs(os.path.join(out, "switches"), exist_ok=True)
    accounting = collect_accounting({sw["name"]: ctl_sock[sw["id"]] for sw in sws})
    for sw in sws:
        s = ctl_sock[sw["id"]]
        views = {w: ctl(s, "show", *w.split()) for w in ("info", "ports", "drops", "workers", "pfc", "ecn")}
        views["accounting"] = accounting["per_switch"][sw["name"]]
        with open(os.path.join(out, "switches", f"{sw['name']}.json"), "w") as f:
            json.dump(views, f, indent=1)
        switches[sw["name"]] = switch_summary(sw, nodes, views)
    for name, qs in queue_classes({sw["name"]: ctl_sock[sw["id"]] for sw in sws}).items():
        switches[name]["queues"] = qs
    for name, lat in switch_latency({sw["id"]: (sw["name"], ctl_sock[sw["id"]]) for sw in sws},
                                    out).items():
        switches[name]["latency"] = lat
    if use_bgp:  # the sessions at the end (a link set down leaves its session down)
        routing_info["bgp"]["sessions_at_end"] = {
            n: bgp.sessions(bird_sock[n]) for n in bird_sock}
    if a.hold:
        hold(a.hold, out, procs)
    procs.stop()  # the switches' exit status is part of the result
    exits = {name: p.returncode for name, p, _ in procs.procs if not name.endswith(".bird")}
    if use_bgp:
        routing_info["bgp"]["bird_exit_status"] = {
            name[:-5]: p.returncode for name, p, _ in procs.procs if name.endswith(".bird")}
    # Events due after the workload ended; a link event counts as applied once its link was set.
    skipped += [e for _, _, what, e in actions if what == "link" or id(e) not in link_applied]
    return write_results(a, lab, out, switches, exits, skipped, applied, tag, work, accounting, {
        "start_s": round(t_up - t0, 2), "workload_s": round(t_done - t_up, 2),
        "total_s": round(time.monotonic() - t0, 2)}, mtu, rto_us, routing_info)


def collect_accounting(socks, settle_s=5.0):
    """Every switch's accounting identity (rocectl show accounting, doc/accounting.md), once the
    workload is over: a worker's burst in flight shows as a difference for an instant, so each
    switch is read again (every 0.2 s, up to settle_s) until balanced. The summary's keys are
    rocesim's (switches, balanced, verdict) plus each switch's verdict and totals."""
    per, deadline = {}, time.monotonic() + settle_s
    for name, sock in socks.items():
        while True:
            per[name] = ctl(sock, "show", "accounting")
            if per[name].get("verdict") == "balanced" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    bad = [f"{n}: {v.get('verdict')}" for n, v in per.items() if v.get("verdict") != "balanced"]
    return {"switches": len(per), "balanced": len(per) - len(bad),
            "verdict": "balanced" if not bad else "unbalanced: " + "; ".join(bad),
            "per_switch": per}


def trace_path(out, sw):
    return os.path.join(out, "switches", f"{sw['name']}.trace.csv")


def trace_interval_ms(lab, timeout_s):
    """The switches' trace sample period (ms): the scenario's sample_interval rounded up, at
    least TRACE_MIN_INTERVAL_MS and at most TRACE_INTERVAL_MS, and coarse enough that a run of
    `timeout_s` writes at most TRACE_MAX_ROUNDS sample rounds."""
    ns = lab.get("sample_interval_ns") or 0
    if not ns:
        return TRACE_INTERVAL_MS
    ms = max(-(-ns // 1_000_000), TRACE_MIN_INTERVAL_MS,
             -(-int(timeout_s * 1000) // TRACE_MAX_ROUNDS))
    return min(ms, TRACE_INTERVAL_MS)


def trace_events(lab, out, switches, t0_monotonic_ns, events):
    """The `events` (trace event names) of every switch's event trace, on the scenario's clock:
    (event, time_ns, switch node, port index, id, value). `switches`: switch_summary()s, whose
    `clock_offset_ns` maps the switch clock (the trace's time_ns) onto CLOCK_MONOTONIC;
    t0_monotonic_ns: the scenario's time 0 on it."""
    for sw in labmod.switches(lab):
        s = switches.get(sw["name"], {})
        path = trace_path(out, sw)
        if s.get("clock_offset_ns") is None or not os.path.exists(path):
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["event"] in events:
                    yield (r["event"], int(r["time_ns"]) + s["clock_offset_ns"] - t0_monotonic_ns,
                           sw["id"], int(r["port"].lstrip("p")), int(r["id"]), int(r["value"]))


def switch_pfc_events(lab, out, switches, t0_monotonic_ns):
    """The PFC frames every switch sent (trace events pfc_xoff_sent, pfc_xon_sent) as
    pfc_events.csv rows: (time_ns, node, port, priority, event, quanta)."""
    return sorted((t, n, p, prio, "xoff" if q else "xon", q) for _, t, n, p, prio, q in
                  trace_events(lab, out, switches, t0_monotonic_ns,
                               ("pfc_xoff_sent", "pfc_xon_sent")))


def switch_queue_depth(lab, out, switches, t0_monotonic_ns, end_ns):
    """queue_depth.csv's rows as rocesim writes them (time_ns, node, port, queue, depth_bytes,
    depth_packets; non-empty queues only), from the switches' trace samples (queue_bytes,
    queue_packets: one of each per queue and round) within the run, [0, end_ns] of the
    scenario's clock (end_ns 0: no end). Empty without sample_interval (rocesim writes none)."""
    if not lab.get("sample_interval_ns"):
        return []
    depth = {}
    for ev, t, n, p, q, v in trace_events(lab, out, switches, t0_monotonic_ns,
                                          ("queue_bytes", "queue_packets")):
        if t < 0 or (end_ns and t > end_ns):
            continue
        depth.setdefault((t, n, p, q), [0, 0])[ev == "queue_packets"] = v
    return sorted(k + tuple(v) for k, v in depth.items() if v[0] or v[1])


def route_update_order(lab, routes_after):
    """The switches whose routes a link event moves (--routing static), in an order that forms
    no transient loop (ordered FIB updates, RFC 6976): a switch is updated after every switch
    its new routes forward to. The new routes are shortest paths, so per destination they form
    a loop-free graph (an edge only where the next switch routes the same prefix: the last hop,
    whose prefix is its own, adds none); a packet then follows old routes until it meets a
    switch with new ones, and new ones from there on. Updated in the order of the lab's switches, a restored link
    looped leaf1 -> spine0 -> leaf1 (leaf1 already sending to spine0, spine0 still sending via
    leaf1), and PFC froze the loop into a deadlock that outlived it. A cycle over all
    destinations together (not one of the library's fabrics) keeps the lab's order for the
    switches on it."""
    peer = {}
    for ln in lab["links"]:
        peer[(ln["a"], ln["port_a"])] = ln["b"]
        peer[(ln["b"], ln["port_b"])] = ln["a"]
    ids = sorted(int(k) for k in routes_after)
    routed = {sid: {r["prefix"] for r in routes_after[str(sid)]} for sid in ids}
    after = {}  # switch -> the switches its new routes forward to (for the same prefix)
    for sid in ids:
        after[sid] = {peer.get((sid, h["port"])) for r in routes_after[str(sid)]
                      for h in r["next_hops"]
                      if r["prefix"] in routed.get(peer.get((sid, h["port"])), ())} - {sid}
    order, left = [], list(ids)
    while left:
        ready = [sid for sid in left if after[sid] <= set(order)]
        for sid in ready or left[:1]:
            order.append(sid)
            left.remove(sid)
    return order


def learn_routes(sock, routes):
    """Sets a switch's routes (rocectl call route_learn): PREFIX PORT:VIA ... per route; a
    route without next hops is withdrawn."""
    args = []
    for r in routes:
        args.append(r["prefix"])
        args.extend(f"p{h['port']}:{h['via']}" for h in r["next_hops"])
    if args:
        res = ctl(sock, "call", "route_learn", *args)
        if res.get("refused"):
            raise SystemExit(f"rocelab: {sock}: the FIB refused {res['refused']} routes")


def write_scrape_config(out, ports, addresses=None, netns=None):
    """OUT/prometheus.yml: every switch of the running lab (ports picked at start-up) at its
    exporter's address (`addresses`, default 127.0.0.1), with a `switch` label, for a
    Prometheus in the root namespace (with BGP routing the addresses are the switches'
    management addresses; `netns` names each switch's namespace in a comment)."""
    with open(os.path.join(out, "prometheus.yml"), "w") as f:
        f.write("# Scrape config for the switches of this rocelab run (valid while it runs).\n")
        if netns:
            f.write("# BGP routing: each exporter listens on its switch's management address\n"
                    f"# ({mgmt.NS_IFNAME} in the switch's namespace, a veth to the root namespace).\n")
        f.write("scrape_configs:\n  - job_name: rocelab\n    scrape_interval: 1s\n"
                "    static_configs:\n")
        for name, port in ports.items():
            if port:
                f.write(f"      - targets: [\"{(addresses or {}).get(name, '127.0.0.1')}:{port}\"]\n"
                        f"        labels: {{switch: \"{name}\"}}"
                        + (f"   # namespace {netns[name]}" if netns else "") + "\n")


def hold(seconds, out, procs):
    """--hold: the lab stays up for `seconds` (or until a process exits) once its counters are
    collected; Ctrl-C, SIGTERM or SIGHUP ends the hold early and the run goes on to its end."""
    log(f"holding the lab for {seconds:g} s (scrape config: {os.path.join(out, 'prometheus.yml')}; "
        "Ctrl-C ends the hold)")
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and all(p.poll() is None for name, p, _ in procs.procs
                                                  if name != "rocehost"):
            time.sleep(0.2)
    except Interrupted as e:
        log(f"{e}: hold ended")
    else:
        log("hold over")


def switch_summary(sw, nodes, v):
    ports = v["ports"].get("ports", v["ports"]) if isinstance(v["ports"], dict) else v["ports"]
    pfc = v["pfc"]
    per_port = []
    lost = {}  # frames an administratively down link took (port_link down): port_stopped
    for d in v["drops"].get("drops", []):
        if d["reason"] == "port_stopped":
            lost[d["port"]] = lost.get(d["port"], 0) + d.get("packets", 0)
    pfc_port = {x["port"]: x for x in pfc.get("ports", [])} if isinstance(pfc, dict) else {}
    for p in sw["ports"]:
        c = ports[p["port"]]
        pp = pfc_port.get(f"p{p['port']}", {})
        lossless = [x for x in pp.get("priorities", []) if x.get("lossless")]
        per_port.append({"port": p["port"], "peer": nodes[p["peer"]]["name"],
                         "rx_packets": c.get("rx_packets", 0), "tx_packets": c.get("tx_packets", 0),
                         "rx_bytes": c.get("rx_bytes", 0), "tx_bytes": c.get("tx_bytes", 0),
                         "link_lost": lost.get(f"p{p['port']}", 0),
                         "link_changes": c.get("link", {}).get("changes", 0),
                         # PFC on the port's lossless priorities: XOFF/XON this switch sent to
                         # the peer and how long it held it; what the peer sent and how long it
                         # held this port; the watchdog's storms on its queues
                         "pfc_xoff_tx": sum(x["tx_pause"] for x in lossless),
                         "pfc_xon_tx": sum(x["tx_xon"] for x in lossless),
                         "pfc_pausing_us": sum(x["tx_pause_us"] for x in lossless),
                         "pfc_pause_rx": sum(x["rx_pause"] for x in lossless),
                         "pfc_paused_us": sum(x["rx_pause_us"] for x in lossless),
                         "pfc_paused_now": any(x["rx_paused_now"] for x in lossless),
                         "watchdog_storms": sum(q["storms"] for q in
                                                pp.get("watchdog", {}).get("queues", []))})
    workers = v["workers"].get("workers", [])
    gaps = [w.get("poll_gaps", {}) for w in workers]
    drops_by_reason = {}
    for d in v["drops"].get("drops", []):
        drops_by_reason[d["reason"]] = drops_by_reason.get(d["reason"], 0) + d.get("packets", 0)
    acc = v.get("accounting") or {}
    clock = v["info"].get("clock") or {}
    return {"node": sw["id"], "ports": per_port, "accounting": acc.get("verdict"),
            # CLOCK_MONOTONIC - switch clock (the trace's time_ns): null from a roceswd without
            # `clock` in its info view
            "clock_offset_ns": (clock["monotonic_ns"] - clock["now_ns"]) if clock else None,
            "drops": v["drops"].get("total", 0), "drops_by_reason": drops_by_reason,
            "pfc": pfc_totals(pfc), "ecn_marked": ecn_total(v["ecn"]),
            "poll_gaps": {"max_us": max([g.get("max_us", 0) for g in gaps] or [0]),
                          "over_100us": sum(g.get("over_100us", 0) for g in gaps),
                          "over_1ms": sum(g.get("over_1ms", 0) for g in gaps)},
            "prometheus_port": v["info"].get("prometheus_port")}


def _sum_keys(x, keys):
    """Sum of every integer under one of `keys`, anywhere in a JSON tree."""
    if isinstance(x, dict):
        return sum((v if k in keys and isinstance(v, int) else _sum_keys(v, keys)) for k, v in x.items())
    if isinstance(x, list):
        return sum(_sum_keys(v, keys) for v in x)
    return 0


def pfc_totals(pfc):
    return {"pause_rx": _sum_keys(pfc, {"pause_rx", "rx_pause", "pauses_rx", "xoff_rx"}),
            "pause_tx": _sum_keys(pfc, {"pause_tx", "tx_pause", "pauses_tx", "xoff_tx"}),
            "xon_tx": _sum_keys(pfc, {"tx_xon"}),
            "watchdog_storms": _sum_keys(pfc, {"storms"}),
            "watchdog_restores": _sum_keys(pfc, {"restores"})}


def ecn_total(ecn):
    return _sum_keys(ecn, {"ce_marked", "marked", "ecn_marked"})


def drops_by_reason(switches):
    out = {}
    for x in switches.values():
        for reason, n in x["drops_by_reason"].items():
            out[reason] = out.get(reason, 0) + n
    return out


def scenario_ns(t_ns):
    """rocehost's time (since its loop started) on the scenario's clock (0 = the workload's
    start, START_DELAY_S later)."""
    return int(t_ns) - int(START_DELAY_S * 1e9)


def host_events_applied(lab, hsum):
    """The host events rocehost applied (its faults), with the PFC frames each host's NIC sent
    and the frames a slow receiver held."""
    by_name = {h.get("name"): h for h in hsum.get("hosts", [])}
    nodes = render.node_by_id(lab)
    out = []
    for e in lab["events"]:
        if e["kind"] not in ("pfc_storm", "slow_receiver"):
            continue
        h = by_name.get(nodes[e["host"]]["name"], {})
        out.append({"kind": e["kind"], "host": nodes[e["host"]]["name"], "at_ns": e["at_ns"],
                    "until_ns": e["until_ns"], "priority": e["priority"],
                    "interval_us": max(MIN_FAULT_INTERVAL_US, e["interval_ns"] // 1000),
                    "pfc_xoff_tx": h.get("pfc_xoff_tx", 0), "pfc_xon_tx": h.get("pfc_xon_tx", 0),
                    "storm_frames": h.get("storm_frames", 0),
                    "storm_frames_skipped": h.get("storm_frames_skipped", 0),
                    "held_frames": h.get("held_frames", 0),
                    "held_max_bytes": h.get("held_max_bytes", 0)})
    return out


def host_event_totals(host_applied):
    """rocesim's `host_events` totals from rocehost's: `storm_frames` (XOFF and the closing XON
    the storms sent; rocesim sends its whole schedule) and `storm_frames_skipped` (frames the
    schedule owed after a loop stall beyond a storm's catch-up bound, not sent)."""
    storms = [e for e in host_applied if e["kind"] == "pfc_storm"]
    if not storms:
        return {}
    return {"host_events": {"storm_frames": sum(e["storm_frames"] for e in storms),
                            "storm_frames_skipped": sum(e["storm_frames_skipped"] for e in storms)}}


def write_links(lab, out, switches, applied):
    """OUT/links.csv in rocesim's columns, from the switches' port counters: a direction's
    frames and bytes are what the switch at its start sent, or (host to switch) what the switch
    at its end received; `lost` what a switch dropped on it while it was set down (memif itself
    loses nothing); `up` its state at the end."""
    up = {}
    for e in applied:
        if e["kind"] in ("link_down", "link_up"):
            up[e["link"]] = e["kind"] == "link_up"
    ports = {(x["node"], p["port"]): p for x in switches.values() for p in x["ports"]}

    def direction(a, pa, b, pb):
        if (a, pa) in ports:
            p = ports[(a, pa)]
            return p["tx_packets"], p["tx_bytes"], p["link_lost"]
        if (b, pb) in ports:
            return ports[(b, pb)]["rx_packets"], ports[(b, pb)]["rx_bytes"], 0
        return 0, 0, 0
    with open(os.path.join(out, "links.csv"), "w") as f:
        f.write("link,node_a,port_a,node_b,port_b,rate_bps,delay_ns,up,frames_ab,bytes_ab,lost_ab,"
                "frames_ba,bytes_ba,lost_ba\n")
        for i, l in enumerate(lab["links"]):
            ab = direction(l["a"], l["port_a"], l["b"], l["port_b"])
            ba = direction(l["b"], l["port_b"], l["a"], l["port_a"])
            f.write(f"{l.get('index', i)},{l['a']},{l['port_a']},{l['b']},{l['port_b']},"
                    f"{l['rate_bps']},{l['delay_ps'] // 1000},{int(up.get(i, 1))},"
                    f"{ab[0]},{ab[1]},{ab[2]},{ba[0]},{ba[1]},{ba[2]}\n")


def write_results(a, lab, out, switches, exits, skipped, applied, tag, work, accounting, timing,
                  mtu, rto_us, routing_info):
    hosts_dir = os.path.join(out, "hosts")
    hsum = {}
    p = os.path.join(hosts_dir, "summary.json")
    if os.path.exists(p):
        with open(p) as f:
            hsum = json.load(f)
    rows = []
    fp = os.path.join(hosts_dir, "flows.csv")
    if os.path.exists(fp):
        with open(fp) as f:
            rows = list(csv.DictReader(f))
    nodes = render.node_by_id(lab)
    # The lab's flows by rocehost's id, then the flows rocehost added for collective jobs.
    flow_of = dict(enumerate(lab["flows"]))
    flow_of.update(job_flow_table(lab, hosts_dir, rows))
    # fct.txt as rocesim writes it: one line per completed flow in completion order, the
    # lab's (scenario's) start time, HPCC's source port and standalone FCT.
    done = [r for r in rows if r.get("completed") in ("1", "true", "True")]
    done.sort(key=lambda r: int(r["finish_ns"]))
    with open(os.path.join(out, "fct.txt"), "w") as f:
        for r in done:
            fl = flow_of[int(r["flow"])]
            f.write("%s %s %u %u %u %u %u %u\n" % (
                nodes[fl["src"]]["address_hex"], nodes[fl["dst"]]["address_hex"], fl["sport"],
                fl["dport"], fl["size"], fl["start_ns"], int(r["fct_ns"]), fl["standalone_fct_ns"]))
    # PFC frames the hosts received (rocehost's pauses.csv): the switch port that sent them; on
    # the scenario's clock, as rocesim writes them.
    pp = os.path.join(hosts_dir, "pauses.csv")
    host_by_name = {n["name"]: n for n in labmod.hosts(lab)}
    t0 = hsum.get("clock_monotonic_start_ns")
    sw_events = (switch_pfc_events(lab, out, switches, t0 + int(START_DELAY_S * 1e9))
                 if t0 else [])
    with open(os.path.join(out, "pfc_events.csv"), "w") as f:
        f.write("time_ns,node,port,priority,event,quanta\n")
        # Every PFC frame the switches sent, from their traces, with their own times; without
        # traces, the ones the hosts received (rocehost's pauses.csv), as their switch's.
        for row in sw_events:
            f.write(",".join(str(x) for x in row) + "\n")
        if os.path.exists(pp) and not sw_events:
            with open(pp) as g:
                for r in csv.DictReader(g):
                    h = host_by_name.get(r["host"])
                    if not h:
                        continue
                    q = int(r["quanta"])
                    f.write(f"{scenario_ns(r['t_ns'])},{h['switch']},{h['switch_port']},"
                            f"{r['priority']},{'xoff' if q else 'xon'},{q}\n")
        # PFC frames the hosts' NICs sent (faults): the host's port 0, as rocesim writes them.
        sp = os.path.join(hosts_dir, "pfc_sent.csv")
        if os.path.exists(sp):
            with open(sp) as g:
                for r in csv.DictReader(g):
                    h = host_by_name.get(r["host"])
                    if h:
                        q = int(r["quanta"])
                        f.write(f"{scenario_ns(r['t_ns'])},{h['id']},0,{r['priority']},"
                                f"{'xoff' if q else 'xon'},{q}\n")
    write_links(lab, out, switches, applied)
    # The run's end: the last completion, or when rocehost stopped if a flow did not complete.
    run_ns = (max((fl["start_ns"] + int(r["fct_ns"]) for fl, r in
                   ((flow_of[int(r["flow"])], r) for r in done)), default=0)
              if len(done) == len(flow_of) else max(0, scenario_ns(hsum.get("run_ns", 0))))
    # Queue depth per hop: the switches' trace samples, on the scenario's clock (rocesim's file).
    with open(os.path.join(out, "queue_depth.csv"), "w") as f:
        f.write("time_ns,node,port,queue,depth_bytes,depth_packets\n")
        if t0:
            for row in switch_queue_depth(lab, out, switches, t0 + int(START_DELAY_S * 1e9), run_ns):
                f.write(",".join(str(x) for x in row) + "\n")
    loop = hsum.get("loop_gaps", {})
    reasons = []
    if loop.get("over_1ms", 0) or loop.get("max_us", 0) > DISTORTION_GAP_US:
        reasons.append(f"rocehost's polling loop stalled: longest gap {loop.get('max_us', 0):.0f} us, "
                       f"{loop.get('over_1ms', 0)} gaps > 1 ms")
    for name, s in switches.items():
        g = s["poll_gaps"]
        if g["over_1ms"] or g["max_us"] > DISTORTION_GAP_US:
            reasons.append(f"switch {name}'s worker stalled while forwarding: longest gap "
                           f"{g['max_us']:.0f} us, {g['over_1ms']} gaps > 1 ms")
    host_applied = host_events_applied(lab, hsum)
    summary = {
        "engine": "real",
        "scenario": lab["source"],
        "tag": tag,          # prefix of every process name, file prefix and the work directory
        "work_dir": work,
        "flows": len(flow_of),
        "completed": len(done),
        "distorted": bool(reasons),
        "distortion": {"reasons": reasons, "threshold_us": DISTORTION_GAP_US,
                       "rocehost_loop_gaps": loop,
                       "switch_poll_gaps": {n: s["poll_gaps"] for n, s in switches.items()}},
        "switches": switches,
        "switch_exit_status": exits,
        "roce": {k: hsum.get(k) for k in ("flows_completed", "retransmitted_packets", "receiver",
                                          "jain_throughput") if k in hsum},
        # rocesim's keys, so that the report and the comparison read either engine
        "run_ns": run_ns,
        "pfc_frames": sum(x["pfc"]["pause_tx"] + x["pfc"]["xon_tx"] for x in switches.values()),
        "switch_drops": {r: n for r, n in drops_by_reason(switches).items() if r != "port_stopped"},
        "switch_totals": {
            "ecn_marked": sum(x["ecn_marked"] for x in switches.values()),
            "pfc_xoff_sent": sum(x["pfc"]["pause_tx"] for x in switches.values()),
            "pfc_xon_sent": sum(x["pfc"]["xon_tx"] for x in switches.values()),
            "watchdog_storms": sum(x["pfc"]["watchdog_storms"] for x in switches.values()),
            "watchdog_restores": sum(x["pfc"]["watchdog_restores"] for x in switches.values())},
        "events_applied": applied + host_applied,
        **host_event_totals(host_applied),
        **udp_results(lab, out, hosts_dir, hsum),
        # rocesim's split: what a down link took is a link loss (the switches count it as
        # port_stopped, kept per switch in `switches`), not a switch drop.
        "link_drops": {"link_down": sum(p["link_lost"] for x in switches.values() for p in x["ports"]),
                       "lost_in_flight": 0, "error": 0},
        "accounting": {k: v for k, v in accounting.items() if k != "per_switch"},
        "events_not_applied": [{k: v for k, v in e.items() if k != "routes_after"} for e in skipped],
        "real_engine": {"roce_mtu": mtu, "rto_us": rto_us,
                        "fault_min_interval_us": MIN_FAULT_INTERVAL_US,
                        "trace_interval_ms": trace_interval_ms(lab, a.timeout),
                        "note": "RoCE path MTU rounded up to a power of two; go-back-N timeout at "
                                "least MIN_RTO_US (scheduling stalls of a shared machine); host "
                                "faults send a PFC frame at most every MIN_FAULT_INTERVAL_US"},
        "wall_time": timing,
        # static, or bgp with its sessions, ASNs and convergence (doc/rocelab.md, "Routing")
        **routing_info,
    }
    hosts_list = hsum.get("hosts", [])
    copy_jobs_results(out, hosts_dir, hsum, summary)
    summary["roce"].update({"flows": len(flow_of), "completed": len(done),
                            "cnps_sent": sum(h.get("cnps_tx", 0) for h in hosts_list),
                            "naks": sum(h.get("naks_rx", 0) for h in hosts_list)})
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    if accounting["verdict"] != "balanced":
        log(f"accounting identity: {accounting['verdict']}")
    jobs_ok = jobs_complete(lab, summary)
    print(f"rocelab: {len(done)}/{len(flow_of)} flows completed in {timing['workload_s']} s "
          f"(set-up {timing['start_s']} s); {'DISTORTED: ' + '; '.join(reasons) if reasons else 'not distorted'}")
    print(f"rocelab: results in {out} (fct.txt, hosts/flows.csv, pfc_events.csv, queue_depth.csv, "
          f"summary.json)")
    return 0 if len(done) == len(flow_of) and jobs_ok else 1
