#!/bin/bash
# Fault injection: roceswd killed with SIGKILL under traffic, then restarted with the same config.
#
#   h1 (netns)               roceswd                   h2 (netns)
#   10.0.1.2/24 --- <tag>p0 [p0]    [p1] <tag>p1 --- 10.0.2.2/24
#                           [p2] memif server, socket in the temp dir, no peer
#
# What a killed process leaves behind and who removes it:
#   - the control socket file (the new process finds nobody serving it and removes it),
#   - the memif server socket file (same),
#   - the files of DPDK's runtime directory /var/run/dpdk/<prefix> (config, mp_socket,
#     fbarray_*, dpdk_telemetry.v2): a normal exit removes them, so files nobody holds the
#     lock of were left by a process that died; file_prefix_preflight removes them,
#   - not the TAP interfaces: the kernel deletes a TAP with its last file descriptor, also in
#     the host's namespace (checked), so the hosts need their interface plumbed again, as a
#     lab orchestrator does after a restart.
# Each removal has a log line, checked. The hosts recover (ping received counts parsed; the
# time from the restart to the first reply is reported), the accounting identity balances, a
# clean SIGTERM leaves no files in the runtime directory, and a start after a clean stop logs
# no stale-file line.
# BGP peers across the same fault (graceful restart): test_fault_bgp_restart.sh.
# Needs root (namespaces, TAP). Run: sudo test/system/test_fault_restart.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip ping

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
SOCK="$RSW_TMP/ctl.sock"
MEMIF="$RSW_TMP/p2.memif.sock"
RUNDIR="/var/run/dpdk/$(rsw_file_prefix)"

cat >"$CFG" <<EOF
switch:
  name: ${RSW_TAG}
  workers: 1
  idle: adaptive
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: true
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
  - name: p2
    device: "net_memif0,role=server,id=0,socket=${MEMIF},socket-abstract=no"
    mac: "02:00:00:00:03:01"
    ipv4: ["10.0.3.1/24"]
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
  - {ip: "fd00:1::2", mac: "02:00:00:00:01:02"}
  - {ip: "fd00:2::2", mac: "02:00:00:00:02:02"}
EOF

in1() { ip netns exec "$H1" "$@"; }
hosts() {
    make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1 &&
        make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
}
stale_lines() { grep -cE 'removed stale (control|memif) socket|stale file\(s\) of a DPDK process' "$1" || true; }

echo "== $(basename "$0"): tag $RSW_TAG"
LOG1="$RSW_TMP/roceswd-1.log"
if ! start_switch "$CFG" "$LOG1"; then
    rsw_fail "roceswd starts"
    rsw_finish
fi
rsw_pass "roceswd starts (pid $RSW_SWITCH_PID)"
hosts
in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
check "IPv4 ping h1 -> h2 before the fault (5 of 5)" rsw_ping_ok in1 ping -c 5 -i 0.2 -W 2 10.0.2.2

# Traffic during the kill: 200 echoes/s from h1 to h2 until the interface goes away.
rsw_bg in1 ping -i 0.005 -w 30 10.0.2.2 >"$RSW_TMP/flood.log" 2>&1
FLOOD="$RSW_LAST_PID"
tx0="$(rsw_port_counter p1 tx_packets)"
tx1="$(rsw_wait_counter $((tx0 + 100)) 5 rsw_port_counter p1 tx_packets)"
check_ge "p1 forwards under the flood before the kill (tx packets in the window)" "$((tx1 - tx0))" 100

OLD="$RSW_SWITCH_PID"
kill -KILL "$OLD"
rsw_wait_pid "$OLD" 10 || true
check_eq "roceswd ends by SIGKILL" "$RSW_WAIT_RC" 137
RSW_SWITCH_PID=""
rsw_kill "$FLOOD" 2

# What the dead process left.
if [ -S "$SOCK" ]; then rsw_pass "control socket file left behind"; else rsw_fail "no control socket file left ($SOCK)"; fi
if [ -S "$MEMIF" ]; then rsw_pass "memif socket file left behind"; else rsw_fail "no memif socket file left ($MEMIF)"; fi
left="$(find "$RUNDIR" -maxdepth 1 -type f -o -maxdepth 1 -type s 2>/dev/null | wc -l)"
check_ge "files left in $RUNDIR" "$left" 1
check_fails "the kernel removed h1's TAP with the dead process" ip -n "$H1" link show dev "$IF0"
check_fails "the kernel removed h2's TAP with the dead process" ip -n "$H2" link show dev "$IF1"
check_fails "rocectl gets no answer from the dead switch" timeout 5 "$ROCECTL" --socket "$SOCK" show info

# Restart with the same config.
LOG2="$RSW_TMP/roceswd-2.log"
t_restart=$(date +%s%N)
if ! start_switch "$CFG" "$LOG2"; then
    rsw_fail "roceswd restarts with the same config"
    rsw_finish
fi
t_running=$(date +%s%N)
rsw_pass "roceswd restarts with the same config (pid $RSW_SWITCH_PID, $(( (t_running - t_restart) / 1000000 )) ms to running)"
check "log: removed stale control socket" grep -q "removed stale control socket $SOCK" "$LOG2"
check "log: removed stale memif socket" grep -q "port p2: removed stale memif socket $MEMIF" "$LOG2"
check "log: removed the dead process's DPDK runtime files" \
    grep -qE "file_prefix '$(rsw_file_prefix)': removed [0-9]+ stale file\(s\) of a DPDK process that died from $RUNDIR: .*config" "$LOG2"
grep -E 'removed stale|stale file' "$LOG2" | sed 's/^/    log: /'

# The hosts recover once their interfaces are back in their namespaces.
hosts
first=""
for _ in $(seq 1 50); do
    if in1 ping -c 1 -W 1 10.0.2.2 >/dev/null 2>&1; then first=$(date +%s%N); break; fi
done
if [ -n "$first" ]; then
    rsw_pass "first reply h1 -> h2 $(( (first - t_restart) / 1000000 )) ms after the restart began"
else
    rsw_fail "no reply h1 -> h2 after the restart"
fi
check "IPv4 ping h1 -> h2 after the restart (10 of 10)" rsw_ping_ok in1 ping -c 10 -i 0.1 -W 2 10.0.2.2
check "IPv6 ping h1 -> h2 after the restart (5 of 5)" rsw_ping_ok in1 ping -6 -c 5 -i 0.2 -W 2 fd00:2::2
check "rocectl answers the new switch" rsw_ctl show ports
newpid="$(rsw_ctl --json show info | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["pid"])')"
check_eq "the control socket is served by the new process" "$newpid" "$RSW_SWITCH_PID"
check_eq "p0 rx_nombuf after the restart" "$(rsw_port_counter p0 rx_nombuf)" 0
rsw_assert_accounting

rc=0
stop_switch 10 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
left="$(find "$RUNDIR" -maxdepth 1 \( -type f -o -type s \) 2>/dev/null | wc -l)"
check_eq "no files in $RUNDIR after a clean stop" "$left" 0

# A start after a clean stop finds nothing stale.
LOG3="$RSW_TMP/roceswd-3.log"
if start_switch "$CFG" "$LOG3"; then
    check_eq "stale-file log lines after a clean stop" "$(stale_lines "$LOG3")" 0
    rc=0
    stop_switch 10 || rc=$?
    check_eq "roceswd exits 0 on SIGTERM (third run)" "$rc" 0
else
    rsw_fail "roceswd starts after a clean stop"
fi

rsw_finish
