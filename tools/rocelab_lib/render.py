"""Config rendering from a lab description: one roceswd YAML per switch (the real engine's
memif lab and a deployment on servers share it), BIRD configs for an RFC 7938-style eBGP
fabric, and `rocelab render` (doc/rocelab.md, "Deployment: rocelab render")."""
import json
import os
import subprocess

from . import lab as labmod


def q(v):
    """A YAML scalar: JSON's quoting is valid YAML."""
    return json.dumps(v)


def node_by_id(lab):
    return {n["id"]: n for n in lab["nodes"]}


def switch_yaml(lab, sw, name, devices, *, switch_extra=None, static_routes=True,
                host_interfaces=False, telemetry=None, header="", neighbours=True,
                qos_path=None, macs=None, allow=()):
    """roceswd's config for switch node `sw`: port i on devices[i] (a device string, or a dict
    {"af_xdp": {...}}), the lab's addresses, static neighbours for every peer, and (static
    routing) the simulator's ECMP routes."""
    nodes = node_by_id(lab)
    out = [header.rstrip("\n")] if header else []
    out.append("switch:")
    out.append(f"  name: {q(name)}")
    for k, v in (switch_extra or {}).items():
        out.append(f"  {k}: {q(v)}")
    qos = lab.get("qos_profile") if qos_path is None else qos_path
    if qos:
        out.append(f"  qos: {q(qos)}")
    out.append("ports:")
    for p in sw["ports"]:
        dev = devices[p["port"]]
        peer = nodes[p["peer"]]
        out.append(f"  - name: p{p['port']}   # to {peer['name']} port {p['peer_port']}")
        if isinstance(dev, dict):
            out.append("    af_xdp: {" + ", ".join(f"{k}: {q(v)}" for k, v in dev["af_xdp"].items()) + "}")
        else:
            out.append(f"    device: {q(dev)}")
        out.append(f"    mac: {q((macs or {}).get(p['port'], p['mac']))}")
        out.append(f"    mtu: {lab['mtu']}")
        out.append(f"    speed: {labmod.mbps(p['rate_bps'], sw['name'] + ' port ' + str(p['port']))}")
        out.append(f"    ipv4: [{q(p['ipv4'])}]")
    if neighbours:  # True: every peer; or a function port -> (ip, mac) or None
        out.append("neighbours:")
        for p in sw["ports"]:
            peer = nodes[p["peer"]]
            pp = peer["ports"][p["peer_port"]]
            nb = (pp["ipv4"].split("/")[0], pp["mac"]) if neighbours is True else neighbours(p)
            if nb:
                out.append(f"  - {{ip: {q(nb[0])}, mac: {q(nb[1])}, port: p{p['port']}}}")
    if static_routes and sw.get("routes"):
        out.append("routes:")
        for r in sw["routes"]:
            vias = [h["via"] for h in r["next_hops"]]
            if len(vias) == 1:
                out.append(f"  - {{prefix: {q(r['prefix'])}, via: {q(vias[0])}}}")
            else:
                out.append(f"  - {{prefix: {q(r['prefix'])}, via: {q(vias)}, policy: {q(sw['lb_policy'])}}}")
    out.append("lb:")
    out.append(f"  seed: {sw['lb_seed']}")
    out.append(f"  default_policy: {q(sw['lb_policy'])}")
    out.append(f"  flowlet_gap_us: {lab['lb']['flowlet_gap_us']}")
    if lab["lb"].get("plugins"):  # the scenario's policy plugins, absolute paths
        out.append(f"  plugins: {q(lab['lb']['plugins'])}")
    if telemetry:
        out.append("telemetry:")
        out.extend("  " + line for line in telemetry)
    if host_interfaces or allow:
        out.append("control_plane:")
    if host_interfaces:
        out.append("  host_interfaces: true")
    for cmd in allow:  # control socket commands: route_learn (routes), port_link (link events)
        out.append(f"  allow_{cmd}: true")
    return "\n".join(out) + "\n"



# --- rocelab render: a deployment on servers (doc/rocelab.md) ---------------------------------

def add_arguments(p):
    p.add_argument("--routing", choices=["bgp", "static"], default="bgp",
                   help="bgp (default): BIRD per switch, eBGP per fabric link (RFC 7938); "
                        "static: the simulator's ECMP routes in each roceswd config")
    p.add_argument("--check", action="store_true",
                   help="check every file (roceswd --check-config, bird -p)")


def load_inventory(path, lab):
    """The inventory YAML (doc/rocelab.md, "Inventory"): per switch (by the scenario's name or
    node id) a device per port. Returns {switch node id: entry}."""
    import yaml  # Debian's python3-yaml; the inventory is not a scenario (that is rocesim's)
    with open(path) as f:
        inv = yaml.safe_load(f) or {}
    if not isinstance(inv, dict) or set(inv) - {"switches", "hosts", "defaults"}:
        raise SystemExit(f"{path}: expected a map with switches (and optionally hosts, defaults)")
    by_name = {n["name"]: n for n in labmod.switches(lab)}
    by_id = {str(n["id"]): n for n in labmod.switches(lab)}
    out = {}
    for key, e in (inv.get("switches") or {}).items():
        sw = by_name.get(str(key)) or by_id.get(str(key))
        if not sw:
            raise SystemExit(f"{path}: switches.{key}: no such switch in the scenario "
                             f"({', '.join(by_name)})")
        if not isinstance(e, dict) or set(e) - {"ports", "asn", "router_id", "switch", "macs"}:
            raise SystemExit(f"{path}: switches.{key}: expected a map of ports, asn, router_id, "
                             "switch, macs")
        ports = e.get("ports") or {}
        devs = {}
        for pk, dev in ports.items():
            pn = str(pk)
            num = int(pn[1:]) if pn.startswith("p") and pn[1:].isdigit() else None
            if num is None or num >= len(sw["ports"]):
                raise SystemExit(f"{path}: switches.{key}.ports.{pk}: {sw['name']} has ports "
                                 f"p0..p{len(sw['ports']) - 1}")
            if isinstance(dev, dict):
                if set(dev) != {"af_xdp"} or not isinstance(dev["af_xdp"], dict):
                    raise SystemExit(f"{path}: switches.{key}.ports.{pk}: a device string or "
                                     "{af_xdp: {interface: NAME, ...}}")
            elif not isinstance(dev, str) or not dev:
                raise SystemExit(f"{path}: switches.{key}.ports.{pk}: a device string or "
                                 "{af_xdp: {interface: NAME, ...}}")
            devs[num] = dev
        missing = [f"p{p['port']}" for p in sw["ports"] if p["port"] not in devs]
        if missing:
            raise SystemExit(f"{path}: switches.{key}.ports: no device for {', '.join(missing)}")
        out[sw["id"]] = dict(e, ports=devs)
    missing = [n for n in by_name if by_name[n]["id"] not in out]
    if missing:
        raise SystemExit(f"{path}: switches: no entry for {', '.join(missing)}")
    return out, inv.get("hosts") or {}, inv.get("defaults") or {}


def tiers(lab):
    """Tier of every switch: 0 with hosts cabled to it, else 1 + the lowest neighbour tier."""
    nodes = node_by_id(lab)
    tier = {}
    for sw in labmod.switches(lab):
        if any(nodes[p["peer"]]["kind"] == "host" for p in sw["ports"]):
            tier[sw["id"]] = 0
    changed = True
    while changed:
        changed = False
        for sw in labmod.switches(lab):
            ts = [tier[p["peer"]] for p in sw["ports"] if p["peer"] in tier]
            if sw["id"] not in tier and ts:
                tier[sw["id"]] = min(ts) + 1
                changed = True
    return tier


def asns(lab, inv, defaults):
    """RFC 7938: one private ASN per switch, except the top tier (the spines), which shares
    one, so that a route never goes spine -> leaf -> spine."""
    t = tiers(lab)
    top = max(t.values()) if t else 0
    base = int(defaults.get("asn_base", 65100))
    spine = int(defaults.get("spine_asn", 65000))
    out = {}
    for i, sw in enumerate(labmod.switches(lab)):
        a = inv[sw["id"]].get("asn")
        out[sw["id"]] = int(a) if a else (spine if t.get(sw["id"]) == top and top > 0 else base + i)
    return out


def default_router_id(lab, sw):
    """BIRD's router id of switch node `sw`: its first fabric address (or first address)."""
    nodes = node_by_id(lab)
    fab = [p for p in sw["ports"] if nodes[p["peer"]]["kind"] == "switch"]
    return (fab[0] if fab else sw["ports"][0])["ipv4"].split("/")[0]


# BGP timers of a deployment: a session goes down at once when its link does (`check link`:
# roceswd mirrors a port's link on its host interface's carrier), the hold timer catches the
# rest; after a link-down, BIRD waits `error wait time` (its default, 60-300 s) before it
# tries again, damping a flapping link.
BGP_TIMERS = "hold time 9; keepalive time 3; connect retry time 5;"


def bird_conf(lab, sw, asn_of, router_id, *, log="syslog all", timers=BGP_TIMERS, debug=None,
              mgmt=None):
    """BIRD 2 config of switch node `sw` (RFC 7938-style eBGP): `log` BIRD's log target,
    `timers` the BGP template's timer statements (the real engine's lab shortens them),
    `debug` what BIRD logs of its protocols (e.g. "{ states }": sessions up and down), `mgmt`
    a management network in the namespace (a prefix, e.g. "169.254.0.0/16"): rejected first
    by both BGP filters (FABRIC4 leaves it out too; the direct protocol names the host ports
    only and the kernel protocol imports nothing, so BIRD never carries it)."""
    nodes = node_by_id(lab)
    host_ports = [f'"p{p["port"]}"' for p in sw["ports"] if nodes[p["peer"]]["kind"] == "host"]
    fabric = [p for p in sw["ports"] if nodes[p["peer"]]["kind"] == "switch"]
    leaf = bool(host_ports)
    # A leaf cabled to another switch of its tier (a ring, a mesh of leaves) is on the other
    # leaves' paths: it passes on what it learns too (every such switch has its own ASN).
    tier = tiers(lab)
    transit = leaf and any(tier.get(p["peer"]) == tier.get(sw["id"]) for p in fabric)
    lines = [
        f"# BIRD 2 for {sw['name']} (node {sw['id']}), rendered by rocelab from {lab['source']}.",
        "# RFC 7938-style eBGP: one session per fabric link over its /31; leaves announce their",
        "# host subnets only, upper tiers pass on what they learn. Runs in roceswd's network",
        "# namespace (control_plane.host_interfaces: the TAPs are named as the ports).",
        *(["# Cabled to switches of its own tier (a ring): it passes on what it learns too."]
          if transit else []),
        "#   ip netns exec NS bird -c bird.conf -s /run/bird-NS.ctl      check: bird -p -c bird.conf",
        f"log {log};",
        *([f"debug protocols {debug};"] if debug else []),
        f"router id {router_id};",
        f"define LOCAL_AS = {asn_of[sw['id']]};",
        "define FABRIC4 = [ 10.0.0.0/8{31,32}, 11.0.0.0/8{24,32} ];",
        *([f"define MGMT4 = [ {mgmt}+ ];   # the management network: never in BGP"] if mgmt else []),
        "protocol device { scan time 10; }",
    ]
    if leaf:
        lines.append("protocol direct { ipv4; interface " + ", ".join(host_ports) + "; }")
    lines += [
        "protocol kernel kernel4 {",
        "  ipv4 { import none; export where source = RTS_BGP; };",
        "  merge paths on limit 16;   # equal-cost paths -> one multipath route -> an ECMP group",
        "  graceful restart on;",
        "}",
        "filter fabric_in {",
        *(["  if net ~ MGMT4 then reject;"] if mgmt else []),
        "  if net ~ FABRIC4 then accept;",
        "  reject;",
        "}",
        "filter fabric_out {",
        *(["  if net ~ MGMT4 then reject;"] if mgmt else []),
        "  if (source = RTS_DEVICE || source = RTS_BGP) && net ~ FABRIC4 then accept;" if transit
        else "  if source = RTS_DEVICE && net ~ FABRIC4 then accept;" if leaf else
        "  if source = RTS_BGP && net ~ FABRIC4 then accept;",
        "  reject;",
        "}",
        "template bgp fabric {",
        "  local as LOCAL_AS;",
        f"  {timers}",
        "  # RFC 4724: a peer keeps this switch's routes (stale) for the restart time while the",
        "  # session comes back (doc/control-plane.md, \"Graceful restart across a roceswd restart\").",
        "  graceful restart on; graceful restart time 120;",
        "  direct;",
        "  check link on;   # the host interface's carrier is the port's link (roceswd)",
        "  ipv4 { import filter fabric_in; export filter fabric_out; };",
        "}",
    ]
    for p in fabric:
        peer = nodes[p["peer"]]
        ip = peer["ports"][p["peer_port"]]["ipv4"].split("/")[0]
        lines.append(f"protocol bgp p{p['port']}_{peer['name']} from fabric {{ neighbor {ip} as "
                     f"{asn_of[peer['id']]}; interface \"p{p['port']}\"; }}")
    return "\n".join(lines) + "\n"


def run(a):
    import shutil
    lab = labmod.emit(a.scenario)
    inv, inv_hosts, defaults = load_inventory(a.inventory, lab)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "lab.json"), "w") as f:
        json.dump(lab, f, indent=1)
    qos_rel = None
    if lab.get("qos_profile"):
        shutil.copy(lab["qos_profile"], os.path.join(out, "qos.yaml"))
        qos_rel = "../qos.yaml"
    asn_of = asns(lab, inv, defaults)
    nodes = node_by_id(lab)
    files = []
    for sw in labmod.switches(lab):
        e = inv[sw["id"]]
        d = os.path.join(out, sw["name"])
        os.makedirs(d, exist_ok=True)
        # Static neighbours: fabric peers (their MACs are rendered here too); hosts from the
        # inventory's hosts section when given (else ARP: BGP mode's host interfaces).
        def nb(p, sw=sw):
            peer = nodes[p["peer"]]
            if peer["kind"] == "switch":
                pm = (inv[peer["id"]].get("macs") or {}).get(f"p{p['peer_port']}")
                return (peer["ports"][p["peer_port"]]["ipv4"].split("/")[0],
                        pm or peer["ports"][p["peer_port"]]["mac"])
            h = inv_hosts.get(peer["name"]) or inv_hosts.get(str(peer["id"]))
            return (peer["ip"].split("/")[0], h["mac"]) if h and h.get("mac") else None
        macs = {int(k[1:]): v for k, v in (e.get("macs") or {}).items()}
        text = switch_yaml(
            lab, sw, sw["name"], e["ports"], switch_extra=e.get("switch") or {},
            static_routes=a.routing == "static", host_interfaces=a.routing == "bgp",
            neighbours=nb, qos_path=qos_rel, macs=macs,
            header=f"# roceswd for {sw['name']} (node {sw['id']}), rendered by rocelab from "
                   f"{lab['source']} and {os.path.abspath(a.inventory)} ({a.routing} routing)")
        path = os.path.join(d, "roceswd.yaml")
        with open(path, "w") as f:
            f.write(text)
        files.append(("roceswd", path))
        if a.routing == "bgp":
            rid = e.get("router_id") or default_router_id(lab, sw)
            path = os.path.join(d, "bird.conf")
            with open(path, "w") as f:
                f.write(bird_conf(lab, sw, asn_of, rid))
            files.append(("bird", path))
    print(f"rocelab render: {len(inv)} switches, {a.routing} routing, in {out}")
    if a.check:
        bad = 0
        for kind, path in files:
            cmd = ([labmod.binary("roceswd"), "--check-config", path] if kind == "roceswd"
                   else ["bird", "-p", "-c", path])
            p = subprocess.run(cmd, capture_output=True, text=True)
            print(f"  {'ok  ' if p.returncode == 0 else 'FAIL'} {' '.join(cmd[-2:])}"
                  + ("" if p.returncode == 0 else ": " + (p.stderr or p.stdout).strip()))
            bad += p.returncode != 0
        return 1 if bad else 0
    return 0
