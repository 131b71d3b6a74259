#!/bin/bash
# System test: a RoCEv2 stream from rocehost through roceswd's AF_XDP ports (issue 19).
#
#   namespace <tag>-hosts: rocehost, h1 and h2 on net_af_packet
#   h1 10.0.1.2  <tag>h0 ==veth== <tag>s0 [p0 af_xdp]  roceswd  [p1 af_xdp] <tag>s1 ==veth== <tag>h1  h2 10.0.2.2
#
# h1 writes 257 MB to h2 as one RC QP in 256-byte packets (rocehost.mtu 256): 1 003 907 data
# frames plus h2's ACKs, paced at the hosts' line rate. Checks:
#  - independent decoder: tshark captures the first frames on h2's veth; scapy recomputes every
#    ICRC and IPv4 checksum, the PSNs are consecutive, the data is routed (TTL 63);
#  - no stall over >= 10^6 frames, exactly: the flow completes with zero PSN gaps, zero
#    retransmissions and zero ICRC errors at rocehost; the switch's counters before/after: p0
#    received exactly what p1 sent and p1 received exactly what p0 sent, no RX-missed, no
#    drop, every frame p0's XDP program gave the socket was received by the switch.
# Needs root; skips (exit 77) only when the kernel has no AF_XDP sockets.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${ROCEHOST:=$BUILD_DIR/app/rocehost/rocehost}"
# ROCE_RATE paces the hosts (default 200M: below what the switch forwards on a loaded 2-core
# machine, so that nothing is missed).
RATE="${ROCE_RATE:-200M}"

rsw_require_af_xdp ip ethtool tshark

rsw_init
S0="$(rsw_ifname s0)"; S1="$(rsw_ifname s1)"
HI0="$(rsw_ifname h0)"; HI1="$(rsw_ifname h1)"
HN="$(rsw_ns hosts)"
SOCK="$RSW_TMP/ctl.sock"
d="$RSW_TMP"

make_veth "$S0" "$HI0"
make_veth "$S1" "$HI1"
for i in "$S0" "$S1"; do sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; done
# Both host ends in one namespace, no addresses: rocehost (DPDK over AF_PACKET) is the host;
# the namespace's kernel stays silent on them.
ip netns add "$HN"; RSW_NETNS+=("$HN")
for i in "$HI0" "$HI1"; do
    ip link set dev "$i" netns "$HN"
    ip netns exec "$HN" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
    ip -n "$HN" link set dev "$i" up
done

cat >"$d/switch.yaml" <<EOC
switch:
  name: ${RSW_TAG}
  workers: 1
  mbufs: 32768
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
telemetry:
  prometheus: {enabled: false}
ports:
  - name: p0
    af_xdp: {interface: ${S0}}
    rx_desc: 4096
    mac: "02:00:00:00:01:01"
    ipv4: ["10.0.1.1/24"]
  - name: p1
    af_xdp: {interface: ${S1}}
    rx_desc: 4096
    mac: "02:00:00:00:02:01"
    ipv4: ["10.0.2.1/24"]
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
EOC
cat >"$d/hosts.yaml" <<EOC
rocehost:
  name: ${RSW_TAG}h
  mtu: 256
  window: 1024
  rto_us: 500000
  duration_ms: 120000
  start_delay_ms: 500
  linger_ms: 200
  sample_us: 0
  out_dir: $d/roce
dcqcn: {enabled: false}
hosts:
  - {name: h1, device: "net_af_packet0,iface=${HI0},framecnt=8192", mac: "02:00:00:00:01:02", ip: 10.0.1.2/24,
     gateway: 10.0.1.1, gateway_mac: "02:00:00:00:01:01", line_rate: ${RATE}}
  - {name: h2, device: "net_af_packet1,iface=${HI1},framecnt=8192", mac: "02:00:00:00:02:02", ip: 10.0.2.2/24,
     gateway: 10.0.2.1, gateway_mac: "02:00:00:00:02:01", line_rate: ${RATE}}
workload: {pattern: pairs, pairs: [[h1, h2]], size: ${ROCE_SIZE:-257M}, count: 1}
EOC

echo "== $(basename "$0"): tag $RSW_TAG, temp dir $RSW_TMP, hosts at $RATE"
if ! start_switch "$d/switch.yaml" "$d/switch.log" 30; then
    rsw_fail "roceswd starts with two AF_XDP ports"
    rsw_finish
fi
rsw_pass "roceswd starts with two AF_XDP ports (pid $RSW_SWITCH_PID)"

# snap: "p0.rx p0.tx p0.missed p0.drops p1.rx p1.tx p1.missed p1.drops p0.xdp_to_switch"
snap() {
    rsw_ctl --json show ports | "$RSW_PYTHON" -c '
import json, sys
p = {x["name"]: x for x in json.load(sys.stdin)["ports"]}
print(*[p[n][f] for n in ("p0", "p1") for f in ("rx_packets", "tx_packets", "rx_missed", "drops")],
      p["p0"]["af_xdp"]["packets"]["to_switch_all"])'
}
read -r A0RX A0TX A0MS A0DR A1RX A1TX A1MS A1DR A0X < <(snap)

rsw_capture "$HN" "$d/tshark.log" -q -i "$HI1" -f "udp port 4791" -c 4000 -w "$d/h2.pcap" ||
    rsw_fail "tshark captures on h2's veth"
TSHARK="$RSW_LAST_PID"
t0=$(date +%s)
check "rocehost: h1 writes 257 MB to h2 through the AF_XDP ports" \
    timeout 150 ip netns exec "$HN" "$ROCEHOST" --config "$d/hosts.yaml" --out "$d/roce" \
    --file-prefix "$(rsw_file_prefix)h"
rsw_log "rocehost ran $(( $(date +%s) - t0 )) s"
rsw_wait_pid "$TSHARK" 10 || rsw_kill "$TSHARK" 2
sleep 0.5  # the last ACKs leave the switch
read -r B0RX B0TX B0MS B0DR B1RX B1TX B1MS B1DR B0X < <(snap)

s="$d/roce/summary.json"
json() { "$RSW_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$s" "$1" 2>/dev/null || echo "?"; }
cat "$d/roce/flows.csv" "$d/roce/hosts.csv" 2>/dev/null | sed 's/^/    /' || true
TXP="$(json 'sum(int(r["packets_tx"]) for r in __import__("csv").DictReader(open(sys.argv[1].replace("summary.json", "flows.csv"))))')"
check_eq "the flow completed" "$(json 'd["flows_completed"]')" 1
check_ge "h1 sent >= 10^6 data frames" "$TXP" 1000000
check_eq "zero PSN gaps at h2" "$(json 'd["receiver"]["psn_gaps"]')" 0
check_eq "zero NAKs at h1 (no loss)" "$(json 'sum(h["naks_rx"] for h in d["hosts"])')" 0
check_eq "zero ICRC errors at the hosts" "$(json 'sum(h["rx_bad_icrc"] for h in d["hosts"])')" 0
check "scapy: every captured frame RoCEv2 with valid ICRC and IPv4 checksum, PSNs consecutive" \
    "$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" check-stream "$d/h2.pcap" 1000
ops="$(tshark -r "$d/h2.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -un | tr '\n' ' ')"
rsw_log "tshark: BTH opcodes on h2's veth: $ops"
check "tshark decodes RDMA WRITE first and middle (6, 7) in the first 4000 frames on h2's veth" \
    bash -c '[[ " $0 " == *" 6 "* && " $0 " == *" 7 "* ]]' "$ops"

vstat() {  # vstat NS IFACE DIR: "<packets> <dropped>" of the interface's RX or TX counters
    ip ${1:+-n "$1"} -s link show dev "$2" | sed -n "/$3:/{n;p}" | awk '{print $2, $4}'
}
rsw_log "veth: $S0 rx/dropped $(vstat "" "$S0" RX), $S1 tx/dropped $(vstat "" "$S1" TX), h2's $HI1 rx/dropped $(vstat "$HN" "$HI1" RX)"
rsw_log "switch: p0 rx $((B0RX - A0RX)) tx $((B0TX - A0TX)); p1 rx $((B1RX - A1RX)) tx $((B1TX - A1TX)); XDP p0 to socket $((B0X - A0X))"
check_ge "p0 received >= 10^6 frames" "$((B0RX - A0RX))" 1000000
check_eq "p1 sent exactly what p0 received" "$((B1TX - A1TX))" "$((B0RX - A0RX))"
check_eq "p0 sent exactly what p1 received (the ACKs)" "$((B0TX - A0TX))" "$((B1RX - A1RX))"
check_eq "p0's XDP program gave the socket exactly what p0 received" "$((B0X - A0X))" "$((B0RX - A0RX))"
check_eq "no RX-missed on p0 and p1" "$((B0MS - A0MS + B1MS - A1MS))" 0
check_eq "no drop on p0 and p1" "$((B0DR - A0DR + B1DR - A1DR))" 0
rsw_ctl show ports | sed 's/^/    /'
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
