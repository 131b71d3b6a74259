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
                host_interfaces=False, telemetry=None, header=""):
    """roceswd's config for switch node `sw`: port i on devices[i] (a device string, or a dict
    {"af_xdp": {...}}), the lab's addresses, static neighbours for every peer, and (static
    routing) the simulator's ECMP routes."""
    nodes = node_by_id(lab)
    out = [header.rstrip("\n")] if header else []
    out.append("switch:")
    out.append(f"  name: {q(name)}")
    for k, v in (switch_extra or {}).items():
        out.append(f"  {k}: {q(v)}")
    if lab.get("qos_profile"):
        out.append(f"  qos: {q(lab['qos_profile'])}")
    out.append("ports:")
    for p in sw["ports"]:
        dev = devices[p["port"]]
        peer = nodes[p["peer"]]
        out.append(f"  - name: p{p['port']}   # to {peer['name']} port {p['peer_port']}")
        if isinstance(dev, dict):
            out.append("    af_xdp: {" + ", ".join(f"{k}: {q(v)}" for k, v in dev["af_xdp"].items()) + "}")
        else:
            out.append(f"    device: {q(dev)}")
        out.append(f"    mac: {q(p['mac'])}")
        out.append(f"    mtu: {lab['mtu']}")
        out.append(f"    speed: {labmod.mbps(p['rate_bps'], sw['name'] + ' port ' + str(p['port']))}")
        out.append(f"    ipv4: [{q(p['ipv4'])}]")
    out.append("neighbours:")
    for p in sw["ports"]:
        peer = nodes[p["peer"]]
        pp = peer["ports"][p["peer_port"]]
        out.append(f"  - {{ip: {q(pp['ipv4'].split('/')[0])}, mac: {q(pp['mac'])}, port: p{p['port']}}}")
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
    if telemetry:
        out.append("telemetry:")
        out.extend("  " + line for line in telemetry)
    if host_interfaces:
        out.append("control_plane:")
        out.append("  host_interfaces: true")
    return "\n".join(out) + "\n"


def add_arguments(p):
    pass


def run(a):
    raise SystemExit("rocelab render: not yet")
