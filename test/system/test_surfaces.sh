#!/bin/bash
# System test (issue 21, part 5): who can reach what on a running roceswd with default
# settings (doc/security.md).
#
#   h1 (netns) --- <tag>p0 [p0]  roceswd  [p1] <tag>p1 --- h2 (netns)
#                  10.0.1.1                10.0.2.1
#
# The config names no control socket and no Prometheus listen address, so both are the
# defaults: /run/rocesw/<switch name>.sock and 127.0.0.1 on the first free port of 9417..9480.
# Checks:
#   - the control socket is mode 0660, owned by the daemon's user and group (root:root), in a
#     0755 directory; root gets answers; user nobody (setpriv) cannot connect (EACCES), so it
#     can neither read nor run the mutating commands served there (route_learn, lb_policy);
#   - DPDK's telemetry socket (/var/run/dpdk/<prefix>/dpdk_telemetry.v2) lists read-only
#     /rocesw/* commands (ports, drops, info) and none of the mutating ones; calling one of
#     them answers null (unknown command), and the route table is unchanged; the socket is
#     DPDK's 0755 root in a 0700 root directory, so user nobody cannot connect;
#   - Prometheus answers on 127.0.0.1 from the root namespace; from h1 (a host on data port
#     p0) the switch's address 10.0.1.1 on that port does not answer, nor does h1's loopback;
#   - the punt path: this switch has no host interfaces (the default), so nothing is punted to
#     the kernel (accounting: punted 0); test_copp.sh floods the punt path of a switch with
#     host interfaces and measures the policer.
# Needs root (namespaces, TAP). Run: sudo test/system/test_surfaces.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root ip ping curl setpriv stat
if ! id nobody >/dev/null 2>&1; then
    echo "SKIP $(basename "$0"): no user 'nobody'"
    exit "$RSW_SKIP"
fi

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="/run/rocesw/${RSW_TAG}.sock"   # the default for switch name $RSW_TAG
TEL="/var/run/dpdk/$(rsw_file_prefix)/dpdk_telemetry.v2"

cat >"$CFG" <<EOF
switch:
  name: ${RSW_TAG}
  workers: 1
  file_prefix: $(rsw_file_prefix)
ports:
  - {name: p0, device: "net_tap0,iface=${IF0}", mac: "02:00:00:00:01:01", speed: 10G, ipv4: ["10.0.1.1/24"]}
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", speed: 10G, ipv4: ["10.0.2.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
EOF

echo "== $(basename "$0"): tag $RSW_TAG, switch log $LOG"
if ! start_switch "$CFG" "$LOG"; then
    rsw_fail "roceswd starts with default control socket and Prometheus settings"
    rsw_finish
fi
rsw_pass "roceswd starts (pid $RSW_SWITCH_PID)"
# start_switch found no control_socket in the config: wait for the default one.
# shellcheck disable=SC2034  # read by lib.sh (rsw_ctl, cleanup)
RSW_SWITCH_SOCKET="$SOCK"
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done

make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
in1() { ip netns exec "$H1" "$@"; }
check "ping h1 -> h2 through the switch" rsw_ping_ok in1 ping -c 3 -i 0.2 -W 2 10.0.2.2

# --- the control socket --------------------------------------------------------------------
check "control socket at the default path $SOCK" test -S "$SOCK"
check_eq "control socket mode and owner" "$(stat -c '%a %U %G' "$SOCK")" "660 root root"
check_eq "its directory /run/rocesw is 0755 root" "$(stat -c '%a %U' /run/rocesw)" "755 root"
check "root gets answers (rocectl show info)" rsw_ctl show info
# connect.py stream|seqpacket PATH: connects to a Unix socket, prints "connected" or the errno
# name; exits 0 when connected.
cat >"$RSW_TMP/connect.py" <<'EOF'
import errno, socket, sys
kind = {"stream": socket.SOCK_STREAM, "seqpacket": socket.SOCK_SEQPACKET}[sys.argv[1]]
s = socket.socket(socket.AF_UNIX, kind)
try:
    s.connect(sys.argv[2])
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(1)
print("connected")
EOF
chmod 0755 "$RSW_TMP"  # nobody must reach the script; the socket's own mode is under test
chmod 0644 "$RSW_TMP/connect.py"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
check_eq "root can connect (the probe works)" "$("$RSW_PYTHON" "$RSW_TMP/connect.py" stream "$SOCK" || true)" connected
out="$(as_nobody "$RSW_PYTHON" "$RSW_TMP/connect.py" stream "$SOCK" || true)"
check_eq "user nobody cannot connect to the control socket" "$out" EACCES
routes_before="$(rsw_ctl --json show routes | "$RSW_PYTHON" -c 'import json,sys; print(len(json.dumps(json.load(sys.stdin))))')"

# --- DPDK telemetry ------------------------------------------------------------------------
check "DPDK telemetry socket exists ($TEL)" test -S "$TEL"
check_eq "its directory /var/run/dpdk/<prefix> is 0700 root" "$(stat -c '%a %U' "$(dirname "$TEL")")" "700 root"
check_eq "DPDK telemetry socket mode and owner (DPDK's: no write for others)" \
    "$(stat -c '%a %U %G' "$TEL" 2>/dev/null || echo none)" "755 root root"
# tel.py PATH CMD...: prints each command's JSON reply, one per line.
cat >"$RSW_TMP/tel.py" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
info = json.loads(s.recv(16384).decode())
for cmd in sys.argv[2:]:
    s.send(cmd.encode())
    print(json.dumps(json.loads(s.recv(info.get("max_output_len", 16384)).decode())))
EOF
TLIST="$("$RSW_PYTHON" "$RSW_TMP/tel.py" "$TEL" / || true)"
tel_has() {
    "$RSW_PYTHON" -c 'import json,sys; sys.exit(sys.argv[1] not in json.loads(sys.argv[2])["/"])' "$1" "$TLIST"
}
check_eq "user nobody cannot connect to the DPDK telemetry socket" \
    "$(as_nobody "$RSW_PYTHON" "$RSW_TMP/connect.py" seqpacket "$TEL" || true)" EACCES
for c in ports drops info routes; do
    check "telemetry lists read-only /rocesw/$c" tel_has "/rocesw/$c"
done
for c in route_learn lb_policy lb_events clear clear_watermarks clear_latency; do
    check_fails "telemetry does not list mutating /rocesw/$c" tel_has "/rocesw/$c"
done
check_eq "telemetry lists only read-only /rocesw/* commands (none of rocectl's mutating set)" \
    "$("$RSW_PYTHON" -c '
import json, sys
cmds = json.loads(sys.argv[1])["/"]
mut = {"route_learn", "lb_policy", "lb_events", "clear", "clear_watermarks", "clear_latency"}
print(sorted(c for c in cmds if c.startswith("/rocesw/") and c[8:] in mut))' "$TLIST")" "[]"
check_eq "telemetry call /rocesw/route_learn answers null (not a command there)" \
    "$("$RSW_PYTHON" "$RSW_TMP/tel.py" "$TEL" "/rocesw/route_learn,198.51.100.0/24,p1:10.0.2.2" || true)" \
    '{"/rocesw/route_learn": null}'
check_eq "the route table is unchanged" \
    "$(rsw_ctl --json show routes | "$RSW_PYTHON" -c 'import json,sys; print(len(json.dumps(json.load(sys.stdin))))')" \
    "$routes_before"

# The mutating commands on the control socket: each refused by default, naming its setting.
for c in "route_learn 198.51.100.0/24 p1:10.0.2.2|route_learn: not allowed by the config (control_plane.allow_route_learn: false)" \
    "lb policy all hash|lb policy: not allowed by the config (lb.allow_policy_change: false)" \
    "lb events|lb events: not allowed by the config (lb.trace_path_changes: false: no path changes are recorded)" \
    "port_link p1 down|port_link: not allowed by the config (control_plane.allow_port_link: false)" \
    "clear watermarks|clear: not allowed by the config (telemetry.allow_clear: false)"; do
    # shellcheck disable=SC2086  # the command's words
    check_eq "control socket refuses '${c%%|*}' by default" \
        "$(rsw_ctl call ${c%%|*} 2>&1 || true)" "rocectl: ${c#*|}"
done

# --- Prometheus ----------------------------------------------------------------------------
PORT="$(sed -n 's|.*prometheus: serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$LOG" | head -n1)"
check "Prometheus listens on 127.0.0.1, port in 9417..9480 (got '${PORT}')" \
    test -n "$PORT" -a "${PORT:-0}" -ge 9417 -a "${PORT:-0}" -le 9480
PORT="${PORT:-9417}"
check "GET /metrics on 127.0.0.1:$PORT from the root namespace" \
    bash -c "curl -sf --max-time 5 http://127.0.0.1:${PORT}/metrics | grep -q '^rocesw_port_rx_packets_total'"
check_fails "not listening on any other address (ss: only 127.0.0.1:$PORT)" \
    bash -c "ss -Htln 'sport = :${PORT}' | awk '{print \$4}' | grep -vx '127.0.0.1:${PORT}'"
check_fails "h1 cannot reach it at the switch's data-port address 10.0.1.1:$PORT" \
    in1 curl -s --max-time 3 "http://10.0.1.1:${PORT}/metrics"
check_fails "h1 cannot reach it on its own loopback" \
    in1 curl -s --max-time 2 "http://127.0.0.1:${PORT}/metrics"

# --- the punt path -------------------------------------------------------------------------
check_eq "no host interfaces by default (show control: host_interfaces false)" \
    "$(rsw_ctl --json show control | "$RSW_PYTHON" -c 'import json,sys; d=json.load(sys.stdin); print(d["host_interfaces"])')" \
    False

rsw_assert_accounting
rc=0
stop_switch 15 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
check_fails "roceswd removed its control socket" test -e "$SOCK"
rsw_finish
