#!/bin/bash
# System test: two switches connected by a memif link, each with its own BIRD, exchange routes
# over the punt path and forward between their hosts (issue 6).
#
#          netns <tag>-swA                               netns <tag>-swB
#          roceswd A + BIRD (AS 65101)                   roceswd B + BIRD (AS 65102)
#   hA --- [p0 10.0.1.1]  [p1 10.0.12.1] ==== memif ==== [p1 10.0.12.2]  [p0 10.0.2.1] --- hB
#   10.0.1.2/24 (TAP)       (server)                      (client)          (TAP) 10.0.2.2/24
#
# The memif is the only link between A and B: BGP's TCP (MD5 + GTSM), ARP and everything else
# between the two kernels goes through both switches' punt paths and host interfaces p1. No
# static routes: A announces 10.0.1.0/24 (direct "d_hosts" on p0), B announces 10.0.2.0/24, and
# each switch must learn the other's host subnet from its own BIRD through netlink.
#
# Checks: both roceswd up with host interfaces; the memif link up on both sides; the eBGP
# session Established on both; each switch's FIB holds the other's subnet (type learned,
# origin bird, via the peer over p1); hA <-> hB ping; a UDP stream hA -> hB arrives complete;
# B withdraws 10.0.2.0/24 (birdc disable d_hosts): the route leaves A's FIB, traffic stops
# (no_route rises at A); re-enabled: the route and the traffic come back; a pulled cable at A
# (port_link) withdraws BIRD's route and moves a prefix with two kernel routes to the one of
# higher metric through p0 at once, and back with the cable; both roceswd exit 0 on SIGTERM.
#
# roceswd only (the memif link needs it): RSW_BGP_KERNEL_SWITCH=1 prints SKIP.
# Needs root. Run: sudo test/system/test_bgp_two_switch.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root
if [ "$RSW_BGP_KERNEL" = 1 ]; then
    echo "SKIP $(basename "$0"): the memif link between the switches needs roceswd (no kernel mode)"
    exit "$RSW_SKIP"
fi

rsw_init
# Cleanup also removes the two switches' EAL runtime dirs (/var/run/dpdk/<tag>a, <tag>b).
bgp_multi_switch_traps a b
bgp_need_tools || rsw_finish
T_START=$(date +%s%N)

A_NET="10.0.1.0/24"
B_NET="10.0.2.0/24"
# Each switch names its TAP <tag>p0 (bgp_attach finds the port's TAP by that name) in its own
# namespace; hA and hB get one each.
IFA="$(rsw_ifname p0)"; IFB="$IFA"
HA="$(rsw_ns hA)"; HB="$(rsw_ns hB)"
MEMIF="$RSW_TMP/ab.memif.sock"
A_BIRD="$RSW_TMP/bird-a.ctl"; B_BIRD="$RSW_TMP/bird-b.ctl"

# Port p0 a TAP (hA or hB), p1 the memif (A the server); bgp_switch_conf writes the rest.
# A allows port_link (a pulled cable, below).
BGP_CP_EXTRA="  allow_port_link: true" bgp_switch_conf a "" "" "p0|net_tap0,iface=$IFA|02:00:00:0a:01:01|10.0.1.1/24" \
    "p1|net_memif0,role=server,id=0,socket=$MEMIF,socket-abstract=no|02:00:00:0a:0c:01|10.0.12.1/24" \
    >"$RSW_TMP/swA.yaml"
bgp_switch_conf b "" "" "p0|net_tap0,iface=$IFB|02:00:00:0b:02:01|10.0.2.1/24" \
    "p1|net_memif0,role=client,id=0,socket=$MEMIF,socket-abstract=no|02:00:00:0b:0c:02|10.0.12.2/24" \
    >"$RSW_TMP/swB.yaml"

echo "== $(basename "$0"): tag $RSW_TAG, temp dir $RSW_TMP"
# A first: it is the memif server (B, the client, connects to its socket).
if ! BGP_SW_NAME=swA bgp_start_switch "$RSW_TMP/swA.yaml" "$RSW_TMP/roceswd-a.log" p0 p1; then
    rsw_fail "roceswd A starts in its namespace with host interfaces p0 p1"
    rsw_finish
fi
bgp_switch_save A
rsw_pass "switch A up in $RSW_SW_NS (pid $RSW_SWITCH_PID)"
bgp_attach p0 "$HA"
bgp_host "$HA" "$IFA" 02:00:00:00:01:02 10.0.1.2/24 10.0.1.1

if ! BGP_SW_NAME=swB bgp_start_switch "$RSW_TMP/swB.yaml" "$RSW_TMP/roceswd-b.log" p0 p1; then
    rsw_fail "roceswd B starts in its namespace with host interfaces p0 p1"
    rsw_finish
fi
bgp_switch_save B
rsw_pass "switch B up in $RSW_SW_NS (pid $RSW_SWITCH_PID)"
bgp_attach p0 "$HB"
bgp_host "$HB" "$IFB" 02:00:00:00:02:02 10.0.2.2/24 10.0.2.1

t0=$(date +%s%N)
up=0
for _ in $(seq 1 100); do
    bgp_switch_use A; bgp_port_up p1 || { sleep 0.1; continue; }
    bgp_switch_use B; bgp_port_up p1 || { sleep 0.1; continue; }
    up=1; break
done
if [ "$up" = 1 ]; then
    rsw_pass "memif link A p1 <-> B p1 up on both sides ($(bgp_elapsed "$t0") s after B started)"
else
    rsw_fail "memif link A p1 <-> B p1 not up on both sides after 10 s"
fi

# BIRD on both switches: one eBGP session over p1 each, announcing the host subnet on p0.
bgp_bird_conf "$RSW_TMP/bird-a.conf" 10.0.12.1 65101 'source = RTS_DEVICE' \
    'protocol direct d_hosts { ipv4; interface "p0"; }' b:10.0.12.2:65102:p1
bgp_bird_conf "$RSW_TMP/bird-b.conf" 10.0.12.2 65102 'source = RTS_DEVICE' \
    'protocol direct d_hosts { ipv4; interface "p0"; }' a:10.0.12.1:65101:p1
T_BIRD=$(date +%s%N)
bgp_start_bird "$(rsw_ns swA)" "$RSW_TMP/bird-a.conf" "$A_BIRD" "$RSW_TMP/bird-a.log" ||
    { rsw_fail "BIRD starts in $(rsw_ns swA)"; rsw_finish; }
bgp_start_bird "$(rsw_ns swB)" "$RSW_TMP/bird-b.conf" "$B_BIRD" "$RSW_TMP/bird-b.log" ||
    { rsw_fail "BIRD starts in $(rsw_ns swB)"; rsw_finish; }
if bgp_wait_established 20 "$A_BIRD" b >/dev/null && bgp_wait_established 5 "$B_BIRD" a >/dev/null; then
    rsw_pass "eBGP session A (AS 65101) <-> B (AS 65102), MD5 + GTSM, Established over the memif, $(bgp_elapsed "$T_BIRD") s after BIRD start"
else
    rsw_fail "eBGP session over the memif within 20 s: A sees $(bgp_state "$A_BIRD" b), B sees $(bgp_state "$B_BIRD" a)"
    birdc -s "$A_BIRD" show protocols all b 2>&1 | sed 's/^/    | A: /' | head -n 25
    tail -n 10 "$RSW_TMP/bird-a.log" | sed 's/^/    | A bird: /'
    tail -n 10 "$RSW_TMP/bird-b.log" | sed 's/^/    | B bird: /'
fi

# route_entry PREFIX: "type origin kind via port" of PREFIX in the current switch's FIB, or
# "none".
route_entry() {
    rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
rs = [r for r in json.load(sys.stdin)["routes"] if r["prefix"] == sys.argv[1]]
if not rs:
    print("none")
else:
    r, nh = rs[0], rs[0].get("nexthop") or {}
    print(r.get("type"), r.get("origin"), nh.get("kind"), nh.get("via"), nh.get("port"))
' "$1"
}
# learned SWITCH PREFIX VIA PEER_SUBNET_OWNER: PASS when the switch learned PREFIX from BIRD.
learned() {
    local sw="$1" prefix="$2" via="$3" secs e
    bgp_switch_use "$sw"
    if secs="$(bgp_wait_paths 1 10 "$prefix")"; then
        e="$(route_entry "$prefix")"
        # shellcheck disable=SC2086
        set -- $e
        if [ "$2" = bird ] && [ "$4" = "$via" ] && [ "$5" = p1 ] &&
            ! case " $BGP_NOT_LEARNED " in *" $1 "*) true ;; *) false ;; esac; then
            rsw_pass "switch $sw learned $prefix from BGP in $secs s ($e)"
        else
            rsw_fail "switch $sw: $prefix is not a BIRD route via $via over p1: $e"
        fi
    else
        rsw_fail "switch $sw: no route to $prefix after 10 s (kernel: $(ip -n "$RSW_SW_NS" route show "$prefix" | tr '\n' ' '); FIB: $(route_entry "$prefix"))"
    fi
}
learned A "$B_NET" 10.0.12.2
learned B "$A_NET" 10.0.12.1

# Forwarding between the hosts by learned routes (first pings resolve the hosts' neighbours
# through the glean punt).
ip netns exec "$HA" ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
check "ping hA -> hB through A, the memif and B (5 packets)" rsw_ping_ok ip netns exec "$HA" ping -c 5 -i 0.2 -W 2 10.0.2.2
check "ping hB -> hA (5 packets)" rsw_ping_ok ip netns exec "$HB" ping -c 5 -i 0.2 -W 2 10.0.1.2

# A numbered UDP stream hA -> hB, 500 datagrams/s until 750 arrived: every one arrives.
bgp_stream_rx "$HB" 10.0.2.2 7777 "$RSW_TMP/s1.rx" 1.5
RX_PID="$RSW_LAST_PID"
bgp_stream_tx "$HA" 10.0.2.2 7777 500 "$RSW_TMP/s1.stop"
TX_PID="$RSW_LAST_PID"
bgp_stream_wait "$RSW_TMP/s1.rx" 750 15 || true   # the count check below says what arrived
: >"$RSW_TMP/s1.stop"
rsw_wait_pid "$TX_PID" 5 || true
rsw_wait_pid "$RX_PID" 8 || true
read -r sent got _ missing <"$RSW_TMP/s1.rx" || { sent=0; got=0; missing=""; }
if [ "$sent" -gt 0 ] && [ "$got" = "$sent" ]; then
    rsw_pass "UDP stream hA -> hB complete: $got of $sent datagrams"
else
    rsw_fail "UDP stream hA -> hB: $got of $sent datagrams arrived (first missing: ${missing:-?})"
fi

# Withdrawal: B stops announcing its host subnet while hA streams to hB at 200/s.
bgp_switch_use A
nr0="$(bgp_drops p0 no_route)"
bgp_stream_rx "$HB" 10.0.2.2 7778 "$RSW_TMP/s2.rx" 1.5
RX_PID="$RSW_LAST_PID"
bgp_stream_tx "$HA" 10.0.2.2 7778 200 "$RSW_TMP/s2.stop"
TX_PID="$RSW_LAST_PID"
# The stream flows through both switches before the withdrawal: 100 datagrams (0.5 s) arrived.
bgp_stream_wait "$RSW_TMP/s2.rx" 100 10 || rsw_fail "stream hA -> hB flowing before the withdrawal"
t_wd=$(date +%s%N)
bgp_birdc "$B_BIRD" disable d_hosts || rsw_fail "birdc disable d_hosts at B"
if secs="$(bgp_wait_paths 0 5 "$B_NET")"; then
    rsw_pass "B withdrew $B_NET: gone from A's FIB in $secs s"
else
    rsw_fail "B withdrew $B_NET: still in A's FIB after 5 s ($(route_entry "$B_NET"))"
fi
check_eq "A's kernel has no route to $B_NET any more" "$(ip -n "$RSW_SW_NS" route show "$B_NET" | wc -l)" 0
# The stream runs on past the withdrawal until A has dropped 100 of its datagrams as no_route
# (0.5 s of it): a late forward would show in the last arrival time.
rsw_wait_counter $((nr0 + 100)) 10 bgp_drops p0 no_route >/dev/null
: >"$RSW_TMP/s2.stop"
rsw_wait_pid "$TX_PID" 5 || true
rsw_wait_pid "$RX_PID" 8 || true
read -r _ wgot wlast _ <"$RSW_TMP/s2.rx" || { wgot=0; wlast=0; }
# Sent: the sender's own count (its END datagrams cannot reach hB any more).
read -r wsent _ <"$RSW_TMP/s2.stop.log" || wsent=0
if [ "$wgot" -gt 0 ]; then
    stop="$(awk -v l="$wlast" -v t="$t_wd" 'BEGIN { printf "%.3f", l - t / 1e9 }')"
    if awk -v s="$stop" 'BEGIN { exit !(s <= 1.0) }' && [ "$wgot" -lt "$wsent" ]; then
        rsw_pass "traffic hA -> hB stopped after the withdrawal: last datagram through sent $stop s after it ($wgot of $wsent arrived)"
    else
        rsw_fail "traffic hA -> hB after the withdrawal: last datagram through sent $stop s after it, $wgot of $wsent arrived"
    fi
else
    rsw_fail "nothing reached hB even before the withdrawal ($wsent sent)"
fi
check_ge "A p0 no_route rises after the withdrawal" \
    "$(( $(rsw_wait_counter $((nr0 + 50)) 2 bgp_drops p0 no_route) - nr0 ))" 50
check_fails "ping hA -> hB fails while withdrawn" ip netns exec "$HA" ping -c 1 -W 1 10.0.2.2

# Re-announcement: the route and the traffic come back.
t_re=$(date +%s%N)
bgp_birdc "$B_BIRD" enable d_hosts || rsw_fail "birdc enable d_hosts at B"
if secs="$(bgp_wait_paths 1 5 "$B_NET")"; then
    rsw_pass "B re-announced $B_NET: back in A's FIB in $secs s ($(route_entry "$B_NET"))"
else
    rsw_fail "B re-announced $B_NET: not in A's FIB after 5 s"
fi
check "ping hA -> hB after the re-announcement (3 packets)" rsw_ping_ok ip netns exec "$HA" ping -c 3 -i 0.2 -W 2 10.0.2.2
rsw_log "  (re-announcement to ping through: $(bgp_elapsed "$t_re") s)"

# A pulled cable at A (rocectl call port_link p1 down): A's host interface p1 loses its
# carrier and A stops using p1 (the route to B's subnet leaves A's FIB) without waiting for
# BGP; up again: the carrier and the route come back. (The kernel reports a carrier change up
# to 1 s late when another came just before: linkwatch.)
# carrier_is NS IF on|off: waits up to 4 s until IF's carrier is as asked.
carrier_is() {
    local st
    for _ in $(seq 1 40); do
        st="$(ip -n "$1" link show dev "$2" 2>/dev/null | head -n 1)"
        case "$3:$st" in off:*NO-CARRIER*) return 0 ;; on:*NO-CARRIER*) ;; on:*LOWER_UP*) return 0 ;; esac
        sleep 0.1
    done
    return 1
}
bgp_switch_use A
# Two kernel routes of one prefix (no daemon: BIRD withdraws its own route when the link goes,
# static ones stay): metric 100 through p1 (B), metric 500 through p0 (hA as the gateway: a
# backup that shows in the FIB only). With p1's cable pulled the kernel keeps the route through
# p1 (flagged linkdown, and would still use it); the switch takes the one through p0 at once,
# and the one through p1 again with the cable.
SWA_NS="$(rsw_ns swA)"
BK_NET="10.0.99.0/24"
ip -n "$SWA_NS" route add "$BK_NET" via 10.0.12.2 dev p1 metric 100
ip -n "$SWA_NS" route add "$BK_NET" via 10.0.1.2 dev p0 metric 500
# route_is PREFIX WANT [TIMEOUT_S=4]: waits until A's route to PREFIX is "type origin kind via
# port" WANT; prints the seconds it took (else what it is).
route_is() {
    local t0 deadline got
    t0=$(date +%s%N); deadline=$((t0 + ${3:-4} * 1000000000))
    while :; do
        got="$(route_entry "$1")"
        [ "$got" = "$2" ] && { bgp_elapsed "$t0"; return 0; }
        [ "$(date +%s%N)" -ge "$deadline" ] && { echo "$got"; return 1; }
        sleep 0.05
    done
}
if got="$(route_is "$BK_NET" "learned boot forward 10.0.12.2 p1")"; then
    rsw_pass "A: $BK_NET by its metric-100 route through p1"
else
    rsw_fail "A: $BK_NET is '$got', expected the metric-100 route through p1"
fi
resyncs() {
    rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["netlink"]["resyncs"])'
}
resyncs0="$(resyncs)"
check "A: rocectl call port_link p1 down" rsw_ctl call port_link p1 down
check "A: port_link down drops p1's carrier (a pulled cable)" carrier_is "$SWA_NS" p1 off
if got="$(route_is "$BK_NET" "learned boot forward 10.0.1.2 p0")"; then
    rsw_pass "A: $BK_NET moved to its metric-500 route through p0 ($got s after the carrier)"
else
    rsw_fail "A: $BK_NET with p1's cable pulled is '$got', expected the metric-500 route through p0"
fi
check_eq "A: the kernel keeps the metric-100 route through p1 (linkdown)" \
    "$(ip -n "$SWA_NS" route show "$BK_NET" | grep -c 'via 10.0.12.2 dev p1 metric 100 linkdown')" 1
if secs="$(bgp_wait_paths 0 4 "$B_NET")"; then
    rsw_pass "A: no route to $B_NET through the pulled cable ($secs s after the carrier)"
else
    rsw_fail "A: still $(bgp_route_paths "$B_NET") path(s) to $B_NET with p1's cable pulled"
fi
check "A: rocectl call port_link p1 up" rsw_ctl call port_link p1 up
check "A: port_link up restores p1's carrier" carrier_is "$SWA_NS" p1 on
if got="$(route_is "$BK_NET" "learned boot forward 10.0.12.2 p1")"; then
    rsw_pass "A: $BK_NET by the route through p1 again with the cable ($got s)"
else
    rsw_fail "A: $BK_NET 4 s after port_link p1 up is '$got', expected the route through p1"
fi
if secs="$(bgp_wait_paths 1 4 "$B_NET")"; then
    rsw_pass "A: the route to $B_NET is back with the cable ($secs s)"
else
    rsw_fail "A: no route to $B_NET 4 s after port_link p1 up"
fi
check_eq "A: the cable pulled and back cost no re-dump of the kernel's tables" "$(resyncs)" "$resyncs0"
ip -n "$SWA_NS" route del "$BK_NET" via 10.0.1.2 dev p0 metric 500
ip -n "$SWA_NS" route del "$BK_NET" via 10.0.12.2 dev p1 metric 100
check "ping hA -> hB after the cable came back (3 packets)" rsw_ping_ok ip netns exec "$HA" ping -c 3 -i 0.2 -W 2 10.0.2.2

# What the switches saw (for the report): punt and drop counters.
for sw in A B; do
    bgp_switch_use "$sw"
    rsw_log "  switch $sw drops: $(rsw_ctl --json show drops | "$RSW_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print(", ".join("%s %s %d" % (e["port"], e["reason"], e["packets"]) for e in d["drops"]) or "none")')"
    if grep -qiE '\b(error|fatal)\b' "$RSW_SWITCH_LOG"; then
        rsw_log "  switch $sw log has errors:"
        grep -iE '\b(error|fatal)\b' "$RSW_SWITCH_LOG" | head -n 5 | sed 's/^/    | /' >&2
    fi
done

# Every frame accounted for on both switches, before either stops.
for sw in A B; do
    bgp_switch_use "$sw"
    rsw_assert_accounting
done

# Shutdown: both switches, SIGTERM, exit 0.
for sw in B A; do
    bgp_switch_use "$sw"
    if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd $sw alive after all of it"; else rsw_fail "roceswd $sw died"; fi
    rc=0
    stop_switch 10 || rc=$?
    check_eq "roceswd $sw exits 0 on SIGTERM" "$rc" 0
    if [ "$sw" = B ]; then
        # A's memif link went down with B: A mirrors it on its host interface p1 (no carrier),
        # and the route through p1 leaves A's FIB at once (not after BGP's hold time).
        bgp_switch_use A
        t0=$(date +%s%N)
        state=""
        for _ in $(seq 1 40); do
            state="$(ip -n "$(rsw_ns swA)" link show dev p1 2>/dev/null | head -n 1)"
            case "$state" in *NO-CARRIER*) break ;; esac
            sleep 0.1
        done
        case "$state" in
            *NO-CARRIER*) rsw_pass "A's host interface p1 lost its carrier with the memif link ($(bgp_elapsed "$t0") s)" ;;
            *) rsw_fail "A's host interface p1 still has carrier 4 s after B stopped: $state" ;;
        esac
        p1_up="$(rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; print([p["up"] for p in json.load(sys.stdin)["ports"] if p["port"] == "p1"][0])')"
        check_eq "A: port p1 down in the RIB" "$p1_up" False
        check_eq "A: no route to 10.0.2.0/24 through the dead link" "$(bgp_route_paths 10.0.2.0/24)" 0
    fi
done
rsw_log "  total $(bgp_elapsed "$T_START") s"
rsw_finish
