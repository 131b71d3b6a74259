#!/bin/bash
# System test: roceswd over AF_XDP ports (net_af_xdp with rocesw's XDP program) on veth pairs.
#
#   h1 (netns)                      roceswd (this namespace)                   h2 (netns)
#   10.0.1.2/24  <tag>h0 ==veth== <tag>s0 [p0]      [p1] <tag>s1 ==veth== <tag>h1  10.0.2.2/24
#   fd00:1::2/64                   10.0.1.1          10.0.2.1                      fd00:2::2/64
#   198.18.N.2/24 (kernel subnet)  198.18.N.1 = the kernel's own address on <tag>s0
#
# 1. dedicated mode: ping v4/v6 across, iperf3 TCP and UDP, the program's counters.
# 2. kill -9: the program stays attached; the next start finds it, says so and replaces it.
# 3. shared mode: while iperf3 runs through the switch, h1 talks TCP to the kernel's own address
#    on <tag>s0 (an echo server here); the counters show the split (to the switch / to kernel).
# 4. generic XDP (xdp_mode: generic): the program runs in SKB mode (ip link: xdpgeneric,
#    bpftool net), the same forwarding checks, the counters; after kill -9 the next start
#    replaces the stale generic program; detached on exit.
# 5. xdp_mode native on an interface whose driver has no native XDP (a macvlan): roceswd stops
#    at start with the reason; nothing stays attached.
# Sections 1 and 3 run with xdp_mode auto, which on veth is native (ip link: xdp), checked too.
# Needs root, the kernel's AF_XDP sockets and a roceswd built with clang (the XDP program).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_af_xdp ip ping iperf3 ethtool curl

rsw_init
S0="$(rsw_ifname s0)"; S1="$(rsw_ifname s1)"
HI0="$(rsw_ifname h0)"; HI1="$(rsw_ifname h1)"
H1="$(rsw_ns h1)"; H2="$(rsw_ns h2)"
SOCK="$RSW_TMP/ctl.sock"
# The kernel's own subnet on s0: 198.18.N.0/24 (benchmarking range), N from the run's tag.
KN=$(( 0x${RSW_TAG:3:2} ))
KADDR="198.18.$KN.1"; HKADDR="198.18.$KN.2"
PROM_PORT="$("$RSW_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

make_veth "$S0" "$HI0"
make_veth "$S1" "$HI1"
# The switch's side stays quiet: no IPv6 autoconfiguration noise on the AF_XDP interfaces.
for i in "$S0" "$S1"; do sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; done
make_host "$H1" "$HI0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$HI1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
in1() { ip netns exec "$H1" "$@"; }
in2() { ip netns exec "$H2" "$@"; }

# write_config MODE FILE [XDP_MODE=auto]
write_config() {
    cat >"$2" <<EOC
switch:
  name: ${RSW_TAG}
  workers: 1
  idle: adaptive
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
telemetry:
  prometheus:
    listen: "127.0.0.1:${PROM_PORT}"
ports:
  - name: p0
    af_xdp: {interface: ${S0}, mode: $1, xdp_mode: ${3:-auto}}
    mac: "02:00:00:00:01:01"
    ipv4: ["10.0.1.1/24"]
    ipv6: ["fd00:1::1/64"]
  - name: p1
    af_xdp: {interface: ${S1}, mode: $1, xdp_mode: ${3:-auto}}
    mac: "02:00:00:00:02:01"
    ipv4: ["10.0.2.1/24"]
    ipv6: ["fd00:2::1/64"]
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
  - {ip: "fd00:1::2", mac: "02:00:00:00:01:02"}
  - {ip: "fd00:2::2", mac: "02:00:00:00:02:02"}
EOC
}

# xdp_counter PORT REASON: a counter of the port's XDP program (show ports --json).
xdp_counter() {
    rsw_ctl --json show ports | "$RSW_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
p = [p for p in d["ports"] if p["name"] == sys.argv[1]][0]
print(p["af_xdp"]["packets"][sys.argv[2]] if p.get("af_xdp") else -1)
' "$1" "$2"
}

# iperf3_run PROTO SECONDS: h1 -> h2 through the switch; prints "bits/s bytes lost%".
iperf3_run() {
    local proto="$1" secs="$2" srv json="$RSW_TMP/iperf3-$1.json" args=()
    [ "$proto" = udp ] && args=(-u -b 50M)
    rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2 >"$RSW_TMP/iperf3-server-$proto.log" 2>&1
    srv="$RSW_LAST_PID"
    rsw_wait_listen "$H2" tcp 5201 || true  # the client reports a failure to connect
    if ! in1 iperf3 -c 10.0.2.2 -t "$secs" "${args[@]}" --connect-timeout 3000 --json >"$json" 2>&1; then
        rsw_kill "$srv" 2
        return 1
    fi
    rsw_wait_pid "$srv" 5 || rsw_kill "$srv" 2
    "$RSW_PYTHON" -c '
import json, sys
e = json.load(open(sys.argv[1]))["end"]
if "sum_received" in e:
    r = e["sum_received"]; print(int(r["bits_per_second"]), int(r["bytes"]), 0)
else:
    r = e["sum"]; print(int(r["bits_per_second"]), int(r["bytes"]), r.get("lost_percent", 0))
' "$json"
}

forwarding_checks() {
    local mode="$1" out
    in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
    in1 ping -6 -c 1 -W 2 fd00:2::2 >/dev/null 2>&1 || true
    check "[$mode] IPv4 ping h1 -> h2 (20 packets, 0% loss)" rsw_ping_ok in1 ping -c 20 -i 0.05 -W 2 10.0.2.2
    check "[$mode] IPv6 ping h1 -> h2 (20 packets, 0% loss)" rsw_ping_ok in1 ping -6 -c 20 -i 0.05 -W 2 fd00:2::2
    check "[$mode] IPv4 ping h1 -> switch 10.0.1.1" rsw_ping_ok in1 ping -c 3 -i 0.2 -W 2 10.0.1.1
    if out="$(iperf3_run tcp 3)"; then
        rsw_pass "[$mode] iperf3 TCP h1 -> h2, 3 s: $(awk '{printf "%.1f Mbit/s, %d bytes", $1/1e6, $2}' <<<"$out")"
    else
        rsw_fail "[$mode] iperf3 TCP h1 -> h2"; tail -n 5 "$RSW_TMP/iperf3-tcp.json" | sed 's/^/    | /'
    fi
    if out="$(iperf3_run udp 3)"; then
        rsw_pass "[$mode] iperf3 UDP h1 -> h2, 3 s at 50 Mbit/s: $(awk '{printf "%.1f Mbit/s received, %s%% lost", $1/1e6, $3}' <<<"$out")"
    else
        rsw_fail "[$mode] iperf3 UDP h1 -> h2"; tail -n 5 "$RSW_TMP/iperf3-udp.json" | sed 's/^/    | /'
    fi
}

# check_attach LABEL IPLINK_KIND ATTACH: rocesw's program runs on S0 and S1 in the mode ip link
# calls IPLINK_KIND (xdp: native, xdpgeneric: generic), bpftool net agrees (driver, generic)
# and show ports says ATTACH (native, generic).
check_attach() {
    local label="$1" kind="$2" attach="$3" i bt bword=driver
    [ "$attach" = generic ] && bword=generic
    bt="$(bpftool net show 2>/dev/null || true)"
    for i in "$S0" "$S1"; do
        check "[$label] $i: ip link shows '$kind' and rsw_xdp" \
            bash -c 'l="$(ip -d link show dev "$0")"; grep -q " mtu [0-9]* $1 " <<<"$l" &&
                     grep -q "prog/xdp id [0-9]* name rsw_xdp " <<<"$l"' "$i" "$kind"
        check "[$label] $i: bpftool net lists the program as $bword" \
            grep -Eq "^$i\([0-9]+\) $bword id [0-9]+" <<<"$bt"
    done
    rsw_log "[$label] bpftool net: $(grep -E "^($S0|$S1)\(" <<<"$bt" | tr '\n' ';')"
    check_eq "[$label] show ports: p0 af_xdp.attach" \
        "$(rsw_ctl --json show ports | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["ports"][0]["af_xdp"]["attach"])')" "$attach"
}

echo "== $(basename "$0"): tag $RSW_TAG, temp dir $RSW_TMP"

# --- 1. dedicated ---------------------------------------------------------------------------
write_config dedicated "$RSW_TMP/dedicated.yaml"
if ! start_switch "$RSW_TMP/dedicated.yaml" "$RSW_TMP/dedicated.log" 30; then
    rsw_fail "[dedicated] roceswd starts"
    rsw_finish
fi
rsw_pass "[dedicated] roceswd starts (pid $RSW_SWITCH_PID)"
check_attach dedicated xdp native
forwarding_checks dedicated
check_ge "[dedicated] p0 XDP to_switch_all" "$(xdp_counter p0 to_switch_all)" 100

# No stall over 10^6 frames: a UDP flood of 10^6 64-byte datagrams h1 -> h2 as fast as iperf3
# sends; then the port still receives (ping, counters). Every frame the program redirected is
# either received by the switch or counted as RX-MISSED (the socket's RX ring was full or had
# no fill buffer: the kernel's XDP_STATISTICS rx_dropped, the PMD's imissed), exactly.
x0="$(xdp_counter p0 to_switch_all)"; r0="$(rsw_port_counter p0 rx_packets)"
m0="$(rsw_port_counter p0 rx_missed)"
rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2 >"$RSW_TMP/iperf3-server-flood.log" 2>&1
FLOOD_SRV="$RSW_LAST_PID"
rsw_wait_listen "$H2" tcp 5201 || true  # the client reports a failure to connect
t0=$(date +%s)
in1 timeout 90 iperf3 -c 10.0.2.2 -u -b 0 -l 64 -k 1000000 --connect-timeout 3000 \
    >"$RSW_TMP/iperf3-flood.log" 2>&1 || true
rsw_wait_pid "$FLOOD_SRV" 5 || rsw_kill "$FLOOD_SRV" 2
# The switch drains what the ring still holds: wait until the counts add up, or have stood still
# for 2 s (a loaded machine may not run the worker for a while), at most 10 s.
prev=""; still=0
for _ in $(seq 1 100); do
    x1="$(xdp_counter p0 to_switch_all)"; r1="$(rsw_port_counter p0 rx_packets)"
    m1="$(rsw_port_counter p0 rx_missed)"
    [ "$((r1 - r0 + m1 - m0))" = "$((x1 - x0))" ] && break
    if [ "$x1 $r1 $m1" = "$prev" ]; then still=$((still + 1)); else still=0; fi
    [ "$still" -ge 20 ] && break
    prev="$x1 $r1 $m1"
    sleep 0.1
done
rsw_log "flood: $((x1 - x0)) frames to the socket in $(( $(date +%s) - t0 )) s: $((r1 - r0)) received by the switch, $((m1 - m0)) RX-MISSED"
check_ge "[dedicated] flood: p0's XDP program gave the socket >= 10^6 frames" "$((x1 - x0))" 1000000
check_eq "[dedicated] flood: received + RX-MISSED = what the program redirected, exactly" \
    "$((r1 - r0 + m1 - m0))" "$((x1 - x0))"
check_eq "[dedicated] flood: p0's rx_nombuf (no mbuf to refill the fill ring)" \
    "$(rsw_port_counter p0 rx_nombuf)" 0
check "[dedicated] after the flood p0 still receives (IPv4 ping h1 -> h2, 0% loss)" \
    rsw_ping_ok in1 ping -c 10 -i 0.05 -W 2 10.0.2.2
check_ge "[dedicated] after the flood p0's rx_packets still rise" \
    "$(( $(rsw_port_counter p0 rx_packets) - r1 ))" 10
check_eq "[dedicated] p0 XDP pass_kernel" "$(xdp_counter p0 pass_kernel)" 0
rsw_ctl show ports | sed 's/^/    /'

# --- 2. kill -9, then a start that replaces the stale program -------------------------------
kill -KILL "$RSW_SWITCH_PID"
rsw_wait_pid "$RSW_SWITCH_PID" 5 || true
RSW_SWITCH_PID=""
rm -f "$SOCK"
if ip -d link show dev "$S0" | grep -q 'prog/xdp'; then
    rsw_pass "after kill -9 the XDP program is still attached to $S0"
else
    rsw_fail "after kill -9 no XDP program on $S0 (expected a stale one)"
fi

# --- 3. shared ------------------------------------------------------------------------------
ip addr add "$KADDR/24" dev "$S0"
in1 ip addr add "$HKADDR/24" dev "$HI0"
# Forget the gateway's MAC so that shared mode must steer h1's ARP and ND to the switch.
in1 ip neigh flush dev "$HI0"
in1 ip -6 neigh flush dev "$HI0"
write_config shared "$RSW_TMP/shared.yaml"
if ! start_switch "$RSW_TMP/shared.yaml" "$RSW_TMP/shared.log" 30; then
    rsw_fail "[shared] roceswd starts"
    rsw_finish
fi
rsw_pass "[shared] roceswd starts (pid $RSW_SWITCH_PID)"
if grep -q "still has XDP program 'rsw_xdp'" "$RSW_TMP/shared.log"; then
    rsw_pass "[shared] the stale program was found and replaced (log line)"
else
    rsw_fail "[shared] no log line about the stale XDP program"
fi
forwarding_checks shared

# The kernel's own address on s0, while the switch forwards: a TCP echo server here, a client
# in h1, during an iperf3 run h1 -> h2 through the switch.
ECHO_PORT=$(( 20000 + KN ))
rsw_bg "$RSW_PYTHON" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(4); s.settimeout(30)
for _ in range(3):
    c, _ = s.accept(); c.settimeout(10)
    data = b""
    while not data.endswith(b"\n"):
        chunk = c.recv(65536)
        if not chunk: break
        data += chunk
    c.sendall(data); c.close()
' "$KADDR" "$ECHO_PORT" >"$RSW_TMP/echo.log" 2>&1
ECHO_PID="$RSW_LAST_PID"
sleep 0.5
rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2 >"$RSW_TMP/iperf3-server-bg.log" 2>&1
rsw_wait_listen "$H2" tcp 5201 || true  # the client reports a failure to connect
rsw_bg ip netns exec "$H1" iperf3 -c 10.0.2.2 -t 4 --connect-timeout 3000 >"$RSW_TMP/iperf3-bg.log" 2>&1
IPERF_BG="$RSW_LAST_PID"
sleep 1
pk0="$(xdp_counter p0 pass_kernel)"
for n in 1 2 3; do
    check "[shared] TCP echo h1 -> kernel $KADDR:$ECHO_PORT on $S0 during forwarding ($n/3)" \
        in1 "$RSW_PYTHON" -c '
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
msg = ("hello %s " % sys.argv[3]).encode() * 2000 + b"\n"
c.sendall(msg); got = b""
while len(got) < len(msg):
    chunk = c.recv(65536)
    if not chunk: break
    got += chunk
sys.exit(0 if got == msg else "echo mismatch: %d of %d bytes" % (len(got), len(msg)))
' "$KADDR" "$ECHO_PORT" "$n"
done
if rsw_wait_pid "$IPERF_BG" 15 && [ "$RSW_WAIT_RC" = 0 ]; then
    rsw_pass "[shared] iperf3 TCP through the switch ran alongside ($(grep receiver "$RSW_TMP/iperf3-bg.log" | awk '{print $7, $8}'))"
else
    rsw_fail "[shared] iperf3 TCP alongside the kernel's connection (${RSW_WAIT_RC})"
fi
rsw_wait_pid "$ECHO_PID" 5 || true
check_ge "[shared] p0 XDP pass_kernel rose (kernel's TCP and ARP)" "$(( $(xdp_counter p0 pass_kernel) - pk0 ))" 10
check_ge "[shared] p0 XDP to_switch_mac" "$(xdp_counter p0 to_switch_mac)" 100
check_ge "[shared] p0 XDP to_switch_arp (ARP for 10.0.1.1)" "$(xdp_counter p0 to_switch_arp)" 1
check_ge "[shared] p0 XDP to_switch_nd (NS for fd00:1::1)" "$(xdp_counter p0 to_switch_nd)" 1
check_eq "[shared] p0 XDP to_switch_all (dedicated only)" "$(xdp_counter p0 to_switch_all)" 0
prom="$(curl -s --max-time 3 "http://127.0.0.1:${PROM_PORT}/metrics" || true)"
check_ge "[shared] Prometheus rocesw_port_xdp_packets_total{port=p0,reason=to_switch_mac}" \
    "$(awk '/^rocesw_port_xdp_packets_total\{/ && /port="p0"/ && /reason="to_switch_mac"/ {print int($NF)}' <<<"$prom" | head -n1)" 100
check_ge "[shared] Prometheus rocesw_port_xdp_packets_total{port=p0,reason=pass_kernel}" \
    "$(awk '/^rocesw_port_xdp_packets_total\{/ && /port="p0"/ && /reason="pass_kernel"/ {print int($NF)}' <<<"$prom" | head -n1)" 10
rsw_ctl show ports | sed 's/^/    /'
rsw_assert_accounting

rc=0
stop_switch 10 || rc=$?
check_eq "[shared] roceswd exits 0 on SIGTERM" "$rc" 0
if ip -d link show dev "$S0" | grep -q 'prog/xdp'; then
    rsw_fail "XDP program detached from $S0 on exit (still attached)"
else
    rsw_pass "XDP program detached from $S0 on exit"
fi

# --- 4. generic XDP -------------------------------------------------------------------------
# DPDK 22.11's net_af_xdp attaches the program native on veth; roceswd moves it to the generic
# slot once the port runs (doc/ports.md, "Generic XDP").
ip addr del "$KADDR/24" dev "$S0"
write_config dedicated "$RSW_TMP/generic.yaml" generic
if ! start_switch "$RSW_TMP/generic.yaml" "$RSW_TMP/generic.log" 30; then
    rsw_fail "[generic] roceswd starts"
    rsw_finish
fi
rsw_pass "[generic] roceswd starts (pid $RSW_SWITCH_PID)"
check "[generic] log: the program moved from native to generic mode" \
    grep -q "port p0: XDP program moved from native to generic (SKB) mode on $S0" "$RSW_TMP/generic.log"
check_attach generic xdpgeneric generic
xa0="$(xdp_counter p0 to_switch_all)"
forwarding_checks generic
check_ge "[generic] p0 XDP to_switch_all rose" "$(( $(xdp_counter p0 to_switch_all) - xa0 ))" 100
check_eq "[generic] p0 XDP pass_kernel" "$(xdp_counter p0 pass_kernel)" 0
check_eq "[generic] p0 XDP pass_no_socket" "$(xdp_counter p0 pass_no_socket)" 0
rsw_ctl show ports | sed 's/^/    /'
rsw_assert_accounting
# kill -9 leaves the program in the generic slot; the next start detaches it from there.
kill -KILL "$RSW_SWITCH_PID"
rsw_wait_pid "$RSW_SWITCH_PID" 5 || true
RSW_SWITCH_PID=""
rm -f "$SOCK"
check "[generic] after kill -9 the program is still attached to $S0 (xdpgeneric)" \
    bash -c 'ip -d link show dev "$0" | grep -q " xdpgeneric "' "$S0"
if ! start_switch "$RSW_TMP/generic.yaml" "$RSW_TMP/generic2.log" 30; then
    rsw_fail "[generic] roceswd starts again over the stale generic program"
    rsw_finish
fi
check "[generic] the stale generic program was found and replaced (log line)" \
    grep -q "still has XDP program 'rsw_xdp'" "$RSW_TMP/generic2.log"
check_attach generic-restart xdpgeneric generic
check "[generic] IPv4 ping h1 -> h2 after the restart" rsw_ping_ok in1 ping -c 5 -i 0.1 -W 2 10.0.2.2
rc=0
stop_switch 10 || rc=$?
check_eq "[generic] roceswd exits 0 on SIGTERM" "$rc" 0
for i in "$S0" "$S1"; do
    check "[generic] XDP program detached from $i on exit (generic slot too)" \
        bash -c '! ip -d link show dev "$0" | grep -q "prog/xdp"' "$i"
done

# --- 5. native asked where the driver has none ------------------------------------------------
MV="$(rsw_ifname mv)"
ip link add link "$S0" name "$MV" type macvlan mode bridge
ip link set dev "$MV" up
write_config dedicated "$RSW_TMP/native.yaml" native
sed -i "s/interface: ${S0},/interface: ${MV},/" "$RSW_TMP/native.yaml"
rc=0
timeout 60 "$ROCESWD" --config "$RSW_TMP/native.yaml" >"$RSW_TMP/native.log" 2>&1 || rc=$?
check "[native on macvlan] roceswd refuses to run (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "[native on macvlan] the error says why and what to use" \
    grep -q "port p0 (AF_XDP on $MV): xdp_mode is native, but the kernel attached the XDP program in generic mode: $MV (driver 'macvlan') has no native XDP; use xdp_mode generic or auto" "$RSW_TMP/native.log"
for i in "$MV" "$S1"; do
    check "[native on macvlan] nothing left attached to $i" \
        bash -c '! ip -d link show dev "$0" | grep -q "prog/xdp"' "$i"
done
ip link del "$MV"
rsw_finish
