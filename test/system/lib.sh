# shellcheck shell=bash
# Helpers for the system tests: real roceswd processes, TAP ports, hosts in network namespaces.
#
# Source it from a test script that runs under `set -euo pipefail`:
#
#   source "$(dirname "$0")/lib.sh"
#   rsw_init                       # unique tag, temp dir, cleanup trap
#   start_switch "$cfg" "$log"     # background roceswd, waits for "running" + control socket
#   make_host "$(rsw_ns h1)" "$(rsw_ifname p0)" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 \
#             10.0.1.1 fd00:1::1
#   check "IPv4 ping" rsw_ping_ok ip netns exec "$(rsw_ns h1)" ping -c 5 -i 0.2 -W 1 10.0.2.2
#   rsw_assert_accounting          # the accounting identity balances (doc/accounting.md)
#   stop_switch || rc=$?           # SIGTERM, waits, returns the exit status
#   rsw_finish                     # summary line; exit 0, 1 (a check failed or none ran)
#
# Exit statuses run_all.sh tells apart: 0 PASS, $RSW_SKIP (77, as automake and meson) SKIP with
# the reason printed, anything else FAIL. A test that ran no check fails.
#
# Everything this file creates is recorded and removed by `cleanup` (trap on EXIT, INT, TERM):
# processes it started (by PID, never by name), namespaces it created, temp dirs it made.
# Binaries: $ROCESWD / $ROCECTL override build/app/roceswd/roceswd and build/app/rocectl/rocectl
# (BUILD_DIR overrides build/).

RSW_SYSTEM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RSW_REPO="$(cd "$RSW_SYSTEM_DIR/../.." && pwd)"
: "${BUILD_DIR:=$RSW_REPO/build}"
: "${ROCESWD:=$BUILD_DIR/app/roceswd/roceswd}"
: "${ROCECTL:=$BUILD_DIR/app/rocectl/rocectl}"
RSW_PYTHON=/usr/bin/python3

RSW_TAG=""            # "rsw" + 5 hex digits: prefix of every name this run creates
RSW_TMP=""            # the run's temp dir
RSW_PIDS=()           # processes started here, killed by PID on cleanup
RSW_NETNS=()          # namespaces created here
RSW_LINKS=()          # links created in this namespace (veth pairs), deleted on cleanup
RSW_TMPDIRS=()        # directories removed on cleanup
RSW_SWITCH_PID=""     # the roceswd started by start_switch
# shellcheck disable=SC2034  # read by tests
RSW_SWITCH_LOG=""
RSW_SWITCH_SOCKET=""
# shellcheck disable=SC2034  # read by tests
RSW_SWITCH_RC=""      # exit status recorded by stop_switch
RSW_LAST_PID=""       # PID of the last rsw_bg command
RSW_FAILS=0
RSW_PASSES=0
RSW_CLEANED=0
RSW_ERR_FD=2

rsw_log() { printf '%s\n' "$*" >&2; }

# --- names ----------------------------------------------------------------------------------

# Sets RSW_TAG, makes RSW_TMP and installs the cleanup trap. Call once, first.
rsw_init() {
    local hex
    hex="$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
    RSW_TAG="rsw${hex:0:5}"
    RSW_TMP="$(mktemp -d "/tmp/${RSW_TAG}.XXXXXX")"
    RSW_TMPDIRS+=("$RSW_TMP")
    # The script's own stderr, for messages from traps that may fire inside a redirection.
    exec {RSW_ERR_FD}>&2
    trap 'cleanup' EXIT
    trap 'echo "interrupted: cleaning up" >&"$RSW_ERR_FD"; cleanup; trap - EXIT; exit 130' INT
    trap 'echo "terminated: cleaning up" >&"$RSW_ERR_FD"; cleanup; trap - EXIT; exit 143' TERM
}

# An interface name for this run: rsw<5 hex><suffix>, at most 15 characters.
rsw_ifname() {
    local n="${RSW_TAG}$1"
    if [ "${#n}" -gt 15 ]; then
        rsw_log "rsw_ifname: '$n' is longer than 15 characters"
        return 1
    fi
    printf '%s\n' "$n"
}

# A namespace name for this run: rsw<5 hex>-<suffix>.
rsw_ns() { printf '%s\n' "${RSW_TAG}-$1"; }

# The EAL file prefix for this run's switch (its runtime dir /var/run/dpdk/<prefix>, and any
# /var/run/dpdk/<prefix><suffix>, is removed on cleanup).
rsw_file_prefix() { printf '%s\n' "${RSW_TAG}"; }

# rsw_mktemp VAR: a new temp dir (removed on cleanup), its path in VAR. Not `$(...)`: in a
# subshell the record for cleanup would be lost.
rsw_mktemp() {
    local d
    d="$(mktemp -d "/tmp/${RSW_TAG:-rsw}.XXXXXX")"
    RSW_TMPDIRS+=("$d")
    printf -v "$1" '%s' "$d"
}

# --- processes ------------------------------------------------------------------------------

# True while PID runs (a zombie, exited but not yet reaped, does not count).
rsw_alive() {
    local pid="$1" state
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    state="$(sed -e 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Runs "$@" in the background and records its PID (RSW_LAST_PID) for cleanup. Redirect the
# call itself: `rsw_bg cmd args >out 2>&1`.
rsw_bg() {
    "$@" &
    RSW_LAST_PID=$!
    RSW_PIDS+=("$RSW_LAST_PID")
}

# Waits up to TIMEOUT seconds for PID to exit. Returns 0 when it exited in time (its exit
# status in RSW_WAIT_RC), 1 when it still runs (RSW_WAIT_RC=timeout). PID must be a child of
# this shell, and this must not run in a subshell (no $(...)), or its status is lost.
RSW_WAIT_RC=""
rsw_wait_pid() {
    local pid="$1" timeout="$2" deadline rc=0
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while rsw_alive "$pid"; do
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            RSW_WAIT_RC=timeout
            return 1
        fi
        sleep 0.05
    done
    wait "$pid" 2>/dev/null || rc=$?
    RSW_WAIT_RC="$rc"
    return 0
}

# Ends PID: SIGTERM, up to GRACE seconds, then SIGKILL. Quiet if it is gone already.
rsw_kill() {
    local pid="$1" grace="${2:-3}"
    rsw_alive "$pid" || { wait "$pid" 2>/dev/null || true; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    if ! rsw_wait_pid "$pid" "$grace"; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    return 0
}

# --- the switch -----------------------------------------------------------------------------

# The control socket path named in a config file (switch.control_socket).
rsw_config_socket() {
    sed -n 's/^[[:space:]]*control_socket:[[:space:]]*"\{0,1\}\([^"#[:space:]]*\)"\{0,1\}.*$/\1/p' "$1" | head -n1
}

# start_switch CONFIG LOG [TIMEOUT_S=20]: runs roceswd in the background (PID in
# RSW_SWITCH_PID), waits for its "running" log line and its control socket. On failure prints
# the log's tail and returns 1 (killing the process if it still runs).
start_switch() {
    local config="$1" log="$2" timeout="${3:-20}" deadline
    if [ ! -x "$ROCESWD" ]; then
        rsw_log "start_switch: $ROCESWD is not executable (build with: ninja -C $BUILD_DIR)"
        return 1
    fi
    # shellcheck disable=SC2034  # read by tests
    RSW_SWITCH_LOG="$log"
    RSW_SWITCH_SOCKET="$(rsw_config_socket "$config")"
    RSW_SWITCH_RC=""
    rsw_bg "$ROCESWD" --config "$config" >"$log" 2>&1
    RSW_SWITCH_PID="$RSW_LAST_PID"
    deadline=$(( $(date +%s) + timeout ))
    while :; do
        if ! rsw_alive "$RSW_SWITCH_PID"; then
            local rc=0
            wait "$RSW_SWITCH_PID" 2>/dev/null || rc=$?
            rsw_log "start_switch: roceswd (pid $RSW_SWITCH_PID) exited with status $rc during start-up; log tail:"
            tail -n 25 "$log" | sed 's/^/  | /' >&2
            RSW_SWITCH_PID=""
            return 1
        fi
        if grep -q ' running: ' "$log" 2>/dev/null &&
            { [ -z "$RSW_SWITCH_SOCKET" ] || [ -S "$RSW_SWITCH_SOCKET" ]; }; then
            return 0
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            rsw_log "start_switch: roceswd (pid $RSW_SWITCH_PID) not running after ${timeout} s; log tail:"
            tail -n 25 "$log" | sed 's/^/  | /' >&2
            rsw_kill "$RSW_SWITCH_PID" 5
            RSW_SWITCH_PID=""
            return 1
        fi
        sleep 0.1
    done
}

# stop_switch [TIMEOUT_S=10]: SIGTERM to the switch started by start_switch, waits up to
# TIMEOUT seconds, then SIGKILL. Returns (and stores in RSW_SWITCH_RC) its exit status;
# 137 or more when it had to be killed. Use as `rc=0; stop_switch || rc=$?` under set -e.
stop_switch() {
    local timeout="${1:-10}" pid="$RSW_SWITCH_PID" rc
    if [ -z "$pid" ]; then
        rsw_log "stop_switch: no switch running"
        RSW_SWITCH_RC=255
        return 255
    fi
    kill -TERM "$pid" 2>/dev/null || true
    if rsw_wait_pid "$pid" "$timeout"; then
        rc="$RSW_WAIT_RC"
    else
        rsw_log "stop_switch: roceswd (pid $pid) still running ${timeout} s after SIGTERM: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        rc=0
        wait "$pid" 2>/dev/null || rc=$?
    fi
    RSW_SWITCH_PID=""
    # shellcheck disable=SC2034  # read by tests
    RSW_SWITCH_RC="$rc"
    return "$rc"
}

# rocectl against the running switch: rsw_ctl --json show ports
rsw_ctl() { "$ROCECTL" --socket "$RSW_SWITCH_SOCKET" "$@"; }

# rsw_drops PORT REASON: the drop counter (0 when not listed).
rsw_drops() {
    rsw_ctl --json show drops --all | "$RSW_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print(sum(e["packets"] for e in d["drops"] if e["port"] == sys.argv[1] and e["reason"] == sys.argv[2]))
' "$1" "$2"
}

# rsw_port_counter PORT FIELD: a numeric field of `show ports` (rx_packets, tx_bytes, ...).
rsw_port_counter() {
    rsw_ctl --json show ports | "$RSW_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
m = [p for p in d["ports"] if p["name"] == sys.argv[1]]
if not m:
    sys.exit("no port %s" % sys.argv[1])
print(m[0][sys.argv[2]])
' "$1" "$2"
}

# rsw_assert_accounting [SOCKET=$RSW_SWITCH_SOCKET]: the check that every frame the switch
# received and sent is accounted for (doc/accounting.md), from `rocectl show accounting
# --json`. Frames still in the egress queues count as queued; a worker's burst in flight shows
# as a difference for an instant, so it reads again (every 0.2 s, up to 5 s) until balanced,
# and fails with the last verdict. Logs the total's terms. Call it while the switch runs, after
# the test's traffic.
rsw_assert_accounting() {
    local sock="${1:-$RSW_SWITCH_SOCKET}" deadline out="" verdict=""
    deadline=$(( $(date +%s%N) + 5 * 1000000000 ))
    while :; do
        out="$("$ROCECTL" --socket "$sock" --json show accounting 2>&1)" || out=""
        verdict="$(printf '%s' "$out" | "$RSW_PYTHON" -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("no answer from rocectl show accounting"); sys.exit()
t = d["total"]; r = t["received"]; s = t["sent"]
print("%s | rx %d = forwarded %d + dropped %d + local %d + punted %d; forwarded %d + replies %d"
      " + pfc %d + injected %d = tx %d + dropped %d + queued %d | drops %s" % (
      d["verdict"], r["rx"], r["forwarded"], r["dropped"], r["local"], r["punted"],
      s["forwarded"], s["local_replies"], s["pfc_frames"], s["injected"], s["tx"], s["dropped"],
      s["queued"], ",".join("%s=%d" % kv for kv in sorted({**r["drops"], **s["drops"]}.items()))
      or "none"))' 2>&1)"
        case "$verdict" in balanced*) break ;; esac
        [ "$(date +%s%N)" -ge "$deadline" ] && break
        sleep 0.2
    done
    case "$verdict" in
        balanced*) rsw_pass "accounting balanced (${verdict#balanced | })" ;;
        *) rsw_fail "accounting: $verdict" ;;
    esac
}

# rsw_wait_counter TARGET TIMEOUT_S CMD...: polls CMD (which prints a number) until it reaches
# TARGET or TIMEOUT_S passes, then lets 0.3 s more pass (for late arrivals) and prints the
# final value.
rsw_wait_counter() {
    local target="$1" timeout="$2" v deadline
    shift 2
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while :; do
        v="$("$@")" || v=-1
        if [ "$v" -ge "$target" ] || [ "$(date +%s%N)" -ge "$deadline" ]; then break; fi
        sleep 0.1
    done
    sleep 0.3
    "$@"
}

# --- readiness ------------------------------------------------------------------------------

# rsw_rocelab_init: what a rocelab real-engine test needs: the four binaries built (else the
# test fails), ROCELAB_BUILD exported, LAB (tools/rocelab) set.
rsw_rocelab_init() {
    : "${ROCESIM:=$BUILD_DIR/app/rocesim/rocesim}"
    : "${ROCEHOST:=$BUILD_DIR/app/rocehost/rocehost}"
    local b
    for b in "$ROCESWD" "$ROCECTL" "$ROCESIM" "$ROCEHOST"; do
        [ -x "$b" ] || { rsw_fail "$b is not built"; rsw_finish; }
    done
    export ROCELAB_BUILD="$BUILD_DIR"
    # shellcheck disable=SC2034  # read by the tests
    LAB="$RSW_REPO/tools/rocelab"
}

# rsw_lab_leftovers TAG OUT: what a rocelab real-engine run (its tag, its --out directory) left
# behind, one line each; nothing when clean: processes (rocehost's file prefix TAG-hosts,
# BIRD's socket in /tmp/TAG.*, roceswd's OUT/configs), network namespaces TAG-<switch>,
# management veths TAGm<i>, the work directory /tmp/TAG.*, DPDK runtime directories.
rsw_lab_leftovers() {
    local pids
    pids="$(pgrep -f -- "$1[-.]|$2/configs" || true)"
    [ -n "$pids" ] && echo "processes: $pids $(ps -o args= -p "${pids//$'\n'/,}" 2>/dev/null | tr '\n' ';')"
    ip netns list | awk '{print $1}' | grep -- "^$1-" | sed 's/^/netns /' || true
    ip -o link show | awk -F': ' '{print $2}' | grep -- "^$1m" | sed 's/^/veth /' || true
    ls -d /tmp/"$1".* /var/run/dpdk/"$1"-* 2>/dev/null || true
}

# rsw_lab_uplinks_used SUMMARY WHY: a check per leaf (leaf0, leaf1) of a rocelab run's
# summary.json that it sent at least 100 packets on each of its two uplinks (to the spines).
rsw_lab_uplinks_used() {
    local leaf up
    for leaf in leaf0 leaf1; do
        up="$("$RSW_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print([p["tx_packets"] for p in d["switches"][sys.argv[2]]["ports"] if p["peer"].startswith("spine")])' "$1" "$leaf")"
        echo "$leaf uplink tx packets (spine0, spine1): $up"
        check "$leaf sent on both uplinks ($2)" "$RSW_PYTHON" -c \
            'import sys; v = eval(sys.argv[1]); sys.exit(not (len(v) == 2 and min(v) >= 100))' "$up"
    done
}

# rsw_wait_listen NS tcp|udp PORT [TIMEOUT_S=10]: waits until a socket in namespace NS listens
# on (TCP) or is bound to (UDP) PORT, as `ss` shows it. Returns 1 (logged) on timeout.
rsw_wait_listen() {
    local ns="$1" proto="$2" port="$3" timeout="${4:-10}" deadline opt
    case "$proto" in
        tcp) opt=-ltnH ;;
        udp) opt=-lunH ;;
        *) rsw_log "rsw_wait_listen: tcp or udp, not '$proto'"; return 1 ;;
    esac
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    until ip netns exec "$ns" ss "$opt" "sport = :$port" 2>/dev/null | grep -q .; do
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "rsw_wait_listen: nothing on $proto port $port in $ns after ${timeout} s"
            return 1
        fi
        sleep 0.05
    done
}

# rsw_capture NS LOG TSHARK_ARGS...: tshark in namespace NS in the background (PID in
# RSW_LAST_PID, its messages in LOG), and waits (up to 30 s: tshark loads its dissectors slowly
# on a busy machine) until it says the capture started. Returns 1 (log tail printed) when it
# does not.
rsw_capture() {
    local ns="$1" log="$2" deadline
    shift 2
    rsw_bg ip netns exec "$ns" tshark "$@" >"$log" 2>&1
    deadline=$(( $(date +%s%N) + 30 * 1000000000 ))
    until grep -qE "Capture started|Capturing on" "$log" 2>/dev/null; do
        if ! rsw_alive "$RSW_LAST_PID" || [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "rsw_capture: tshark did not start capturing; log tail:"
            tail -n 5 "$log" | sed 's/^/  | /' >&2
            return 1
        fi
        sleep 0.05
    done
}

# --- hosts ----------------------------------------------------------------------------------

# make_host NS IFACE MAC V4/LEN V6/LEN GW4 GW6: creates namespace NS (unless it exists), moves
# IFACE (in this namespace) into it and makes it the host's NIC: MAC, addresses (IPv6 without
# DAD), lo up, default routes via GW4 and GW6.
make_host() {
    local ns="$1" ifc="$2" mac="$3" v4="$4" v6="$5" gw4="$6" gw6="$7" i
    if ! ip netns list | awk '{print $1}' | grep -qx -- "$ns"; then
        ip netns add "$ns"
        RSW_NETNS+=("$ns")
    fi
    for i in $(seq 1 50); do
        ip link show dev "$ifc" >/dev/null 2>&1 && break
        sleep 0.1
    done
    if ! ip link show dev "$ifc" >/dev/null 2>&1; then
        rsw_log "make_host: no interface $ifc"
        return 1
    fi
    ip link set dev "$ifc" netns "$ns"
    ip -n "$ns" link set dev lo up
    ip -n "$ns" link set dev "$ifc" address "$mac"
    # No router solicitations or DAD noise; this is a static host.
    ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$ifc.accept_dad=0" "net.ipv6.conf.$ifc.accept_ra=0" \
        "net.ipv6.conf.$ifc.router_solicitations=0" >/dev/null 2>&1 || true
    ip -n "$ns" link set dev "$ifc" up
    ip -n "$ns" addr add "$v4" dev "$ifc"
    ip -n "$ns" -6 addr add "$v6" dev "$ifc" nodad
    ip -n "$ns" route add default via "$gw4" dev "$ifc"
    ip -n "$ns" -6 route add default via "$gw6" dev "$ifc"
}

# make_veth NAME PEER: a veth pair in this namespace (both ends up), deleted on cleanup. For
# AF_XDP ports: NAME stays here for roceswd, PEER becomes a host's NIC (make_host). The peer's
# TX checksum offload is turned off: the kernel leaves TCP/UDP checksums unfinished on a veth
# (CHECKSUM_PARTIAL), AF_XDP hands the frame on as it is, and the far host drops it
# (doc/ports.md, "veth"). QUEUES (default 1) gives both ends that many RX and TX queues: veth
# hands a frame to the peer's RX queue with the number of the TX queue the sender's stack
# picked (a hash of the flow), so several flows spread over the queues.
make_veth() {
    local name="$1" peer="$2" q="${3:-1}"
    ip link add "$name" numrxqueues "$q" numtxqueues "$q" type veth peer name "$peer" \
        numrxqueues "$q" numtxqueues "$q"
    RSW_LINKS+=("$name")
    ethtool -K "$peer" tx off >/dev/null
    ip link set dev "$name" up
    ip link set dev "$peer" up
}

# rsw_pfc_frames DIR SRC_MAC PRIORITY NAME=QUANTA...: writes one PFC frame (802.1Qbb, to
# 01:80:c2:00:00:01, only PRIORITY enabled, pause time QUANTA; 0 is XON) per NAME to
# DIR/pfc-NAME.bin, built by scapy (an encoder independent of the switch) in one run. Send them
# with a raw socket: that takes milliseconds, scapy's start-up a second.
rsw_pfc_frames() {
    "$RSW_PYTHON" - "$@" <<'PY'
import sys
from scapy.all import Ether, raw
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
out, src, prio = sys.argv[1], sys.argv[2], int(sys.argv[3])
for arg in sys.argv[4:]:
    name, quanta = arg.split("=")
    fields = {"c%d_enabled" % prio: 1, "c%d_pause_time" % prio: int(quanta, 0)}
    open("%s/pfc-%s.bin" % (out, name), "wb").write(raw(
        Ether(src=src, dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(**fields)))
PY
}

# rsw_require_root TOOL...: the start of a test that needs root (namespaces, TAP devices): SKIP
# (exit RSW_SKIP) without root, FAIL when a TOOL is not installed (tools/bootstrap installs them).
rsw_require_root() {
    local tool
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP $(basename "$0"): needs root (network namespaces, TAP devices)"
        exit "$RSW_SKIP"
    fi
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (tools/bootstrap)"; exit 1; }
    done
}

# rsw_require_af_xdp TOOL...: the start of an AF_XDP test. SKIP (exit RSW_SKIP) without root or
# without the kernel's AF_XDP sockets (CONFIG_XDP_SOCKETS) - the only reasons such a test skips;
# FAIL when a TOOL is not installed (tools/bootstrap installs them).
rsw_require_af_xdp() {
    local name tool
    name="$(basename "$0")"
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP $name: needs root (network namespaces, veth, XDP)"
        exit "$RSW_SKIP"
    fi
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (tools/bootstrap)"; exit 1; }
    done
    if ! "$RSW_PYTHON" -c 'import socket; socket.socket(44, socket.SOCK_RAW).close()' 2>/dev/null; then
        echo "SKIP $name: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)"
        exit "$RSW_SKIP"
    fi
}

# The exit status a test uses to say SKIP (run_all.sh counts it apart): print the reason first.
# shellcheck disable=SC2034  # read by tests
RSW_SKIP=77

# --- checks ---------------------------------------------------------------------------------

rsw_pass() { RSW_PASSES=$((RSW_PASSES + 1)); printf 'PASS  %s\n' "$*"; }
rsw_fail() { RSW_FAILS=$((RSW_FAILS + 1)); printf 'FAIL  %s\n' "$*"; }

# rsw_report_checks FILE WHAT: the checks a script wrote to FILE, one a line, "ok <what>" or
# "FAIL <what>" (other lines printed as they are), as PASS/FAIL; FAIL "WHAT could be read" when
# FILE is empty or missing.
rsw_report_checks() {
    local line
    [ -s "$1" ] || { rsw_fail "$2 could be read"; return 0; }
    while IFS= read -r line; do
        case "$line" in
            "ok "*) rsw_pass "${line#ok }" ;;
            "FAIL "*) rsw_fail "${line#FAIL }" ;;
            *) printf '%s\n' "$line" ;;
        esac
    done < "$1"
}

# check DESCRIPTION CMD...: runs CMD (output to the run's log unless RSW_VERBOSE=1), PASS on
# status 0.
check() {
    local desc="$1" out rc=0
    shift
    out="$("$@" 2>&1)" || rc=$?
    if [ "${RSW_VERBOSE:-0}" = 1 ]; then printf '%s\n' "$out" | sed 's/^/    /'; fi
    if [ "$rc" -eq 0 ]; then
        rsw_pass "$desc"
    else
        rsw_fail "$desc (exit $rc)"
        printf '%s\n' "$out" | tail -n 8 | sed 's/^/    | /'
    fi
}

# check_fails DESCRIPTION CMD...: PASS when CMD fails.
check_fails() {
    local desc="$1" out rc=0
    shift
    out="$("$@" 2>&1)" || rc=$?
    if [ "$rc" -ne 0 ]; then
        rsw_pass "$desc"
    else
        rsw_fail "$desc (succeeded, expected failure)"
        printf '%s\n' "$out" | tail -n 8 | sed 's/^/    | /'
    fi
}

# rsw_ping_ok PING_COMMAND...: runs a ping command (any prefix: `ip netns exec NS ping -c 5
# ...`) and succeeds only when every echo got its reply: "N packets transmitted, N received"
# with N the -c count. ping itself exits 0 on any reply, so `check ... ping` would pass with 4
# of 5 lost. Use as `check "DESC" rsw_ping_ok CMD...`.
rsw_ping_ok() {
    local out rc=0 count="" a prev="" tx rx
    for a in "$@"; do
        [ "$prev" = -c ] && count="$a"
        prev="$a"
    done
    out="$("$@" 2>&1)" || rc=$?
    printf '%s\n' "$out"
    read -r tx rx < <(printf '%s\n' "$out" |
        sed -n 's/^\([0-9][0-9]*\) packets transmitted, \([0-9][0-9]*\) \(packets \)\{0,1\}received.*/\1 \2/p')
    if [ -z "${tx:-}" ]; then
        echo "rsw_ping_ok: no ping summary (exit $rc)"
        return 1
    fi
    if [ -n "$count" ] && [ "$tx" != "$count" ]; then
        echo "rsw_ping_ok: $tx echoes sent, -c $count asked"
        return 1
    fi
    if [ "$rx" != "$tx" ]; then
        echo "rsw_ping_ok: $rx of $tx replies"
        return 1
    fi
}

# check_eq DESCRIPTION ACTUAL EXPECTED
check_eq() {
    if [ "$2" = "$3" ]; then rsw_pass "$1 ($2)"; else rsw_fail "$1: got '$2', expected '$3'"; fi
}

# check_ge DESCRIPTION ACTUAL MINIMUM (integers)
check_ge() {
    if [[ "$2" =~ ^-?[0-9]+$ ]] && [ "$2" -ge "$3" ]; then
        rsw_pass "$1 ($2 >= $3)"
    else
        rsw_fail "$1: got '$2', expected >= $3"
    fi
}

# Prints the summary and exits 0 when every check passed, 1 otherwise - also when no check ran:
# a test that checked nothing did not pass.
rsw_finish() {
    local name
    name="$(basename "$0")"
    if [ "$RSW_FAILS" -eq 0 ] && [ "$RSW_PASSES" -eq 0 ]; then
        printf '%s: FAIL (no check ran)\n' "$name"
        exit 1
    fi
    if [ "$RSW_FAILS" -eq 0 ]; then
        printf '%s: PASS (%d checks)\n' "$name" "$RSW_PASSES"
        exit 0
    fi
    printf '%s: FAIL (%d of %d checks failed)\n' "$name" "$RSW_FAILS" $((RSW_FAILS + RSW_PASSES))
    exit 1
}

# --- cleanup --------------------------------------------------------------------------------

# Kills the processes started here (by PID), deletes the namespaces created here, removes the
# temp dirs. Idempotent; never fails.
cleanup() {
    local rc=$? pid ns d i
    [ "$RSW_CLEANED" = 1 ] && return "$rc"
    RSW_CLEANED=1
    set +e
    # The switch first: its TAPs disappear with it.
    if [ -n "$RSW_SWITCH_PID" ]; then
        rsw_kill "$RSW_SWITCH_PID" 10
        RSW_SWITCH_PID=""
    fi
    for (( i = ${#RSW_PIDS[@]} - 1; i >= 0; i-- )); do
        pid="${RSW_PIDS[$i]}"
        rsw_kill "$pid" 3
    done
    for d in "${RSW_LINKS[@]}"; do
        ip link del "$d" 2>/dev/null
    done
    for ns in "${RSW_NETNS[@]}"; do
        ip netns del "$ns" 2>/dev/null
    done
    # Every EAL runtime dir of this run: the switch's (<tag>) and those a test named after it
    # (<tag><suffix>: rocehost, further switches). Tags have a fixed length, so <tag>* is this
    # run's only.
    if [ -n "$RSW_TAG" ] && [ "${RSW_KEEP:-0}" != 1 ]; then
        rm -rf -- "/var/run/dpdk/$RSW_TAG" "/var/run/dpdk/$RSW_TAG"*
    fi
    if [ -n "$RSW_SWITCH_SOCKET" ] && [ -S "$RSW_SWITCH_SOCKET" ] && [ "${RSW_KEEP:-0}" != 1 ]; then
        case "$RSW_SWITCH_SOCKET" in /tmp/rsw*) rm -f "$RSW_SWITCH_SOCKET" ;; esac
    fi
    for d in "${RSW_TMPDIRS[@]}"; do
        if [ "${RSW_KEEP:-0}" = 1 ]; then
            rsw_log "keeping $d (RSW_KEEP=1)"
        else
            case "$d" in /tmp/rsw*) rm -rf -- "$d" ;; esac
        fi
    done
    return "$rc"
}

# --- readings for long runs (tools/soak) ----------------------------------------------------

# rsw_accounting_verdict [SOCKET=$RSW_SWITCH_SOCKET] [TIMEOUT_S=5]: the accounting verdict of
# `rocectl show accounting` ("balanced" or "unbalanced: ..."), read again every 0.2 s until it
# is balanced or TIMEOUT_S passed (a burst in flight shows for an instant, doc/accounting.md);
# "no answer" when rocectl fails. rsw_assert_accounting is the check with the terms.
rsw_accounting_verdict() {
    local sock="${1:-$RSW_SWITCH_SOCKET}" timeout="${2:-5}" deadline v
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while :; do
        v="$("$ROCECTL" --socket "$sock" --json show accounting 2>/dev/null |
            "$RSW_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["verdict"])' 2>/dev/null)" ||
            v="no answer"
        [ -n "$v" ] || v="no answer"
        case "$v" in balanced) break ;; esac
        [ "$(date +%s%N)" -ge "$deadline" ] && break
        sleep 0.2
    done
    printf '%s\n' "$v"
}

# rsw_mbufs_in_use [SOCKET=$RSW_SWITCH_SOCKET] [READS=1]: mbufs out of the switch's packet pool
# (`rocectl show info`: mbufs.in_use), the least of READS readings 0.1 s apart: a frame the
# switch is handling at the instant of one reading (a BGP keepalive, an ARP) does not count.
rsw_mbufs_in_use() {
    local sock="${1:-$RSW_SWITCH_SOCKET}" reads="${2:-1}" i v min=""
    for (( i = 0; i < reads; i++ )); do
        [ "$i" -eq 0 ] || sleep 0.1
        v="$("$ROCECTL" --socket "$sock" --json show info |
            "$RSW_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["mbufs"]["in_use"])')" ||
            return 1
        if [ -z "$min" ] || [ "$v" -lt "$min" ]; then min="$v"; fi
    done
    printf '%s\n' "$min"
}
