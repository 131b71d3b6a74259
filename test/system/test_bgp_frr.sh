#!/bin/bash
# System test: FRR as the routing daemon beside roceswd, with the shipped template
# config/bgp/frr-leaf.conf. roceswd runs in netns <tag>-sw with host interfaces and netlink
# sync; FRR's zebra, bgpd and staticd run in the same namespace (by hand: own config, pid files and
# sockets in the run's directory; Debian's frr.service plays no part) with the leaf template,
# rendered for the test (only the TCP-MD5 password and the log target change: the template's
# addresses, ASN, route maps, timers and GTSM are used as shipped; zebra keeps its default of
# routes through kernel nexthop objects). The switch's namespace runs with
# net.ipv4.nexthop_compat_mode 0, so the kernel's route messages name the object only and
# roceswd must follow the objects. A router r1 (BIRD, AS 65000) plays both spines of the
# template.
#
#   h1 10.10.1.2/24        p2 [10.10.1.1/24, fd00:10:1::1/64]   roceswd + FRR (leaf1, AS 65101)
#   fd00:10:1::2/64 ---                                          p0 [10.1.1.1/31, fd00:1:1::1/127] --- r1 10.1.1.0, fd00:1:1::
#                                                                p1 [10.1.2.1/31, fd00:1:2::1/127] --- r1 10.1.2.0, fd00:1:2::
#   r1 (AS 65000, BIRD, sessions over IPv4 and IPv6 on both links): announces 10.20.0.0/24 and
#   fd00:20::/64 (h2 10.20.0.2, fd00:20::2 behind it); FRR announces 10.10.1.0/24 and
#   fd00:10:1::/64 (the template's HOSTS4/HOSTS6).
#
# Checks: both templates pass vtysh's dry run; FRR's 4 sessions Established; 10.20.0.0/24 and
# fd00:20::/64 are `proto bgp` kernel routes naming a kernel nexthop group of 2 (nhid, no next
# hop in the route), and ECMP routes of 2 paths in roceswd's FIB; ping and ping6 h1 -> h2, 64 UDP flows all delivered;
# r1 shuts one IPv4 session: the switch goes to 1 path, and back to 2; staticd's blackhole
# routes (IPv4 and IPv6) drop what they cover as route_discard beside BGP's routes, its reject
# route punts it for the kernel's ICMP host unreachable, and their removal forwards again; accounting balanced; clean SIGTERM.
#
# Needs root and FRR (tools/bootstrap installs frr). Run: sudo test/system/test_bgp_frr.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root
if [ "$RSW_BGP_KERNEL" = 1 ]; then
    echo "SKIP $(basename "$0"): RSW_BGP_KERNEL_SWITCH=1 is not supported here (FRR beside roceswd only)"
    exit "$RSW_SKIP"
fi

rsw_init
bgp_need_tools || rsw_finish
bgp_need_frr || rsw_finish
BGP_KERNEL_PROTO=bgp   # zebra's routes
TEMPLATES="$RSW_REPO/config/bgp"
H2_NET="10.20.0.0/24"
H2_NET6="fd00:20::/64"

# The shipped templates are valid FRR configuration (vtysh knows every daemon's commands).
for t in frr-leaf.conf frr-spine.conf; do
    check "config/bgp/$t passes vtysh's dry run (vtysh -C -f)" vtysh -C -f "$TEMPLATES/$t"
done

IF0="$(rsw_ifname p0)"; IF1="$(rsw_ifname p1)"; IF2="$(rsw_ifname p2)"
IFR2="$(rsw_ifname r2)"; IFH2="$(rsw_ifname h2)"
H1="$(rsw_ns h1)"; H2="$(rsw_ns h2)"; R1="$(rsw_ns r1)"
CFG="$RSW_TMP/switch.yaml"; LOG="$RSW_TMP/roceswd.log"; SOCK="$RSW_TMP/ctl.sock"
R1_BIRD="$RSW_TMP/bird-r1.ctl"
cat >"$CFG" <<EOC
switch:
  name: ${RSW_TAG}
  workers: 1
  idle: adaptive
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
ports:
  - name: p0
    device: "net_tap0,iface=${IF0}"
    mac: "02:00:00:00:01:01"
    ipv4: ["10.1.1.1/31"]
    ipv6: ["fd00:1:1::1/127"]
  - name: p1
    device: "net_tap1,iface=${IF1}"
    mac: "02:00:00:00:02:01"
    ipv4: ["10.1.2.1/31"]
    ipv6: ["fd00:1:2::1/127"]
  - name: p2
    device: "net_tap2,iface=${IF2}"
    mac: "02:00:00:00:10:01"
    ipv4: ["10.10.1.1/24"]
    ipv6: ["fd00:10:1::1/64"]
control_plane:
  host_interfaces: true
  netlink: true
EOC
echo "== $(basename "$0"): tag $RSW_TAG, temp dir $RSW_TMP"
if ! bgp_start_switch "$CFG" "$LOG" p0 p1 p2; then
    rsw_fail "roceswd starts in its namespace with host interfaces p0 p1 p2"
    rsw_finish
fi
rsw_pass "switch up in $RSW_SW_NS (pid $RSW_SWITCH_PID)"
P2_MAC="$(bgp_mac "$RSW_SW_NS" p2)"

# h1 on p2; r1 on p0 and p1 (the template's spine1 and spine2); h2 behind r1.
bgp_attach p2 "$H1"
bgp_host "$H1" "$IF2" 02:00:00:00:10:02 10.10.1.2/24 10.10.1.1
ip -n "$H1" -6 addr add fd00:10:1::2/64 dev "$IF2" nodad
ip -n "$H1" -6 route add default via fd00:10:1::1 dev "$IF2"
bgp_attach p0 "$R1"
bgp_attach p1 "$R1"
bgp_host "$R1" "$IF0" 02:00:00:00:01:02 10.1.1.0/31 ""
bgp_host "$R1" "$IF1" 02:00:00:00:02:02 10.1.2.0/31 ""
ip -n "$R1" -6 addr add fd00:1:1::/127 dev "$IF0" nodad
ip -n "$R1" -6 addr add fd00:1:2::/127 dev "$IF1" nodad
bgp_ns "$H2"
ip -n "$R1" link add "$IFR2" type veth peer name "$IFH2" netns "$H2"
ip -n "$R1" addr add 10.20.0.1/24 dev "$IFR2"
ip -n "$R1" -6 addr add fd00:20::1/64 dev "$IFR2" nodad
ip -n "$R1" link set "$IFR2" up
bgp_host "$H2" "$IFH2" 02:00:00:00:20:02 10.20.0.2/24 10.20.0.1
ip -n "$H2" -6 addr add fd00:20::2/64 dev "$IFH2" nodad
ip -n "$H2" -6 route add default via fd00:20::1 dev "$IFH2"
ip netns exec "$R1" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 >/dev/null
bgp_redo_dad "$RSW_SW_NS"

# Route messages that name a nexthop object and carry none of its next hops (zebra's objects
# are then the only place the switch finds them).
ip netns exec "$RSW_SW_NS" sysctl -qw net.ipv4.nexthop_compat_mode=0

# FRR in the switch's namespace: the leaf template, rendered. The password is the one r1 uses;
# the log goes to the run's directory instead of syslog.
rsw_mktemp FRR_DIR
sed -e "s/change-me-per-fabric/$BGP_PASSWORD/" \
    -e "s|^log syslog informational|log file $FRR_DIR/frr.log informational|" \
    "$TEMPLATES/frr-leaf.conf" >"$FRR_DIR/frr.conf"
check_eq "rendered template differs from the shipped one in the password and log lines only" \
    "$(diff "$TEMPLATES/frr-leaf.conf" "$FRR_DIR/frr.conf" | grep '^>' | grep -cvE "password $BGP_PASSWORD\$|^> log file ")" 0
T_FRR=$(date +%s%N)
if bgp_start_frr "$RSW_SW_NS" "$FRR_DIR/frr.conf" "$FRR_DIR" bgpd staticd; then
    rsw_pass "FRR $(dpkg-query -W -f='${Version}' frr 2>/dev/null) zebra + bgpd + staticd running in $RSW_SW_NS with the leaf template"
else
    rsw_fail "FRR zebra + bgpd + staticd start in $RSW_SW_NS with the leaf template"
    rsw_finish
fi

# r1: BIRD, AS 65000 (the template's spines), TCP-MD5 + GTSM, IPv4 and IPv6 sessions.
bgp_bird_conf "$RSW_TMP/bird-r1.conf" 10.1.1.0 65000 'source = RTS_DEVICE' \
    "protocol direct d_h2 { ipv4; ipv6; interface \"$IFR2\"; }" \
    leaf_a:10.1.1.1:65101:"$IF0" leaf_b:10.1.2.1:65101:"$IF1" \
    leaf_a6:fd00:1:1::1:65101:"$IF0" leaf_b6:fd00:1:2::1:65101:"$IF1"
bgp_start_bird "$R1" "$RSW_TMP/bird-r1.conf" "$R1_BIRD" "$RSW_TMP/bird-r1.log" ||
    { rsw_fail "BIRD starts in $R1"; rsw_finish; }

NEIGHBOURS=(10.1.1.0 10.1.2.0 fd00:1:1:: fd00:1:2::)
if bgp_frr_wait_established 30 "$FRR_DIR" "${NEIGHBOURS[@]}" >/dev/null; then
    rsw_pass "FRR's 4 sessions (IPv4 + IPv6 to both spines, MD5 + GTSM) Established, $(bgp_elapsed "$T_FRR") s after FRR start"
else
    rsw_fail "FRR's sessions Established within 30 s: $(for n in "${NEIGHBOURS[@]}"; do printf '%s %s; ' "$n" "$(bgp_frr_state "$FRR_DIR" "$n")"; done)"
    vtysh --vty_socket "$FRR_DIR" -c 'show bgp summary' 2>&1 | sed 's/^/    | /' | head -n 30
    tail -n 10 "$FRR_DIR/bgpd.log" | sed 's/^/    | bgpd: /'
    tail -n 10 "$RSW_TMP/bird-r1.log" | sed 's/^/    | r1 bird: /'
fi

# kernel_paths PREFIX: the gateway of each path of PREFIX in the switch namespace's kernel, one a
# line, through the route's nexthop object (a group's members) or the route itself.
kernel_paths() {
    local fam=-4
    case "$1" in *:*) fam=-6 ;; esac
    { ip -n "$RSW_SW_NS" -j "$fam" route show "$1"; echo; ip -n "$RSW_SW_NS" -j nexthop show; } |
        "$RSW_PYTHON" -c '
import json, sys
route, objs = [json.loads(c) for c in sys.stdin.read().split("\n") if c.strip()]
objs = {o["id"]: o for o in objs}
r = route[0]
if "nhid" in r:
    o = objs[r["nhid"]]
    hops = [objs[m["id"]] for m in o["group"]] if "group" in o else [o]
else:
    hops = r.get("nexthops", [r])
for h in hops:
    print(h.get("gateway", "-"))
'
}

# Learned routes: zebra's kernel routes (through nexthop objects) and the FIB.
for p in "$H2_NET" "$H2_NET6"; do
    if secs="$(bgp_wait_paths 2 15 "$p")"; then
        rsw_pass "$p is an ECMP route of 2 paths in the switch, $secs s after the sessions"
    else
        rsw_fail "$p has $(bgp_route_paths "$p") paths in the switch after 15 s, expected 2 (kernel: $(ip -n "$RSW_SW_NS" route show "$p" | tr '\n\t' '  '))"
    fi
    fam=-4; case "$p" in *:*) fam=-6 ;; esac
    kroute="$(ip -n "$RSW_SW_NS" "$fam" -d route show "$p")"
    rsw_log "  kernel of sw: $(printf '%s' "$kroute" | tr '\n\t' '  ')"
    check_eq "kernel of sw: $p names a kernel nexthop object (zebra's default)" \
        "$(printf '%s\n' "$kroute" | grep -c 'nhid')" 1
    check_eq "kernel of sw: $p carries no next hop in the route (nexthop_compat_mode 0)" \
        "$(printf '%s\n' "$kroute" | grep -c 'nexthop via\| via ')" 0
    check_eq "kernel of sw: $p's object is a group of 2 paths" "$(kernel_paths "$p" | grep -c .)" 2
done
# zebra installs the IPv6 route via the spines' link-local addresses (the BGP next hop's
# link-local part), which nothing else resolves: roceswd asks the kernel to (netlink
# "resolve_requests"), or the ECMP members would stay without a MAC.
check_eq "kernel of sw: $H2_NET6 via 2 link-local next hops" \
    "$(kernel_paths "$H2_NET6" | grep -c '^fe80::')" 2
check_ge "roceswd followed kernel nexthop objects (show control: netlink nexthop_changes)" \
    "$(rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["netlink"]["nexthop_changes"])')" 3
# The same count on Prometheus (served inside the switch's namespace).
PROM_PORT="$(sed -n 's/.*prometheus: serving http:[^ ]* (port \([0-9]*\)).*/\1/p' "$LOG" | head -n 1)"
nh_events="$(ip netns exec "$RSW_SW_NS" "$RSW_PYTHON" -c '
import re, sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode()
m = re.search(r"^rocesw_netlink_events_total\{event=\"nexthop_change\"\} (\S+)$", body, re.M)
print(int(float(m.group(1))) if m else -1)' "${PROM_PORT:-0}" 2>/dev/null || echo -1)"
check_ge "Prometheus (port ${PROM_PORT:-?}): rocesw_netlink_events_total{event=\"nexthop_change\"}" \
    "$nh_events" 3
check_ge "roceswd asked the kernel to resolve next hops (show control: netlink resolve_requests)" \
    "$(rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["netlink"]["resolve_requests"])')" 2
rsw_log "  rocectl --json show routes, entry for $H2_NET:"
rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
for r in json.load(sys.stdin)["routes"]:
    if r["prefix"] == sys.argv[1]:
        print("    " + json.dumps(r, sort_keys=True))
' "$H2_NET" >&2 || true
if bgp_wait_synced 10; then
    rsw_pass "every proto bgp kernel route is in the switch with as many paths: $(bgp_switch_learned | tr '\n' ' ')"
else
    rsw_fail "switch FIB = kernel proto bgp routes"
fi

# Traffic across the switch by FRR's routes.
ip netns exec "$H1" ping -c 1 -W 2 10.20.0.2 >/dev/null 2>&1 || true
ip netns exec "$H1" ping -6 -c 1 -W 2 fd00:20::2 >/dev/null 2>&1 || true
check "ping h1 -> h2 over the ECMP route (5 packets)" rsw_ping_ok ip netns exec "$H1" ping -c 5 -i 0.2 -W 2 10.20.0.2
check "ping6 h1 -> h2 over the ECMP route (5 packets)" rsw_ping_ok ip netns exec "$H1" ping -6 -c 5 -i 0.2 -W 2 fd00:20::2
a0="$(bgp_if_counter "$R1" "$IF0" rx_packets)"; b0="$(bgp_if_counter "$R1" "$IF1" rx_packets)"
h0="$(bgp_if_counter "$H2" "$IFH2" rx_packets)"
bgp_udp_flows "$H1" "$IF2" "$P2_MAC" 10.10.1.2 10.20.0.2 64 4
h1c="$(bgp_wait_if_counter "$H2" "$IFH2" rx_packets $((h0 + 256)) 5)" || true
a1="$(bgp_if_counter "$R1" "$IF0" rx_packets)"; b1="$(bgp_if_counter "$R1" "$IF1" rx_packets)"
rsw_log "  ECMP split of 256 packets (64 flows): r1 $IF0 +$((a1 - a0)), $IF1 +$((b1 - b0)) (includes BGP keepalives)"
check_ge "h2 received all 256 UDP packets of 64 flows" "$((h1c - h0))" 256
check_ge "flows over p0 (>= 20% of 256)" "$((a1 - a0))" 51
check_ge "flows over p1 (>= 20% of 256)" "$((b1 - b0))" 51

# r1 shuts its session over p1: FRR withdraws that path, the switch follows; and back.
bgp_birdc "$R1_BIRD" disable leaf_b || rsw_fail "birdc disable leaf_b at r1"
if secs="$(bgp_wait_paths 1 10 "$H2_NET")"; then
    rsw_pass "r1 shut the p1 session: $H2_NET down to 1 path in the switch in $secs s"
else
    rsw_fail "r1 shut the p1 session: $H2_NET has $(bgp_route_paths "$H2_NET") paths after 10 s"
fi
check "ping h1 -> h2 over the remaining path (3 packets)" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.20.0.2
bgp_birdc "$R1_BIRD" enable leaf_b || rsw_fail "birdc enable leaf_b at r1"
if bgp_frr_wait_established 15 "$FRR_DIR" 10.1.2.0 >/dev/null && secs="$(bgp_wait_paths 2 15 "$H2_NET")"; then
    rsw_pass "session back: $H2_NET 2 paths again ($secs s after Established)"
else
    rsw_fail "session back: 10.1.2.0 $(bgp_frr_state "$FRR_DIR" 10.1.2.0), $H2_NET $(bgp_route_paths "$H2_NET") paths"
fi

# FRR's discard routes (staticd, as a lab's aggregate or null route): zebra installs
# `blackhole` and `reject` as blackhole and unreachable kernel routes (proto static, metric 20).
# The switch drops what a blackhole covers as route_discard and punts what the unreachable route
# covers (class unreachable: the kernel answers ICMP host unreachable), routes the more specific
# and the shorter around them, and follows their removal.
wait_drops() {  # REASON TARGET: waits up to 5 s for p2's drops of REASON to reach TARGET
    for _ in $(seq 50); do
        [ "$(bgp_drops p2 "$1")" -ge "$2" ] && break
        sleep 0.1
    done
    bgp_drops p2 "$1"
}
frr_static() {  # COMMAND...: in vtysh's configure mode
    local c a=()
    for c in "$@"; do a+=(-c "$c"); done
    vtysh --vty_socket "$FRR_DIR" -c 'configure terminal' "${a[@]}" >/dev/null
}
BH4=10.20.0.128/25 RJ4=10.31.0.0/16 BH6=fd00:20::8000/113
if frr_static "ip route $BH4 blackhole" "ip route $RJ4 reject" "ipv6 route $BH6 blackhole"; then
    rsw_pass "staticd: $BH4 blackhole, $RJ4 reject, $BH6 blackhole"
else
    rsw_fail "vtysh: static discard routes"
fi
check_eq "the switch's route of $BH4 (inside BGP's $H2_NET)" "$(bgp_wait_route_kind "$BH4" discard)" discard
check_eq "the switch's route of $RJ4 (reject)" "$(bgp_wait_route_kind "$RJ4" reject)" reject
check_eq "the switch's route of $BH6 (the kernel's blackhole dev lo)" "$(bgp_wait_route_kind "$BH6" discard)" discard
rsw_log "  kernel of sw: $(ip -n "$RSW_SW_NS" -d route show "$BH4") | $(ip -n "$RSW_SW_NS" -d route show "$RJ4") | $(ip -n "$RSW_SW_NS" -6 -d route show "$BH6")"
kernel_kind() {  # PREFIX: the kernel's route type, protocol, and whether it names a nexthop object
    ip -n "$RSW_SW_NS" -j route show "$1" | "$RSW_PYTHON" -c '
import json, sys
r = json.load(sys.stdin)[0]
print(r.get("type", "unicast"), r.get("protocol"), "nhid" if "nhid" in r else "no-nhid")'
}
check_eq "kernel of sw: zebra's $BH4 and $RJ4 are blackhole and unreachable routes, through no object" \
    "$(kernel_kind "$BH4"), $(kernel_kind "$RJ4")" "blackhole static no-nhid, unreachable static no-nhid"
rd0="$(bgp_drops p2 route_discard)"; nr0="$(bgp_drops p2 no_route)"; un0="$(bgp_punted unreachable)"
bgp_udp_flows "$H1" "$IF2" "$P2_MAC" 10.10.1.2 10.20.0.200 4 2
check_eq "8 packets to 10.20.0.200 (the /25 blackhole) dropped as route_discard" \
    "$(( $(wait_drops route_discard $((rd0 + 8))) - rd0 ))" 8
bgp_icmp_error got "$H1" 5 10.31.0.1
check_eq "10.31.0.1 (reject): the kernel answers host unreachable from p2's address" \
    "$got" "10.10.1.1 Destination Host Unreachable"
un_echoes=$BGP_ICMP_ECHOES
bgp_udp_flows "$H1" "$IF2" "$P2_MAC" 10.10.1.2 10.31.0.1 2 2
for _ in $(seq 50); do [ "$(bgp_punted unreachable)" -ge $((un0 + un_echoes + 4)) ] && break; sleep 0.1; done
check_eq "the echoes and 4 packets to 10.31.0.1 (reject) punted for the kernel's ICMP unreachable" \
    "$(( $(bgp_punted unreachable) - un0 ))" "$((un_echoes + 4))"
ip netns exec "$H1" ping -6 -c 3 -i 0.2 -W 1 fd00:20::8001 >/dev/null 2>&1 || true
check_eq "3 echo requests to fd00:20::8001 (the IPv6 blackhole) dropped as route_discard" \
    "$(( $(wait_drops route_discard $((rd0 + 11))) - rd0 ))" 11
check_eq "none of them as no_route" "$(( $(bgp_drops p2 no_route) - nr0 ))" 0
check "ping h1 -> h2 10.20.0.2 (BGP's /24 beside the /25 blackhole)" rsw_ping_ok ip netns exec "$H1" ping -c 2 -i 0.2 -W 2 10.20.0.2
check "ping6 h1 -> h2 fd00:20::2 (BGP's /64 beside the IPv6 blackhole)" rsw_ping_ok ip netns exec "$H1" ping -6 -c 2 -i 0.2 -W 2 fd00:20::2
frr_static "no ip route $BH4 blackhole" "no ip route $RJ4 reject" "no ipv6 route $BH6 blackhole" ||
    rsw_fail "vtysh: static discard routes removed"
check_eq "$BH4 removed: gone from the switch" "$(bgp_wait_route_kind "$BH4" none)" none
check_eq "$RJ4 removed: gone from the switch" "$(bgp_wait_route_kind "$RJ4" none)" none
check_eq "$BH6 removed: gone from the switch" "$(bgp_wait_route_kind "$BH6" none)" none
rd1="$(bgp_drops p2 route_discard)"; a0="$(bgp_if_counter "$R1" "$IF0" rx_packets)"; b0="$(bgp_if_counter "$R1" "$IF1" rx_packets)"
bgp_udp_flows "$H1" "$IF2" "$P2_MAC" 10.10.1.2 10.20.0.200 4 2
sleep 0.5
a1="$(bgp_if_counter "$R1" "$IF0" rx_packets)"; b1="$(bgp_if_counter "$R1" "$IF1" rx_packets)"
check_ge "8 packets to 10.20.0.200 forwarded to r1 by BGP's $H2_NET" "$((a1 - a0 + b1 - b0))" 8
check_eq "and none dropped as route_discard" "$(( $(bgp_drops p2 route_discard) - rd1 ))" 0

if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive after all of it"; else rsw_fail "roceswd died"; fi
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
