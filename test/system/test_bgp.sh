#!/bin/bash
# System test (TESTPLAN C1, C3, C5): BGP through the control plane. roceswd runs in its own
# namespace with host interfaces and netlink sync; BIRD runs next to it and peers with a router
# r1 over two links; the switch must forward by the learned routes.
#
#                       netns <tag>-sw
#   h1 --- <tag>p0 [p0 10.0.1.1]  roceswd + BIRD (AS 65101)  [p1 10.0.11.1] --- <tag>p1 --- r1
#   10.0.1.2/24                                               [p2 10.0.12.1] --- <tag>p2 --- r1
#   (p0 and h1: MTU 9000; p1, p2, r1, h2: 1500)
#
#   r1 (AS 65201, BIRD): 10.0.11.2/24, 10.0.12.2/24; lo 10.201.0.1-3/32, 10.250.0.1/32;
#      <tag>r2 10.0.2.1/24 --- veth --- h2 10.0.2.2/24
#   r1 announces 10.0.2.0/24 (direct), 10.201.0.2/32 + 10.201.0.3/32 (static "s_keep") and
#   10.201.0.1/32 (static "s_wd", withdrawn in the test) over both sessions: multipath routes.
#   The switch announces 10.0.1.0/24. Config static route 10.250.0.0/24 via 10.0.12.2 (C5).
#   Both BGP sessions use TCP-MD5 and GTSM (TTL security), through the punt path.
#
# Checks: sessions Established; learned routes in `rocectl show routes`; the multipath route is
# an ECMP group of 2; h1 <-> h2 ping; ICMP time exceeded, host unreachable, packet filtered
# and fragmentation needed from the switch (its kernel, through the punt path), path MTU
# discovery and fragmentation across it; the configured neighbour h1 outlives the kernel's
# entry; 64 UDP flows split over p1/p2; the static route works
# next to learned ones; a withdrawal stops traffic within 1 s (no_route rises); a floating static
# (higher metric) takes over when BGP withdraws and steps back when it returns; one r1 link down
# moves everything to the other after the hold time (3 s); 10 session flaps leave route count,
# group count and RSS stable; clean SIGTERM.
#
# RSW_BGP_KERNEL_SWITCH=1 runs everything with the Linux kernel as the switch (lib_bgp.sh).
# Needs root. Run: sudo test/system/test_bgp.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root

rsw_init
bgp_need_tools || rsw_finish
H2_NET="10.0.2.0/24"
WD_PFX="10.201.0.1/32"

BGP_LAB_P0_MTU=9000 bgp_lab "routes:
  - {prefix: 10.250.0.0/24, via: 10.0.12.2}
neighbours:
  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\", port: p0}
control_plane:
  host_interfaces: true
  netlink: true
  punt_pps: {arp: 600, nd: 600, icmp: 600, bgp: 2000, l4: 1000, lldp: 100, ttl: 200, unreachable: 200, mtu: 200, glean: 200, other: 100}" || rsw_finish
if [ "$RSW_BGP_KERNEL" = 1 ]; then
    # The config's static route, as the kernel's own.
    ip -n "$RSW_SW_NS" route add 10.250.0.0/24 via 10.0.12.2
fi
up=0
bgp_lab_sessions 20 && up=1

# C1: learned routes in the kernel of sw and in the switch.
if secs="$(bgp_wait_paths 2 10 "$H2_NET")"; then
    rsw_pass "$H2_NET is an ECMP route of 2 paths in the switch, $secs s after sessions up"
else
    rsw_fail "$H2_NET has $(bgp_route_paths "$H2_NET") paths in the switch after 10 s, expected 2 (kernel: $(ip -n "$RSW_SW_NS" route show "$H2_NET" | tr '\n\t' '  '))"
fi
kroute="$(ip -n "$RSW_SW_NS" route show "$H2_NET")"
check_eq "kernel of sw: $H2_NET proto bird with 2 nexthops" "$(printf '%s\n' "$kroute" | grep -c 'nexthop via')" 2
learned="$(bgp_switch_learned | tr '\n' ' ')"
for p in "$H2_NET" 10.201.0.1/32 10.201.0.2/32 10.201.0.3/32; do
    case " $learned " in
        *" $p "*) rsw_pass "learned route $p in the switch's FIB" ;;
        *) rsw_fail "learned route $p missing from the switch (learned: $learned)" ;;
    esac
done
if bgp_have_ctl; then
    rsw_log "  rocectl --json show routes, entry for $H2_NET (for the report):"
    rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
for r in json.load(sys.stdin)["routes"]:
    if r["prefix"] == sys.argv[1]:
        print("    " + json.dumps(r, sort_keys=True))
' "$H2_NET" >&2 || true
fi
check_eq "static route 10.250.0.0/24 from the config kept next to learned ones (C5)" \
    "$(bgp_route_paths 10.250.0.0/24)" 1

# Forwarding through the switch by learned routes.
ip netns exec "$H1" ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
check "ping h1 -> h2 over the learned ECMP route (5 packets)" rsw_ping_ok ip netns exec "$H1" ping -c 5 -i 0.2 -W 2 10.0.2.2
check "ping h1 -> 10.201.0.2 (learned /32 on r1)" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.201.0.2

# ICMP errors, answered by the kernel of the switch's namespace from what the switch punts (its
# host interface p0, 10.0.1.1): time exceeded for TTL 1 (class ttl); host unreachable and
# administratively prohibited for its unreachable and prohibit routes (class unreachable); a
# blackhole answers nothing and counts route_discard. Echoes one at a time until the answer
# (bgp_icmp_error: the kernel limits the errors it sends one host).
ip -n "$RSW_SW_NS" route add unreachable 10.97.0.0/16
ip -n "$RSW_SW_NS" route add prohibit 10.98.0.0/16
ip -n "$RSW_SW_NS" route add blackhole 10.99.0.0/16
if bgp_have_ctl; then
    check_eq "unreachable, prohibit and blackhole routes in the switch" \
        "$(bgp_wait_route_kind 10.97.0.0/16 reject) $(bgp_wait_route_kind 10.98.0.0/16 reject) $(bgp_wait_route_kind 10.99.0.0/16 discard)" \
        "reject reject discard"
    punt0="$(bgp_punted ttl unreachable)"
fi
bgp_icmp_error got "$H1" 5 -t 1 10.0.2.2; ttl_echoes=$BGP_ICMP_ECHOES
check_eq "TTL 1 through the switch: time exceeded from 10.0.1.1" "$got" "10.0.1.1 Time to live exceeded"
bgp_icmp_error got "$H1" 5 10.97.1.1; un_echoes=$BGP_ICMP_ECHOES
check_eq "unreachable route: host unreachable from 10.0.1.1" "$got" "10.0.1.1 Destination Host Unreachable"
bgp_icmp_error got "$H1" 5 10.98.1.1; un_echoes=$((un_echoes + BGP_ICMP_ECHOES))
check_eq "prohibit route: packet filtered from 10.0.1.1" "$got" "10.0.1.1 Packet filtered"
bh0="$(bgp_drops p0 route_discard)"
bgp_icmp_error got "$H1" 1 10.99.1.1
check_eq "blackhole route: no answer" "$got" ""
if bgp_have_ctl; then
    check_eq "the blackhole's echo counts route_discard" "$(( $(bgp_drops p0 route_discard) - bh0 ))" 1
    read -r ttl0 un0 <<<"$punt0"
    punt1="$(bgp_punted ttl unreachable)"
    read -r ttl1 un1 <<<"$punt1"
    check_eq "punted as ttl: every TTL-1 echo ($ttl_echoes)" "$((ttl1 - ttl0))" "$ttl_echoes"
    check_eq "punted as unreachable: every rejected echo ($un_echoes)" "$((un1 - un0))" "$un_echoes"
fi

# Path MTU (class mtu): p0 and h1 have the IP MTU 9000, the routes toward r1 leave by p1/p2 at
# 1500. Without DF the kernel of the switch's namespace fragments h1's 2028-byte echoes (and
# sends the fragments out by p1/p2), so they are answered; with DF it answers ICMP
# fragmentation needed with the MTU, h1 learns the path's MTU, and its next echoes of that
# size leave h1 in fragments and are answered. A 1500-byte packet with DF passes.
if bgp_have_ctl; then
    mtu0="$(bgp_punted mtu)"
    mtu_drops0="$(bgp_drops p0 mtu_exceeded)"
fi
check "2028-byte echoes without DF h1 -> h2, fragmented by the switch's kernel (3 packets)" \
    rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 -M dont -s 2000 10.0.2.2
bgp_icmp_error got "$H1" 5 -M do -s 2000 10.0.2.2; mtu_echoes=$BGP_ICMP_ECHOES
check_eq "2028-byte echo with DF: fragmentation needed, mtu 1500, from 10.0.1.1" "$got" \
    "10.0.1.1 Frag needed and DF set (mtu = 1500)"
check_eq "h1 learned the path MTU to h2" \
    "$(ip -n "$H1" route get 10.0.2.2 | grep -o 'mtu [0-9]*' | head -n 1)" "mtu 1500"
check "2028-byte echoes h1 -> h2 after path MTU discovery, fragmented by h1 (3 packets)" \
    rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 -s 2000 10.0.2.2
check "1500-byte echoes with DF h1 -> h2 (3 packets)" \
    rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 -M do -s 1472 10.0.2.2
if bgp_have_ctl; then
    mtu1="$(bgp_punted mtu)"
    check_eq "punted as mtu: the 3 echoes without DF and every echo with DF ($mtu_echoes)" \
        "$((mtu1 - mtu0))" "$((3 + mtu_echoes))"
    check_eq "no mtu_exceeded drop (the kernel answered each)" \
        "$(( $(bgp_drops p0 mtu_exceeded) - mtu_drops0 ))" 0
fi

ip -n "$RSW_SW_NS" route del unreachable 10.97.0.0/16
ip -n "$RSW_SW_NS" route del prohibit 10.98.0.0/16
ip -n "$RSW_SW_NS" route del blackhole 10.99.0.0/16
check "ping h1 -> 10.250.0.1 (config static route, C5)" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.250.0.1

# h1 (10.0.1.2) is a configured neighbour: the kernel's entry for it (another MAC, then none)
# leaves the config's in effect, as a permanent entry would. A kernel-only address is learned,
# and its delete removes it. Each kernel change is followed by a marker neighbour the switch
# must learn: netlink is read in order, so by then the change before it was taken.
# neigh_of IP: "mac source" of the switch's entry for IP, or "none".
neigh_of() {
    rsw_ctl --json show neighbours | "$RSW_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
rows = d["neighbours"]
m = [n["mac"] + " " + n["source"] for n in rows if n["ip"] == sys.argv[1]]
print(m[0] if m else "none")' "$1"
}
# neigh_marker N: a kernel neighbour 10.0.1.(100+N) on p0; waits until the switch has it.
neigh_marker() {
    local ip="10.0.1.$((100 + $1))" i
    ip -n "$RSW_SW_NS" neigh replace "$ip" lladdr "02:00:00:00:01:$((40 + $1))" dev p0 nud reachable
    for i in $(seq 50); do
        [ "$(neigh_of "$ip")" != none ] && return 0
        sleep 0.1
    done
    rsw_log "neigh_marker: $ip not in the switch after 5 s"
    return 1
}
if bgp_have_ctl; then
    check_eq "configured neighbour h1 in the switch" "$(neigh_of 10.0.1.2)" "02:00:00:00:01:02 static"
    ip -n "$RSW_SW_NS" neigh replace 10.0.1.2 lladdr 02:00:00:00:01:99 dev p0 nud reachable
    neigh_marker 1 || true
    check_eq "the kernel's entry for h1 with another MAC leaves the config's" \
        "$(neigh_of 10.0.1.2)" "02:00:00:00:01:02 static"
    check_eq "rocectl show neighbours names the kernel's other MAC for h1" \
        "$(rsw_ctl show neighbours | awk '$1 == "10.0.1.2" {print $4, $5, $6}')" "static (kernel: 02:00:00:00:01:99)"
    check "ping h1 -> h2 after the kernel's other MAC (replies reach h1's MAC)" \
        rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.0.2.2
    ip -n "$RSW_SW_NS" neigh del 10.0.1.2 dev p0
    neigh_marker 2 || true
    check_eq "the kernel deleting its entry for h1 leaves the config's" \
        "$(neigh_of 10.0.1.2)" "02:00:00:00:01:02 static"
    check_eq "marker neighbour learned from the kernel" "$(neigh_of 10.0.1.101)" "02:00:00:00:01:41 learned"
    ip -n "$RSW_SW_NS" neigh del 10.0.1.101 dev p0
    neigh_marker 3 || true
    check_eq "the kernel deleting a learned neighbour removes it" "$(neigh_of 10.0.1.101)" none
    ip -n "$RSW_SW_NS" neigh del 10.0.1.102 dev p0 2>/dev/null || true
    ip -n "$RSW_SW_NS" neigh del 10.0.1.103 dev p0 2>/dev/null || true
fi

# ECMP spread: 64 UDP flows x 4 packets, counted where they arrive on r1's two links.
a0="$(bgp_if_counter "$R1" "$IF1" rx_packets)"; b0="$(bgp_if_counter "$R1" "$IF2" rx_packets)"
h0="$(bgp_if_counter "$H2" "$IFH2" rx_packets)"
bgp_udp_flows "$H1" "$IF0" "$P0_MAC" 10.0.1.2 10.0.2.2 64 4
# Every packet crosses r1 before h2: once h2 has them all, r1's counters are final.
h1c="$(bgp_wait_if_counter "$H2" "$IFH2" rx_packets $((h0 + 256)) 5)" || true
a1="$(bgp_if_counter "$R1" "$IF1" rx_packets)"; b1="$(bgp_if_counter "$R1" "$IF2" rx_packets)"
da=$((a1 - a0)); db=$((b1 - b0))
rsw_log "  ECMP split of 256 packets (64 flows): r1 $IF1 +$da, $IF2 +$db (includes ~1/s BGP keepalives)"
check_ge "flows over p1 (>= 20% of 256)" "$da" 51
check_ge "flows over p2 (>= 20% of 256)" "$db" 51
check_ge "h2 received all 256 UDP packets" "$((h1c - h0))" 256

# Withdrawal: r1 stops announcing 10.201.0.1/32 while h1 sends to it 200 datagrams/s, each
# with its send time; r1 (which owns the address) records the last one that arrived.
nr0="$(bgp_drops p0 no_route)"
bgp_stream_rx "$R1" 10.201.0.1 7777 "$RSW_TMP/wd.rx" 1.5
WRX_PID="$RSW_LAST_PID"
bgp_stream_tx "$H1" 10.201.0.1 7777 200 "$RSW_TMP/wd.stop"
WTX_PID="$RSW_LAST_PID"
# The stream flows through the switch before the withdrawal: 100 datagrams (0.5 s) arrived.
bgp_stream_wait "$RSW_TMP/wd.rx" 100 10 || rsw_fail "stream h1 -> $WD_PFX flowing before the withdrawal"
t_wd=$(date +%s%N)
bgp_birdc "$R1_BIRD" disable s_wd || rsw_fail "birdc disable s_wd"
if secs="$(bgp_wait_paths 0 5 "$WD_PFX")"; then
    rsw_pass "withdrawn $WD_PFX left the switch's FIB in $secs s"
else
    rsw_fail "withdrawn $WD_PFX still in the switch after 5 s"
fi
# The stream runs on past the withdrawal until the switch has dropped 100 of its datagrams as
# no_route (0.5 s of it: a late forward would show in the last arrival time). Kernel mode has no
# drop counter: 1.5 s on purpose, the window in which a late forward would be seen.
if bgp_have_ctl; then
    rsw_wait_counter $((nr0 + 100)) 10 bgp_drops p0 no_route >/dev/null
else
    sleep 1.5
fi
: >"$RSW_TMP/wd.stop"
rsw_wait_pid "$WTX_PID" 5 || true
rsw_wait_pid "$WRX_PID" 8 || true
read -r wsent wgot wlast _ <"$RSW_TMP/wd.rx" || { wsent=0; wgot=0; wlast=0; }
if [ "$wgot" -gt 0 ]; then
    stop="$(awk -v l="$wlast" -v t="$t_wd" 'BEGIN { printf "%.3f", l - t / 1e9 }')"
    if awk -v s="$stop" 'BEGIN { exit !(s <= 1.0) }'; then
        rsw_pass "traffic to $WD_PFX stopped within 1 s of the withdrawal: last datagram through was sent at $stop s ($wgot arrived in all)"
    else
        rsw_fail "traffic to $WD_PFX still forwarded $stop s after the withdrawal (limit 1 s)"
    fi
else
    rsw_fail "nothing reached $WD_PFX even before the withdrawal ($wsent sent)"
fi
if bgp_have_ctl; then
    check_ge "p0 no_route rises after the withdrawal" "$(( $(rsw_wait_counter $((nr0 + 50)) 2 bgp_drops p0 no_route) - nr0 ))" 50
fi
# Re-announcement: a new stream to 10.201.0.1 starts while it has no route; traffic must follow
# the route within 1 s of `birdc enable` (the earliest datagram r1 receives was sent then).
bgp_stream_rx "$R1" 10.201.0.1 7778 "$RSW_TMP/ra.rx" 1.5
RRX_PID="$RSW_LAST_PID"
bgp_stream_tx "$H1" 10.201.0.1 7778 200 "$RSW_TMP/ra.stop"
RTX_PID="$RSW_LAST_PID"
sleep 0.3
t_ra=$(date +%s%N)
bgp_birdc "$R1_BIRD" enable s_wd || true
if secs="$(bgp_wait_paths 2 5 "$WD_PFX")"; then
    rsw_pass "re-announced $WD_PFX back as 2 paths in $secs s"
else
    rsw_fail "re-announced $WD_PFX: $(bgp_route_paths "$WD_PFX") paths after 5 s, expected 2"
fi
bgp_stream_wait "$RSW_TMP/ra.rx" 100 10 || true
: >"$RSW_TMP/ra.stop"
rsw_wait_pid "$RTX_PID" 5 || true
rsw_wait_pid "$RRX_PID" 8 || true
read -r rsent rgot _ <"$RSW_TMP/ra.rx" || { rsent=0; rgot=0; }
rfirst="$(cat "$RSW_TMP/ra.rx.first" 2>/dev/null || echo 0)"
follow="$(awk -v f="$rfirst" -v t="$t_ra" 'BEGIN { printf "%.3f", f - t / 1e9 }')"
if [ "$rgot" -gt 0 ] && awk -v s="$follow" 'BEGIN { exit !(s <= 1.0) }'; then
    rsw_pass "traffic to $WD_PFX follows the re-announcement within 1 s: the first datagram through was sent at $follow s ($rgot of $rsent arrived)"
else
    rsw_fail "traffic to $WD_PFX after the re-announcement: first through sent at $follow s (limit 1 s), $rgot of $rsent arrived"
fi

# A floating static behind the BGP route: the kernel keeps both (BIRD's metric 32, the static's
# 500). When BGP withdraws, the switch forwards by the static instead of dropping; when BGP is
# back, by BGP again; the static deleted behind it changes nothing.
if bgp_have_ctl; then
    wd_origin() {
        rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
print(" ".join(r["origin"] or "-" for r in json.load(sys.stdin)["routes"] if r["prefix"] == sys.argv[1]))
' "$WD_PFX"
    }
    ip -n "$RSW_SW_NS" route add "$WD_PFX" via 10.0.11.2 metric 500
    check_eq "a floating static (metric 500) behind BGP's $WD_PFX changes nothing" \
        "$(bgp_route_paths "$WD_PFX") $(wd_origin)" "2 bird"
    bgp_birdc "$R1_BIRD" disable s_wd || rsw_fail "birdc disable s_wd"
    if secs="$(bgp_wait_paths 1 5 "$WD_PFX")"; then
        rsw_pass "BGP withdrew $WD_PFX: the switch took the floating static in $secs s"
    else
        rsw_fail "BGP withdrew $WD_PFX: $(bgp_route_paths "$WD_PFX") paths after 5 s, expected the static's 1"
    fi
    check_eq "$WD_PFX by the static (kernel protocol boot)" "$(wd_origin)" "boot"
    check "ping h1 -> $WD_PFX by the floating static" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.201.0.1
    bgp_birdc "$R1_BIRD" enable s_wd || true
    if secs="$(bgp_wait_paths 2 5 "$WD_PFX")"; then
        rsw_pass "BGP re-announced $WD_PFX: back to its 2 paths over the static in $secs s"
    else
        rsw_fail "BGP re-announced $WD_PFX: $(bgp_route_paths "$WD_PFX") paths after 5 s, expected 2"
    fi
    ip -n "$RSW_SW_NS" route del "$WD_PFX" via 10.0.11.2 metric 500
    sleep 0.3
    check_eq "the static deleted behind BGP's route changes nothing" \
        "$(bgp_route_paths "$WD_PFX") $(wd_origin)" "2 bird"
    # A route for one TOS with BGP's own metric (the kernel keeps both): the switch routes by
    # destination only and does not follow it; its deletion changes nothing either.
    ip -n "$RSW_SW_NS" route add "$WD_PFX" tos 0x10 via 10.0.11.2 metric 32
    neigh_marker 4 || true
    check_eq "a route for TOS 0x10 with BGP's metric leaves BGP's route" \
        "$(bgp_route_paths "$WD_PFX") $(wd_origin)" "2 bird"
    ip -n "$RSW_SW_NS" route del "$WD_PFX" tos 0x10 via 10.0.11.2 metric 32
    neigh_marker 5 || true
    check_eq "its deletion leaves BGP's route" "$(bgp_route_paths "$WD_PFX") $(wd_origin)" "2 bird"
    for n in 104 105; do ip -n "$RSW_SW_NS" neigh del "10.0.1.$n" dev p0 2>/dev/null || true; done
    # A blackhole route (as an aggregate's discard route): the switch drops what it covers with
    # its own reason, not as no_route, and forwards the more specific BGP routes inside it.
    ip -n "$RSW_SW_NS" route add blackhole 10.201.0.0/24
    nr_a="$(bgp_drops p0 no_route)"; bh_a="$(bgp_drops p0 route_discard)"
    bh_kind=""
    for _ in $(seq 50); do
        bh_kind="$(rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
print(" ".join(r["nexthop"]["kind"] for r in json.load(sys.stdin)["routes"] if r["prefix"] == "10.201.0.0/24"))')"
        [ "$bh_kind" = discard ] && break
        sleep 0.1
    done
    check_eq "the blackhole 10.201.0.0/24 in the switch" "$bh_kind" discard
    bgp_udp_flows "$H1" "$IF0" "$P0_MAC" 10.0.1.2 10.201.0.9 4 2
    for _ in $(seq 50); do
        [ "$(bgp_drops p0 route_discard)" -ge $((bh_a + 8)) ] && break
        sleep 0.1
    done
    check_eq "8 packets into the blackhole dropped as route_discard" "$(( $(bgp_drops p0 route_discard) - bh_a ))" 8
    check_eq "none of them as no_route" "$(( $(bgp_drops p0 no_route) - nr_a ))" 0
    check "ping h1 -> 10.201.0.2 (BGP's /32 inside the blackhole)" rsw_ping_ok ip netns exec "$H1" ping -c 2 -i 0.2 -W 2 10.201.0.2
    ip -n "$RSW_SW_NS" route del blackhole 10.201.0.0/24
fi

# One r1 link down: the switch keeps sending half the flows into it until its BGP hold time
# (3 s) expires, then everything goes over p1.
t_down=$(date +%s%N)
ip -n "$R1" link set dev "$IF2" down
if secs="$(bgp_wait_paths 1 10 "$H2_NET")"; then
    rsw_pass "r1 link p2 down: $H2_NET down to 1 path in $secs s (hold time 3 s)"
else
    rsw_fail "r1 link p2 down: $H2_NET still has $(bgp_route_paths "$H2_NET") paths after 10 s"
fi
h0="$(bgp_if_counter "$H2" "$IFH2" rx_packets)"
bgp_udp_flows "$H1" "$IF0" "$P0_MAC" 10.0.1.2 10.0.2.2 64 2
check_ge "after the failover h2 receives all 128 UDP packets (all flows over p1)" \
    "$(( $(bgp_wait_if_counter "$H2" "$IFH2" rx_packets $((h0 + 128)) 5 || true) - h0 ))" 128
rsw_log "  (link down to single path: $(bgp_elapsed "$t_down") s including the traffic check)"
ip -n "$R1" link set dev "$IF2" up
if bgp_wait_established 15 "$SW_BIRD" r1_b >/dev/null && bgp_wait_paths 2 5 "$H2_NET" >/dev/null; then
    rsw_pass "link back up: session r1_b Established and $H2_NET 2 paths again"
else
    rsw_fail "link back up: r1_b $(bgp_state "$SW_BIRD" r1_b), $H2_NET $(bgp_route_paths "$H2_NET") paths"
fi

# C3: 10 session flaps (r1 disables and re-enables one session). Baseline once BGP has settled
# (the switch's FIB follows the kernel's table, path for path).
bgp_wait_synced 10 || rsw_fail "switch FIB = kernel proto bird routes before the flaps"
rc0="$(bgp_route_count)"; g0="$(bgp_group_count)"; rss0="$(bgp_rss_kb)"
dpdk_heap() {
    rsw_ctl --json show info | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["dpdk_heap"]["allocated_bytes"])'
}
if bgp_have_ctl; then heap0="$(dpdk_heap)"; mbufs0="$(rsw_mbufs_in_use "$RSW_SWITCH_SOCKET" 10)"; fi
learned0="$(bgp_switch_learned | tr '\n' ' ')"
flap_ok=0
t_flaps=$(date +%s%N)
for i in $(seq 1 10); do
    bgp_birdc "$R1_BIRD" disable sw_b || break
    bgp_wait_paths 1 5 "$H2_NET" >/dev/null || { rsw_log "flap $i: not down to 1 path"; break; }
    bgp_birdc "$R1_BIRD" enable sw_b || break
    bgp_wait_established 15 "$SW_BIRD" r1_b >/dev/null || { rsw_log "flap $i: r1_b not re-established"; break; }
    bgp_wait_paths 2 5 "$H2_NET" >/dev/null || { rsw_log "flap $i: not back to 2 paths"; break; }
    flap_ok=$i
done
check_eq "10 session flaps, each down to 1 path and back to 2 ($(bgp_elapsed "$t_flaps") s)" "$flap_ok" 10
bgp_wait_synced 10 || rsw_fail "switch FIB = kernel proto bird routes after the flaps"
rc1="$(bgp_route_count)"; g1="$(bgp_group_count)"; rss1="$(bgp_rss_kb)"
check_eq "route count after 10 flaps equals before ($rc0)" "$rc1" "$rc0"
check_eq "ECMP group count after 10 flaps equals before ($g0)" "$g1" "$g0"
check_eq "learned prefixes after 10 flaps equal before" "$(bgp_switch_learned | tr '\n' ' ')" "$learned0"
if bgp_have_ctl; then
    rsw_log "  VmRSS before flaps ${rss0} kB, after ${rss1} kB (delta $((rss1 - rss0)) kB)"
    check_eq "RSS stable over 10 flaps (growth <= 2048 kB: $((rss1 - rss0)) kB)" \
        "$([ $((rss1 - rss0)) -le 2048 ] && echo yes || echo no)" yes
    check_eq "DPDK heap after 10 flaps equals before ($heap0 bytes)" "$(dpdk_heap)" "$heap0"
    check_eq "mbufs in use after 10 flaps equal before ($mbufs0; least of 10 readings)" \
        "$(rsw_mbufs_in_use "$RSW_SWITCH_SOCKET" 10)" "$mbufs0"
fi
check "ping h1 -> h2 after the flaps" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.0.2.2

# Shutdown.
if bgp_have_ctl; then
    if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive after all of it"; else rsw_fail "roceswd died"; fi
    rsw_assert_accounting
    rc=0
    stop_switch 10 || rc=$?
    check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
fi
[ "$up" = 1 ] || rsw_log "note: the sessions never came up; later checks follow from that"
rsw_finish
