#!/bin/bash
# Several roceswd on one host (a fabric lab runs one per switch): two switches whose configs
# differ only in switch.name (and their memif socket) start side by side with every
# name-derived default: control socket /run/rocesw/<name>.sock, EAL file prefix
# roceswd-<name>, and the Prometheus endpoint, which takes the first free port from 9417 up
# when the listen address is the default. Each answers rocectl on its own socket and serves
# /metrics on the port `rocectl show info` reports. Then every clash is refused at start-up
# with a message naming the field, and the running switches are not disturbed:
#   - the same name (same file prefix and control socket),
#   - a memif server socket another switch serves,
#   - an explicit telemetry.prometheus.listen on a port that is taken,
#   - an explicit switch.file_prefix another switch holds.
# A stale memif socket file (its server gone) is removed and the port comes up. And the
# control command rocelab sets routes with (route_learn): set, listed, refused, withdrawn.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rsw_init
d="$RSW_TMP"

cfg() {  # cfg NAME SOCKET [EXTRA_SWITCH_LINE] [EXTRA_TOP_LEVEL]
    cat <<YAML
switch:
  name: $1
  mbufs: 2048
${3:+  $3}
ports:
  - {name: p0, device: "net_memif0,role=server,id=0,socket=$2,socket-abstract=no",
     mac: "02:00:00:00:01:01", speed: 1G}
${4:-}
YAML
}
A="${RSW_TAG}a" B="${RSW_TAG}b"
cfg "$A" "$d/a.sock" "" "control_plane: {allow_route_learn: true}" > "$d/a.yaml"
cfg "$B" "$d/b.sock" > "$d/b.yaml"

wait_running() {  # wait_running PID LOG
    local i
    for i in $(seq 1 200); do
        rsw_alive "$1" || return 1
        grep -q ' running: ' "$2" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
rsw_bg "$ROCESWD" --config "$d/a.yaml" > "$d/a.log" 2>&1
pa="$RSW_LAST_PID"
rsw_bg "$ROCESWD" --config "$d/b.yaml" > "$d/b.log" 2>&1
pb="$RSW_LAST_PID"
check "switch $A starts" wait_running "$pa" "$d/a.log"
check "switch $B starts next to it" wait_running "$pb" "$d/b.log"
info() { "$ROCECTL" --name "$1" --json show info | "$RSW_PYTHON" -c \
    'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }
check_eq "$A: control socket derived from the name" "$(info "$A" control_socket)" "/run/rocesw/$A.sock"
check_eq "$B: file prefix derived from the name" "$(info "$B" file_prefix)" "roceswd-$B"
porta="$(info "$A" prometheus_port)"
portb="$(info "$B" prometheus_port)"
check "the two Prometheus ports differ ($porta, $portb)" test "$porta" != "$portb"
for p in "$porta" "$portb"; do
    check "Prometheus port $p is in the default range" test "$p" -ge 9417 -a "$p" -le 9480
done
scrape() { "$RSW_PYTHON" -c 'import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode()
sys.exit("rocesw_worker_polls_total" not in body)' "$1"; }
check "$A serves /metrics on its port" scrape "$porta"
check "$B serves /metrics on its port" scrape "$portb"
if grep -q "is in use (another switch?); using" "$d/a.log" "$d/b.log"; then
    rsw_pass "the switch that moved off the default port says so in its log"
else
    # 9417 may already be taken by something else on this host: then both moved.
    check "both logs name their port" grep -q "prometheus: serving" "$d/a.log"
fi

refused() {  # refused DESC CONFIG PATTERN: roceswd exits non-zero at once, log matches PATTERN
    local rc=0
    timeout 30 "$ROCESWD" --config "$2" > "$2.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q -- "$3" "$2.log"; then
        rsw_pass "$1 (exit $rc: $(grep -- "$3" "$2.log" | tail -n1 | cut -c1-160))"
    else
        rsw_fail "$1: exit $rc"
        tail -n 5 "$2.log" | sed 's/^/    | /'
    fi
}
cfg "$A" "$d/c.sock" > "$d/same-name.yaml"
refused "the same name again is refused (file prefix in use)" "$d/same-name.yaml" \
    "switch.file_prefix: 'roceswd-$A' is in use by DPDK process $pa"
cfg "${RSW_TAG}c" "$d/a.sock" > "$d/same-memif.yaml"
refused "a memif socket another switch serves is refused" "$d/same-memif.yaml" \
    "ports\[0\].device: memif socket: .* is using $d/a.sock"
cfg "${RSW_TAG}d" "$d/d.sock" "" "telemetry: {prometheus: {listen: \"127.0.0.1:$porta\"}}" > "$d/same-prom.yaml"
refused "an explicit Prometheus port in use is refused" "$d/same-prom.yaml" \
    "telemetry.prometheus.listen: cannot serve metrics on 127.0.0.1:$porta"
cfg "${RSW_TAG}e" "$d/e.sock" "file_prefix: roceswd-$B" > "$d/same-prefix.yaml"
refused "an explicit file prefix in use is refused" "$d/same-prefix.yaml" \
    "switch.file_prefix: 'roceswd-$B' is in use by DPDK process $pb"
check "$A still runs" rsw_alive "$pa"
check "$B still runs" rsw_alive "$pb"
check "$A still answers rocectl" "$ROCECTL" --name "$A" show info
# route_learn (rocelab sets a lab's routes with it): a multipath learned route, then withdrawn;
# a bad argument changes nothing.
check "route_learn sets a learned route" "$ROCECTL" --name "$A" call route_learn 11.0.9.0/24 p0:10.9.9.1 p0:10.9.9.2
check "the route is listed as learned (origin rocelab)" sh -c \
    "'$ROCECTL' --name '$A' --json show routes | grep -q rocelab"
check_fails "route_learn refuses an unknown port" "$ROCECTL" --name "$A" call route_learn 11.0.8.0/24 p7:10.9.9.1
check "route_learn withdraws a prefix given without next hops" "$ROCECTL" --name "$A" call route_learn 11.0.9.0/24
check_fails "no learned route is left" sh -c "'$ROCECTL' --name '$A' --json show routes | grep -q rocelab"
# $B's config does not allow it (control_plane.allow_route_learn defaults to false).
check_eq "$B refuses route_learn, naming the setting" \
    "$("$ROCECTL" --name "$B" call route_learn 11.0.9.0/24 p0:10.9.9.1 2>&1 || true)" \
    "rocectl: route_learn: not allowed by the config (control_plane.allow_route_learn: false)"

kill -KILL "$pb"
wait "$pb" 2>/dev/null || true
check "$B killed with SIGKILL leaves its memif socket file behind (stale)" test -S "$d/b.sock"
rsw_bg "$ROCESWD" --config "$d/b.yaml" > "$d/b2.log" 2>&1
pb="$RSW_LAST_PID"
check "$B restarts over its stale memif socket" wait_running "$pb" "$d/b2.log"
check "it says it removed the stale socket" grep -q "removed stale memif socket $d/b.sock" "$d/b2.log"
rsw_kill "$pb" 10
check_eq "$B exits cleanly on SIGTERM" "$RSW_WAIT_RC" "0"
rsw_kill "$pa" 10
check "no control socket is left" test ! -e "/run/rocesw/$A.sock" -a ! -e "/run/rocesw/$B.sock"
rm -rf /var/run/dpdk/roceswd-"${RSW_TAG}"?  # EAL leaves its config files behind
rsw_finish
