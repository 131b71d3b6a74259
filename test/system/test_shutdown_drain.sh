#!/bin/bash
# System test: SIGTERM with frames queued. The drain gives the queues 100 ms to empty, then
# counts what is left as drops with reason port_stopped, and roceswd logs the accounting
# identity of the whole run once no worker runs ("exit accounting: ...", doc/accounting.md).
#
#   h1 (netns) --- <tag>p0 [p0]  roceswd  [p1 @ 20 Mb/s] <tag>p1 --- h2 (netns)
#
# QoS profile config/qos/nvidia-roce.yaml: DSCP 26 -> queue 3, lossless (no tail drop: PFC and
# ECN act instead). h1 sends 30 Mb/s of DSCP 26 UDP (iperf3) to h2, so p1's queue 3 grows by
# about 10 Mb/s; once it holds 1 MB (rocectl show queues), the switch gets SIGTERM. Checks:
# exit status 0; the log's exit accounting line is balanced, nothing is queued at the end,
# port_stopped is the only egress drop and equals the frames queued at the last reading before
# SIGTERM plus those forwarded after minus those sent after; what was sent after the reading is
# within 20 Mb/s of the time to the exit.
# Needs root (namespaces, TAP). Run: sudo test/system/test_shutdown_drain.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root iperf3

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="$RSW_TMP/ctl.sock"
cat >"$CFG" <<EOC
switch:
  name: ${RSW_TAG}
  workers: 1
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
  qos: ${RSW_REPO}/config/qos/nvidia-roce.yaml
ports:
  - {name: p0, device: "net_tap0,iface=${IF0}", mac: "02:00:00:00:01:01", speed: 10G, ipv4: ["10.0.1.1/24"]}
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", speed: 20M, ipv4: ["10.0.2.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
EOC

echo "== $(basename "$0"): tag $RSW_TAG, switch log $LOG"
if ! start_switch "$CFG" "$LOG"; then
    rsw_fail "roceswd starts"
    rsw_finish
fi
rsw_pass "roceswd starts (pid $RSW_SWITCH_PID)"
make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
check "ping h1 -> h2 (3 packets)" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.0.2.2

# q3 FIELD: a field of p1's queue 3 in rocectl show queues.
q3() {
    rsw_ctl --json show queues p1 | "$RSW_PYTHON" -c '
import json, sys
print([q for q in json.load(sys.stdin)["queues"] if q["queue"] == 3][0][sys.argv[1]])' "$1"
}
rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2 >"$RSW_TMP/iperf3-server.log" 2>&1
rsw_wait_listen "$H2" tcp 5201 || true   # the client says when it cannot connect
rsw_bg ip netns exec "$H1" iperf3 -c 10.0.2.2 -u -b 30M -l 1000 --tos 0x6a -t 30 \
    >"$RSW_TMP/iperf3-client.log" 2>&1
# Readiness: queue 3 of p1 holds 1 MB (10 Mb/s of growth: about 1 s), at most 15 s.
deadline=$(( $(date +%s) + 15 ))
depth=0
while :; do
    depth="$(q3 depth_bytes 2>/dev/null || echo 0)"
    [ "$depth" -ge 1000000 ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then break; fi
    sleep 0.1
done
check_ge "queue 3 of p1 holds >= 1 MB before SIGTERM" "$depth" 1000000
# The accounting just before SIGTERM: frames queued, forwarded and sent so far.
t0=$(date +%s%N)
rsw_ctl --json show accounting >"$RSW_TMP/before.json"
rc=0
stop_switch 15 || rc=$?
t1=$(date +%s%N)
check_eq "roceswd exits 0 on SIGTERM with frames queued" "$rc" 0
check "log says the workers drain their queues" grep -q "stopping: workers drain their queues" "$LOG"
line="$(grep -m1 "exit accounting: " "$LOG" || true)"
rsw_log "  ${line#*] }"
check "log has the exit accounting line" test -n "$line"
printf '%s\n' "${line#*; total }" >"$RSW_TMP/exit.json"
read -r verdict queued stopped other q_before fwd_after tx_after <<<"$("$RSW_PYTHON" - "$RSW_TMP/before.json" "$RSW_TMP/exit.json" "$line" <<'PY'
import json, sys
before = json.load(open(sys.argv[1]))["total"]
try:
    end = json.load(open(sys.argv[2]))
except ValueError:
    print("none -1 -1 -1 -1 -1 -1"); sys.exit()
verdict = "balanced" if "exit accounting: balanced;" in sys.argv[3] else "unbalanced"
s = end["sent"]
drops = {**end["received"]["drops"], **s["drops"]}
# Egress drops other than port_stopped (the lossless queue neither tail-drops nor WREDs).
other = sum(v for k, v in s["drops"].items() if k != "port_stopped")
# The reading is not one instant: a burst counted forwarded but not yet queued when it was
# read shows as the reading's sent difference (doc/accounting.md), and belongs with the queued.
b = before["sent"]
q_before = b["queued"] + b["difference"] + b["drops"].get("port_stopped", 0)
added = sum(s[k] - b[k] for k in ("forwarded", "local_replies", "pfc_frames", "injected"))
print(verdict, s["queued"], s["drops"].get("port_stopped", 0), other, q_before, added,
      s["tx"] - b["tx"])
PY
)"
check_eq "exit accounting verdict (rx = forwarded + dropped + local + punted; forwarded + ... = tx + dropped + queued)" "$verdict" balanced
check_eq "nothing queued at exit" "$queued" 0
check_eq "no egress drop but port_stopped (the lossless queue never tail-drops)" "$other" 0
# From the last reading to the exit, p1 sends at most 20 Mb/s (frames of 1042 bytes: 2399/s)
# plus a shaper burst; whatever was queued (or in flight, or already port_stopped) then, or
# forwarded after, and not sent is port_stopped.
ms=$(( (t1 - t0) / 1000000 ))
max_tx=$(( 2399 * ms / 1000 + 64 ))
rsw_log "  last reading before SIGTERM: $q_before frames queued; then $ms ms to the exit: $fwd_after forwarded, $tx_after sent (at most $max_tx at 20 Mb/s), $stopped port_stopped"
check_ge "some frames were counted port_stopped" "$stopped" 1
check_eq "port_stopped = queued at the reading + forwarded after - sent after (conservation)" \
    "$stopped" $((q_before + fwd_after - tx_after))
check_ge "sent after the reading <= 20 Mb/s over the $ms ms to the exit (the queue was not emptied faster than the port)" \
    $((max_tx - tx_after)) 0
rsw_finish
