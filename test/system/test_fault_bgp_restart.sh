#!/bin/bash
# Fault injection: roceswd killed with SIGKILL under traffic while BIRD peers through it; BGP
# graceful restart (RFC 4724) keeps the peer's routes for the restart time.
#
#                        netns <tag>-sw
#   h1 --- <tag>p0 [p0 10.0.1.1]  roceswd + BIRD (AS 65101)  [p1 10.0.11.1] --- <tag>p1 --- r1
#   10.0.1.2/24                                               [p2 10.0.12.1] --- <tag>p2 --- r1
#   r1 (AS 65201, BIRD) --- h2 10.0.2.2/24              (lib_bgp.sh's lab, bgp_lab)
#
# The ports are net_af_packet on veth pairs (BGP_LAB_PORTS=af_packet): a veth outlives roceswd,
# so h1 and r1 keep their interfaces across the kill (net_tap's TAPs vanish with the process,
# and r1's BIRD would drop its sessions at once: "neighbor lost"). The host interfaces p0-p2 are
# roceswd's TAPs and do vanish: the switch's BIRD loses its sessions with them. What each side
# does (doc/control-plane.md, "Graceful restart across a roceswd restart"):
#   - r1 notices the silent failure by BFD (200 ms x 5) and, with "bfd graceful", treats it as
#     the switch's graceful restart: it keeps the routes it learned from the switch as stale,
#     for the restart time the switch announced, and keeps forwarding along them;
#   - the switch restarts as a whole: BIRD is stopped with `birdc graceful restart`, roceswd is
#     started again, then BIRD with -R (graceful restart recovery): its OPEN carries the restart
#     flag and "forwarding preserved" for IPv4, so r1 keeps the stale routes until the new
#     sessions' End-of-RIB and replaces them in place (r1's kernel route never goes away);
#   - when the switch does not come back within the restart time, r1 withdraws the routes.
#
# Phase 1 (restart time 30 s): traffic both ways (h1 -> h2 over the switch's learned route,
# h2 -> h1 over r1's route to the switch); kill -9; during the outage r1 shows "Neighbor
# graceful restart active" for both sessions with the routes still in its table and kernel;
# roceswd and BIRD (-R) restart; the sessions are Established, graceful restart is done (routes
# refreshed), r1's kernel route had both next hops at every sample, traffic resumes, pings
# pass, the accounting identity balances.
# BIRD 2.0.12's `show route` does not print a route's stale flag: "stale" is read from `show
# protocols all` (graceful restart active, the channel's "Neighbor GR: Regular") while the
# routes are still listed for the session that is down.
# Phase 2 (restart time 6 s, announced by the BIRD started in phase 1): kill -9 and no restart:
# r1 keeps the stale routes, then withdraws them when the restart timer runs out.
# Needs root (namespaces, veth), bird2. Run: sudo test/system/test_fault_bgp_restart.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root ip bird birdc ethtool ping

rsw_init
bgp_need_tools || rsw_finish
if [ "$RSW_BGP_KERNEL" = 1 ]; then
    echo "SKIP $(basename "$0"): kills roceswd; no kernel-switch mode"
    exit "$RSW_SKIP"
fi
# shellcheck disable=SC2034  # read by lib_bgp.sh
BGP_LAB_PORTS=af_packet
# shellcheck disable=SC2034
BGP_LAB_BFD=1
BGP_GR_TIME=30     # phase 1's restart time (what the first switch BIRD announces)
GR_TIME_2=6        # phase 2's (the BIRD restarted in phase 1)
# shellcheck disable=SC2034
BGP_BIRD_SESSION_EXTRA='bfd graceful; debug { states, events };'
HOSTS_NET=10.0.1.0/24
H2_NET=10.0.2.0/24
PPS=200

bgp_lab "control_plane:
  host_interfaces: true
  netlink: true
  punt_pps: {arp: 600, nd: 600, icmp: 600, bgp: 2000, l4: 1000, lldp: 100, ttl: 200, unreachable: 200, mtu: 200, glean: 200, other: 100}" || rsw_finish
bgp_lab_sessions 20 || rsw_finish
R1_LOG="$RSW_TMP/bird-r1.log"

# r1's view -----------------------------------------------------------------------------------
# r1_paths: next hops of r1's kernel route to the switch's hosts (0 when it has none).
r1_paths() {
    local r n
    r="$(ip -n "$R1" route show "$HOSTS_NET" proto bird 2>/dev/null)"
    if [ -z "$r" ]; then echo 0; return; fi
    n="$(printf '%s\n' "$r" | grep -c 'nexthop via' || true)"
    echo $(( n > 0 ? n : 1 ))
}
r1_two_paths() { [ "$(r1_paths)" = 2 ]; }
# r1_bird_routes: how many routes to HOSTS_NET r1's BIRD holds from sw_a and sw_b.
r1_bird_routes() {
    birdc -s "$R1_BIRD" show route for "$HOSTS_NET" all 2>/dev/null | grep -cE '\[sw_[ab] ' || true
}
# r1_gr_active PROTOCOL: r1 is helping PROTOCOL's peer through a graceful restart.
r1_gr_active() { birdc -s "$R1_BIRD" show protocols all "$1" 2>/dev/null | grep -q 'Neighbor graceful restart active'; }
# wait_until TIMEOUT_S CMD...: polls CMD every 0.05 s; prints the seconds it took; status 1 on
# timeout.
wait_until() {
    local timeout="$1" t0 deadline
    shift
    t0=$(date +%s%N)
    deadline=$(( t0 + timeout * 1000000000 ))
    until "$@"; do
        if [ "$(date +%s%N)" -ge "$deadline" ]; then bgp_elapsed "$t0"; return 1; fi
        sleep 0.05
    done
    bgp_elapsed "$t0"
}
both_gr_active() { r1_gr_active sw_a && r1_gr_active sw_b; }
both_gr_done() {
    [ "$(bgp_state "$R1_BIRD" sw_a)" = Established ] && [ "$(bgp_state "$R1_BIRD" sw_b)" = Established ] &&
        ! r1_gr_active sw_a && ! r1_gr_active sw_b
}
r1_routes_gone() { [ "$(r1_paths)" = 0 ] && [ "$(r1_bird_routes)" = 0 ]; }
bfd_up() { [ "$(birdc -s "$R1_BIRD" show bfd sessions 2>/dev/null | grep -c ' Up ')" = 2 ]; }
# kill_switch SUFFIX: SIGKILL to roceswd (t_kill: when), checks that it died of it.
kill_switch() {
    local old="$RSW_SWITCH_PID"
    t_kill=$(date +%s%N)
    kill -KILL "$old"
    rsw_wait_pid "$old" 10 || true
    check_eq "roceswd ends by SIGKILL$1" "$RSW_WAIT_RC" 137
    RSW_SWITCH_PID=""
}
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }

if bgp_wait_established 20 "$R1_BIRD" sw_a sw_b >/dev/null; then
    rsw_pass "r1's sessions sw_a and sw_b Established"
else
    rsw_fail "r1's sessions: sw_a $(bgp_state "$R1_BIRD" sw_a), sw_b $(bgp_state "$R1_BIRD" sw_b)"
fi
if s="$(wait_until 15 bfd_up)"; then
    rsw_pass "BFD sessions Up at r1 (2), $s s"
else
    rsw_fail "BFD sessions Up at r1: $(birdc -s "$R1_BIRD" show bfd sessions 2>&1 | tail -n +3 | tr '\n' ';')"
fi
check "the switch follows BIRD (learned routes = kernel's)" bgp_wait_synced 15
if s="$(bgp_wait_paths 2 10 "$H2_NET")"; then
    rsw_pass "$H2_NET: ECMP route of 2 paths in the switch"
else
    rsw_fail "$H2_NET has $(bgp_route_paths "$H2_NET") paths in the switch, expected 2"
fi
wait_until 10 r1_two_paths >/dev/null || true
check_eq "r1's kernel route $HOSTS_NET (from sw_a + sw_b): next hops" "$(r1_paths)" 2
caps="$(birdc -s "$R1_BIRD" show protocols all sw_a)"
check_eq "the switch announces graceful restart, restart time $BGP_GR_TIME s (r1's sw_a)" \
    "$(printf '%s\n' "$caps" | sed -n '/Neighbor capabilities/,$p' | grep -c "Restart time: $BGP_GR_TIME\$")" 1

# Traffic both ways, 200 datagrams/s each, through the whole test.
STOP="$RSW_TMP/stop-streams"
S12="$RSW_TMP/h1-h2"
S21="$RSW_TMP/h2-h1"
bgp_stream_rx "$H2" 10.0.2.2 5001 "$S12" 120
RX12="$RSW_LAST_PID"
bgp_stream_rx "$H1" 10.0.1.2 5002 "$S21" 120
RX21="$RSW_LAST_PID"
bgp_stream_tx "$H1" 10.0.2.2 5001 "$PPS" "$STOP"
TX12="$RSW_LAST_PID"
bgp_stream_tx "$H2" 10.0.1.2 5002 "$PPS" "$STOP"
TX21="$RSW_LAST_PID"
check "h1 -> h2 stream flows before the kill (200 datagrams)" bgp_stream_wait "$S12" 200 15
check "h2 -> h1 stream flows before the kill (200 datagrams)" bgp_stream_wait "$S21" 200 15

# r1's kernel route to the switch's hosts, sampled every 50 ms from before the kill until the
# graceful restart is over: its next-hop count at each sample.
WATCH_STOP="$RSW_TMP/stop-watch"
# shellcheck disable=SC2016  # expanded by the inner shell
rsw_bg bash -c 'while [ ! -e "$1" ]; do
        r="$(ip -n "$2" route show "$3" proto bird)"
        if [ -z "$r" ]; then echo 0; else printf "%s\n" "$r" | grep -c "nexthop via"; fi
        sleep 0.05
    done' watch "$WATCH_STOP" "$R1" "$HOSTS_NET" >"$RSW_TMP/watch.txt" 2>&1
WATCH="$RSW_LAST_PID"
wait_until 5 test -s "$RSW_TMP/watch.txt" >/dev/null || true

# --- phase 1: kill -9, graceful restart, recovery -------------------------------------------
echo "-- phase 1: kill -9 under traffic, restart within the restart time ($BGP_GR_TIME s)"
kill_switch ""
check_fails "the host interface p1 went with roceswd" ip -n "$RSW_SW_NS" link show dev p1
check "r1 keeps its interface (veth) $IF1" ip -n "$R1" link show dev "$IF1"

# The switch restarts as a whole: its BIRD goes down for a graceful restart (no NOTIFICATION).
bgp_birdc "$SW_BIRD" graceful restart || rsw_fail "birdc graceful restart (switch)"
if rsw_wait_pid "$SW_BIRD_PID" 10; then
    check_eq "the switch's BIRD exits after 'graceful restart'" "$RSW_WAIT_RC" 0
else
    rsw_fail "the switch's BIRD still runs 10 s after 'graceful restart'"
fi

if wait_until 10 both_gr_active >/dev/null; then
    t_gr=$(date +%s%N)
    rsw_pass "r1: graceful restart of sw_a and sw_b detected (BFD) $(since "$t_kill" "$t_gr") s after the kill"
else
    rsw_fail "r1 does not show 'Neighbor graceful restart active' for sw_a and sw_b within 10 s"
    birdc -s "$R1_BIRD" show protocols all sw_a | sed 's/^/    | /' | head -n 20
fi
info="$(birdc -s "$R1_BIRD" show protocols all sw_a)"
check_fails "r1: sw_a is not Established during the outage ($(bgp_state "$R1_BIRD" sw_a))" \
    test "$(bgp_state "$R1_BIRD" sw_a)" = Established
check "r1: sw_a's ipv4 channel in regular graceful restart (Neighbor GR: Regular)" \
    grep -q 'Neighbor GR: *Regular' <<<"$info"
check "r1: restart timer running ($(sed -n 's/.*Restart timer: *//p' <<<"$info"))" \
    grep -q 'Restart timer:' <<<"$info"
check_eq "r1's BIRD keeps the stale routes to $HOSTS_NET from sw_a and sw_b" "$(r1_bird_routes)" 2
check_eq "r1's kernel keeps $HOSTS_NET with both next hops" "$(r1_paths)" 2
check "r1's log: 'sw_a: Neighbor graceful restart detected'" grep -q 'sw_a: Neighbor graceful restart detected' "$R1_LOG"
check "r1's log: 'sw_b: Neighbor graceful restart detected'" grep -q 'sw_b: Neighbor graceful restart detected' "$R1_LOG"

# Restart: roceswd with the same config (the veths are still there), then BIRD with -R; the new
# BIRD announces the shorter restart time of phase 2.
t_restart=$(date +%s%N)
if ! bgp_start_switch "$CFG" "$RSW_TMP/roceswd-2.log" p0 p1 p2; then
    rsw_fail "roceswd restarts with the same config"
    rsw_finish
fi
rsw_pass "roceswd restarts (pid $RSW_SWITCH_PID), running with its host interfaces $(since "$t_restart" "$(date +%s%N)") s later"
sed "s/graceful restart time $BGP_GR_TIME;/graceful restart time $GR_TIME_2;/" \
    "$RSW_TMP/bird-sw.conf" >"$RSW_TMP/bird-sw-2.conf"
if ! bgp_start_bird "$RSW_SW_NS" "$RSW_TMP/bird-sw-2.conf" "$SW_BIRD" "$RSW_TMP/bird-sw-2.log" -R; then
    rsw_fail "the switch's BIRD starts again with -R"
    rsw_finish
fi
SW_BIRD_PID="$BGP_BIRD_PID"
if s="$(wait_until 30 both_gr_done)"; then
    t_done=$(date +%s%N)
    rsw_pass "r1: sw_a and sw_b Established again, graceful restart done, $s s after BIRD -R ($(since "$t_kill" "$t_done") s after the kill)"
else
    rsw_fail "r1: sw_a $(bgp_state "$R1_BIRD" sw_a), sw_b $(bgp_state "$R1_BIRD" sw_b), graceful restart still active: $(r1_gr_active sw_a && echo sw_a) $(r1_gr_active sw_b && echo sw_b)"
    tail -n 20 "$R1_LOG" | sed 's/^/    | r1: /'
fi
check "r1's log: 'sw_a: Neighbor graceful restart done' (End-of-RIB on the new session)" \
    grep -q 'sw_a: Neighbor graceful restart done' "$R1_LOG"
check "r1's log: 'sw_b: Neighbor graceful restart done'" grep -q 'sw_b: Neighbor graceful restart done' "$R1_LOG"
check_fails "r1's log: no 'graceful restart timeout' in phase 1" grep -q 'graceful restart timeout' "$R1_LOG"
caps="$(birdc -s "$R1_BIRD" show protocols all sw_a | sed -n '/Neighbor capabilities/,$p')"
check "the restarted switch's OPEN: restart flag (Restart recovery)" grep -q 'Restart recovery' <<<"$caps"
check "the restarted switch's OPEN: IPv4 forwarding preserved (AF preserved: ipv4)" \
    grep -qE 'AF preserved: +ipv4' <<<"$caps"
check_eq "the restarted switch announces restart time $GR_TIME_2 s" "$(grep -c "Restart time: $GR_TIME_2\$" <<<"$caps")" 1
check_eq "r1's BIRD: routes to $HOSTS_NET from sw_a and sw_b (refreshed)" "$(r1_bird_routes)" 2

touch "$WATCH_STOP"
rsw_wait_pid "$WATCH" 5 || true
samples="$(wc -l <"$RSW_TMP/watch.txt")"
bad="$(grep -cvx 2 "$RSW_TMP/watch.txt" || true)"
check_ge "samples of r1's kernel route from before the kill to the end of the restart" "$samples" 20
check_eq "samples where r1's kernel route to $HOSTS_NET lacked a next hop ($samples samples)" "$bad" 0

check "the switch follows BIRD again (learned routes = kernel's)" bgp_wait_synced 20
if s="$(bgp_wait_paths 2 15 "$H2_NET")"; then
    rsw_pass "$H2_NET: ECMP route of 2 paths in the restarted switch, $s s"
else
    rsw_fail "$H2_NET has $(bgp_route_paths "$H2_NET") paths in the restarted switch, expected 2"
fi

# Traffic resumes in both directions.
n12="$(cat "$S12.count")"; n21="$(cat "$S21.count")"
check "h1 -> h2 stream resumes (200 more datagrams)" bgp_stream_wait "$S12" $((n12 + 200)) 20
check "h2 -> h1 stream resumes (200 more datagrams)" bgp_stream_wait "$S21" $((n21 + 200)) 20
check "ping h1 -> h2 after the restart (10 of 10)" rsw_ping_ok ip netns exec "$H1" ping -c 10 -i 0.1 -W 2 10.0.2.2
check "ping h2 -> h1 after the restart (10 of 10)" rsw_ping_ok ip netns exec "$H2" ping -c 10 -i 0.1 -W 2 10.0.1.2
touch "$STOP"
for p in "$TX12" "$TX21"; do rsw_wait_pid "$p" 10 || true; done
for p in "$RX12" "$RX21"; do rsw_wait_pid "$p" 15 || true; done
for f in "$S12:h1 -> h2" "$S21:h2 -> h1"; do
    read -r sent got _ <"${f%%:*}" || { rsw_fail "no result from the ${f#*:} receiver"; continue; }
    lost=$((sent - got))
    rsw_pass "${f#*:}: $got of $sent datagrams received; $lost lost while the switch was down ($(awk -v l="$lost" -v r="$PPS" 'BEGIN { printf "%.2f", l / r }') s at $PPS/s)"
done
rsw_assert_accounting
# What the restarted switch dropped: no_route is h1 -> h2 traffic before BIRD re-learned the
# route; punted traffic to next hops not yet resolved (glean) is policed.
rsw_ctl show punt | sed 's/^/    punt: /'

# --- phase 2: kill -9 and no restart: r1 withdraws after the restart time -------------------
echo "-- phase 2: kill -9, no restart: withdrawal after the restart time ($GR_TIME_2 s)"
kill_switch " (phase 2)"
if wait_until 10 both_gr_active >/dev/null; then
    t_gr=$(date +%s%N)
    rsw_pass "r1: graceful restart detected $(since "$t_kill" "$t_gr") s after the kill"
    check_eq "r1's BIRD keeps the stale routes to $HOSTS_NET meanwhile" "$(r1_bird_routes)" 2
    check_eq "r1's kernel keeps $HOSTS_NET with both next hops meanwhile" "$(r1_paths)" 2
else
    rsw_fail "r1 does not show 'Neighbor graceful restart active' for sw_a and sw_b within 10 s (phase 2)"
fi
if wait_until $((GR_TIME_2 + 15)) r1_routes_gone >/dev/null; then
    t_gone=$(date +%s%N)
    gone_ms=$(( (t_gone - t_kill) / 1000000 ))
    check_ge "r1 withdraws $HOSTS_NET no earlier than the restart time after the kill (ms)" "$gone_ms" $((GR_TIME_2 * 1000))
    rsw_pass "r1 withdrew $HOSTS_NET (BIRD and kernel) $(since "$t_kill" "$t_gone") s after the kill, $(since "$t_gr" "$t_gone") s after it noticed"
else
    rsw_fail "r1 still has $HOSTS_NET $((GR_TIME_2 + 15)) s after the kill: BIRD $(r1_bird_routes) routes, kernel $(r1_paths) next hops"
fi
check "r1's log: 'sw_a: Neighbor graceful restart timeout'" grep -q 'sw_a: Neighbor graceful restart timeout' "$R1_LOG"
check "r1's log: 'sw_b: Neighbor graceful restart timeout'" grep -q 'sw_b: Neighbor graceful restart timeout' "$R1_LOG"

rsw_finish
