#!/bin/bash
# System test: IPv6 BGP end to end through roceswd's control plane. The lab of lib_bgp.sh with
# BGP_LAB_V6=1: roceswd in netns <tag>-sw with host interfaces and netlink sync, BIRD next to
# it; r1 peers with it over IPv4 (r1_a, r1_b) and over IPv6 (r1_a6, r1_b6: the ipv6 channel,
# TCP-MD5 + GTSM, through the punt path), on p1 and p2.
#
#   h1 fd00:1::2/64 --- p0 [fd00:1::1]  roceswd + BIRD (AS 65101)  [p1 fd00:11::1] --- r1
#                                                                 [p2 fd00:12::1] --- r1
#   r1 (AS 65201): announces fd00:2::/64 (h2 fd00:2::2 behind it) and fd00:201::1/128 (its lo);
#   the switch announces fd00:1::/64.
#
# Checks: the four sessions Established; fd00:2::/64 an ECMP route of 2 paths in roceswd's FIB
# (rocectl show routes + show lb), as in the namespace's kernel table; fd00:201::1/128 learned;
# ping6 h1 -> h2 and h1 -> fd00:201::1 across the switch, every echo answered; ICMPv6 time
# exceeded, packet too big (p0 and h1 have the MTU 9000; path MTU discovery across it), no
# route and administratively prohibited (the kernel's reject routes) from the switch; glean; r1 shuts its
# IPv6 sessions down: both prefixes leave the kernel table and the FIB, ping6 fails and the
# IPv4 routes stay; sessions back up: the routes and ping6 come back; an IPv4 route via the
# IPv6 link-local fe80::1 on both links (BGP unnumbered's routes, one address on two links) is
# two members with their own MACs and the flows spread over both; accounting balanced; clean
# SIGTERM.
#
# RSW_BGP_KERNEL_SWITCH=1 runs it with the Linux kernel as the switch (lib_bgp.sh).
# Needs root. Run: sudo test/system/test_bgp_ipv6.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root

rsw_init
bgp_need_tools || rsw_finish
H2_NET6="fd00:2::/64"
LO6="fd00:201::1/128"

BGP_LAB_V6=1 BGP_LAB_P0_MTU=9000 bgp_lab "control_plane:
  host_interfaces: true
  netlink: true" || rsw_finish
if bgp_wait_established 20 "$SW_BIRD" r1_a r1_b r1_a6 r1_b6 >/dev/null; then
    rsw_pass "4 BGP sessions (2 IPv4, 2 IPv6; MD5 + GTSM) Established over p1 and p2, $(bgp_elapsed "$BGP_T_BIRD") s after BIRD start"
else
    rsw_fail "BGP sessions Established within 20 s: r1_a $(bgp_state "$SW_BIRD" r1_a), r1_b $(bgp_state "$SW_BIRD" r1_b), r1_a6 $(bgp_state "$SW_BIRD" r1_a6), r1_b6 $(bgp_state "$SW_BIRD" r1_b6)"
    birdc -s "$SW_BIRD" show protocols all r1_a6 2>&1 | sed 's/^/    | /' | head -n 30
    tail -n 15 "$RSW_TMP/bird-sw.log" | sed 's/^/    | sw bird: /'
    rsw_finish
fi

# The IPv6 routes: in the kernel of sw (BIRD's kernel protocol), then in the switch's FIB.
if secs="$(bgp_wait_paths 2 10 "$H2_NET6")"; then
    rsw_pass "$H2_NET6 is an ECMP route of 2 paths in the switch, $secs s after sessions up"
else
    rsw_fail "$H2_NET6 has $(bgp_route_paths "$H2_NET6") paths in the switch after 10 s, expected 2 (kernel: $(ip -n "$RSW_SW_NS" -6 route show "$H2_NET6" | tr '\n\t' '  '))"
fi
kroute="$(ip -n "$RSW_SW_NS" -6 route show "$H2_NET6")"
rsw_log "  kernel of sw: $(printf '%s' "$kroute" | tr '\n\t' '  ')"
check_eq "kernel of sw: $H2_NET6 proto bird with 2 nexthops" "$(printf '%s\n' "$kroute" | grep -c 'nexthop via')" 2
if secs="$(bgp_wait_paths 2 10 "$LO6")"; then
    rsw_pass "learned $LO6 as 2 paths in the switch ($secs s)"
else
    rsw_fail "$LO6 has $(bgp_route_paths "$LO6") paths in the switch, expected 2"
fi
if bgp_have_ctl; then
    rsw_log "  rocectl --json show routes, entry for $H2_NET6:"
    rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
for r in json.load(sys.stdin)["routes"]:
    if r["prefix"] == sys.argv[1]:
        print("    " + json.dumps(r, sort_keys=True))
' "$H2_NET6" >&2 || true
fi
if bgp_wait_synced 10; then
    rsw_pass "every proto bird route (IPv4 and IPv6) of the kernel is in the switch with as many paths: $(bgp_switch_learned | tr '\n' ' ')"
else
    rsw_fail "switch FIB = kernel proto bird routes (IPv4 and IPv6)"
fi

# Traffic across the switch by the learned IPv6 routes (the first echo may wait for ND).
ip netns exec "$H1" ping -6 -c 1 -W 2 fd00:2::2 >/dev/null 2>&1 || true
check "ping6 h1 -> h2 over the learned ECMP route (5 packets)" rsw_ping_ok ip netns exec "$H1" ping -6 -c 5 -i 0.2 -W 2 fd00:2::2
check "ping6 h1 -> fd00:201::1 (learned /128 on r1, 3 packets)" rsw_ping_ok ip netns exec "$H1" ping -6 -c 3 -i 0.2 -W 2 fd00:201::1

# ICMPv6 errors from the switch: its kernel routes what the switch punts (roceswd turns IPv6
# forwarding on for the host interfaces). Hop limit 1 (class ttl): time exceeded. Path MTU
# (class mtu): p0 and h1 have the MTU 9000, p1/p2 and r1 1500; a 2048-byte echo gets packet
# too big (mtu 1500); h1 then sends echoes of that size in fragments, and they are answered.
if bgp_have_ctl; then
    read -r ttl0 mtu0 un0 <<<"$(bgp_punted ttl mtu unreachable)"
fi
bgp_icmp_error got "$H1" 5 -6 -t 1 fd00:2::2; ttl_echoes=$BGP_ICMP_ECHOES
check_eq "hop limit 1 through the switch: time exceeded from fd00:1::1" "$got" \
    "fd00:1::1 Time exceeded: Hop limit"
bgp_icmp_error got "$H1" 5 -6 -s 2000 fd00:2::2; mtu_echoes=$BGP_ICMP_ECHOES
check_eq "2048-byte echo6: packet too big, mtu 1500, from fd00:1::1" "$got" \
    "fd00:1::1 Packet too big: mtu=1500"
check "2048-byte echo6s h1 -> h2 after path MTU discovery, fragmented by h1 (3 packets)" \
    rsw_ping_ok ip netns exec "$H1" ping -6 -c 3 -i 0.2 -W 2 -s 2000 fd00:2::2
# The kernel's unreachable and prohibit routes (reject in the switch, class unreachable): the
# kernel answers no route / administratively prohibited.
ip -n "$RSW_SW_NS" -6 route add unreachable fd00:97::/32
ip -n "$RSW_SW_NS" -6 route add prohibit fd00:98::/32
if bgp_have_ctl; then
    check_eq "unreachable and prohibit IPv6 routes in the switch" \
        "$(bgp_wait_route_kind fd00:97::/32 reject) $(bgp_wait_route_kind fd00:98::/32 reject)" \
        "reject reject"
fi
bgp_icmp_error got "$H1" 5 -6 fd00:97::1; un_echoes=$BGP_ICMP_ECHOES
check_eq "unreachable route: no route from fd00:1::1" "$got" \
    "fd00:1::1 Destination unreachable: No route"
bgp_icmp_error got "$H1" 5 -6 fd00:98::1; un_echoes=$((un_echoes + BGP_ICMP_ECHOES))
check_eq "prohibit route: administratively prohibited from fd00:1::1" "$got" \
    "fd00:1::1 Destination unreachable: Administratively prohibited"
# An unresolved next hop (class glean): fd00:1::77, an address of h1's that has sent nothing,
# so the switch has no neighbour for it; the kernel forwards the first echoes, resolving it,
# and netlink brings the neighbour to the switch.
ip -n "$H1" -6 addr add fd00:1::77/64 dev "$IF0" nodad
check "ping6 h2 -> fd00:1::77 (h1, never heard from: glean; 3 packets)" \
    rsw_ping_ok ip netns exec "$H2" ping -6 -c 3 -i 0.2 -W 2 fd00:1::77
if bgp_have_ctl; then
    check_eq "the switch learned fd00:1::77's MAC (h1's)" "$(rsw_ctl --json show neighbours | "$RSW_PYTHON" -c '
import json, sys
print("".join(n["mac"] for n in json.load(sys.stdin)["neighbours"] if n["ip"] == "fd00:1::77"))')" \
        "02:00:00:00:01:02"
fi
if bgp_have_ctl; then
    read -r ttl1 mtu1 un1 <<<"$(bgp_punted ttl mtu unreachable)"
    check_eq "punted as ttl: every hop-limit-1 echo6 ($ttl_echoes)" "$((ttl1 - ttl0))" "$ttl_echoes"
    check_eq "punted as mtu: every 2048-byte echo6 before the error ($mtu_echoes)" \
        "$((mtu1 - mtu0))" "$mtu_echoes"
    check_eq "punted as unreachable: every rejected echo6 ($un_echoes)" "$((un1 - un0))" "$un_echoes"
fi
ip -n "$RSW_SW_NS" -6 route del unreachable fd00:97::/32
ip -n "$RSW_SW_NS" -6 route del prohibit fd00:98::/32

# Peer shutdown: r1 shuts its two IPv6 sessions down. Both IPv6 prefixes are withdrawn from
# the kernel and the FIB; the IPv4 ones (other sessions) stay.
bgp_birdc "$R1_BIRD" disable sw_a6 || rsw_fail "birdc disable sw_a6 at r1"
bgp_birdc "$R1_BIRD" disable sw_b6 || rsw_fail "birdc disable sw_b6 at r1"
for p in "$H2_NET6" "$LO6"; do
    if secs="$(bgp_wait_paths 0 10 "$p")"; then
        rsw_pass "r1 shut its IPv6 sessions: $p left the switch's FIB in $secs s"
    else
        rsw_fail "r1 shut its IPv6 sessions: $p still has $(bgp_route_paths "$p") paths after 10 s"
    fi
done
check_eq "kernel of sw: no route to $H2_NET6 any more" "$(ip -n "$RSW_SW_NS" -6 route show "$H2_NET6" | wc -l)" 0
check_eq "IPv4 route 10.0.2.0/24 still 2 paths (its sessions are up)" "$(bgp_route_paths 10.0.2.0/24)" 2
nr0="$(bgp_drops p0 no_route)"
check_fails "ping6 h1 -> h2 fails while withdrawn" ip netns exec "$H1" ping -6 -c 2 -i 0.2 -W 1 fd00:2::2
if bgp_have_ctl; then
    check_eq "p0 no_route counts the 2 echoes to the withdrawn prefix" "$(( $(rsw_wait_counter $((nr0 + 2)) 2 bgp_drops p0 no_route) - nr0 ))" 2
fi

# Sessions back: the routes and the traffic return.
bgp_birdc "$R1_BIRD" enable sw_a6 || rsw_fail "birdc enable sw_a6 at r1"
bgp_birdc "$R1_BIRD" enable sw_b6 || rsw_fail "birdc enable sw_b6 at r1"
if bgp_wait_established 15 "$SW_BIRD" r1_a6 r1_b6 >/dev/null && secs="$(bgp_wait_paths 2 10 "$H2_NET6")"; then
    rsw_pass "IPv6 sessions back: $H2_NET6 2 paths again ($secs s after Established)"
else
    rsw_fail "IPv6 sessions back: r1_a6 $(bgp_state "$SW_BIRD" r1_a6), r1_b6 $(bgp_state "$SW_BIRD" r1_b6), $H2_NET6 $(bgp_route_paths "$H2_NET6") paths"
fi
check "ping6 h1 -> h2 after the re-announcement (3 packets)" rsw_ping_ok ip netns exec "$H1" ping -6 -c 3 -i 0.2 -W 2 fd00:2::2

# BGP unnumbered's routes (RFC 8950: an IPv4 prefix via IPv6 link-local next hops), with one
# link-local address on both of r1's links (fe80::1, as operators configure on every spine
# port): a kernel route of two paths `via inet6 fe80::1`, dev p1 and dev p2. Each path is its
# own router: the switch resolves fe80::1 on each port (ND through the kernel), keeps two
# members with their own MACs, and the flows spread over both links.
if bgp_have_ctl; then
    ip -n "$R1" -6 addr add fe80::1/64 dev "$IF1" nodad
    ip -n "$R1" -6 addr add fe80::1/64 dev "$IF2" nodad
    ip -n "$RSW_SW_NS" route add 10.77.0.0/24 proto static \
        nexthop via inet6 fe80::1 dev p1 nexthop via inet6 fe80::1 dev p2
    if secs="$(bgp_wait_paths 2 10 10.77.0.0/24)"; then
        rsw_pass "10.77.0.0/24 via inet6 fe80::1 on p1 and p2: 2 paths in the switch ($secs s)"
    else
        rsw_fail "10.77.0.0/24 via inet6 fe80::1 on p1 and p2: $(bgp_route_paths 10.77.0.0/24) paths in the switch, expected 2"
    fi
    lb_members() {  # "port mac" of each member of 10.77.0.0/24's group, sorted
        rsw_ctl --json show lb | "$RSW_PYTHON" -c '
import json, sys
for g in json.load(sys.stdin)["groups"]:
    if g["prefix"] == "10.77.0.0/24":
        for m in sorted(g["members"], key=lambda m: m["port"]):
            print(m["port"], m["via"], m["mac"] if m["alive"] else "unresolved")'
    }
    # The neighbours resolve once traffic asks (the switch's resolve requests to the kernel).
    ip netns exec "$H1" ping -c 1 -W 1 10.77.0.9 >/dev/null 2>&1 || true
    want="$(printf 'p1 fe80::1 %s\np2 fe80::1 %s' "$(bgp_mac "$R1" "$IF1")" "$(bgp_mac "$R1" "$IF2")")"
    members=""
    for _ in $(seq 50); do
        members="$(lb_members)"
        [ "$members" = "$want" ] && break
        sleep 0.1
    done
    check_eq "two members, fe80::1 on p1 and on p2, each with its router's MAC" "$(echo $members)" "$(echo $want)"
    a0="$(bgp_if_counter "$R1" "$IF1" rx_packets)"; b0="$(bgp_if_counter "$R1" "$IF2" rx_packets)"
    bgp_udp_flows "$H1" "$IF0" "$P0_MAC" 10.0.1.2 10.77.0.9 64 4
    read -r da db < <(bgp_r1_split "$a0" "$b0" 256)
    rsw_log "  256 packets of 64 flows to 10.77.0.9: r1 received $da on p1, $db on p2"
    check_ge "all 256 reach r1 (allowing keepalives)" $((da + db)) 256
    check_ge "flows over p1 (>= 20% of 256)" "$da" 51
    check_ge "flows over p2 (>= 20% of 256)" "$db" 51
    # Prometheus: one series per member, the link-local address with its port.
    PROM_PORT="$(sed -n 's/.*prometheus: serving http:[^ ]* (port \([0-9]*\)).*/\1/p' "$RSW_SWITCH_LOG" | head -n 1)"
    rsw_ctl --json show lb >"$RSW_TMP/lb77.json"
    check "rocesw_lb_member_packets_total{group=\"10.77.0.0/24\"}: members fe80::1%p1 and fe80::1%p2, as rocectl's" \
        ip netns exec "$RSW_SW_NS" "$RSW_PYTHON" - "${PROM_PORT:-0}" "$RSW_TMP/lb77.json" <<'PY'
import json, re, sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode()
prom = {m.group(1): int(float(m.group(2))) for m in re.finditer(
    r'^rocesw_lb_member_packets_total\{group="10\.77\.0\.0/24",member="([^"]+)"\} (\S+)$', body, re.M)}
g = [g for g in json.load(open(sys.argv[2]))["groups"] if g["prefix"] == "10.77.0.0/24"][0]
ctl = {m["via"] + "%" + m["port"]: m["packets"] for m in g["members"]}
print("scrape", prom, "rocectl", ctl)
sys.exit(0 if prom == ctl and sorted(prom) == ["fe80::1%p1", "fe80::1%p2"] else 1)
PY
    ip -n "$RSW_SW_NS" route del 10.77.0.0/24 proto static
fi

if bgp_have_ctl; then
    if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive after all of it"; else rsw_fail "roceswd died"; fi
    rsw_assert_accounting
    rc=0
    stop_switch 10 || rc=$?
    check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
fi
rsw_finish
