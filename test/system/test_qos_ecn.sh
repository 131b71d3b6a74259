#!/bin/bash
# System test: ECN marking on a congested port (issue 3), with real processes.
#
#   h1 (netns) --- <tag>p0 [p0]  roceswd  [p1 @ 20 Mb/s] <tag>p1 --- h2 (netns)
#
# QoS profile: config/qos/nvidia-roce.yaml (DSCP 26 -> TC3, lossless, ECN Kmin 150 KB,
# Kmax 1.5 MB, Pmax 100 %). h1 sends 30 Mb/s of UDP at DSCP 26 ECT(0) for 4 s plus RoCEv2
# packets (scapy, valid ICRC) into p1, shaped to 20 Mb/s, so queue 3 of p1 builds up to about
# 5 MB: above Kmax, below the 8 MB lossless pool (no PFC yet, so nothing may be dropped).
# Checks: the CE-marked packets h2 receives are exactly queue 3's ecn_marked counter (tshark
# captures from before the first packet until queue 3 is empty and its counters have stopped,
# and reports 0 packets dropped by the capture); DSCP stays 26; a Not-ECT flow is never marked;
# the RoCEv2 packets that arrive CE-marked still carry a valid ICRC (scapy.contrib.roce, an
# independent implementation); rocectl shows queue 3's watermark above Kmin and ECN marks.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip iperf3 tshark

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="$RSW_TMP/ctl.sock"
QOS="$(cd "$(dirname "$0")/../.." && pwd)/config/qos/nvidia-roce.yaml"

cat >"$CFG" <<EOF
switch:
  name: ${RSW_TAG}
  workers: 1
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
  qos: ${QOS}
ports:
  - {name: p0, device: "net_tap0,iface=${IF0}", mac: "02:00:00:00:01:01", speed: 10G, ipv4: ["10.0.1.1/24"]}
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", speed: 20M, ipv4: ["10.0.2.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
EOF

echo "== $(basename "$0"): tag $RSW_TAG, switch log $LOG"
if ! start_switch "$CFG" "$LOG"; then
    rsw_fail "roceswd starts with the nvidia-roce QoS profile"
    rsw_finish
fi
rsw_pass "roceswd starts with the nvidia-roce QoS profile"
make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
ip netns exec "$H1" ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true

PCAP="$RSW_TMP/h2.pcap"
INJECT="$RSW_TMP/inject.pcap"
# RoCEv2 writes (valid ICRC, by scapy.contrib.roce) and a Not-ECT flow at DSCP 26, built before
# the congestion starts so that they cross queue 3 while it is above Kmax.
"$RSW_PYTHON" - "$INJECT" <<'PY'
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
from scapy.contrib.roce import BTH
roce = [Ether(src="02:00:00:00:01:02", dst="02:00:00:00:01:01") /
        IP(src="10.0.1.2", dst="10.0.2.2", tos=0x6a, ttl=64) / UDP(sport=49152 + i, dport=4791) /
        BTH(opcode=0x0A, dqpn=0x100 + i, psn=i, icrc=None) / Raw(b"\x5a" * 256) for i in range(300)]
plain = [Ether(src="02:00:00:00:01:02", dst="02:00:00:00:01:01") /
         IP(src="10.0.1.2", dst="10.0.2.2", tos=0x68, ttl=64) / UDP(sport=7000, dport=7001) /
         Raw(b"n" * 200) for _ in range(300)]
wrpcap(sys.argv[1], [p for pair in zip(roce, plain) for p in pair])
PY
# No duration limit: the capture runs until queue 3 has drained (below), so it sees every frame
# the switch marked, however slow the machine.
TSLOG="$RSW_TMP/tshark-h2.log"
rsw_capture "$H2" "$TSLOG" -q -i "$IF1" -f "udp" -w "$PCAP" || rsw_fail "tshark captures on h2"
TSHARK="$RSW_LAST_PID"
# Congestion: 30 Mb/s of DSCP 26 ECT(0) (tos 0x6a) UDP into a 20 Mb/s port.
rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2
rsw_wait_listen "$H2" tcp 5201 || rsw_fail "iperf3 server listens on h2"
rsw_bg ip netns exec "$H1" iperf3 -c 10.0.2.2 -u -b 30M -l 1000 --tos 0x6a -t 4
IPERF="$RSW_LAST_PID"
# The prepared frames go once queue 3 is past the middle of the marking curve (768 KB; 10 Mb/s
# of excess fills it in about 0.6 s), or 2 s after iperf3 started (of its 4), whatever the depth.
q3_depth() {
    rsw_ctl --json call queues p1 | "$RSW_PYTHON" -c '
import json, sys
print([x for x in json.load(sys.stdin)["queues"] if x["queue"] == 3][0]["depth_bytes"])'
}
DEADLINE=$(( $(date +%s%N) + 2000000000 ))
while [ "$(date +%s%N)" -lt "$DEADLINE" ]; do
    [ "$(q3_depth 2>/dev/null || echo 0)" -ge 768000 ] && break
    sleep 0.1
done
rsw_log "queue 3 depth when the RoCEv2 frames go: $(q3_depth) bytes"
# Replay the prepared frames from h1 with a raw socket (no scapy: fast and immediate).
ip netns exec "$H1" "$RSW_PYTHON" - "$INJECT" "$IF0" <<'PY'
import socket, struct, sys
data = open(sys.argv[1], "rb").read()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[2], 0))
off = 24
while off + 16 <= len(data):
    incl = struct.unpack_from("<I", data, off + 8)[0]
    s.send(data[off + 16:off + 16 + incl])
    off += 16 + incl
PY
rsw_wait_pid "$IPERF" 20 || true

QJSON="$RSW_TMP/queues.json"
# On a loaded machine iperf3 may still be sending: wait (up to 20 s) until queue 3 is empty and
# its counters stop moving, so the reads below and the capture see the same traffic.
q3_enq() {
    rsw_ctl --json call queues p1 | "$RSW_PYTHON" -c '
import json, sys
q = [x for x in json.load(sys.stdin)["queues"] if x["queue"] == 3][0]
print(q["enq_packets"], q["ecn_marked"], q["depth_bytes"])'
}
PREV=""
for _ in $(seq 1 40); do
    CUR="$(q3_enq)"
    [ "$CUR" = "$PREV" ] && [ "${CUR##* }" = 0 ] && break
    PREV="$CUR"
    sleep 0.5
done
rsw_ctl --json call queues p1 >"$QJSON"
# The last frames the switch sent are in h2's kernel by now (TAP writes are synchronous); give
# tshark a moment to write them, then stop it (SIGTERM: it flushes the file and prints its
# counts, including the packets the capture dropped).
sleep 1
rsw_kill "$TSHARK" 10
CAP_DROPS="$(grep -oE "[0-9]+ packets? dropped" "$TSLOG" || true)"  # tshark prints only nonzero drops
CAP_DROPS="$(printf '%s\n' "$CAP_DROPS" | awk '{n += $1} END {print n + 0}')"
grep -qE "[0-9]+ packets? captured" "$TSLOG" || rsw_fail "tshark reports its counts on exit"
check_eq "the capture on h2 dropped no packet (tshark)" "$CAP_DROPS" 0
read -r WM MARKED < <("$RSW_PYTHON" -c '
import json, sys
q = [x for x in json.load(open(sys.argv[1]))["queues"] if x["queue"] == 3][0]
print(q["watermark_bytes"], q["ecn_marked"])' "$QJSON")
check_ge "p1 queue 3 watermark above Kmin 150 KB (got $WM bytes)" "$WM" 153600
check_ge "p1 queue 3 counts ECN-marked packets (got $MARKED)" "$MARKED" 1
ECN_MARKS="$(rsw_ctl --json show ecn p1 | "$RSW_PYTHON" -c '
import json, sys
print([r for r in json.load(sys.stdin)["ecn"] if r["queue"] == 3][0]["ecn_marked"])')"
check_eq "rocectl show ecn: p1 queue 3's CE marks equal its queue counter" "$ECN_MARKS" "$MARKED"
check "rocectl show ecn p1: queue 3 marks at dequeue from 153600 to 1536000 bytes, 100 %" \
    bash -c '"$0" --socket "$1" show ecn p1 | grep -qE "^p1 +3 +yes +dequeue +153600 +1536000 +100 "' \
    "$ROCECTL" "$RSW_SWITCH_SOCKET"

read -r CE ECT0 NOTECT_CE NOTECT ROCE_CE ROCE_CE_OK DSCP_BAD ROCE < <("$RSW_PYTHON" - "$PCAP" <<'PY'
import sys
from scapy.all import rdpcap, IP, UDP
from scapy.contrib.roce import BTH
ce = ect0 = notect_ce = notect = roce_ce = roce_ok = dscp_bad = roce = 0
t_roce, t_ce = [], []
for p in rdpcap(sys.argv[1]):
    if IP not in p or UDP not in p or p[IP].src != "10.0.1.2":
        continue
    tos = p[IP].tos
    if p[UDP].dport in (4791, 7001) and tos >> 2 != 26:
        dscp_bad += 1
    if p[UDP].dport == 7001:
        notect += 1
        notect_ce += (tos & 3) == 3
        continue
    if (tos & 3) == 3:
        ce += 1
    elif (tos & 3) == 2:
        ect0 += 1
    roce += p[UDP].dport == 4791
    if p[UDP].dport == 4791 and (tos & 3) == 3:
        roce_ce += 1
        q = p.copy()
        q[BTH].icrc = None
        roce_ok += bytes(q[BTH])[-4:] == bytes(p[BTH])[-4:]
    if p[UDP].dport == 4791:
        t_roce.append(float(p.time))
    elif (tos & 3) == 3:
        t_ce.append(float(p.time))
if t_roce and t_ce:
    print("RoCE %.3f..%.3f, CE %.3f..%.3f" % (min(t_roce), max(t_roce), min(t_ce), max(t_ce)), file=sys.stderr)
print(ce, ect0, notect_ce, notect, roce_ce, roce_ok, dscp_bad, roce)
PY
)
rsw_log "h2 received: $CE CE, $ECT0 ECT(0), $NOTECT Not-ECT ($NOTECT_CE marked), $ROCE RoCEv2 of which $ROCE_CE CE ($ROCE_CE_OK ICRC ok)"
check_ge "h2 receives CE-marked packets ($CE)" "$CE" 1
# Every frame of queue 3 is a UDP frame from h1 (the filter and the script's selection), queue 3
# dropped nothing (accounting below) and the capture covered the whole marking window without
# drops (above): the CE frames h2 saw are exactly the frames the switch marked.
check_eq "CE-marked packets on h2 = p1 queue 3's ecn_marked" "$CE" "$MARKED"
check_eq "Not-ECT packets are never marked" "$NOTECT_CE" 0
check_eq "every Not-ECT packet of the lossless class arrives" "$NOTECT" 300
check_eq "every RoCEv2 packet arrives" "$ROCE" 300
check_eq "DSCP stays 26 on every RoCEv2 and Not-ECT packet" "$DSCP_BAD" 0
check_ge "CE-marked RoCEv2 packets arrive ($ROCE_CE)" "$ROCE_CE" 1
check_eq "every CE-marked RoCEv2 packet has a valid ICRC" "$ROCE_CE_OK" "$ROCE_CE"

rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
