"""The real engine's management network (BGP routing, doc/rocelab.md "Management network"):
one veth pair per switch namespace, as a server's management NIC. The namespace's end is
`mgmt0`, the root namespace's `<tag>m<i>`; each pair is a /31 of the link-local range
169.254.0.0/16 (RFC 3927), the switch's Prometheus exporter listens on the namespace end's
address, so one Prometheus in the root namespace scrapes the whole lab (OUT/prometheus.yml).

The range is never routed: BIRD's filters reject it (render.bird_conf's `mgmt`), its direct
protocol names the host interfaces only and its kernel protocol imports nothing; roceswd's
netlink sync follows its host interfaces (TAPs) only (doc/control-plane.md). Several labs run
side by side: a run takes whole /24s no address or route of the root namespace is in, chosen
under a lock (LOCK_FILE) so that two runs starting together do not pick the same one."""
import fcntl
import ipaddress
import json
import os
import subprocess

MGMT_NET = "169.254.0.0/16"
NS_IFNAME = "mgmt0"
EXPORTER_PORT = 9417  # roceswd's default port: every exporter has an address of its own
LOCK_FILE = "/run/lock/rocelab-mgmt.lock" if os.path.isdir("/run/lock") else "/tmp/rocelab-mgmt.lock"
# The /24s a lab may take: 169.254.1.0 .. 169.254.254.0 (RFC 3927 reserves the first and the
# last), except 169.254.169.0/24 (cloud metadata services answer on 169.254.169.254).
BLOCKS = [b for b in range(1, 255) if b != 169]
PER_BLOCK = 128  # /31s in a /24


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def used_blocks():
    """The third octets of 169.254.X.0/24 that an address or a route of this namespace is in."""
    net = ipaddress.ip_network(MGMT_NET)
    used = set()
    nets = []
    for a in json.loads(_ip("-4", "-j", "addr", "show").stdout or "[]"):
        nets += [ipaddress.ip_interface(f"{x['local']}/{x['prefixlen']}").network
                 for x in a.get("addr_info", [])]
    for r in json.loads(_ip("-4", "-j", "route", "show", "table", "all").stdout or "[]"):
        if r.get("dst") not in (None, "default") and r.get("type", "unicast") == "unicast":
            nets.append(ipaddress.ip_network(r["dst"] if "/" in r["dst"] else r["dst"] + "/32",
                                             strict=False))
    for n in nets:  # a route covering several /24s (169.254.0.0/16 itself) is no conflict:
        if n.overlaps(net) and n.prefixlen >= 24:  # a /31 is more specific
            used.add(int(n.network_address) >> 8 & 0xFF)
    return used


class Network:
    """The management veths of one run: create() makes them, remove() deletes every one
    (deleting a namespace deletes its pair too; remove() makes sure on every exit path)."""

    def __init__(self):
        # switch name -> {netns, interface, address (the namespace end), root_interface,
        # root_address}: summary.json's bgp.management
        self.links = {}
        self.created = []  # root-end names, recorded before they are made

    def create(self, tag, netns, start=0):
        """A veth pair per switch ({switch name: namespace}), in the order given. Returns
        {switch name: the namespace end's address}."""
        names = list(netns)
        n_blocks = (len(names) + PER_BLOCK - 1) // PER_BLOCK
        with open(LOCK_FILE, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            used = used_blocks()
            order = BLOCKS[start % len(BLOCKS):] + BLOCKS[:start % len(BLOCKS)]
            free = [b for b in order if b not in used][:n_blocks]
            if len(free) < n_blocks:
                raise SystemExit(f"rocelab: no free /24 left in {MGMT_NET} for the management "
                                 "network (other labs or addresses use them)")
            for i, name in enumerate(names):
                block, k = free[i // PER_BLOCK], i % PER_BLOCK
                root_addr, ns_addr = f"169.254.{block}.{2 * k}", f"169.254.{block}.{2 * k + 1}"
                ifname = f"{tag}m{i}"
                self.created.append(ifname)
                _ip("link", "add", ifname, "type", "veth", "peer", "name", NS_IFNAME,
                    "netns", netns[name])
                try:  # the root end: no IPv6 (its router solicitations would reach mgmt0)
                    with open(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6", "w") as f:
                        f.write("1")
                except OSError:
                    pass
                _ip("addr", "add", f"{root_addr}/31", "dev", ifname)
                _ip("link", "set", ifname, "up")
                _ip("-n", netns[name], "addr", "add", f"{ns_addr}/31", "dev", NS_IFNAME)
                _ip("-n", netns[name], "link", "set", NS_IFNAME, "up")
                self.links[name] = {"netns": netns[name], "interface": NS_IFNAME,
                                    "address": ns_addr, "root_interface": ifname,
                                    "root_address": root_addr}
        return {name: v["address"] for name, v in self.links.items()}

    def remove(self):
        for ifname in reversed(self.created):
            _ip("link", "del", ifname, check=False)
        self.created = []
