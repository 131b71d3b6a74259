#!/bin/bash
# System test: AF_XDP ports on multi-queue interfaces (issue 19), veth pairs with 2 RX/TX queues.
#
#   h1 (netns) <tag>h0 ==veth(2 queues)== <tag>s0 [p0]  roceswd  [p1] <tag>s1 ==veth(2 queues)== <tag>h1 h2 (netns)
#
# veth hands a frame to the RX queue numbered like the TX queue h1's stack picked for the flow
# (a hash), so UDP from 64 source ports lands on both queues of s0. rocesw's XDP program
# redirects a frame only to the socket of the queue it arrived on.
#  1. queue_count 2 is refused at load, naming the reason: DPDK 22.11's net_af_xdp accepts at
#     most the interface's *combined* channels, and veth has none (RX 2, TX 2, combined n/a).
#  2. queue_count 1 on the 2-queue veth: roceswd warns at start; the datagrams that land on
#     queue 1 reach no socket and pass to the kernel, where a packet socket on s0 counts them
#     (K): h2 receives exactly N - K, and pass_no_socket is K plus the host's other frames
#     that landed on queue 1 (its IPv6 router solicitations and MLD reports).
#  3. The same in generic XDP (xdp_mode: generic): veth without native XDP receives through
#     netif_rx, which records no RX queue, so the program sees every frame as queue 0: no
#     warning, every datagram reaches the socket and crosses, pass_no_socket 0.
#  4. After `ethtool -L ... rx 1 tx 1` on both ends: no warning, every datagram crosses.
# Needs root; skips (exit 77) only when the kernel has no AF_XDP sockets.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_af_xdp ip ping ethtool

rsw_init
S0="$(rsw_ifname s0)"; S1="$(rsw_ifname s1)"
HI0="$(rsw_ifname h0)"; HI1="$(rsw_ifname h1)"
H1="$(rsw_ns h1)"; H2="$(rsw_ns h2)"
SOCK="$RSW_TMP/ctl.sock"
N=4000  # datagrams per run

make_veth "$S0" "$HI0" 2
make_veth "$S1" "$HI1" 2
for i in "$S0" "$S1"; do sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; done
make_host "$H1" "$HI0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$HI1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
# Static gateway entries: with queue_count 1 on a 2-queue veth, an ARP request may land on the
# queue without a socket.
ip -n "$H1" neigh replace 10.0.1.1 lladdr 02:00:00:00:01:01 dev "$HI0"
ip -n "$H2" neigh replace 10.0.2.1 lladdr 02:00:00:00:02:01 dev "$HI1"

write_config() {  # write_config QUEUE_COUNT FILE [XDP_MODE=auto]
    cat >"$2" <<EOC
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
    af_xdp: {interface: ${S0}, queue_count: $1, xdp_mode: ${3:-auto}}
    mac: "02:00:00:00:01:01"
    ipv4: ["10.0.1.1/24"]
  - name: p1
    af_xdp: {interface: ${S1}, queue_count: $1, xdp_mode: ${3:-auto}}
    mac: "02:00:00:00:02:01"
    ipv4: ["10.0.2.1/24"]
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
EOC
}

# port_field PORT EXPR: a Python expression over the port's `show ports --json` entry p.
port_field() {
    rsw_ctl --json show ports | "$RSW_PYTHON" -c '
import json, sys
p = [x for x in json.load(sys.stdin)["ports"] if x["name"] == sys.argv[1]][0]
print(eval(sys.argv[2]))' "$1" "$2"
}
# UDP receiver in h2 counting datagrams until N or a 5 s quiet period; a sender in h1 with
# source ports 40000..40063 (the sender's stack hashes each flow to one of the veth's TX
# queues, and veth hands it to the same RX queue on s0).
RECV="$RSW_TMP/recv.py"
cat >"$RECV" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("10.0.2.2", 9000)); s.settimeout(5)
n, want = 0, int(sys.argv[1])
open(sys.argv[2], "w").close()  # ready
try:
    while n < want:
        s.recv(2048); n += 1
except socket.timeout:
    pass
print(n)
PY
SEND="$RSW_TMP/send.py"
cat >"$SEND" <<'PY'
import socket, sys, time
n = int(sys.argv[1])
socks = []
for i in range(64):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.0.1.2", 40000 + i))
    socks.append(s)
for k in range(n):
    socks[k % 64].sendto(b"x" * 200, ("10.0.2.2", 9000))
    if k % 64 == 63:
        time.sleep(0.005)  # about 12 kpps: below what the switch takes on a loaded machine
PY

# Counts, on the switch's side of a veth, the frames from h1 to h2's datagram port that XDP
# passed to the kernel (XDP_PASS frames reach packet sockets; redirected ones do not), until
# the stop file appears and a 0.5 s quiet period passes.
PASSED="$RSW_TMP/passed.py"
cat >"$PASSED" <<'PY'
import os, socket, struct, sys
ifname, ready, stop = sys.argv[1:4]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (root): room for every frame
s.bind((ifname, 0)); s.settimeout(0.5)
open(ready, "w").close()
n = 0
while True:
    try:
        frame, addr = s.recvfrom(2048)
    except socket.timeout:
        if os.path.exists(stop):
            break
        continue
    if addr[2] == socket.PACKET_OUTGOING or len(frame) < 42 or frame[12:14] != b"\x08\x00":
        continue
    ihl = (frame[14] & 0x0F) * 4
    if frame[23] == 17 and frame[26:30] == socket.inet_aton("10.0.1.2") and \
            struct.unpack("!H", frame[14 + ihl + 2:14 + ihl + 4])[0] == 9000:
        n += 1
# The socket's own drops (a full receive buffer): a count we could not trust.
_, drops = struct.unpack("II", s.getsockopt(263, 6, 8))  # SOL_PACKET, PACKET_STATISTICS
print(n if drops == 0 else "dropped %d" % drops)
PY

# send_count: h1 sends N datagrams to h2; prints what h2 received.
send_count() {
    local rpid
    rm -f "$RSW_TMP/ready"
    rsw_bg ip netns exec "$H2" "$RSW_PYTHON" "$RECV" "$N" "$RSW_TMP/ready" >"$RSW_TMP/recv.out"
    rpid="$RSW_LAST_PID"
    for _ in $(seq 1 100); do [ -e "$RSW_TMP/ready" ] && break; sleep 0.05; done
    ip netns exec "$H1" "$RSW_PYTHON" "$SEND" "$N"
    rsw_wait_pid "$rpid" 20 || rsw_kill "$rpid" 2
    cat "$RSW_TMP/recv.out"
}

echo "== $(basename "$0"): tag $RSW_TAG, temp dir $RSW_TMP"
rsw_log "$S0: $(ethtool -l "$S0" 2>/dev/null | sed -n '/Current/,$p' | tr -s ' \t\n' ' ')"

# --- 1. queue_count 2: refused at load --------------------------------------------------------
write_config 2 "$RSW_TMP/q2.yaml"
rc=0
timeout 30 "$ROCESWD" --config "$RSW_TMP/q2.yaml" >"$RSW_TMP/q2.log" 2>&1 || rc=$?
check "[queue_count 2] roceswd refuses to start (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "[queue_count 2] the error names the field and the combined channels" \
    grep -q "ports\[0\].af_xdp.queue_count: 2 is more than the 1 queue(s) DPDK's net_af_xdp takes on $S0 (its combined channels, ethtool -l); $S0 has 2 RX queues but no combined channels" "$RSW_TMP/q2.log"
check "[queue_count 2] nothing was attached to $S0" \
    bash -c '! ip -d link show dev "$0" | grep -q prog/xdp' "$S0"

# --- 2. queue_count 1 on a 2-queue veth: a warning, queue 1's frames to the kernel ------------
write_config 1 "$RSW_TMP/q1.yaml"
if ! start_switch "$RSW_TMP/q1.yaml" "$RSW_TMP/q1.log" 30; then
    rsw_fail "[2 RX queues, queue_count 1] roceswd starts"
    rsw_finish
fi
rsw_pass "[2 RX queues, queue_count 1] roceswd starts (pid $RSW_SWITCH_PID)"
check "[2 RX queues, queue_count 1] start-up warning: queue 1's frames pass to the kernel" \
    grep -q "port p0: $S0 has 2 RX queues and queue_count is 1: frames the kernel steers to queues 1..1 reach no socket" "$RSW_TMP/q1.log"
in1() { ip netns exec "$H1" "$@"; }
in1 ping -c 3 -i 0.2 -W 1 10.0.2.2 >/dev/null 2>&1 || true  # neighbours; some may be lost
ns0="$(port_field p0 'p["af_xdp"]["packets"]["pass_no_socket"]')"
x0="$(port_field p0 'p["af_xdp"]["packets"]["to_switch_all"]')"
rm -f "$RSW_TMP/ready.cap" "$RSW_TMP/stop.cap"
rsw_bg "$RSW_PYTHON" "$PASSED" "$S0" "$RSW_TMP/ready.cap" "$RSW_TMP/stop.cap" >"$RSW_TMP/passed.out"
cpid="$RSW_LAST_PID"
for _ in $(seq 1 100); do [ -e "$RSW_TMP/ready.cap" ] && break; sleep 0.05; done
got="$(send_count)"
touch "$RSW_TMP/stop.cap"
rsw_wait_pid "$cpid" 10 || rsw_kill "$cpid" 2
passed="$(cat "$RSW_TMP/passed.out")"
case "$passed" in
    '' | *[!0-9]*) rsw_fail "[2 RX queues, queue_count 1] the packet socket on $S0 counted the passed datagrams (${passed:-nothing})"; passed=0 ;;
esac
nsock=$(( $(port_field p0 'p["af_xdp"]["packets"]["pass_no_socket"]') - ns0 ))
xs=$(( $(port_field p0 'p["af_xdp"]["packets"]["to_switch_all"]') - x0 ))
rsw_log "[2 RX queues, queue_count 1] $N sent: h2 got $got; p0's XDP program: $xs to the socket (queue 0), $nsock pass_no_socket (queue 1), of which $passed were the datagrams"
check_ge "[2 RX queues, queue_count 1] some flows landed on queue 1: datagrams passed to the kernel" "$passed" 100
check_ge "[2 RX queues, queue_count 1] some flows landed on queue 0: to_switch_all" "$xs" 100
check_eq "[2 RX queues, queue_count 1] h2 received exactly N - datagrams passed to the kernel" "$got" "$((N - $passed))"
check "[2 RX queues, queue_count 1] pass_no_socket counts every passed datagram, and at most 20 other frames ($nsock, $passed)" \
    test "$nsock" -ge "$passed" -a "$nsock" -le "$(( $passed + 20 ))"
check_eq "[2 RX queues, queue_count 1] no RX-missed on p0" "$(port_field p0 'p["rx_missed"]')" 0
rsw_ctl show ports | sed 's/^/    /'
rc=0
stop_switch 10 || rc=$?
check_eq "[2 RX queues, queue_count 1] roceswd exits 0 on SIGTERM" "$rc" 0

# --- 3. generic XDP on the 2-queue veth: every frame is queue 0's -----------------------------
write_config 1 "$RSW_TMP/q1g.yaml" generic
if ! start_switch "$RSW_TMP/q1g.yaml" "$RSW_TMP/q1g.log" 30; then
    rsw_fail "[2 RX queues, generic XDP] roceswd starts"
    rsw_finish
fi
rsw_pass "[2 RX queues, generic XDP] roceswd starts (pid $RSW_SWITCH_PID)"
check "[2 RX queues, generic XDP] no queue warning" \
    bash -c '! grep -q "RX queues and queue_count" "$0"' "$RSW_TMP/q1g.log"
check_eq "[2 RX queues, generic XDP] p0 attached generic" "$(port_field p0 'p["af_xdp"]["attach"]')" generic
in1 ping -c 3 -i 0.2 -W 1 10.0.2.2 >/dev/null 2>&1 || true
ns0="$(port_field p0 'p["af_xdp"]["packets"]["pass_no_socket"]')"
x0="$(port_field p0 'p["af_xdp"]["packets"]["to_switch_all"]')"
got="$(send_count)"
check_eq "[2 RX queues, generic XDP] h2 received every datagram" "$got" "$N"
check_ge "[2 RX queues, generic XDP] p0's program gave the socket every datagram" \
    "$(( $(port_field p0 'p["af_xdp"]["packets"]["to_switch_all"]') - x0 ))" "$N"
check_eq "[2 RX queues, generic XDP] p0 XDP pass_no_socket" \
    "$(( $(port_field p0 'p["af_xdp"]["packets"]["pass_no_socket"]') - ns0 ))" 0
rc=0
stop_switch 10 || rc=$?
check_eq "[2 RX queues, generic XDP] roceswd exits 0 on SIGTERM" "$rc" 0

# --- 4. the interface cut to one queue: everything crosses ------------------------------------
# The peers first: veth refuses XDP on an end with fewer RX queues than its peer has TX queues
# ("veth: XDP expects number of rx queues not less than peer tx queues").
ip netns exec "$H1" ethtool -L "$HI0" rx 1 tx 1
ip netns exec "$H2" ethtool -L "$HI1" rx 1 tx 1
ethtool -L "$S0" rx 1 tx 1
ethtool -L "$S1" rx 1 tx 1
if ! start_switch "$RSW_TMP/q1.yaml" "$RSW_TMP/q1b.log" 30; then
    rsw_fail "[1 RX queue] roceswd starts"
    rsw_finish
fi
rsw_pass "[1 RX queue] roceswd starts (pid $RSW_SWITCH_PID)"
check "[1 RX queue] no queue warning" bash -c '! grep -q "RX queues and queue_count" "$0"' "$RSW_TMP/q1b.log"
in1 ping -c 3 -i 0.2 -W 1 10.0.2.2 >/dev/null 2>&1 || true
ns0="$(port_field p0 'p["af_xdp"]["packets"]["pass_no_socket"]')"
got="$(send_count)"
check_eq "[1 RX queue] h2 received every datagram" "$got" "$N"
check_eq "[1 RX queue] p0 XDP pass_no_socket" "$(( $(port_field p0 'p["af_xdp"]["packets"]["pass_no_socket"]') - ns0 ))" 0
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "[1 RX queue] roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
