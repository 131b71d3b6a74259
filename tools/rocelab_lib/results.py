"""Reads one run's result directory, written by either engine (doc/rocelab.md, "Result files").

Every file is optional except summary.json; a missing file reads as empty, so a report or a
comparison works on whatever an engine wrote. Times are ns, sizes bytes, rates bit/s.

    summary.json        run totals (rocesim's keys; `switches`, `roce`, `link_drops`, ...)
    topology.txt        HPCC topology (nodes, switch ids, links): names and the fabric diagram
    fct.txt             HPCC fct lines: sip dip sport dport size start_ns fct_ns standalone_ns
    hosts/flows.csv     rocehost's per-flow table (src, dst names)
    hosts/flow_bytes.csv  per-flow cumulative bytes over time (per-flow rates)
    pfc_events.csv      time_ns,node,port,priority,event,quanta (every PFC frame put on a wire)
    queue_depth.csv     time_ns,node,port,queue,depth_bytes,depth_packets
    port_samples.csv    time_ns,node,port,tx_frames,tx_bytes,ecn_marked,drops,paused_queues,
                        wd_stormed (cumulative counters; a row when one changed)
    links.csv           per link: ends, rate, delay, up, per direction frames/bytes/lost
    jobs.csv            per collective job and iteration: start, end, duration
    switch_latency.csv  node,tc,packets,p50_ns,p99_ns,p999_ns,max_ns,mean_ns: each switch's
                        time per class (rocesim: virtual time; real: roceswd's RX to TX)
    rocelab.json        what rocelab ran: scenario, engine, seed, wall time
"""
import collections
import csv
import json
import os

# FCT size bins: rocehost's buckets (lib/roce/host_results.cc), so both tables agree.
SIZE_BINS = [
    ("<10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    ("1MB-10MB", 1_000_000, 10_000_000),
    (">=10MB", 10_000_000, None),
]

PAUSE_QUANTUM_BITS = 512


def _csv_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _num(v):
    try:
        return int(v)
    except ValueError:
        return float(v)


def median(xs):
    xs = sorted(xs)
    if not xs:
        return 0.0
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def percentile(xs, p):
    """Nearest-rank percentile (p in 0..100)."""
    xs = sorted(xs)
    if not xs:
        return 0.0
    k = max(0, min(len(xs) - 1, -(-len(xs) * p // 100) - 1))
    return xs[int(k)]


class Topology:
    """HPCC topology.txt: hosts are the nodes that are not switches."""

    def __init__(self, nodes=0, switches=(), links=()):
        self.nodes = nodes
        self.switches = set(switches)
        self.links = list(links)  # (a, b, rate_bps)

    @classmethod
    def read(cls, path):
        if not os.path.exists(path):
            return cls()
        words = open(path).read().split()
        n, s, l = int(words[0]), int(words[1]), int(words[2])
        sw = [int(w) for w in words[3:3 + s]]
        links = []
        i = 3 + s
        for _ in range(l):
            a, b = int(words[i]), int(words[i + 1])
            links.append((a, b, words[i + 2]))
            i += 5
        return cls(n, sw, links)

    def is_switch(self, n):
        return n in self.switches

    def hosts(self):
        return [n for n in range(self.nodes) if n not in self.switches]

    def layers(self):
        """Layer per node: hosts 0, switches by hop distance from the nearest host (leaf 1,
        spine 2, ...)."""
        adj = collections.defaultdict(list)
        for a, b, _ in self.links:
            adj[a].append(b)
            adj[b].append(a)
        layer = {h: 0 for h in self.hosts()}
        frontier = list(layer)
        while frontier:
            nxt = []
            for n in frontier:
                for m in adj[n]:
                    if m not in layer:
                        layer[m] = layer[n] + 1
                        nxt.append(m)
            frontier = nxt
        for n in range(self.nodes):
            layer.setdefault(n, 1)
        return layer

    def name(self, n):
        if not self.nodes:
            return str(n)
        return ("sw%d" if n in self.switches else "h%d") % n


class Results:
    def __init__(self, path):
        self.path = path
        sp = os.path.join(path, "summary.json")
        if not os.path.exists(sp):
            raise FileNotFoundError("%s: no summary.json (not a result directory)" % path)
        with open(sp) as f:
            self.summary = json.load(f)
        meta = os.path.join(path, "rocelab.json")
        self.meta = json.load(open(meta)) if os.path.exists(meta) else {}
        self.topo = Topology.read(os.path.join(path, "topology.txt"))
        self.fct = self._read_fct()
        self.flows = _csv_rows(os.path.join(path, "hosts", "flows.csv"))
        self.flow_bytes = _csv_rows(os.path.join(path, "hosts", "flow_bytes.csv"))
        self.pfc = [
            (int(r["time_ns"]), int(r["node"]), int(r["port"]), int(r["priority"]),
             r["event"], int(r["quanta"]))
            for r in _csv_rows(os.path.join(path, "pfc_events.csv"))
        ]
        self.queues = [
            (int(r["time_ns"]), int(r["node"]), int(r["port"]), int(r["queue"]),
             int(r["depth_bytes"]))
            for r in _csv_rows(os.path.join(path, "queue_depth.csv"))
        ]
        self.port_samples = [
            {k: int(v) for k, v in r.items()}
            for r in _csv_rows(os.path.join(path, "port_samples.csv"))
        ]
        self.links = [{k: int(v) for k, v in r.items()}
                      for r in _csv_rows(os.path.join(path, "links.csv"))]
        self.jobs = _csv_rows(os.path.join(path, "jobs.csv"))
        self.switch_latency = [{k: int(v) for k, v in r.items()}
                               for r in _csv_rows(os.path.join(path, "switch_latency.csv"))]

    def _read_fct(self):
        p = os.path.join(self.path, "fct.txt")
        out = []
        if not os.path.exists(p):
            return out
        for line in open(p):
            w = line.split()
            if len(w) < 8:
                continue
            out.append({"sip": int(w[0], 16), "dip": int(w[1], 16), "sport": int(w[2]),
                        "dport": int(w[3]), "size": int(w[4]), "start_ns": int(w[5]),
                        "fct_ns": int(w[6]), "ideal_ns": int(w[7])})
        return out

    # ---- totals -------------------------------------------------------------------------
    def duration_ns(self):
        return int(self.summary.get("simulated_time_ns") or self.summary.get("run_ns") or 0)

    def totals(self):
        """The run's headline counters, the same keys for either engine."""
        s = self.summary
        sw = s.get("switch_totals") or s.get("switches", {})  # the real engine's, rocesim's
        roce = s.get("roce", {})
        ld = s.get("link_drops", {})
        return {
            "flows": roce.get("flows", len(self.fct)),
            "flows_completed": roce.get("completed", len(self.fct)),
            "pfc_frames": s.get("pfc_frames", len(self.pfc)),
            "pfc_xoff_by_switches": sw.get("pfc_xoff_sent", 0),
            "ecn_marks": sw.get("ecn_marked", 0),
            "cnps": roce.get("cnps_sent", 0),
            "switch_drops": sum(s.get("switch_drops", {}).values()),
            "link_drops": sum(ld.values()) if isinstance(ld, dict) else int(ld or 0),
            "watchdog_storms": sw.get("watchdog_storms", 0),
            "watchdog_restores": sw.get("watchdog_restores", 0),
            "naks": roce.get("naks", 0),
            # PFC frames the hosts' storms sent (rocesim: its whole schedule; the real engine:
            # what rocehost sent, storm_frames_skipped the rest after loop stalls)
            "storm_frames": s.get("host_events", {}).get("storm_frames", 0),
            # UDP flows (udp_flows): frames sent and received, the same key in both engines
            "udp_flows": s.get("udp", {}).get("flows", 0),
            "udp_sent": s.get("udp", {}).get("sent", 0),
            "udp_received": s.get("udp", {}).get("received", 0),
        }

    # ---- FCT ----------------------------------------------------------------------------
    def slowdowns(self):
        return [(f["size"], f["fct_ns"] / f["ideal_ns"] if f["ideal_ns"] else 0.0,
                 f["fct_ns"]) for f in self.fct]

    def fct_bins(self):
        """Per size bin: flows, median FCT (us), median and p99 slowdown."""
        out = []
        sd = self.slowdowns()
        for label, lo, hi in SIZE_BINS:
            xs = [x for x in sd if x[0] >= lo and (hi is None or x[0] < hi)]
            out.append({"bin": label, "flows": len(xs),
                        "median_fct_us": median([x[2] for x in xs]) / 1000,
                        "median_slowdown": median([x[1] for x in xs]),
                        "p99_slowdown": percentile([x[1] for x in xs], 99)})
        return out

    def fct_of(self, src, dst):
        """FCT (ns) of the flows from host `src` to host `dst` (node ids)."""
        return [f["fct_ns"] for f in self.fct
                if f["sip"] == host_address(src) and f["dip"] == host_address(dst)]

    # ---- links --------------------------------------------------------------------------
    def link_rate(self, node, port):
        for l in self.links:
            if (l["node_a"], l["port_a"]) == (node, port) or (l["node_b"], l["port_b"]) == (
                    node, port):
                return l["rate_bps"]
        return 0

    def peer(self, node, port):
        for l in self.links:
            if (l["node_a"], l["port_a"]) == (node, port):
                return l["node_b"]
            if (l["node_b"], l["port_b"]) == (node, port):
                return l["node_a"]
        return None

    def link_loads(self):
        """Per link and direction: mean utilisation over the run (frame bytes + 24 of
        preamble/IFG/FCS... as on the wire) and lost frames."""
        dur = self.duration_ns()
        out = []
        for l in self.links:
            for d, (src, dst) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
                frames, nbytes = l["frames_" + d], l["bytes_" + d]
                bits = (nbytes + 24 * frames) * 8
                util = bits / (l["rate_bps"] * dur / 1e9) if dur and l["rate_bps"] else 0.0
                out.append({"link": l["link"], "from": l["node_" + src], "to": l["node_" + dst],
                            "frames": frames, "bytes": nbytes, "lost": l["lost_" + d],
                            "util": util, "up": l["up"]})
        return out

    def port_series(self, field):
        """{(node, port): ([t_ns], [cumulative value])} on the common sample grid (every
        sample time of port_samples.csv; a port without a row at a time kept its value)."""
        grid = sorted({r["time_ns"] for r in self.port_samples})
        rows = collections.defaultdict(dict)
        for r in self.port_samples:
            rows[(r["node"], r["port"])][r["time_ns"]] = r[field]
        out = {}
        for k, byt in rows.items():
            v, vs = 0, []
            for t in grid:
                v = byt.get(t, v)
                vs.append(v)
            out[k] = (grid, vs)
        return out

    def port_rates(self, field):
        """{(node, port): ([t_ns], [increase of `field` per ns over the interval ending at
        t])} from port_series."""
        out = {}
        for k, (ts, vs) in self.port_series(field).items():
            xs, ys = [], []
            for i in range(1, len(ts)):
                dt = ts[i] - ts[i - 1]
                if dt > 0:
                    xs.append(ts[i])
                    ys.append((vs[i] - vs[i - 1]) / dt)
            out[k] = (xs, ys)
        return out

    def imbalance(self, node_ports=None):
        """Max/mean - 1 of the bytes sent on the given (node, port)s (0: perfectly even);
        default: the uplinks of the leaf that sent the most over its uplinks. From the last
        port sample, or links.csv's bytes per direction (the real engine samples no ports)."""
        last = {}
        for r in self.port_samples:
            last[(r["node"], r["port"])] = r["tx_bytes"]
        if not self.port_samples:
            for l in self.links:
                last[(l["node_a"], l["port_a"])] = l["bytes_ab"]
                last[(l["node_b"], l["port_b"])] = l["bytes_ba"]
        if node_ports is None:
            layer = self.topo.layers()
            by = collections.defaultdict(list)
            for n, p in self.uplinks():
                if layer[n] == 1:
                    by[n].append((n, p))
            node_ports = max(by.values(), key=lambda ps: sum(last.get(x, 0) for x in ps),
                             default=[])
        xs = [last.get(np, 0) for np in node_ports]
        if not xs or not sum(xs):
            return 0.0
        return max(xs) / (sum(xs) / len(xs)) - 1

    def uplinks(self):
        """(node, port) of every switch port whose peer is a switch in a higher layer."""
        layer = self.topo.layers()
        out = []
        for l in self.links:
            for me, port, other in (("a", "port_a", "b"), ("b", "port_b", "a")):
                n, m = l["node_" + me], l["node_" + other]
                if self.topo.is_switch(n) and self.topo.is_switch(m) and layer[m] > layer[n]:
                    out.append((n, l[port]))
        return sorted(out)

    # ---- PFC ----------------------------------------------------------------------------
    def pause_intervals(self):
        """{(node, port, priority): [(start_ns, end_ns)]}: when the frames sent by (node,
        port) held its peer paused (XOFF for quanta x 512 bit times at the link's rate,
        ended early by XON or extended by a refresh)."""
        by = collections.defaultdict(list)
        for t, n, p, prio, ev, q in self.pfc:
            by[(n, p, prio)].append((t, q))
        end_of_run = self.duration_ns()
        out = {}
        for key, evs in by.items():
            rate = self.link_rate(key[0], key[1]) or 100_000_000_000
            iv = []
            cur = None  # [start, end]
            for t, q in evs:
                if q == 0:
                    if cur and cur[1] > t:
                        cur[1] = t
                    if cur:
                        iv.append(tuple(cur))
                        cur = None
                    continue
                end = t + q * PAUSE_QUANTUM_BITS * 1_000_000_000 // rate
                if cur and t <= cur[1]:
                    cur[1] = max(cur[1], end)
                else:
                    if cur:
                        iv.append(tuple(cur))
                    cur = [t, end]
            if cur:
                iv.append((cur[0], min(cur[1], max(end_of_run, cur[0]))))
            out[key] = iv
        return out

    def watchdog_storms_by_port(self):
        """{(node, port): PFC watchdog storms on the port's queues}, ports with a storm only:
        the real engine's per-port counters (summary.json's `switches`), else the rising edges
        of port_samples.csv's `wd_stormed` (rocesim)."""
        out = collections.Counter()
        sw = self.summary.get("switches", {})
        per_port = [(x["node"], p) for x in sw.values() if isinstance(x, dict) and "ports" in x
                    for p in x["ports"]] if isinstance(sw, dict) else []
        if any("watchdog_storms" in p for _, p in per_port):
            for node, p in per_port:
                if p.get("watchdog_storms"):
                    out[(node, p["port"])] = p["watchdog_storms"]
            return dict(out)
        prev = {}
        for r in self.port_samples:
            k = (r["node"], r["port"])
            out[k] += bin(r["wd_stormed"] & ~prev.get(k, 0)).count("1")
            prev[k] = r["wd_stormed"]
        return {k: n for k, n in out.items() if n}

    def wait_for_cycles(self, min_ns=0):
        """Cycles of switches pausing each other at the same time (a PFC deadlock): for each
        instant where a set of 'switch N pauses switch M' edges forms a cycle lasting at least
        `min_ns`, the cycle as a list of (node, port) senders. Returns [(start_ns, end_ns,
        cycle)] with each distinct cycle once (its first, longest-overlap occurrence)."""
        iv = self.pause_intervals()
        edges = []  # (start, end, from_switch, port, to_switch)
        for (n, p, _prio), spans in iv.items():
            m = self.peer(n, p)
            if m is None or not self.topo.is_switch(n) or not self.topo.is_switch(m):
                continue
            for a, b in spans:
                edges.append((a, b, n, p, m))
        times = sorted({e[0] for e in edges})
        found = {}
        for t in times:
            active = [e for e in edges if e[0] <= t < e[1]]
            graph = collections.defaultdict(list)
            for e in active:
                graph[e[2]].append(e)
            cyc = _find_cycle(graph)
            if not cyc:
                continue
            end = min(e[1] for e in cyc)
            key = frozenset((e[2], e[3]) for e in cyc)
            if end - t >= min_ns and key not in found:
                found[key] = (t, end, [(e[2], e[3], e[4]) for e in cyc])
        return sorted(found.values())


def _find_cycle(graph):
    """A cycle in {node: [edge(start, end, from, port, to)]} as a list of edges, or None."""
    color = {}
    stack = []

    def dfs(n):
        color[n] = 1
        for e in graph.get(n, []):
            m = e[4]
            stack.append(e)
            if color.get(m) == 1:
                i = next(k for k, x in enumerate(stack) if x[2] == m)
                return stack[i:]
            if m not in color:
                r = dfs(m)
                if r:
                    return r
            stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if n not in color:
            r = dfs(n)
            if r:
                return r
    return None


def host_address(n):
    """rocesim's host address of node n (doc/rocesim.md, Routing): 11.0.x.1."""
    return 0x0b000001 + (n // 256) * 0x10000 + (n % 256) * 0x100
