#!/bin/bash
# Fault injection: the control socket under abuse while traffic crosses the switch.
#
#   h1 (netns) --- <tag>p0 [p0]  roceswd  [p1] <tag>p1 --- h2 (netns)
#
#   - a client that connects, pipelines 2000 `help` requests (several MB of replies) and never
#     reads;
#   - 200 rocectl clients started at once;
#   - meanwhile 100 pings/s h1 -> h2.
# Checks: every one of the 200 rocectl clients gets its answer (the server refuses those beyond
# its 64-client limit; rocectl asks again: ControlClient::call); a further `rocectl show ports`
# answers (its time is reported, the check is only a generous timeout); the non-reading client
# is disconnected once its unsent output stalls for 5 s (rocectl show control clients:
# counted under disconnected.stalled), and the server logs it; `rocectl watch` started while
# 64 idle clients fill the server waits for a place and prints its frame; no echo lost (received count
# parsed) and the worker's poll gaps are reported; the accounting identity balances.
# Needs root (namespaces, TAP). Run: sudo test/system/test_fault_control.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip ping

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="$RSW_TMP/ctl.sock"
N_CLIENTS=200

cat >"$CFG" <<EOF
switch:
  name: ${RSW_TAG}
  workers: 1
  idle: adaptive
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
ports:
  - {name: p0, device: "net_tap0,iface=${IF0}", mac: "02:00:00:00:01:01", ipv4: ["10.0.1.1/24"]}
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", ipv4: ["10.0.2.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
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
in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
gaps() { rsw_ctl --json show workers | "$RSW_PYTHON" -c '
import json,sys; g=json.load(sys.stdin)["workers"][0]["poll_gaps"]; print(g["over_100us"], g["over_1ms"], g["max_us"])'; }
read -r g100_0 g1ms_0 _ < <(gaps)

# Traffic through the switch for the whole abuse: 100 echoes/s, 12 s.
PINGLOG="$RSW_TMP/ping.log"
rsw_bg in1 ping -c 1200 -i 0.01 -W 2 10.0.2.2 >"$PINGLOG" 2>&1
PING="$RSW_LAST_PID"

# The client that never reads: pipelines requests with large replies, then holds the socket.
READY="$RSW_TMP/nonreader.ready"
NONREADER_PY="$RSW_TMP/nonreader.py"
cat >"$NONREADER_PY" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.setblocking(False)
req = b'{"cmd":"help","args":[]}\n' * 2000
sent = 0
end = time.monotonic() + 2
while sent < len(req) and time.monotonic() < end:
    try:
        sent += s.send(req[sent:])
    except BlockingIOError:
        time.sleep(0.01)
open(sys.argv[2], "w").write("%d\n" % sent)
time.sleep(60)  # never reads; the test ends it (or the server drops it)
PY
rsw_bg "$RSW_PYTHON" "$NONREADER_PY" "$SOCK" "$READY"
NONREADER="$RSW_LAST_PID"
for _ in $(seq 1 200); do [ -s "$READY" ] && break; sleep 0.05; done
rsw_log "    non-reading client sent $(cat "$READY" 2>/dev/null || echo '?') request bytes"

# 200 rocectl clients at once.
CL="$RSW_TMP/clients"
mkdir -p "$CL"
t0=$(date +%s%N)
pids=()
for i in $(seq 1 "$N_CLIENTS"); do
    ( "$ROCECTL" --socket "$SOCK" --json show ports >"$CL/$i.out" 2>"$CL/$i.err"; echo $? >"$CL/$i.rc" ) &
    pids+=($!)
done
# A further client while the 200 are in flight.
t1=$(date +%s%N)
check "a further rocectl show ports answers during the storm (timeout 20 s)" \
    timeout 20 "$ROCECTL" --socket "$SOCK" show ports
t2=$(date +%s%N)
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
t3=$(date +%s%N)
ok=0
for i in $(seq 1 "$N_CLIENTS"); do
    if [ "$(cat "$CL/$i.rc" 2>/dev/null)" = 0 ] && grep -q '"ports"' "$CL/$i.out"; then ok=$((ok + 1)); fi
done
check_eq "rocectl clients answered, of $N_CLIENTS started at once" "$ok" "$N_CLIENTS"
if [ "$ok" != "$N_CLIENTS" ]; then
    cat "$CL"/*.err 2>/dev/null | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/    | /'
fi
rsw_log "    figures: further 'show ports' answered in $(( (t2 - t1) / 1000000 )) ms; $N_CLIENTS clients done in $(( (t3 - t0) / 1000000 )) ms"

# The non-reading client: disconnected once its output stalled.
stalled=""
for _ in $(seq 1 200); do
    stalled="$(rsw_ctl --json show control clients 2>/dev/null | "$RSW_PYTHON" -c '
import json,sys; print(json.load(sys.stdin)["disconnected"]["stalled"])' 2>/dev/null || true)"
    [ "${stalled:-0}" -ge 1 ] 2>/dev/null && break
    sleep 0.1
done
check_eq "the non-reading client is disconnected as stalled (show control clients)" "${stalled:-none}" 1
check "log: the stalled client's disconnect" grep -q "control client disconnected: .*unsent" "$LOG"
rsw_ctl show control clients | sed 's/^/    /'

# rocectl watch against a switch at its client limit: 64 idle clients hold every place for 1 s
# (a 65th is refused first: they are all counted); the watch started meanwhile is asked again
# as any rocectl call (ControlClient::call) and prints its frame once a place frees up.
refused() { rsw_ctl --json show control clients | "$RSW_PYTHON" -c '
import json,sys; print(json.load(sys.stdin)["refused_over_limit"])'; }
HOLD_PY="$RSW_TMP/hold.py"
HELD="$RSW_TMP/held"
cat >"$HOLD_PY" <<'PY'
import socket, sys, time
socks = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    socks.append(s)
probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
probe.connect(sys.argv[1])
probe.settimeout(5)
reply = probe.makefile().readline()
open(sys.argv[2], "w").write(reply)
time.sleep(1.0)
PY
r0="$(refused)"
rsw_bg "$RSW_PYTHON" "$HOLD_PY" "$SOCK" "$HELD"
HOLDER="$RSW_LAST_PID"
for _ in $(seq 1 100); do [ -s "$HELD" ] && break; sleep 0.05; done
check "64 held clients fill the server (a 65th is refused)" grep -q "too many control clients" "$HELD"
WATCH_OUT="$RSW_TMP/watch.json"
tw0=$(date +%s%N)
check "rocectl watch at the client limit waits for a place and prints its frame" \
    bash -c "timeout 10 '$ROCECTL' --socket '$SOCK' watch --json --count 1 >'$WATCH_OUT'"
tw1=$(date +%s%N)
check_eq "the watch's frame is the switch's (one JSON line with its ports)" \
    "$("$RSW_PYTHON" -c 'import json,sys; f=[json.loads(l) for l in open(sys.argv[1])]; print(len(f), f[0]["switch"], len(f[0]["ports"]) > 0)' "$WATCH_OUT")" \
    "1 ${RSW_TAG} True"
rsw_wait_pid "$HOLDER" 5 || true
check_ge "the watch was refused before it was served (refused_over_limit +probe +watch)" "$(( $(refused) - r0 ))" 2
rsw_log "    figures: the watch printed its frame $(( (tw1 - tw0) / 1000000 )) ms after it started (the places were held 1 s)"

rsw_wait_pid "$PING" 30 || true
read -r tx rx < <(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1 \2/p' "$PINGLOG")
check_eq "echoes h1 -> h2 during the storm: received of ${tx:-?} sent" "${rx:-none}" "${tx:-?}"
read -r g100_1 g1ms_1 gmax < <(gaps)
rsw_log "    figures: worker poll gaps during the storm: $((g100_1 - g100_0)) over 100 us, $((g1ms_1 - g1ms_0)) over 1 ms, max ${gmax} us (since start)"
rsw_kill "$NONREADER" 2
rsw_assert_accounting
if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive"; else rsw_fail "roceswd died"; fi
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
