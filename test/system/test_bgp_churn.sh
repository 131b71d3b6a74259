#!/bin/bash
# System test (TESTPLAN C2): route churn while traffic flows. In the lab of lib_bgp.sh (roceswd
# + BIRD in netns <tag>-sw, r1 over p1 and p2), r1 announces N (default 5000) /32 prefixes
# 10.100.x.y (a BIRD static protocol, as multipath routes over both sessions), withdraws them
# and announces them again, 3 times (`birdc configure` alternating between two config files),
# while h1 sends a steady ~500 packets/s UDP stream to h2 (10.0.2.0/24, never changed).
#
# Checks: every churn step reaches the switch (route count = base + N, then base); the stream
# loses nothing (sequence numbers counted at h2); afterwards the prefixes roceswd learned equal
# the `proto bird` routes of the namespace's kernel table; 3000 static routes added and then
# deleted while roceswd is stopped overrun its netlink socket, and it re-dumps to the kernel's
# table each time (TESTPLAN R3); the switch lives. Reports the
# install and removal rates (time from `birdc configure` until rocectl shows the count; the
# count is polled every 0.25 s, so that is the resolution).
#
# RSW_CHURN_N=<n> changes N; RSW_BGP_KERNEL_SWITCH=1 runs with the kernel as the switch.
# Needs root. Run: sudo test/system/test_bgp_churn.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root

N="${RSW_CHURN_N:-5000}"
CYCLES=3
STEP_TIMEOUT=30

rsw_init
bgp_need_tools || rsw_finish
# A small netlink socket buffer (the minimum, 256 KiB): bursts of thousands of updates can
# overrun it (ENOBUFS), and the switch must then re-dump and reconcile (TESTPLAN R3): the
# FIB = kernel check below holds either way.
RCVBUF_KB="${RSW_CHURN_RCVBUF_KB:-256}"
bgp_lab "control_plane:
  host_interfaces: true
  netlink: true
  netlink_rcvbuf_kb: $RCVBUF_KB" || rsw_finish
bgp_lab_sessions 20 || rsw_finish

# r1's two configurations: R1_CONF (as started, without the churn prefixes) and R1_ON (with).
CHURN="$RSW_TMP/churn-routes.conf"
R1_ON="$RSW_TMP/bird-r1-churn.conf"
"$RSW_PYTHON" - "$N" >"$CHURN" <<'EOF'
import sys
n = int(sys.argv[1])
print("protocol static s_churn {\n  ipv4;")
for i in range(n):
    print('  route 10.100.%d.%d/32 via "lo";' % (i // 256, i % 256))
print("}")
EOF
{ cat "$R1_CONF"; printf 'include "%s";\n' "$CHURN"; } >"$R1_ON"
if bird -p -c "$R1_ON" 2>"$RSW_TMP/parse.err"; then
    rsw_pass "r1 churn config with $N static /32 routes parses"
else
    rsw_fail "r1 churn config does not parse: $(head -c 300 "$RSW_TMP/parse.err")"
    rsw_finish
fi

# bgp_wait_count TARGET TIMEOUT: polls the switch's route count every 0.25 s until it equals
# TARGET; prints the seconds; status 1 on timeout.
bgp_wait_count() {
    local target="$1" timeout="$2" t0 deadline c
    t0=$(date +%s%N)
    deadline=$(( t0 + timeout * 1000000000 ))
    while :; do
        c="$(bgp_route_count 2>/dev/null || echo -1)"
        if [ "$c" = "$target" ]; then bgp_elapsed "$t0"; return 0; fi
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "  route count $c, expected $target after $timeout s; not learned ones now:"
            if bgp_have_ctl; then
                rsw_ctl show routes 2>/dev/null | grep -v " bird " | sed 's/^/    | /' >&2 || true
            fi
            ip -n "$RSW_SW_NS" neigh 2>/dev/null | sed 's/^/    | kernel neigh: /' >&2 || true
            bgp_elapsed "$t0"
            return 1
        fi
        sleep 0.25
    done
}

bgp_wait_paths 2 10 10.0.2.0/24 >/dev/null || true
ip netns exec "$H1" ping -c 2 -i 0.2 -W 2 10.0.2.2 >/dev/null 2>&1 || true
BASE="$(bgp_route_count)"
rsw_log "  switch route count before churn: $BASE"

# The steady stream: h1 -> h2 UDP 7777 at 500 packets/s with sequence numbers, until the file
# STOP exists; h2 counts what arrives and lists the gaps.
STOP="$RSW_TMP/stream.stop"
bgp_stream_rx "$H2" 10.0.2.2 7777 "$RSW_TMP/stream.rx" 60
RX_PID="$RSW_LAST_PID"
bgp_stream_tx "$H1" 10.0.2.2 7777 500 "$STOP"
TX_PID="$RSW_LAST_PID"
# The stream flows through the switch before the churn starts (100 datagrams, 0.2 s, arrived).
bgp_stream_wait "$RSW_TMP/stream.rx" 100 10 || rsw_fail "stream h1 -> h2 flowing before the churn"

steps_ok=0
add_times=(); del_times=()
for c in $(seq 1 "$CYCLES"); do
    t0=$(date +%s%N)
    bgp_birdc "$R1_BIRD" configure "\"$R1_ON\"" || rsw_fail "birdc configure (announce) $c"
    if secs="$(bgp_wait_count $((BASE + N)) "$STEP_TIMEOUT")"; then
        add_times+=("$secs"); steps_ok=$((steps_ok + 1))
        rsw_log "  cycle $c: $N prefixes installed in the switch in $secs s"
    else
        rsw_fail "cycle $c: switch route count not base + $N within $STEP_TIMEOUT s"
    fi
    [ "$c" = "$CYCLES" ] && break   # end announced: compare the full tables below
    t0=$(date +%s%N)
    bgp_birdc "$R1_BIRD" configure "\"$R1_CONF\"" || rsw_fail "birdc configure (withdraw) $c"
    if secs="$(bgp_wait_count "$BASE" "$STEP_TIMEOUT")"; then
        del_times+=("$secs"); steps_ok=$((steps_ok + 1))
        rsw_log "  cycle $c: $N prefixes removed from the switch in $secs s"
    else
        rsw_fail "cycle $c: switch route count not back to $BASE within $STEP_TIMEOUT s"
    fi
done
check_eq "churn steps that reached the switch" "$steps_ok" $((2 * CYCLES - 1))
if [ "${#add_times[@]}" -gt 0 ]; then
    rsw_log "  install: $(printf '%s\n' "${add_times[@]}" | awk -v n="$N" '{ s = s sprintf("%.0f/s (%s s) ", n / $1, $1) } END { print s }')"
fi
if [ "${#del_times[@]}" -gt 0 ]; then
    rsw_log "  removal: $(printf '%s\n' "${del_times[@]}" | awk -v n="$N" '{ s = s sprintf("%.0f/s (%s s) ", n / $1, $1) } END { print s }')"
fi
if [ "${#add_times[@]}" -gt 0 ]; then
    rsw_pass "route install rate: $(printf '%s\n' "${add_times[@]}" | awk -v n="$N" '{ t += $1 } END { printf "%.0f routes/s (mean of %d, %d multipath /32s each)", n * NR / t, NR, n }')"
fi

# Stop the stream once it has run on for 250 more datagrams (0.5 s) after the last step reached
# the switch; zero loss.
bgp_stream_wait "$RSW_TMP/stream.rx" $(( $(cat "$RSW_TMP/stream.rx.count" 2>/dev/null || echo 0) + 250 )) 10 ||
    rsw_fail "stream h1 -> h2 still flowing after the churn"
: >"$STOP"
rsw_wait_pid "$TX_PID" 10 || true
rsw_wait_pid "$RX_PID" 10 || true
read -r sent got _ missing <"$RSW_TMP/stream.rx" || { sent=0; got=0; missing=""; }
rsw_log "  stream h1 -> h2: sent $sent, received $got$([ -n "$missing" ] && echo ", first missing: $missing")"
check_ge "stream ran (>= 1000 packets)" "$sent" 1000
check_eq "zero loss on the unchanged prefix 10.0.2.0/24 during churn (sent $sent)" "$got" "$sent"

# The switch's learned routes equal the kernel's proto bird routes (announced state), once the
# last updates are through (bounded wait; the comparison below reports any difference).
bgp_wait_synced 10 || true
bgp_kernel_routes >"$RSW_TMP/kernel.txt"
bgp_switch_learned >"$RSW_TMP/switch.txt"
if [ "$RSW_BGP_KERNEL" != 1 ]; then
    resyncs="$(rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["netlink"]["resyncs"])')"
    rsw_log "  netlink socket buffer ${RCVBUF_KB} KiB: $resyncs overrun(s), each followed by a re-dump"
fi
check_eq "kernel of sw: proto bird routes = $N + 4" "$(wc -l <"$RSW_TMP/kernel.txt")" $((N + 4))
if diff -q "$RSW_TMP/kernel.txt" "$RSW_TMP/switch.txt" >/dev/null; then
    rsw_pass "switch FIB learned prefixes = kernel table of sw ($(wc -l <"$RSW_TMP/switch.txt") prefixes)"
else
    rsw_fail "switch FIB differs from the kernel: $(diff "$RSW_TMP/kernel.txt" "$RSW_TMP/switch.txt" | grep -c '^[<>]') prefixes differ; first:"
    diff "$RSW_TMP/kernel.txt" "$RSW_TMP/switch.txt" | grep '^[<>]' | head -n 5 | sed 's/^/    | /'
fi
# Every churned prefix must end as a 2-path ECMP route, as in the kernel (BIRD installs a
# prefix with the first session's path, then replaces it with the multipath route when the
# second session's update arrives).
bgp_multipath_mismatch >"$RSW_TMP/mp.txt" || true
if [ ! -s "$RSW_TMP/mp.txt" ]; then
    rsw_pass "every prefix has as many paths in the switch as in the kernel (multipath kept through the churn)"
else
    rsw_fail "$(wc -l <"$RSW_TMP/mp.txt") prefixes have fewer/more paths in the switch than in the kernel; first (prefix kernel switch):"
    head -n 5 "$RSW_TMP/mp.txt" | sed 's/^/    | /'
    p1="$(head -n 1 "$RSW_TMP/mp.txt" | cut -d' ' -f1)"
    ip -n "$RSW_SW_NS" route show "$p1" | sed 's/^/    | kernel: /'
    sleep 3   # diagnosis only (the check has failed): does the switch catch up late?
    rsw_log "    3 s later the switch has $(bgp_route_paths "$p1") paths for $p1"
fi

# The data plane forwards to churned prefixes at full rate (not through the kernel's slow
# path): 64 prefixes spread over the N, 8 packets each, must all leave towards r1.
dsts=()
for i in $(seq 0 63); do j=$(( i * (N - 1) / 63 )); dsts+=("10.100.$((j / 256)).$((j % 256))"); done
a0="$(bgp_if_counter "$R1" "$IF1" rx_packets)"; b0="$(bgp_if_counter "$R1" "$IF2" rx_packets)"
gl0="$(bgp_drops p0 punt_policed)"
bgp_udp_to "$H1" "$IF0" "$P0_MAC" 10.0.1.2 8 "${dsts[@]}"
read -r da db < <(bgp_r1_split "$a0" "$b0" 512)
rsw_log "  512 packets to 64 churned prefixes: r1 received $da on p1, $db on p2; p0 punt_policed +$(( $(bgp_drops p0 punt_policed) - gl0 ))"
check_ge "512 packets to 64 churned prefixes reach r1 (allowing ~1/s keepalives)" $((da + db)) 512

# TESTPLAN R3 for certain: whether the churn above overran the socket depends on the machine's
# speed. Here roceswd is stopped (SIGSTOP, ~0.1 s: BGP's hold time is 3 s) while M static
# routes are added to the namespace's kernel (`ip -batch`), so their messages overrun the
# socket buffer (ENOBUFS): at SIGCONT the switch must re-dump and end with every one of them;
# then the same for their deletion.
M=3000
netlink_resyncs() {
    rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["netlink"]["resyncs"])'
}
if [ "$RSW_BGP_KERNEL" != 1 ]; then
    for op in add del; do
        "$RSW_PYTHON" -c '
import sys
n, op = int(sys.argv[1]), sys.argv[2]
for i in range(n):
    print("route %s 10.101.%d.%d/32 via 10.0.11.2 proto static" % (op, i // 256, i % 256))
' "$M" "$op" >"$RSW_TMP/static-$op.batch"
    done
    c0="$(bgp_route_count)"; r0="$(netlink_resyncs)"
    for op in add del; do
        target=$c0; done_="deleted"
        [ "$op" = add ] && target=$((c0 + M)) && done_="added"
        r1="$(netlink_resyncs)"
        kill -STOP "$RSW_SWITCH_PID"
        ip -n "$RSW_SW_NS" -batch "$RSW_TMP/static-$op.batch" || rsw_fail "ip -batch: $M route ${op}s"
        kill -CONT "$RSW_SWITCH_PID"
        if secs="$(bgp_wait_count "$target" "$STEP_TIMEOUT")"; then
            rsw_pass "$M static routes $done_ while roceswd was stopped: the switch has $target routes $secs s after SIGCONT"
        else
            rsw_fail "$M static routes $done_ while roceswd was stopped: $(bgp_route_count) routes, expected $target"
        fi
        check_ge "the routes $done_ overran the ${RCVBUF_KB} KiB socket: a re-dump (netlink resyncs)" \
            $(( $(netlink_resyncs) - r1 )) 1
    done
    rsw_log "  netlink resyncs: $r0 before, $(netlink_resyncs) after the two overruns"
    bgp_kernel_routes >"$RSW_TMP/kernel2.txt"
    bgp_switch_learned >"$RSW_TMP/switch2.txt"
    check_eq "switch FIB learned prefixes = kernel table of sw after the overruns" \
        "$(diff "$RSW_TMP/kernel2.txt" "$RSW_TMP/switch2.txt" | grep -c '^[<>]')" 0
    check_eq "BGP sessions up: 10.0.2.0/24 over both" "$(bgp_route_paths 10.0.2.0/24)" 2
fi

if bgp_have_ctl; then
    if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive after the churn (VmRSS $(bgp_rss_kb) kB)"; else rsw_fail "roceswd died"; fi
    rsw_assert_accounting
    rc=0
    stop_switch 15 || rc=$?
    check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
fi
rsw_finish
