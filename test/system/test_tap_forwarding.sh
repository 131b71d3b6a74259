#!/bin/bash
# System test: roceswd routes between two hosts in network namespaces over TAP ports.
#
#   h1 (netns)                roceswd                    h2 (netns)
#   10.0.1.2/24   --- <tag>p0 [p0]      [p1] <tag>p1 ---  10.0.2.2/24
#   fd00:1::2/64         10.0.1.1        10.0.2.1         fd00:2::2/64
#                        fd00:1::1       fd00:2::1
#
# Checks: IPv4/IPv6 ping host to host, ping of the switch's own addresses, iperf3 TCP, exact
# no_route and ttl_expired drop counters, nonzero port counters, clean SIGTERM shutdown.
# Needs root (namespaces, TAP). Run: sudo test/system/test_tap_forwarding.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip ping iperf3

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="$RSW_TMP/ctl.sock"

cat >"$CFG" <<EOF
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
    ipv4: ["10.0.1.1/24"]
    ipv6: ["fd00:1::1/64"]
  - name: p1
    device: "net_tap1,iface=${IF1}"
    mac: "02:00:00:00:02:01"
    ipv4: ["10.0.2.1/24"]
    ipv6: ["fd00:2::1/64"]
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
  - {ip: "fd00:1::2", mac: "02:00:00:00:01:02"}
  - {ip: "fd00:2::2", mac: "02:00:00:00:02:02"}
EOF

echo "== $(basename "$0"): tag $RSW_TAG, switch log $LOG"
if ! start_switch "$CFG" "$LOG"; then
    rsw_fail "roceswd starts"
    rsw_finish
fi
rsw_pass "roceswd starts (pid $RSW_SWITCH_PID)"

make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
in1() { ip netns exec "$H1" "$@"; }
in2() { ip netns exec "$H2" "$@"; }

# A first exchange resolves the gateways (ARP/ND answered by the switch); then exact checks.
in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
in1 ping -6 -c 1 -W 2 fd00:2::2 >/dev/null 2>&1 || true

check "IPv4 ping h1 -> h2 (5 packets, 0% loss)" rsw_ping_ok in1 ping -c 5 -i 0.2 -W 2 10.0.2.2
check "IPv6 ping h1 -> h2 (5 packets, 0% loss)" rsw_ping_ok in1 ping -6 -c 5 -i 0.2 -W 2 fd00:2::2
check "IPv4 ping h2 -> h1" rsw_ping_ok in2 ping -c 3 -i 0.2 -W 2 10.0.1.2
check "IPv4 ping h1 -> switch 10.0.1.1" rsw_ping_ok in1 ping -c 3 -i 0.2 -W 2 10.0.1.1
check "IPv4 ping h1 -> switch 10.0.2.1 (far port)" rsw_ping_ok in1 ping -c 3 -i 0.2 -W 2 10.0.2.1
check "IPv6 ping h1 -> switch fd00:1::1" rsw_ping_ok in1 ping -6 -c 3 -i 0.2 -W 2 fd00:1::1
check "IPv6 ping h1 -> switch fd00:2::1 (far port)" rsw_ping_ok in1 ping -6 -c 3 -i 0.2 -W 2 fd00:2::1

# iperf3 TCP h1 -> h2, 3 s. The server serves one test (-1) and exits.
IPERF_JSON="$RSW_TMP/iperf3.json"
rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2 >"$RSW_TMP/iperf3-server.log" 2>&1
IPERF_SERVER="$RSW_LAST_PID"
rsw_wait_listen "$H2" tcp 5201 || true  # the client reports a failure to connect
if in1 iperf3 -c 10.0.2.2 -t 3 --json >"$IPERF_JSON" 2>"$RSW_TMP/iperf3-client.err"; then
    read -r IPERF_BPS IPERF_BYTES < <("$RSW_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))["end"]["sum_received"]
print(int(r["bits_per_second"]), int(r["bytes"]))
' "$IPERF_JSON")
    rsw_pass "iperf3 TCP h1 -> h2, 3 s: $(awk -v b="$IPERF_BPS" 'BEGIN{printf "%.1f Mbit/s", b/1e6}'), $IPERF_BYTES bytes received"
else
    IPERF_BPS=0 IPERF_BYTES=0
    rsw_fail "iperf3 TCP h1 -> h2"
    sed 's/^/    | /' "$RSW_TMP/iperf3-client.err" | tail -n 5
fi
rsw_wait_pid "$IPERF_SERVER" 5 || true
if [ "$RSW_WAIT_RC" != 0 ]; then rsw_log "note: iperf3 server ended with '$RSW_WAIT_RC'"; fi

# Drop counters: read before and after, compare the difference exactly.
nr0="$(rsw_drops p0 no_route)"
check_fails "ping to 192.0.2.1 (no route) gets no reply" in1 ping -c 3 -i 0.2 -W 1 192.0.2.1
nr1="$(rsw_wait_counter $((nr0 + 3)) 3 rsw_drops p0 no_route)"
check_eq "p0 no_route rises by exactly 3" "$((nr1 - nr0))" 3

tt0="$(rsw_drops p0 ttl_expired)"
check_fails "ping with TTL 1 to 10.0.2.2 gets no reply" in1 ping -t 1 -c 2 -i 0.2 -W 1 10.0.2.2
tt1="$(rsw_wait_counter $((tt0 + 2)) 3 rsw_drops p0 ttl_expired)"
check_eq "p0 ttl_expired rises by exactly 2" "$((tt1 - tt0))" 2

# Port counters.
for p in p0 p1; do
    for f in rx_packets tx_packets; do
        check_ge "$p $f nonzero" "$(rsw_port_counter "$p" "$f")" 1
    done
done
check_ge "p1 tx_bytes >= bytes iperf3 received" "$(rsw_port_counter p1 tx_bytes)" "$IPERF_BYTES"
check_ge "p0 local_packets (ARP/ND/echo answered)" "$(rsw_port_counter p0 local_packets)" 1

# Shutdown: SIGTERM -> exit 0, control socket removed.
if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive after all traffic"; else rsw_fail "roceswd died"; fi
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
if [ -e "$SOCK" ]; then rsw_fail "control socket removed on exit ($SOCK still there)"; else rsw_pass "control socket removed on exit"; fi
if grep -q ' stopped' "$LOG"; then rsw_pass "log ends with 'stopped'"; else rsw_fail "log has no 'stopped' line"; fi

rsw_finish
