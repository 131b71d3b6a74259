"""The real engine's BGP routing (`--routing bgp`, doc/rocelab.md "Routing"): every switch
in its own network namespace with host interfaces, and its own BIRD speaking eBGP over every
fabric link (render.bird_conf, the config `rocelab render` writes for a deployment). The
engine waits until every session is Established and every switch's FIB holds the lab's routes
(rocesim's shortest-path ECMP) before the workload starts; link events then reach BGP the way
a pulled cable does (roceswd mirrors `port_link` on the host interface's carrier, BIRD's
`check link` drops the session at once)."""
import json
import os
import shutil
import subprocess
import time

from . import render

# BGP timers of the lab: the deployment's hold and keepalive; the first connect 1 s after
# start (BIRD's default connect delay is 5 s), a failed one retried after 1 s (not 5 s), and a
# session that went down with its link back 1 s after the link (BIRD's default error wait
# time, 60-300 s, damps flapping cables in a deployment).
LAB_TIMERS = ("hold time 9; keepalive time 3; connect delay time 1; connect retry time 1; "
              "error wait time 1, 5;")
# Polling the switches' FIBs after a link event (rocectl: a process per switch and view).
FIB_POLL_S = 0.05


def netns_name(tag, sw):
    return f"{tag}-{sw['name']}"


class Netns:
    """The network namespaces of one run: add() creates one (loopback up, reverse-path
    filtering off, as test/system/lib_bgp.sh does), remove() deletes every one created."""

    def __init__(self):
        self.names = []

    def add(self, name):
        # Recorded before it exists, so that a signal between the two leaks nothing; taken
        # back when `ip netns add` fails (the name may be somebody else's).
        self.names.append(name)
        try:
            subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
        except subprocess.CalledProcessError:
            self.names.remove(name)
            raise
        subprocess.run(["ip", "-n", name, "link", "set", "dev", "lo", "up"], check=True)
        # The lab is IPv4: no IPv6 on the host interfaces (their router and multicast listener
        # solicitations would reach the peers, which drop them as l3_multicast).
        subprocess.run(["ip", "netns", "exec", name, "sysctl", "-qw",
                        "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                        "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"],
                       check=True)

    def remove(self):
        for n in reversed(self.names):
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        self.names = []


def bird_configs(lab, out, sws, mgmt=None):
    """OUT/configs/<switch>.bird.conf for every switch (render.bird_conf with the lab's
    timers, logging to stderr: the process log; `mgmt` the management network, which BGP
    never imports nor exports). Returns {switch id: path}, {switch id: ASN}."""
    asn_of = render.asns(lab, {sw["id"]: {} for sw in sws}, {})
    paths = {}
    for sw in sws:
        rid = render.default_router_id(lab, sw)
        paths[sw["id"]] = os.path.join(out, "configs", f"{sw['name']}.bird.conf")
        with open(paths[sw["id"]], "w") as f:
            f.write(render.bird_conf(lab, sw, asn_of, rid, log="stderr all", timers=LAB_TIMERS,
                                    debug="{ states }", mgmt=mgmt))
        p = subprocess.run(["bird", "-p", "-c", paths[sw["id"]]], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(f"rocelab: {paths[sw['id']]}: {(p.stderr or p.stdout).strip()}")
    return paths, asn_of


def bird_argv(ns, conf, sock):
    """BIRD in the switch's namespace, in the foreground (its PID is the process's), with its
    own control socket and PID file (as test/system/lib_bgp.sh starts it)."""
    return ["ip", "netns", "exec", ns, "bird", "-f", "-c", conf, "-s", sock, "-P", sock + ".pid"]


def sessions(sock):
    """{protocol: state} of BIRD's BGP protocols (birdc show protocols): the BGP state
    (Established, Active, Connect, ...) or BIRD's protocol state when it has none."""
    p = subprocess.run(["birdc", "-s", sock, "show", "protocols"], capture_output=True,
                       text=True, timeout=10)
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[1] == "BGP":
            out[f[0]] = f[5] if len(f) >= 6 else f[3]
    return out


def fib_routes(ctl, sock):
    """The switch's learned routes: {prefix: sorted [(port, via)]} of every route that is not
    connected, local, neighbour or static, an ECMP group's live members as its paths
    (rocectl show routes, show lb)."""
    routes = ctl(sock, "show", "routes")["routes"]
    groups = None
    out = {}
    for r in routes:
        if r.get("type") in ("connected", "local", "neighbour", "static"):
            continue
        nh = r.get("nexthop") or {}
        if nh.get("kind") == "ecmp_group":
            if groups is None:
                groups = {str(g["id"]): g for g in ctl(sock, "show", "lb").get("groups", [])}
            g = groups.get(str(nh.get("port", "")).replace("group", "").strip(), {})
            out[r["prefix"]] = sorted((m["port"], m["via"]) for m in g.get("members", [])
                                      if m.get("alive", True))
        elif nh.get("kind") in ("forward", "unresolved", "glean"):
            out[r["prefix"]] = [(nh.get("port"), nh.get("via"))]
        else:
            out[r["prefix"]] = []
    return out


def expected_routes(lab, routes, down=()):
    """What BGP installs, per switch id: the lab's routes ({switch id: lab.json's `routes` or an
    event's `routes_after`}, rocesim's shortest paths) as fib_routes() reports them, keeping
    the valley-free next hops only: the spines share an ASN (RFC 7938), so a spine never
    takes a route back up through a leaf (rocesim does, around a failed link). A hop down
    is kept when its switch reaches the destination going down only (over links not in
    `down`, pairs of node ids); a hop up when its switch keeps a route; a hop to a switch of
    the same tier (a ring: those pass on what they learn, render.bird_conf) when the
    destination is cabled to it or it keeps a route. Withdrawn or unreachable destinations
    are absent. Exact on two-tier (leaf-spine) fabrics, where every valley-free path is
    shortest, and on rings (every switch its own ASN: BGP's shortest AS path is the shortest
    path)."""
    tier = render.tiers(lab)
    nodes = render.node_by_id(lab)
    cut = {frozenset(x) for x in down}
    ids = sorted(routes, key=lambda i: tier.get(i, 0))
    reach = {}  # switch id -> hosts it reaches going down only
    cabled = {}  # switch id -> hosts cabled to it
    for n in ids:
        reach[n], cabled[n] = set(), set()
        for p in nodes[n]["ports"]:
            m = p["peer"]
            if frozenset((n, m)) in cut:
                continue
            if nodes[m]["kind"] == "host":
                reach[n].add(m)
                cabled[n].add(m)
            elif tier.get(m, 0) < tier.get(n, 0):
                reach[n] |= reach.get(m, set())
    by_prefix = {n: {r["prefix"]: r for r in routes[n]} for n in ids}
    memo = {}

    def kept(n, prefix, via=()):
        """The next hops switch n keeps for prefix (sorted (port, via)); [] if none."""
        if (n, prefix) in memo:
            return memo[(n, prefix)]
        r = by_prefix.get(n, {}).get(prefix)
        if r is None or n in via:
            return []
        hops = []
        for h in r["next_hops"]:
            m, tn, tm = h["neighbour"], tier.get(n, 0), tier.get(h["neighbour"], 0)
            if tm < tn:
                ok = r["dst"] in reach.get(m, ())
            elif tm > tn:
                ok = bool(kept(m, prefix, via + (n,)))
            else:
                ok = r["dst"] in cabled.get(m, ()) or bool(kept(m, prefix, via + (n,)))
            if ok:
                hops.append((f"p{h['port']}", h["via"]))
        memo[(n, prefix)] = sorted(hops)
        return memo[(n, prefix)]

    keep = {}
    for n in ids:
        keep[n] = {}
        for r in routes[n]:
            hops = kept(n, r["prefix"])
            if hops:
                keep[n][r["prefix"]] = hops
    return keep


def fib_differences(ctl, socks, want):
    """Per switch name, what its FIB has that differs from `want` ({name: expected_routes}):
    an empty dict when every switch holds exactly the lab's routes."""
    diff = {}
    for name, sock in socks.items():
        have = fib_routes(ctl, sock)
        bad = {p: {"want": want[name].get(p), "have": have.get(p)}
               for p in set(have) | set(want[name]) if have.get(p) != want[name].get(p)}
        if bad:
            diff[name] = bad
    return diff


class Converger:
    """Watches the switches' FIBs after a link event until they hold the event's routes
    (routes_after); poll() returns the time they did, once."""

    def __init__(self, ctl, socks, want, entry, t_set):
        self.ctl, self.socks, self.want, self.entry, self.t_set = ctl, socks, want, entry, t_set
        self.next = 0.0

    def poll(self, now):
        if now < self.next:
            return False
        self.next = now + FIB_POLL_S
        return not fib_differences(self.ctl, self.socks, self.want)


def wait_converged(ctl, bird_socks, ctl_socks, want, n_sessions, timeout, check_procs):
    """Waits until every BGP session of every switch is Established (n_sessions: {switch
    name: its fabric links}), then until every switch's FIB holds exactly its lab routes.
    Returns {"established_s", "converged_s", "sessions"} (seconds since the call); raises
    SystemExit naming what is missing on timeout."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    est = None
    last = {}   # every switch's sessions
    diff = {}   # what the FIBs lack
    while time.monotonic() < deadline:
        check_procs()
        if est is None:
            last = {n: sessions(s) for n, s in bird_socks.items()}
            if all(len(v) == n_sessions[n] and all(st == "Established" for st in v.values())
                   for n, v in last.items()):
                est = time.monotonic() - t0
            else:
                time.sleep(0.1)
                continue
        diff = fib_differences(ctl, ctl_socks, want)
        if not diff:
            return {"established_s": round(est, 3), "converged_s": round(time.monotonic() - t0, 3),
                    "sessions": sum(len(v) for v in last.values())}
        time.sleep(0.1)
    what = "every BGP session Established" if est is None else "every switch's FIB to hold the lab's routes"
    raise SystemExit(f"rocelab: timed out after {timeout:.0f} s waiting for {what}: "
                     + json.dumps(last if est is None else diff, sort_keys=True))


def check_tools():
    for t in ("ip", "bird", "birdc"):
        if not shutil.which(t):
            raise SystemExit(f"rocelab: --routing bgp needs {t} (tools/bootstrap installs bird2 "
                             "and iproute2)")
    if os.geteuid() != 0:
        raise SystemExit("rocelab: --routing bgp needs root (network namespaces); "
                         "--routing static runs without")

