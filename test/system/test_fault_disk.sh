#!/bin/bash
# Fault injection: the event trace cannot be written.
#
#   h1 (netns) --- <tag>p0 [p0]  roceswd  [p1, 20 Mb/s] <tag>p1 --- h2 (netns)
#
# 1. A trace file in a directory that does not exist: roceswd starts, logs the error
#    ("trace: cannot create trace file ...: No such file or directory; tracing disabled"),
#    `rocectl show info` says trace.failed, and it forwards.
# 2. A disk full while running: the trace file is /dev/full (every write fails with ENOSPC,
#    exactly what a full file system answers). The control thread's first flush (the CSV header,
#    at its first sample round) fails: one log line ("trace: writing /dev/full: No space left
#    on device; tracing stopped after N events"), trace.failed in `show info`, the
#    rocesw_trace_failed gauge at 1; the switch keeps forwarding (10 of 10 pings, after as
#    before), rocectl answers, the accounting identity balances, SIGTERM exits 0.
# Needs root (namespaces, TAP). Run: sudo test/system/test_fault_disk.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip ping curl
[ -c /dev/full ] || { echo "SKIP $(basename "$0"): no /dev/full"; exit "$RSW_SKIP"; }

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
SOCK="$RSW_TMP/ctl.sock"

config() {  # config TRACE_FILE
    cat <<EOF
switch:
  name: ${RSW_TAG}
  workers: 1
  idle: adaptive
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
telemetry:
  prometheus: {listen: "127.0.0.1:0"}
  trace: {file: "$1", interval_ms: 10}
ports:
  - {name: p0, device: "net_tap0,iface=${IF0}", mac: "02:00:00:00:01:01", ipv4: ["10.0.1.1/24"]}
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", speed: 20M, ipv4: ["10.0.2.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
EOF
}
in1() { ip netns exec "$H1" "$@"; }
info_trace() { rsw_ctl --json show info | "$RSW_PYTHON" -c 'import json,sys; t=json.load(sys.stdin)["trace"]; print(t["file"], str(t["failed"]).lower())'; }
hosts() {
    make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
    make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
    in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
}

echo "== $(basename "$0"): tag $RSW_TAG"

# 1. Unwritable trace directory at start.
MISSING="$RSW_TMP/no-such-dir/trace.csv"
config "$MISSING" >"$CFG"
LOG1="$RSW_TMP/roceswd-1.log"
if ! start_switch "$CFG" "$LOG1"; then
    rsw_fail "roceswd starts with a trace file in a missing directory"
    rsw_finish
fi
rsw_pass "roceswd starts with a trace file in a missing directory"
check "log: the trace error names the file and the cause" \
    grep -q "trace: cannot create trace file $MISSING: No such file or directory; tracing disabled" "$LOG1"
check_eq "show info: trace file, failed" "$(info_trace)" "$MISSING true"
hosts
check "ping h1 -> h2 without the trace (10 of 10)" rsw_ping_ok in1 ping -c 10 -i 0.1 -W 2 10.0.2.2
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0

# 2. Disk full while running.
config /dev/full >"$CFG"
LOG2="$RSW_TMP/roceswd-2.log"
if ! start_switch "$CFG" "$LOG2"; then
    rsw_fail "roceswd starts with the trace on /dev/full"
    rsw_finish
fi
rsw_pass "roceswd starts with the trace on /dev/full (open succeeds; writes will not)"
hosts
check "ping h1 -> h2 before the failure (5 of 5)" rsw_ping_ok in1 ping -c 5 -i 0.2 -W 2 10.0.2.2
# The first sample round (10 ms) flushes the header and fails; traffic meanwhile.
failed=""
for _ in $(seq 1 50); do
    in1 ping -c 20 -i 0.005 -W 1 10.0.2.2 >/dev/null 2>&1 || true
    if grep -q "trace: writing /dev/full: No space left on device; tracing stopped after [0-9]* events" "$LOG2"; then
        failed=1
        break
    fi
done
if [ -n "$failed" ]; then rsw_pass "log: trace write failure (ENOSPC) reported"; else rsw_fail "no trace write failure in the log"; fi
grep -m1 "trace: writing" "$LOG2" | sed 's/^/    log: /'
check_eq "the failure is logged once" "$(grep -c 'trace: writing /dev/full' "$LOG2")" 1
check_eq "show info: trace file, failed" "$(info_trace)" "/dev/full true"
PORT="$(rsw_ctl --json show info | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["prometheus_port"])')"
check_eq "rocesw_trace_failed gauge" \
    "$(curl -s "http://127.0.0.1:$PORT/metrics" | sed -n 's/^rocesw_trace_failed \([0-9]*\)$/\1/p')" 1
check "ping h1 -> h2 after the failure (10 of 10)" rsw_ping_ok in1 ping -c 10 -i 0.1 -W 2 10.0.2.2
check "rocectl answers" rsw_ctl show ports
rsw_assert_accounting
rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
rsw_finish
