#!/bin/bash
# Fault injection: a peer that sends a PFC storm and malformed MAC-control frames.
#
#   h1 (netns) --- [p0 10G]  roceswd  [p1 50M] --- h2 (netns): the misbehaving peer
#                                     [p2 10G] --- h3 (netns)
#
# QoS: config/qos/nvidia-roce.yaml (DSCP 26 -> TC3, lossless, pfc_enable 3, PAUSE ignored) with
# the PFC watchdog on: detection 100 ms, restoration 200 ms, action drop. Every MAC-control frame
# is built by scapy (scapy.contrib.mac_control), not by rocesw's codec.
#
# 1. Malformed frames from h2, 5 of each: opcode 0x0002, a PFC frame cut to 40 bytes, a PFC
#    frame with a bit in the upper byte of its class-enable vector, a PFC frame to a unicast
#    destination; plus 5 802.3x PAUSE (opcode 0x0001) frames, which a PFC port ignores. Exact:
#    p1's rx_malformed per kind (bad_opcode, truncated, bad_vector, bad_dst) = 5 each, the drop
#    reason mac_control_malformed = 20, rx_pause_8023x_ignored = 5 and pause_ignored = 5;
#    nothing paused.
# 2. A PFC storm: h2 sends XOFF (priority 3, 0xFFFF quanta) frames back to back for 2 s while h1
#    pings h2 with DSCP 26 (queue 3 of p1) and pings h3 with DSCP 0. Exact: p1's rx_pause for
#    priority 3 = the frames h2's kernel sent; the watchdog storms queue 3 of p1 (storms >= 1,
#    pfc_watchdog drops > 0, log line); p2's traffic is unaffected (every ping h1 -> h3
#    answered); after the storm the queue is restored and DSCP 26 pings to h2 pass again.
# The accounting identity balances.
# Needs root (namespaces, TAP). Run: sudo test/system/test_fault_macctl.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip ping
"$RSW_PYTHON" -c 'import scapy.contrib.mac_control' 2>/dev/null ||
    { echo "FAIL: python3-scapy (scapy.contrib.mac_control) not installed"; exit 1; }

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
IF2="$(rsw_ifname p2)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
H3="$(rsw_ns h3)"
CFG="$RSW_TMP/switch.yaml"
QOS="$RSW_TMP/qos.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="$RSW_TMP/ctl.sock"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"

{
    cat "$REPO/config/qos/nvidia-roce.yaml"
    printf '\nPFC_WD:\n  default: {detection_time: 100, restoration_time: 200, action: drop}\n'
} >"$QOS"
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
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", speed: 50M, ipv4: ["10.0.2.1/24"]}
  - {name: p2, device: "net_tap2,iface=${IF2}", mac: "02:00:00:00:03:01", speed: 10G, ipv4: ["10.0.3.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
  - {ip: 10.0.3.2, mac: "02:00:00:00:03:02"}
EOF

echo "== $(basename "$0"): tag $RSW_TAG, switch log $LOG"
if ! start_switch "$CFG" "$LOG"; then
    rsw_fail "roceswd starts with the PFC watchdog on"
    rsw_finish
fi
rsw_pass "roceswd starts with the PFC watchdog on"
make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
make_host "$H3" "$IF2" 02:00:00:00:03:02 10.0.3.2/24 fd00:3::2/64 10.0.3.1 fd00:3::1
in1() { ip netns exec "$H1" "$@"; }
in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
in1 ping -c 1 -W 2 10.0.3.2 >/dev/null 2>&1 || true
check "ping DSCP 26 h1 -> h2 before (5 of 5)" rsw_ping_ok in1 ping -Q 0x68 -c 5 -i 0.1 -W 2 10.0.2.2

# pfc P1 EXPR: a value of `show pfc p1` (Python expression over the port's JSON `p`).
pfc() { rsw_ctl --json show pfc "$1" | "$RSW_PYTHON" -c '
import json, sys
p = json.load(sys.stdin)["ports"][0]
pr = {x["priority"]: x for x in p["priorities"]}
wd = {x["queue"]: x for x in p["watchdog"]["queues"]}
print(eval(sys.argv[1]))' "$2"; }
tap_tx() { ip -n "$H2" -j -s link show dev "$IF1" | "$RSW_PYTHON" -c 'import json,sys; s=json.load(sys.stdin)[0]["stats64"]["tx"]; print(s["packets"], s["dropped"])'; }

# --- 1. malformed MAC-control frames -------------------------------------------------------
FRAMES="$RSW_TMP/frames"
mkdir -p "$FRAMES"
"$RSW_PYTHON" - "$FRAMES" <<'PY'
import sys
from scapy.all import Ether, Raw, raw
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
d = sys.argv[1]
src, mc = "02:00:00:00:02:02", "01:80:c2:00:00:01"
def pad(b):
    return b + bytes(max(0, 60 - len(b)))
pfc3 = Ether(src=src, dst=mc) / MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=0xFFFF)
frames = {
    # opcode 0x0002 (GATE in 802.3ah, not PFC or PAUSE)
    "bad_opcode": pad(raw(Ether(src=src, dst=mc, type=0x8808) / Raw(b"\x00\x02" + bytes(44)))),
    "truncated": raw(pfc3)[:40],
    # the class-enable vector's upper byte must be 0
    "bad_vector": pad(raw(Ether(src=src, dst=mc) /
                          MACControlClassBasedFlowControl(_reserved=1, c3_enabled=1,
                                                          c3_pause_time=0xFFFF))),
    "bad_dst": pad(raw(Ether(src=src, dst="02:00:00:00:02:01") /
                       MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=0xFFFF))),
    "pause8023x": pad(raw(Ether(src=src, dst=mc) / MACControlPause(pause_time=0xFFFF))),
    "xoff3": pad(raw(pfc3)),
}
for k, v in frames.items():
    open("%s/%s.bin" % (d, k), "wb").write(v)
# Independent check of what was built: opcode and vector as a decoder reads them.
assert raw(pfc3)[14:16] == b"\x01\x01" and raw(pfc3)[16:18] == b"\x00\x08"
assert frames["bad_vector"][16] == 1 and frames["pause8023x"][14:16] == b"\x00\x01"
PY
SENDER="$RSW_TMP/send.py"
cat >"$SENDER" <<'PY'
# send.py IFACE FILE COUNT [SECONDS]: COUNT copies of FILE's frame; with SECONDS, as many as
# fit in that time (back to back), COUNT ignored. Prints the number sent.
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
f = open(sys.argv[2], "rb").read()
n = 0
if len(sys.argv) > 4:
    end = time.monotonic() + float(sys.argv[4])
    while time.monotonic() < end:
        for _ in range(50):
            try:
                s.send(f)
                n += 1
            except OSError:
                pass
else:
    for _ in range(int(sys.argv[3])):
        s.send(f)
        n += 1
print(n)
PY
in2() { ip netns exec "$H2" "$@"; }
mal0="$(rsw_drops p1 mac_control_malformed)"
ign0="$(rsw_drops p1 pause_ignored)"
for k in bad_opcode truncated bad_vector bad_dst pause8023x; do
    in2 "$RSW_PYTHON" "$SENDER" "$IF1" "$FRAMES/$k.bin" 5 >/dev/null
done
mal1="$(rsw_wait_counter $((mal0 + 20)) 5 rsw_drops p1 mac_control_malformed)"
check_eq "p1 mac_control_malformed drops: 4 kinds x 5" "$((mal1 - mal0))" 20
for k in bad_opcode truncated bad_vector bad_dst; do
    check_eq "p1 rx_malformed.$k" "$(pfc p1 "p['rx_malformed'].get('$k', 0)")" 5
done
check_eq "p1 rx_pause_8023x_ignored (PAUSE on a PFC port)" "$(pfc p1 "p['rx_pause_8023x_ignored']")" 5
check_eq "p1 pause_ignored drops" "$(( $(rsw_drops p1 pause_ignored) - ign0 ))" 5
check_eq "p1 priority 3 not paused by any of them (rx_pause)" "$(pfc p1 "pr[3]['rx_pause']")" 0

# --- 2. PFC storm ----------------------------------------------------------------------------
read -r ktx0 kdrop0 < <(tap_tx)
rp0="$(pfc p1 "pr[3]['rx_pause']")"
wdd0="$(rsw_drops p1 pfc_watchdog)"
P26="$RSW_TMP/ping26.log"
P0="$RSW_TMP/ping0.log"
STORM="$RSW_TMP/storm.log"
rsw_bg in1 ping -Q 0x68 -c 200 -i 0.01 -W 1 10.0.2.2 >"$P26" 2>&1
PING26="$RSW_LAST_PID"
rsw_bg in1 ping -c 200 -i 0.01 -W 2 10.0.3.2 >"$P0" 2>&1
PING0="$RSW_LAST_PID"
in2 "$RSW_PYTHON" "$SENDER" "$IF1" "$FRAMES/xoff3.bin" 0 2.0 >"$STORM"
rsw_wait_pid "$PING26" 20 || true
rsw_wait_pid "$PING0" 20 || true
sent="$(cat "$STORM")"
read -r ktx1 kdrop1 < <(tap_tx)
rsw_log "    storm: $sent XOFF frames sent by h2 in 2 s ($((sent / 2)) frames/s); h2's TAP: tx $((ktx1 - ktx0)), dropped $((kdrop1 - kdrop0))"
rp1="$(pfc p1 "pr[3]['rx_pause']")"
check_ge "storm at a high rate (frames sent in 2 s)" "$sent" 2000
# Every frame the kernel handed to the switch's TAP is an XOFF (h2 sends nothing else then,
# besides what its kernel answers to h1's pings: ICMP echo replies, counted apart below).
replies="$(sed -n 's/^[0-9]* packets transmitted, \([0-9]*\) received.*/\1/p' "$P26")"
check_eq "p1 rx_pause[3] = XOFF frames h2's kernel delivered (tx - echo replies)" \
    "$((rp1 - rp0))" "$((ktx1 - ktx0 - ${replies:-0}))"
check_ge "the watchdog stormed p1 queue 3 (storms)" "$(pfc p1 "wd[3]['storms']")" 1
check_ge "p1 pfc_watchdog drops during the storm" "$(( $(rsw_drops p1 pfc_watchdog) - wdd0 ))" 1
check "log: the watchdog's storm line" grep -q "port p1 queue 3: PFC storm detected" "$LOG"
{ grep "PFC storm" "$LOG" || true; } | head -n 4 | sed 's/^/    log: /'
read -r t0 r0 < <(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1 \2/p' "$P0")
check_eq "p2 unaffected: pings h1 -> h3 during the storm answered, of ${t0:-?}" "${r0:-none}" 200
rsw_log "    DSCP 26 pings h1 -> h2 during the storm: ${replies:-?} of 200 answered"

# After the storm: restored after 200 ms without pause frames; lossless traffic passes again.
restored=""
for _ in $(seq 1 50); do
    if [ "$(pfc p1 "wd[3]['stormed']")" = False ]; then restored=1; break; fi
    sleep 0.1
done
if [ -n "$restored" ]; then rsw_pass "p1 queue 3 restored after the storm"; else rsw_fail "p1 queue 3 still stormed 5 s after the storm"; fi
check_eq "p1 queue 3 restores = storms" "$(pfc p1 "wd[3]['restores']")" "$(pfc p1 "wd[3]['storms']")"
check "log: the restore line" grep -q "port p1 queue 3: PFC storm over, queue restored" "$LOG"
check "ping DSCP 26 h1 -> h2 after the storm (10 of 10)" rsw_ping_ok in1 ping -Q 0x68 -c 10 -i 0.1 -W 2 10.0.2.2
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
