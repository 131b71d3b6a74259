#!/usr/bin/python3
"""Captures rtnetlink messages from the real kernel for test/unit/netlink_test.cc.

In a throw-away network namespace (nlgen<pid>, deleted on every exit path) it builds veth
pairs with addresses, neighbours and routes of every kind the switch follows, dumps links,
addresses, neighbours and routes over a plain AF_NETLINK socket, then subscribes and captures
the notifications for deletions, kernel nexthop objects replaced and deleted, and a link going
down. The bytes are the kernel's; what the
messages should say comes from `ip -j` (iproute2, an independent decoder), normalised into
expected.json. Nothing here encodes a route message itself.

Run as root with the system Python (stdlib only):  /usr/bin/python3 test/data/gen_netlink_msgs.py
"""
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "netlink")

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETNEIGH, RTM_GETNEXTHOP = 18, 22, 26, 30, 106
# RTMGRP_LINK | NEIGH | IPV4_IFADDR | IPV4_ROUTE | IPV6_IFADDR | IPV6_ROUTE
GROUPS = 0x1 | 0x4 | 0x10 | 0x40 | 0x100 | 0x400
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_NEXTHOP = 270, 1, 32  # group 32: by setsockopt

# Fixed header size of each dump request (ifinfomsg, ifaddrmsg, ndmsg, rtmsg, nhmsg), all zero =
# AF_UNSPEC.
DUMP_HDR = {RTM_GETLINK: 16, RTM_GETADDR: 8, RTM_GETNEIGH: 12, RTM_GETROUTE: 12, RTM_GETNEXTHOP: 8}

NUD = {"INCOMPLETE": 0x01, "REACHABLE": 0x02, "STALE": 0x04, "DELAY": 0x08, "PROBE": 0x10,
       "FAILED": 0x20, "NOARP": 0x40, "PERMANENT": 0x80, "NONE": 0x00}
SCOPE = {"global": 0, "universe": 0, "site": 200, "link": 253, "host": 254, "nowhere": 255}
NTF_ROUTER = 0x80
RTNH_F_ONLINK = 0x4


def sh(cmd, check=True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"`{cmd}` failed: {r.stderr.strip()}")
    return r.stdout


def ipj(args):
    return json.loads(sh("ip -j " + args) or "[]")


# --- setup ---------------------------------------------------------------------------------

SETUP = [
    # No DAD or router solicitations: link-local addresses settle at once, less background noise.
    "sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0",
    "sysctl -qw net.ipv6.conf.default.router_solicitations=0",
    "ip link set lo up",
    # veth pairs (this kernel may lack the dummy driver); fixed MACs, so link-local addresses
    # are the same every run.
    "ip link add d0 address 02:00:00:00:00:d0 type veth peer name p0 address 02:00:00:00:00:a0",
    "ip link add d1 address 02:00:00:00:00:d1 type veth peer name p1 address 02:00:00:00:00:a1",
    "ip link set d0 mtu 9000", "ip link set p0 mtu 9000",
    "ip link set d0 up", "ip link set p0 up", "ip link set d1 up",  # p1 stays down: no carrier on d1
    "ip addr add 10.1.0.1/24 dev d0", "ip -6 addr add 2001:db8:1::1/64 dev d0 nodad",
    "ip addr add 10.2.0.1/24 dev d1", "ip -6 addr add 2001:db8:2::1/64 dev d1 nodad",
    "ip addr add 10.3.0.1/32 peer 10.3.0.2/32 dev d0",  # IFA_LOCAL != IFA_ADDRESS
    # neighbours: permanent, reachable (router), stale, noarp, incomplete
    "ip neigh add 10.1.0.2 lladdr 02:00:00:00:01:02 dev d0 nud permanent",
    "ip neigh add 10.1.0.3 lladdr 02:00:00:00:01:03 dev d0 nud reachable",
    "ip neigh add 10.2.0.2 lladdr 02:00:00:00:02:02 dev d1 nud stale",
    "ip neigh add 10.1.0.7 dev d0 nud incomplete",
    "ip neigh add 10.1.0.8 lladdr 02:00:00:00:01:08 dev d0 nud noarp",
    "ip -6 neigh add 2001:db8:1::2 lladdr 02:00:00:00:11:02 dev d0 nud permanent",
    "ip -6 neigh add 2001:db8:1::3 lladdr 02:00:00:00:11:03 dev d0 nud reachable router",
    "ip -6 neigh add 2001:db8:2::2 lladdr 02:00:00:00:12:02 dev d1 nud permanent",
    # routes
    "ip route add default via 10.1.0.2",
    "ip -6 route add default via 2001:db8:1::2",
    "ip route add 10.9.0.0/24 nexthop via 10.1.0.2 weight 1 nexthop via 10.2.0.2 weight 3",
    "ip -6 route add 2001:db8:9::/64 nexthop via 2001:db8:1::2 weight 1 nexthop via 2001:db8:2::2 weight 2",
    "ip route add 10.20.0.0/16 via 10.1.0.2 proto bird metric 20",
    "ip -6 route add 2001:db8:20::/48 via 2001:db8:1::2 proto bird",
    "ip route add 10.21.0.0/16 via 10.2.0.2 proto static",
    "ip route add 10.22.0.0/16 via 10.2.0.2 proto 186",
    "ip route add 10.23.0.0/24 dev d1",
    "ip -6 route add 2001:db8:23::/64 dev d1",
    "ip route add blackhole 10.66.0.0/16",
    "ip -6 route add blackhole 2001:db8:66::/64",
    "ip route add unreachable 10.67.0.0/16",
    "ip route add 10.30.0.0/24 via 10.1.0.2 table 100",
    "ip -6 route add 2001:db8:30::/64 via 2001:db8:1::2 table 100",
    "ip route add 10.31.0.0/24 via 10.1.0.2 table 1000",  # > 255: only RTA_TABLE has it
    "ip route add 10.8.0.0/24 via inet6 2001:db8:1::5 dev d0",  # RTA_VIA
    "ip route add 10.7.0.0/24 via 192.0.2.1 dev d0 onlink",
    "ip route add 10.6.0.0/24 nexthop via 192.0.2.1 dev d0 onlink nexthop via 10.2.0.2 dev d1",
    "ip route add 10.5.0.5/32 via 10.1.0.3",  # host route
    "ip -6 route add 2001:db8:50::/64 via 2001:db8:1::2",  # appended to in the monitor phase
    # Kernel nexthop objects (FRR's zebra installs routes through them): single, IPv6, onlink,
    # device only, a weighted group, a one-member group, a blackhole; routes naming them (the
    # dump is in nexthop_compat_mode 1, the default: the route carries the object's next hops
    # too).
    "ip nexthop add id 11 via 10.1.0.2 dev d0",
    "ip nexthop add id 12 via 10.1.0.3 dev d0",
    "ip -6 nexthop add id 13 via 2001:db8:1::2 dev d0",
    "ip nexthop add id 14 via 192.0.2.1 dev d0 onlink",
    "ip nexthop add id 15 group 11/12,3",
    "ip nexthop add id 16 blackhole",
    "ip nexthop add id 17 group 12",
    "ip nexthop add id 18 dev d0",
    "ip route add 10.40.0.0/24 nhid 11 proto 186",
    "ip route add 10.41.0.0/24 nhid 15 proto 186",
    "ip -6 route add 2001:db8:41::/64 nhid 13 proto 186",
    "ip route add 10.42.0.0/24 nhid 16",
    "ip route add 10.44.0.0/24 nhid 17",
]
# Source-routed IPv6 routes need CONFIG_IPV6_SUBTREES: best effort (they are skipped anyway).
OPTIONAL = ["ip -6 route add 2001:db8:40::/64 from 2001:db8:99::/64 via 2001:db8:1::2"]


# --- netlink -------------------------------------------------------------------------------

def nl_socket(groups=0, nexthops=False):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE = 0
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((0, groups))
    if nexthops:
        s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, RTNLGRP_NEXTHOP)
    return s


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def messages(dgram):
    """(type, flags) of each nlmsghdr, only to find the end of a dump."""
    off = 0
    while off + 16 <= len(dgram):
        ln, typ, flags = struct.unpack_from("=IHH", dgram, off)
        if ln < 16:
            break
        yield typ, flags
        off += (ln + 3) & ~3


def dump(rtm_type, seq):
    """The datagrams of one dump, concatenated (each padded to 4 bytes)."""
    s = nl_socket()
    try:
        body = bytes(DUMP_HDR[rtm_type])
        s.send(struct.pack("=IHHII", 16 + len(body), rtm_type, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body)
        out = b""
        while True:
            r, _, _ = select.select([s], [], [], 5)
            if not r:
                raise RuntimeError(f"dump {rtm_type}: no reply")
            d = s.recv(1 << 16)
            out += pad4(d)
            types = [t for t, _ in messages(d)]
            if NLMSG_ERROR in types:
                raise RuntimeError(f"dump {rtm_type}: NLMSG_ERROR")
            if NLMSG_DONE in types:
                return out
    finally:
        s.close()


def drain(s, quiet=0.3):
    out = b""
    while True:
        r, _, _ = select.select([s], [], [], quiet)
        if not r:
            return out
        out += pad4(s.recv(1 << 16))


# --- ip -j, normalised -----------------------------------------------------------------------

def ip_snapshot():
    links = ipj("link show")
    ifindex = {l["ifname"]: l["ifindex"] for l in links}
    return {
        "link": [norm_link(l) for l in links],
        "addr": [norm_addr(l["ifindex"], a) for l in ipj("addr show") for a in l.get("addr_info", [])],
        "neigh": [norm_neigh(n, ifindex) for n in ipj("neigh show nud all")],
        "route": [norm_route(r, fam, ifindex) for fam in (4, 6)
                  for r in ipj(f"-{fam} -d -N route show table all")],
        "nexthop": [norm_nexthop(n, ifindex) for n in ipj("nexthop show")],
    }


def norm_link(l):
    flags = l.get("flags", [])
    mac = l.get("address")
    return {"kind": "link", "op": "add", "ifindex": l["ifindex"], "name": l["ifname"],
            "mac": mac if mac and len(mac) == 17 else None, "mtu": l["mtu"],
            "admin_up": "UP" in flags, "oper_up": "LOWER_UP" in flags or "RUNNING" in flags}


def norm_addr(ifindex, a):
    return {"kind": "addr", "op": "add", "ifindex": ifindex,
            "addr": f'{a["local"]}/{a["prefixlen"]}', "scope": SCOPE[a["scope"]]}


def norm_neigh(n, ifindex):
    state = 0
    for s in n.get("state", []):
        state |= NUD[s]
    mac = n.get("lladdr")
    ok = NUD["REACHABLE"] | NUD["STALE"] | NUD["DELAY"] | NUD["PROBE"] | NUD["PERMANENT"] | NUD["NOARP"]
    return {"kind": "neigh", "op": "add", "ifindex": ifindex[n["dev"]], "ip": n["dst"],
            "mac": mac if mac and len(mac) == 17 else None, "state": state,
            "router": "router" in n,
            "usable": bool(mac and len(mac) == 17 and state & ok
                           and not state & (NUD["FAILED"] | NUD["INCOMPLETE"]))}


def norm_prefix(dst, fam):
    if dst == "default":
        return "0.0.0.0/0" if fam == 4 else "::/0"
    return dst if "/" in dst else f"{dst}/{32 if fam == 4 else 128}"


def norm_hop(h, ifindex, weight):
    gw = h.get("gateway") or (h.get("via") or {}).get("host")
    return {"ifindex": ifindex[h["dev"]] if "dev" in h else 0, "gateway": gw,
            "weight": weight, "onlink": "onlink" in h.get("flags", [])}


def norm_route(r, fam, ifindex):
    if "nexthops" in r:
        hops = [norm_hop(h, ifindex, h.get("weight", 1)) for h in r["nexthops"]]
    elif "dev" in r or "gateway" in r or "via" in r:
        hops = [norm_hop(r, ifindex, 1)]
    else:
        hops = []
    return {"kind": "route", "op": "add", "family": fam, "dst": norm_prefix(r["dst"], fam),
            "table": int(r["table"]), "protocol": int(r["protocol"]), "type": int(r["type"]),
            "scope": int(r["scope"]), "priority": r.get("metric", 0), "nexthops": hops,
            "nh_id": r.get("nhid", 0), "src_routed": "from" in r}


def norm_nexthop(n, ifindex):
    return {"kind": "nexthop", "op": "add", "id": n["id"],
            "ifindex": ifindex[n["dev"]] if "dev" in n else 0, "gateway": n.get("gateway"),
            "blackhole": "blackhole" in n, "onlink": "onlink" in n.get("flags", []),
            "group": [{"id": g["id"], "weight": g.get("weight", 1)} for g in n.get("group", [])]}


# --- capture ---------------------------------------------------------------------------------

def find(snap, kind, **keys):
    hits = [o for o in snap[kind] if all(o.get(k) == v for k, v in keys.items())]
    if len(hits) != 1:
        raise RuntimeError(f"{kind} {keys}: {len(hits)} matches in ip -j output")
    return dict(hits[0])


def deleted(o, *drop):
    o = dict(o, op="del")
    o.pop("src_routed", None)
    for k in drop:
        o.pop(k, None)
    return o


def inner():
    for c in SETUP:
        sh(c)
    for c in OPTIONAL:
        sh(c, check=False)
    time.sleep(0.3)  # let IPv6 link-local addresses and MLD entries settle

    # Dumps, bracketed by two identical ip -j snapshots so both describe the same state.
    kinds = {"link": RTM_GETLINK, "addr": RTM_GETADDR, "neigh": RTM_GETNEIGH, "route": RTM_GETROUTE,
             "nexthop": RTM_GETNEXTHOP}
    for attempt in range(5):
        before = ip_snapshot()
        raw = {k: dump(t, 1000 + i) for i, (k, t) in enumerate(kinds.items())}
        after = ip_snapshot()
        if before == after:
            break
        time.sleep(0.5)
    else:
        raise RuntimeError("state kept changing during the dumps")
    snap = before
    files = {}
    for k, b in raw.items():
        name = f"dump_{k}.bin"
        open(os.path.join(OUT, name), "wb").write(b)
        # Source-routed routes are skipped by the parser: not expected as messages.
        objs = [{f: v for f, v in o.items() if f != "src_routed"}
                for o in snap[k] if not o.get("src_routed")]
        files[name] = {"exact": True, "expect": objs,
                       "skipped_min": sum(1 for o in snap[k] if o.get("src_routed"))}

    # Notifications. Each case: a command, then what must be among the messages it triggers.
    mon = nl_socket(GROUPS, nexthops=True)
    cases = []

    def case(name, cmd, expect_fn):
        drain(mon, 0.1)
        pre = ip_snapshot()
        sh(cmd)
        time.sleep(0.2)
        b = drain(mon)
        open(os.path.join(OUT, f"mon_{name}.bin"), "wb").write(b)
        files[f"mon_{name}.bin"] = {"exact": False, "cmd": cmd, "expect": expect_fn(pre, ip_snapshot())}

    case("del_route", "ip route del 10.20.0.0/16",
         lambda pre, post: [deleted(find(pre, "route", dst="10.20.0.0/16"))])
    case("del_route6_multipath", "ip -6 route del 2001:db8:9::/64",
         lambda pre, post: [deleted(find(pre, "route", dst="2001:db8:9::/64"))])
    case("del_route_table100", "ip route del 10.30.0.0/24 table 100",
         lambda pre, post: [deleted(find(pre, "route", dst="10.30.0.0/24"))])
    case("append_route6", "ip -6 route append 2001:db8:50::/64 via 2001:db8:2::2",
         # The notification holds the whole route after the append, as ip -j shows it then.
         lambda pre, post: [find(post, "route", dst="2001:db8:50::/64")])
    # Replacing an object: its notification, and in nexthop_compat_mode 1 one for each route
    # naming it or a group holding it.
    case("replace_nexthop", "ip nexthop replace id 11 via 10.1.0.5 dev d0",
         lambda pre, post: [find(post, "nexthop", id=11), find(post, "route", dst="10.40.0.0/24"),
                            find(post, "route", dst="10.41.0.0/24")])
    # Deleting one: its own notification, the group it leaves (15, now one member) and the group
    # it empties (17, deleted with it); the routes naming them go without a notification.
    case("del_nexthop", "ip nexthop del id 12",
         lambda pre, post: [{"kind": "nexthop", "op": "del", "id": 12},
                            {"kind": "nexthop", "op": "del", "id": 17},
                            find(post, "nexthop", id=15)])
    # nexthop_compat_mode 0: the route names the object and carries no next hop of its own.
    case("route_nhid_only", "sysctl -qw net.ipv4.nexthop_compat_mode=0 && "
         "ip route add 10.43.0.0/24 nhid 15 proto 186",
         lambda pre, post: [find(post, "route", dst="10.43.0.0/24")])
    # The kernel's delete notifications carry neither the state nor the MAC the entry had.
    case("del_neigh", "ip neigh del 10.1.0.3 dev d0",
         lambda pre, post: [deleted(find(pre, "neigh", ip="10.1.0.3"), "state", "usable", "mac")])
    case("del_neigh6", "ip -6 neigh del 2001:db8:1::2 dev d0",
         lambda pre, post: [deleted(find(pre, "neigh", ip="2001:db8:1::2"), "state", "usable", "mac")])
    case("del_addr", "ip addr del 10.2.0.1/24 dev d1",
         lambda pre, post: [deleted(find(pre, "addr", addr="10.2.0.1/24")),
                            deleted(find(pre, "route", dst="10.2.0.0/24", table=254))])
    case("del_addr6", "ip -6 addr del 2001:db8:2::1/64 dev d1",
         lambda pre, post: [deleted(find(pre, "addr", addr="2001:db8:2::1/64"))])
    case("link_down", "ip link set d0 down",
         lambda pre, post: [find(post, "link", name="d0")])
    for f in files.values():
        for o in f["expect"]:
            o.pop("src_routed", None)
    mon.close()

    expected = {
        "generator": "test/data/gen_netlink_msgs.py",
        "kernel": os.uname().release,
        "iproute2": sh("ip -V").strip(),
        "ifindex": {l["name"]: l["ifindex"] for l in snap["link"]},
        "files": files,
    }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    if os.environ.get("NLGEN_INNER") == "1":
        inner()
        return
    if os.geteuid() != 0:
        sys.exit("gen_netlink_msgs.py: run as root (it creates a network namespace)")
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.startswith(("dump_", "mon_")) and f.endswith(".bin"):
            os.unlink(os.path.join(OUT, f))
    ns = f"nlgen{os.getpid()}"
    sh(f"ip netns add {ns}")
    try:
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__)],
                           env=dict(os.environ, NLGEN_INNER="1"))
        if r.returncode != 0:
            sys.exit(r.returncode)
    finally:
        sh(f"ip netns del {ns}", check=False)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {OUT} ({total} bytes)")


if __name__ == "__main__":
    main()
