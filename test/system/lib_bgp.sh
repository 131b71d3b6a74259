# shellcheck shell=bash
# Helpers for the control-plane system tests (test_bgp.sh, test_bgp_churn.sh, test_copp.sh):
# roceswd in its own network namespace with host interfaces, BIRD 2 in that namespace and in a
# router namespace, hosts behind both. Source after lib.sh:
#
#   source "$(dirname "$0")/lib.sh"
#   source "$(dirname "$0")/lib_bgp.sh"
#   rsw_init
#   bgp_need_tools || rsw_finish
#   bgp_start_switch "$cfg" "$log" p0 p1 p2     # roceswd in netns <tag>-sw (or the kernel, below)
#   bgp_attach p0 "$(rsw_ns h1)"                 # the port's peer interface into a namespace
#   bgp_start_bird "$(rsw_ns sw)" "$conf" "$sock" "$log"
#
# Two modes:
#   default                   roceswd (ROCESWD, built with the control plane) runs in netns
#                             <tag>-sw with `control_plane: {host_interfaces: true, netlink: true}`;
#                             each port is a net_tap whose interface (<tag>pN) is moved into the
#                             peer namespace; roceswd creates the host interfaces pN in <tag>-sw.
#   BGP_LAB_PORTS=af_packet   roceswd mode with net_af_packet ports on veth pairs instead of
#                             net_tap: the switch's end <tag>xpN stays in <tag>-sw, the peer's
#                             end <tag>pN is moved as the TAP would be. A veth outlives roceswd,
#                             so after a kill -9 the peers keep their interfaces (the TAPs would
#                             vanish with the process): test_fault_bgp_restart.sh.
#   RSW_BGP_KERNEL_SWITCH=1   no roceswd: the Linux kernel of <tag>-sw plays the switch, with
#                             veth pairs pN (in <tag>-sw) <-> <tag>pN (moved to the peer). Runs
#                             the same BIRD, topology and traffic checks; the checks that need
#                             rocectl print SKIP. It separates BIRD/namespace/test problems
#                             from switch problems (a dry run of the test itself).
#
# Every process is started with rsw_bg (killed by PID on cleanup); every namespace is recorded
# in RSW_NETNS (deleted on cleanup).

RSW_BGP_KERNEL="${RSW_BGP_KERNEL_SWITCH:-0}"
RSW_SW_NS=""          # the switch's namespace
RSW_BIRD_PIDS=()      # BIRD daemons started by bgp_start_bird
# The protocol of the routes the switch namespace's daemon puts in the kernel: "bird" (BIRD's
# kernel protocol) or "bgp" (FRR's zebra); what bgp_kernel_routes and the comparisons read.
: "${BGP_KERNEL_PROTO:=bird}"

# bgp_need_tools: FAIL line and status 1 when bird/birdc/ip are missing.
bgp_need_tools() {
    local t
    for t in ip bird birdc; do
        if ! command -v "$t" >/dev/null 2>&1; then
            rsw_fail "$t is not installed (tools/bootstrap installs bird2)"
            return 1
        fi
    done
    return 0
}

# bgp_ns NS: creates namespace NS unless it exists (recorded for cleanup), lo up. Not in a
# subshell: it records the namespace in RSW_NETNS.
bgp_ns() {
    local ns="$1"
    if ! ip netns list | awk '{print $1}' | grep -qx -- "$ns"; then
        ip netns add "$ns"
        RSW_NETNS+=("$ns")
    fi
    ip -n "$ns" link set dev lo up
}

# bgp_start_switch CONFIG LOG PORT...: the switch namespace <tag>-sw and the switch in it
# (<tag>-$BGP_SW_NAME when BGP_SW_NAME is set: several switches, see bgp_switch_save).
# roceswd mode: roceswd --config CONFIG in the namespace (through a wrapper that execs
# `ip netns exec`, so RSW_SWITCH_PID is roceswd's own PID), waits for "running", then for the
# host interfaces PORT... in the namespace. Kernel mode: veth pairs PORT <-> <tag>PORT,
# forwarding on, L4 multipath hashing. Returns 1 on failure (log tail printed).
bgp_start_switch() {
    local config="$1" log="$2" p wrapper
    shift 2
    RSW_SW_NS="$(rsw_ns "${BGP_SW_NAME:-sw}")"
    bgp_ns "$RSW_SW_NS"
    if [ "$RSW_BGP_KERNEL" = 1 ]; then
        for p in "$@"; do
            ip link add "$p" netns "$RSW_SW_NS" type veth peer name "$(rsw_ifname "$p")" \
                netns "$RSW_SW_NS"
            ip -n "$RSW_SW_NS" link set dev "$p" up
        done
        # The port addresses from the config (ipv4 lists of the ports, in order).
        bgp_kernel_addresses "$config" "$@"
        ip netns exec "$RSW_SW_NS" sysctl -qw net.ipv4.ip_forward=1 \
            net.ipv4.fib_multipath_hash_policy=1 net.ipv4.conf.all.rp_filter=0 \
            net.ipv6.conf.all.forwarding=1 >/dev/null
        : >"$log"
        return 0
    fi
    [ "${BGP_LAB_PORTS:-tap}" != af_packet ] || bgp_switch_veths "$@"
    wrapper="$RSW_TMP/roceswd-in-ns"
    printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$RSW_SW_NS" "$ROCESWD" >"$wrapper"
    chmod +x "$wrapper"
    if [ ! -x "$ROCESWD" ]; then
        rsw_log "bgp_start_switch: $ROCESWD is not executable (build with: ninja -C $BUILD_DIR)"
        return 1
    fi
    local real="$ROCESWD"
    ROCESWD="$wrapper"
    if ! start_switch "$config" "$log" 30; then
        ROCESWD="$real"
        return 1
    fi
    ROCESWD="$real"
    ip netns exec "$RSW_SW_NS" sysctl -qw net.ipv4.conf.all.rp_filter=0 >/dev/null 2>&1 || true
    for p in "$@"; do
        for _ in $(seq 1 50); do
            ip -n "$RSW_SW_NS" link show dev "$p" >/dev/null 2>&1 && break
            sleep 0.1
        done
        if ! ip -n "$RSW_SW_NS" link show dev "$p" >/dev/null 2>&1; then
            rsw_log "bgp_start_switch: no host interface $p in $RSW_SW_NS; interfaces there:"
            ip -n "$RSW_SW_NS" -br link >&2
            return 1
        fi
    done
    return 0
}

# bgp_port_device N PORT: the device string of switch port PORT (the N-th DPDK vdev of its kind):
# net_tapN,iface=<tag>PORT, or with BGP_LAB_PORTS=af_packet net_af_packetN on the switch's end
# of PORT's veth pair (bgp_switch_veths).
bgp_port_device() {
    if [ "${BGP_LAB_PORTS:-tap}" = af_packet ]; then
        printf 'net_af_packet%s,iface=%s\n' "$1" "$(rsw_ifname "x$2")"
    else
        printf 'net_tap%s,iface=%s\n' "$1" "$(rsw_ifname "$2")"
    fi
}

# bgp_switch_veths PORT...: for BGP_LAB_PORTS=af_packet, a veth pair per port in the switch's
# namespace, unless it exists (a restarted roceswd finds its veths): <tag>xPORT for roceswd's
# net_af_packet, <tag>PORT for the peer (bgp_attach moves it; TX checksum offload off, see
# make_veth). The switch's ends are ports of a bridge that stays down, so the namespace's
# kernel, which holds the switch's addresses on the host interfaces, drops what arrives on
# them (a bridge port's frames go to its bridge after AF_PACKET has its copy) instead of
# answering ARP or taking BGP segments a second time; no IPv6 on them.
bgp_switch_veths() {
    local p sw peer br
    br="$(rsw_ifname xbr)"
    ip -n "$RSW_SW_NS" link show dev "$br" >/dev/null 2>&1 ||
        ip -n "$RSW_SW_NS" link add "$br" type bridge
    for p in "$@"; do
        sw="$(rsw_ifname "x$p")"; peer="$(rsw_ifname "$p")"
        ip -n "$RSW_SW_NS" link show dev "$sw" >/dev/null 2>&1 && continue
        ip -n "$RSW_SW_NS" link add "$sw" type veth peer name "$peer"
        ip netns exec "$RSW_SW_NS" sysctl -qw "net.ipv6.conf.$sw.disable_ipv6=1" >/dev/null
        ip netns exec "$RSW_SW_NS" ethtool -K "$peer" tx off >/dev/null
        ip -n "$RSW_SW_NS" link set dev "$sw" master "$br"
        ip -n "$RSW_SW_NS" link set dev "$sw" up
    done
}

# Several switches in one test. bgp_switch_save NAME records the current switch (the one
# bgp_start_switch started last: namespace, PID, control socket, log) under NAME; every
# switch's process is in RSW_PIDS, so cleanup ends it whichever is current. bgp_switch_use
# NAME makes a recorded switch current again, for rsw_ctl, bgp_route_paths,
# bgp_switch_learned, bgp_drops, stop_switch, ... (stop_switch then clears its PID).
declare -gA BGP_SWITCHES=()
bgp_switch_save() {
    BGP_SWITCHES[$1]="$RSW_SW_NS|$RSW_SWITCH_PID|$RSW_SWITCH_SOCKET|$RSW_SWITCH_LOG"
}
bgp_switch_use() {
    local cur
    if [ -z "${BGP_SWITCHES[$1]+x}" ]; then
        rsw_log "bgp_switch_use: no switch saved as '$1'"
        return 1
    fi
    # Keep the current one's state (a PID cleared by stop_switch stays cleared).
    for cur in "${!BGP_SWITCHES[@]}"; do
        if [ "${BGP_SWITCHES[$cur]%%|*}" = "$RSW_SW_NS" ]; then
            BGP_SWITCHES[$cur]="$RSW_SW_NS|$RSW_SWITCH_PID|$RSW_SWITCH_SOCKET|$RSW_SWITCH_LOG"
        fi
    done
    IFS='|' read -r RSW_SW_NS RSW_SWITCH_PID RSW_SWITCH_SOCKET RSW_SWITCH_LOG <<<"${BGP_SWITCHES[$1]}"
}

# Kernel mode: gives the veths pN in the switch namespace the ipv4 and ipv6 addresses of the
# ports of the same name in CONFIG (a switch.yaml written by the tests: "- name: pN" then
# "ipv4: [..]", "ipv6: [..]").
bgp_kernel_addresses() {
    local config="$1" p a
    shift
    for p in "$@"; do
        for a in $("$RSW_PYTHON" - "$config" "$p" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'-\s*name:\s*%s\s*\n(.*?)(?=\n\s*-\s*name:|\n\S|\Z)' % re.escape(sys.argv[2]), text, re.S)
if m:
    for fam in ("ipv4", "ipv6"):
        v = re.search(fam + r':\s*\[([^\]]*)\]', m.group(1))
        if v:
            print(" ".join(x.strip().strip('"') for x in v.group(1).split(",") if x.strip()))
EOF
        ); do
            case "$a" in
                *:*) ip -n "$RSW_SW_NS" -6 addr add "$a" dev "$p" nodad ;;
                *) ip -n "$RSW_SW_NS" addr add "$a" dev "$p" ;;
            esac
        done
    done
}

# bgp_attach PORT NS: moves the peer end of switch port PORT (<tag>PORT, in the switch's
# namespace) into namespace NS (created if needed), link up.
bgp_attach() {
    local port="$1" ns="$2" ifc
    ifc="$(rsw_ifname "$port")"
    bgp_ns "$ns"
    for _ in $(seq 1 50); do
        ip -n "$RSW_SW_NS" link show dev "$ifc" >/dev/null 2>&1 && break
        sleep 0.1
    done
    ip -n "$RSW_SW_NS" link set dev "$ifc" netns "$ns"
    ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$ifc.accept_dad=0" "net.ipv6.conf.$ifc.accept_ra=0" \
        "net.ipv6.conf.$ifc.router_solicitations=0" >/dev/null 2>&1 || true
    ip -n "$ns" link set dev "$ifc" up
}

# bgp_redo_dad NS: gives back the IPv6 link-local addresses that failed duplicate address
# detection in NS (the switch's namespace). A net_tap port's peer interface has the port's MAC
# (and so the same EUI-64 link-local) until bgp_host changes it; the host interface's DAD, run
# while roceswd starts, sees the peer's probe for the same address and marks its own
# "dadfailed". That is the lab's doing (a real peer has its own MAC), so once the peers have
# their own MACs the address is added again, without a second DAD. FRR needs it (IPv6 sessions
# wait for a link-local address on the interface to use as next hop); BIRD does not.
bgp_redo_dad() {
    local ns="$1" ifc addr
    while read -r ifc addr; do
        [ -n "$addr" ] || continue
        ip -n "$ns" -6 addr del "$addr" dev "$ifc"
        ip -n "$ns" -6 addr add "$addr" dev "$ifc" nodad
    done < <(ip -n "$ns" -j -6 addr show | "$RSW_PYTHON" -c '
import json, sys
for l in json.load(sys.stdin):
    for a in l.get("addr_info", []):
        if a.get("scope") == "link" and a.get("dadfailed"):
            print(l["ifname"], "%s/%d" % (a["local"], a["prefixlen"]))
')
}

# bgp_host NS IFACE MAC V4/LEN GW4: host addressing on an attached interface.
bgp_host() {
    local ns="$1" ifc="$2" mac="$3" v4="$4" gw="$5"
    ip -n "$ns" link set dev "$ifc" down
    ip -n "$ns" link set dev "$ifc" address "$mac"
    ip -n "$ns" link set dev "$ifc" up
    ip -n "$ns" addr add "$v4" dev "$ifc"
    [ -z "$gw" ] || ip -n "$ns" route add default via "$gw" dev "$ifc"
}

# --- BIRD -----------------------------------------------------------------------------------

# bgp_start_bird NS CONFIG SOCKET LOG [ARG...]: BIRD in the foreground (logs to LOG, appended)
# in NS, with its own control socket and ARGs (e.g. -R: graceful restart recovery); waits for
# the socket. PID recorded for cleanup (and in BGP_BIRD_PID).
BGP_BIRD_PID=""
bgp_start_bird() {
    local ns="$1" conf="$2" sock="$3" log="$4"
    shift 4
    if ! bird -p -c "$conf" 2>"$log.parse"; then
        rsw_log "bgp_start_bird: $conf does not parse:"
        sed 's/^/  | /' "$log.parse" >&2
        return 1
    fi
    rsw_bg ip netns exec "$ns" bird -f -c "$conf" -s "$sock" -P "$sock.pid" "$@" >>"$log" 2>&1
    RSW_BIRD_PIDS+=("$RSW_LAST_PID")
    BGP_BIRD_PID="$RSW_LAST_PID"
    for _ in $(seq 1 50); do
        [ -S "$sock" ] && birdc -s "$sock" show status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    rsw_log "bgp_start_bird: no control socket $sock; log tail:"
    tail -n 10 "$log" | sed 's/^/  | /' >&2
    return 1
}

# bgp_state SOCKET PROTOCOL: the BGP state word (Established, Connect, Active, ...) or "none".
bgp_state() {
    birdc -s "$1" show protocols "$2" 2>/dev/null | awk -v p="$2" '$1 == p { print ($6 == "" ? $4 : $6); f = 1 } END { if (!f) print "none" }'
}

# bgp_wait_established TIMEOUT_S SOCKET PROTOCOL...: waits until every PROTOCOL is
# Established. Prints the seconds it took (3 decimals); status 1 on timeout.
bgp_wait_established() {
    local timeout="$1" sock="$2"
    shift 2
    bgp_wait_all_established "$timeout" "bgp_state $sock" "$@"
}

# bgp_wait_all_established TIMEOUT_S "STATE_CMD ARG" PEER...: waits until `STATE_CMD ARG PEER`
# prints Established for every PEER (BIRD's bgp_state, FRR's bgp_frr_state). Prints the seconds
# it took (3 decimals); status 1 on timeout.
bgp_wait_all_established() {
    local timeout="$1" t0 deadline p ok
    local -a state
    read -r -a state <<<"$2"
    shift 2
    t0=$(date +%s%N)
    deadline=$(( t0 + timeout * 1000000000 ))
    while :; do
        ok=1
        for p in "$@"; do
            [ "$("${state[@]}" "$p")" = Established ] || { ok=0; break; }
        done
        if [ "$ok" = 1 ]; then bgp_elapsed "$t0"; return 0; fi
        if [ "$(date +%s%N)" -ge "$deadline" ]; then bgp_elapsed "$t0"; return 1; fi
        sleep 0.05
    done
}

# bgp_elapsed T0_NS: seconds since T0 (from date +%s%N), 3 decimals.
bgp_elapsed() {
    awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}

# bgp_birdc SOCKET ARGS...: birdc, output discarded unless it reports an error.
bgp_birdc() {
    local sock="$1" out
    shift
    out="$(birdc -s "$sock" "$@" 2>&1)" || { rsw_log "birdc $*: $out"; return 1; }
    if printf '%s\n' "$out" | grep -qiE 'error|syntax|unknown'; then
        rsw_log "birdc $*: $out"
        return 1
    fi
    return 0
}

# --- FRR ------------------------------------------------------------------------------------
#
# FRR's zebra and bgpd started by hand in a namespace (no watchfrr, no frr.service, nothing
# under /etc/frr or /run/frr): each run has its own directory holding the config, the pid files,
# the zebra API socket and the vty sockets, so a packaged FRR in the root namespace (Debian's
# frr.service; tools/bootstrap disables it) and other tests' FRRs are never touched. The
# daemons run as user frr (FRR's default; the directory is given to it).
BGP_FRR_DIR=/usr/lib/frr

# bgp_need_frr: FAIL line and status 1 when FRR (zebra, bgpd, staticd, vtysh, user frr) is missing.
bgp_need_frr() {
    local t
    for t in "$BGP_FRR_DIR/zebra" "$BGP_FRR_DIR/bgpd" "$BGP_FRR_DIR/staticd" "$(command -v vtysh || echo vtysh)"; do
        if [ ! -x "$t" ]; then
            rsw_fail "$t is not installed (tools/bootstrap installs frr)"
            return 1
        fi
    done
    if ! id frr >/dev/null 2>&1; then
        rsw_fail "no user frr (the frr package creates it; tools/bootstrap installs frr)"
        return 1
    fi
}

# bgp_start_frr NS CONFIG DIR [DAEMON...]: zebra then the DAEMONs [bgpd] in namespace NS (PIDs
# recorded for cleanup), their files in DIR (a new directory, given to user frr), logs
# DIR/<daemon>.log; then applies CONFIG (an integrated frr.conf) through vtysh, as `vtysh -b`
# does at boot, after a dry run of it (`vtysh -C`). Status 1 (logged) when a step fails.
bgp_start_frr() {
    local ns="$1" conf="$2" dir="$3" d out
    shift 3
    local daemons=(zebra "${@:-bgpd}")
    if ! out="$(vtysh -C -f "$conf" 2>&1)"; then
        rsw_log "bgp_start_frr: $conf does not pass vtysh's dry run: $out"
        return 1
    fi
    : >"$dir/empty.conf"
    chown -R frr:frr "$dir"
    chmod 755 "$dir"
    for d in "${daemons[@]}"; do
        rsw_bg ip netns exec "$ns" "$BGP_FRR_DIR/$d" -f "$dir/empty.conf" -i "$dir/$d.pid" \
            -z "$dir/zserv.api" --vty_socket "$dir" -P 0 --log "file:$dir/$d.log" \
            >"$dir/$d.out" 2>&1
        if [ "$d" = zebra ]; then
            bgp_wait_socket "$dir/zserv.api" "$RSW_LAST_PID" || { tail -n 5 "$dir/$d.out" "$dir/$d.log" >&2; return 1; }
        fi
        bgp_wait_socket "$dir/$d.vty" "$RSW_LAST_PID" || { tail -n 5 "$dir/$d.out" "$dir/$d.log" >&2; return 1; }
    done
    if ! out="$(vtysh --vty_socket "$dir" -f "$conf" 2>&1)"; then
        rsw_log "bgp_start_frr: vtysh -f $conf: $out"
        return 1
    fi
}

# bgp_wait_socket PATH PID [TIMEOUT_S=10]: waits until the Unix socket PATH exists while PID
# runs. Status 1 (logged) when PID exits or the time runs out.
bgp_wait_socket() {
    local path="$1" pid="$2" timeout="${3:-10}" deadline
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    until [ -S "$path" ]; do
        if ! rsw_alive "$pid" || [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "bgp_wait_socket: no socket $path (pid $pid $(rsw_alive "$pid" && echo running || echo exited))"
            return 1
        fi
        sleep 0.05
    done
}

# bgp_frr_state DIR NEIGHBOUR: the BGP state of FRR's session to NEIGHBOUR (Established,
# Active, Connect, ...) or "none".
bgp_frr_state() {
    vtysh --vty_socket "$1" -c "show bgp neighbors $2 json" 2>/dev/null | "$RSW_PYTHON" -c '
import json, sys
try:
    print(json.load(sys.stdin).get(sys.argv[1], {}).get("bgpState", "none"))
except ValueError:
    print("none")
' "$2"
}

# bgp_frr_wait_established TIMEOUT_S DIR NEIGHBOUR...: waits until FRR's sessions to every
# NEIGHBOUR are Established; prints the seconds it took; status 1 on timeout.
bgp_frr_wait_established() {
    local timeout="$1" dir="$2"
    shift 2
    bgp_wait_all_established "$timeout" "bgp_frr_state $dir" "$@"
}

# --- the switch's view ----------------------------------------------------------------------

# bgp_have_ctl: true when rocectl readings are possible (roceswd mode).
bgp_have_ctl() { [ "$RSW_BGP_KERNEL" != 1 ]; }

# bgp_kernel_routes: prefixes of the switch namespace's kernel main table installed by BIRD
# (proto $BGP_KERNEL_PROTO: bird), one a line, sorted, host routes with /32 or /128.
bgp_kernel_routes() {
    { ip -n "$RSW_SW_NS" -j -4 route show proto "$BGP_KERNEL_PROTO"; echo; ip -n "$RSW_SW_NS" -j -6 route show proto "$BGP_KERNEL_PROTO"; } |
        "$RSW_PYTHON" -c '
import json, sys
out = set()
for chunk in sys.stdin.read().split("\n"):
    chunk = chunk.strip()
    if not chunk:
        continue
    for r in json.loads(chunk):
        d = r["dst"]
        if d == "default":
            d = "0.0.0.0/0" if "." in r.get("gateway", "0.0.0.0") else "::/0"
        if "/" not in d:
            d += "/128" if ":" in d else "/32"
        out.add(d)
for p in sorted(out):
    print(p)
'
}

# Route types rocectl gives to routes not learned from the kernel's routing daemon.
BGP_NOT_LEARNED='connected local neighbour static'

# bgp_switch_learned: prefixes roceswd installed from the kernel's routes (rocectl route type
# other than connected/local/neighbour/static), sorted. Kernel mode: bgp_kernel_routes.
bgp_switch_learned() {
    if ! bgp_have_ctl; then bgp_kernel_routes; return; fi
    rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
skip = set(sys.argv[1].split())
d = json.load(sys.stdin)
for p in sorted(r["prefix"] for r in d["routes"] if r.get("type") not in skip):
    print(p)
' "$BGP_NOT_LEARNED"
}

# bgp_route_paths PREFIX: how many paths the switch forwards PREFIX over: 0 (no route), 1, or
# the member count of its ECMP group (rocectl show routes + show lb; kernel mode: ip route).
bgp_route_paths() {
    if ! bgp_have_ctl; then
        local fam=-4
        case "$1" in *:*) fam=-6 ;; esac
        ip -n "$RSW_SW_NS" -j "$fam" route show "$1" | "$RSW_PYTHON" -c '
import json, sys
rs = json.load(sys.stdin)
print(0 if not rs else len(rs[0].get("nexthops", [])) or 1)
'
        return
    fi
    # Through files: a FIB of thousands of routes is too long for an argument.
    rsw_ctl --json show routes >"$RSW_TMP/paths-routes.json" || return 1
    rsw_ctl --json show lb >"$RSW_TMP/paths-lb.json" || return 1
    "$RSW_PYTHON" - "$1" "$RSW_TMP/paths-routes.json" "$RSW_TMP/paths-lb.json" <<'EOF'
import json, sys
prefix, routes, lb = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
rs = [r for r in routes["routes"] if r["prefix"] == prefix]
if not rs:
    print(0); sys.exit()
nh = rs[0].get("nexthop") or {}
if nh.get("kind") != "ecmp_group":
    print(1 if nh.get("kind") in ("forward", "glean", "unresolved") else 0); sys.exit()
groups = lb.get("groups", [])
g = [g for g in groups if g.get("prefix") == prefix]
if not g:  # the group may be named by id only ("port": "group N")
    gid = str(nh.get("port", "")).replace("group", "").strip()
    g = [g for g in groups if str(g.get("id")) == gid]
print(sum(1 for m in g[0]["members"] if m.get("alive", True)) if g else -1)
EOF
}

# bgp_wait_paths TARGET TIMEOUT_S PREFIX: waits until bgp_route_paths PREFIX equals TARGET;
# prints the seconds it took; status 1 on timeout.
bgp_wait_paths() {
    local target="$1" timeout="$2" prefix="$3" t0 deadline
    t0=$(date +%s%N)
    deadline=$(( t0 + timeout * 1000000000 ))
    while [ "$(bgp_route_paths "$prefix" 2>/dev/null || echo -1)" != "$target" ]; do
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            bgp_elapsed "$t0"
            return 1
        fi
        sleep 0.02
    done
    bgp_elapsed "$t0"
}

# bgp_route_count: IPv4 + IPv6 routes in the switch's FIB (rocectl counts; kernel mode: the
# main table of the switch namespace).
bgp_route_count() {
    if ! bgp_have_ctl; then
        { ip -n "$RSW_SW_NS" -j -4 route show; echo; ip -n "$RSW_SW_NS" -j -6 route show; } |
            "$RSW_PYTHON" -c '
import json, sys
print(sum(len(json.loads(c)) for c in sys.stdin.read().split("\n") if c.strip()))
'
        return
    fi
    rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
c = json.load(sys.stdin)["counts"]
print(int(c.get("ipv4", 0)) + int(c.get("ipv6", 0)))
'
}

# bgp_group_count: ECMP groups in `rocectl show lb` (kernel mode: multipath routes).
bgp_group_count() {
    if ! bgp_have_ctl; then
        ip -n "$RSW_SW_NS" -j route show proto "$BGP_KERNEL_PROTO" | "$RSW_PYTHON" -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin) if r.get("nexthops")))
'
        return
    fi
    rsw_ctl --json show lb | "$RSW_PYTHON" -c '
import json, sys
print(len(json.load(sys.stdin).get("groups", [])))
'
}

# bgp_rss_kb: the switch's VmRSS in kB (kernel mode: 0).
bgp_rss_kb() {
    if ! bgp_have_ctl; then echo 0; return; fi
    awk '/^VmRSS:/ { print $2 }' "/proc/$RSW_SWITCH_PID/status"
}

# bgp_drops PORT REASON: rocectl drop counter (kernel mode: 0).
bgp_drops() {
    if ! bgp_have_ctl; then echo 0; return; fi
    rsw_drops "$1" "$2"
}

# bgp_punted CLASS...: the punt path's `punted` counters of the classes CLASS..., on one line
# (kernel mode: 0 each).
bgp_punted() {
    if ! bgp_have_ctl; then
        local zeros=() k
        for k in "$@"; do zeros+=(0); done
        echo "${zeros[*]}"
        return
    fi
    rsw_ctl --json show punt | "$RSW_PYTHON" -c '
import json, sys
c = {x["class"]: x["punted"] for x in json.load(sys.stdin)["classes"]}
print(" ".join(str(c[k]) for k in sys.argv[1:]))' "$@"
}

# bgp_route_kind PREFIX: the switch's next-hop kind for PREFIX (rocectl show routes; "none"
# while absent).
bgp_route_kind() {
    rsw_ctl --json show routes | "$RSW_PYTHON" -c '
import json, sys
print(" ".join(r["nexthop"]["kind"] for r in json.load(sys.stdin)["routes"] if r["prefix"] == sys.argv[1]) or "none")' "$1"
}

# bgp_wait_route_kind PREFIX KIND: waits up to 5 s for the switch's route of PREFIX to be of
# KIND ("none": gone), then prints its kind.
bgp_wait_route_kind() {
    local k=""
    for _ in $(seq 50); do
        k="$(bgp_route_kind "$1")"
        [ "$k" = "$2" ] && break
        sleep 0.1
    done
    echo "$k"
}

# bgp_if_counter NS IFACE rx_packets|tx_packets: a kernel interface counter.
bgp_if_counter() {
    ip -n "$1" -j -s link show dev "$2" | "$RSW_PYTHON" -c '
import json, sys
s = json.load(sys.stdin)[0]["stats64"]
print(s["rx" if sys.argv[1].startswith("rx") else "tx"]["packets"])
' "$3"
}

# bgp_wait_if_counter NS IFACE rx_packets|tx_packets TARGET [TIMEOUT_S=5]: waits until the
# kernel interface counter reaches TARGET (the frames a test sent have arrived), prints its value;
# status 1 (logged) when it has not after TIMEOUT_S.
# bgp_r1_split A0 B0 N [TIMEOUT_S=5]: waits (bounded) until r1's links to p1 and p2 (IF1, IF2)
# together received N frames more than their rx_packets A0 and B0; prints the two increases.
bgp_r1_split() {
    local a0="$1" b0="$2" n="$3" timeout="${4:-5}" deadline a1 b1
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while :; do
        a1="$(bgp_if_counter "$R1" "$IF1" rx_packets)"; b1="$(bgp_if_counter "$R1" "$IF2" rx_packets)"
        [ $((a1 - a0 + b1 - b0)) -ge "$n" ] || [ "$(date +%s%N)" -ge "$deadline" ] && break
        sleep 0.05
    done
    echo "$((a1 - a0)) $((b1 - b0))"
}

bgp_wait_if_counter() {
    local ns="$1" ifc="$2" field="$3" target="$4" timeout="${5:-5}" deadline v
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while :; do
        v="$(bgp_if_counter "$ns" "$ifc" "$field" 2>/dev/null || echo -1)"
        if [ "$v" -ge "$target" ]; then echo "$v"; return 0; fi
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "bgp_wait_if_counter: $ns $ifc $field $v, expected >= $target after ${timeout} s"
            echo "$v"
            return 1
        fi
        sleep 0.05
    done
}

# bgp_wait_synced [TIMEOUT_S=10]: waits until the switch's learned prefixes equal the kernel's
# proto bird routes of its namespace and every one has as many paths in the switch as in the
# kernel (BGP has settled and the switch followed). Status 1 (difference logged) on timeout.
bgp_wait_synced() {
    local timeout="${1:-10}" deadline
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while :; do
        bgp_kernel_routes >"$RSW_TMP/sync-kernel.txt" 2>/dev/null || true
        bgp_switch_learned >"$RSW_TMP/sync-switch.txt" 2>/dev/null || true
        if [ -s "$RSW_TMP/sync-kernel.txt" ] &&
            cmp -s "$RSW_TMP/sync-kernel.txt" "$RSW_TMP/sync-switch.txt" &&
            [ -z "$(bgp_multipath_mismatch 2>/dev/null)" ]; then
            return 0
        fi
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "bgp_wait_synced: switch and kernel differ after ${timeout} s (kernel < > switch):"
            diff "$RSW_TMP/sync-kernel.txt" "$RSW_TMP/sync-switch.txt" | grep '^[<>]' | head -n 5 >&2
            bgp_multipath_mismatch 2>/dev/null | head -n 5 | sed 's/^/  paths: /' >&2
            return 1
        fi
        sleep 0.1
    done
}

# bgp_udp_flows NS IFACE DST_MAC SRC_IP DST_IP FLOWS PER_FLOW [DPORT=9]: FLOWS UDP flows
# (source ports 20000..) of PER_FLOW packets each, sent by scapy as Ethernet frames.
bgp_udp_flows() {
    ip netns exec "$1" "$RSW_PYTHON" - "$@" <<'EOF'
import sys
from scapy.all import Ether, IP, UDP, Raw, sendp, get_if_hwaddr, conf
conf.verb = 0
_, ns, ifc, dmac, src, dst, flows, per, *rest = sys.argv
dport = int(rest[0]) if rest else 9
smac = get_if_hwaddr(ifc)
frames = [Ether(src=smac, dst=dmac) / IP(src=src, dst=dst, ttl=64) /
          UDP(sport=20000 + f, dport=dport) / Raw(b"x" * 32)
          for _ in range(int(per)) for f in range(int(flows))]
sendp(frames, iface=ifc, inter=0.0005)
EOF
}

# bgp_icmp_error VAR NS TRIES PING_ARGS...: sends one echo at a time from NS (ping PING_ARGS) until
# an ICMP error answers, at most TRIES echoes 1 s apart (the kernel answering for the switch
# sends errors to one host at a limited rate: icmp_ratelimit), and sets VAR to "FROM TEXT" of
# ping's "From FROM icmp_seq=1 TEXT" line ("" when none came) and BGP_ICMP_ECHOES to the echoes sent.
bgp_icmp_error() {
    local var="$1" ns="$2" tries="$3" line="" i
    shift 3
    for ((i = 1; i <= tries; i++)); do
        line="$(ip netns exec "$ns" ping -c 1 -W 1 "$@" 2>&1 | sed -n 's/^From \([0-9a-f.:]*\) icmp_seq=1 /\1 /p')" || true
        [ -n "$line" ] && break
    done
    BGP_ICMP_ECHOES=$((i > tries ? tries : i))
    printf -v "$var" '%s' "$line"
}

# bgp_mac NS IFACE: the interface's MAC.
bgp_mac() { ip -n "$1" -j link show dev "$2" | "$RSW_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'; }

# bgp_bird_conf FILE ROUTER_ID LOCAL_AS EXPORT_EXPR EXTRA SESSION...: writes a BIRD 2 config
# in the shape of config/bgp/bird-*.conf with test timers (keepalive 1 s, hold 3 s, connect
# retry 1 s), TCP-MD5, GTSM and graceful restart (RFC 4724; restart time BGP_GR_TIME, default
# 120 s as config/bgp) on every session; BGP_BIRD_SESSION_EXTRA is more session options (e.g.
# "bfd graceful; debug { events };"). EXPORT_EXPR is a filter expression for what
# the sessions announce (e.g. 'source = RTS_DEVICE'); EXTRA is more config text (static or
# direct protocols). SESSION is NAME:NEIGHBOUR_IP:PEER_AS:IFACE; a session to an IPv6
# neighbour (NAME:fd00:11::2:65201:p1) carries the ipv6 channel, one to an IPv4 neighbour the
# ipv4 channel. Two kernel protocols (ipv4, ipv6) export BGP routes with merge paths on
# (multipath routes). Imports: 10.0.0.0/8 and fd00::/8 only.
BGP_PASSWORD="rocesw-test-md5"
bgp_bird_conf() {
    local file="$1" rid="$2" as="$3" export_expr="$4" extra="$5" s name ip peer ifc
    shift 5
    {
        cat <<EOC
# generated by $(basename "$0") (lib_bgp.sh bgp_bird_conf)
log stderr all;
router id $rid;
protocol device { scan time 1; }
protocol kernel {
  ipv4 { import none; export where source = RTS_BGP; };
  merge paths on limit 16;
  graceful restart on;
}
protocol kernel {
  ipv6 { import none; export where source = RTS_BGP; };
  merge paths on limit 16;
  graceful restart on;
}
$extra
template bgp peer {
  local as $as;
  hold time 3; keepalive time 1; connect retry time 1; connect delay time 1;
  error wait time 1, 3; error forget time 5;
  graceful restart on; graceful restart time ${BGP_GR_TIME:-120};
  password "$BGP_PASSWORD";
  ttl security on;
  direct;${BGP_BIRD_SESSION_EXTRA:+
  $BGP_BIRD_SESSION_EXTRA}
  ipv4 {
    import where net ~ [ 10.0.0.0/8{8,32} ];
    export where $export_expr;
  };
}
template bgp peer6 {
  local as $as;
  hold time 3; keepalive time 1; connect retry time 1; connect delay time 1;
  error wait time 1, 3; error forget time 5;
  graceful restart on; graceful restart time ${BGP_GR_TIME:-120};
  password "$BGP_PASSWORD";
  ttl security on;
  direct;${BGP_BIRD_SESSION_EXTRA:+
  $BGP_BIRD_SESSION_EXTRA}
  ipv6 {
    import where net ~ [ fd00::/8{8,128} ];
    export where $export_expr;
  };
}
EOC
        for s in "$@"; do
            # NAME:IP:AS:IFACE, where IP may hold colons (IPv6).
            name="${s%%:*}"; ip="${s#*:}"
            ifc="${ip##*:}"; ip="${ip%:*}"
            peer="${ip##*:}"; ip="${ip%:*}"
            printf 'protocol bgp %s from %s { neighbor %s as %s; interface "%s"; }\n' \
                "$name" "$(case "$ip" in *:*) echo peer6 ;; *) echo peer ;; esac)" "$ip" "$peer" "$ifc"
        done
    } >"$file"
}

# --- the lab ----------------------------------------------------------------------------------
#
#                        netns <tag>-sw
#   h1 --- <tag>p0 [p0 10.0.1.1]  roceswd + BIRD (AS 65101)  [p1 10.0.11.1] --- <tag>p1 --- r1
#   10.0.1.2/24                                               [p2 10.0.12.1] --- <tag>p2 --- r1
#
#   r1 (AS 65201, BIRD): 10.0.11.2/24, 10.0.12.2/24; lo 10.201.0.1-3/32, 10.250.0.1/32;
#      <tag>r2 10.0.2.1/24 --- veth --- <tag>h2 10.0.2.2/24 (h2)
#   r1 announces 10.0.2.0/24 (direct "d_h2"), 10.201.0.2/32 + 10.201.0.3/32 (static "s_keep")
#   and 10.201.0.1/32 (static "s_wd") over both sessions (sw_a over p1, sw_b over p2): multipath
#   routes in the switch. The switch's BIRD (sessions r1_a, r1_b) announces 10.0.1.0/24.
#
#   BGP_LAB_V6=1 adds IPv6 beside it: p0 fd00:1::1/64 (h1 fd00:1::2), p1 fd00:11::1/64 (r1
#   fd00:11::2), p2 fd00:12::1/64 (r1 fd00:12::2), r2 fd00:2::1/64 (h2 fd00:2::2), and two more
#   sessions over IPv6 with the ipv6 channel (r1_a6/sw_a6 over p1, r1_b6/sw_b6 over p2): r1
#   announces fd00:2::/64 (d_h2) and fd00:201::1/128 (static "s_wd6"), the switch fd00:1::/64.
#
#   BGP_LAB_P0_MTU=N gives p0 and h1's interface the IP MTU N (p1, p2 and r1 keep 1500): h1's
#   longer packets toward r1 are above the egress port's MTU.

# bgp_lab CONFIG_EXTRA R1_EXTRA: writes the switch config (ports p0-p2 + CONFIG_EXTRA, YAML
# text such as a routes: list and the control_plane: section), starts the switch, builds h1,
# r1, h2, writes both BIRD configs (R1_EXTRA: more protocols for r1) and starts both BIRDs.
# Sets IF0 IF1 IF2 IFR2 IFH2 H1 H2 R1 CFG LOG SOCK SW_BIRD R1_BIRD R1_CONF P0_MAC SW_BIRD_PID
# R1_BIRD_PID. Status 1
# (with a FAIL line) when the switch or a BIRD does not start. BGP_LAB_PORTS=af_packet: veth
# ports (bgp_port_device); BGP_LAB_BFD=1: BFD on both BIRDs (bgp_lab_bfd).
bgp_lab() {
    local cfg_extra="$1" r1_extra="${2:-}" a v6="${BGP_LAB_V6:-0}" p0v6="" p1v6="" p2v6=""
    local p0mtu=""
    [ -z "${BGP_LAB_P0_MTU:-}" ] || p0mtu="
    mtu: ${BGP_LAB_P0_MTU}"
    local sw_sessions r1_sessions af="ipv4;" r1_v6_static=""
    if [ "$v6" = 1 ]; then
        p0v6='
    ipv6: ["fd00:1::1/64"]'
        p1v6='
    ipv6: ["fd00:11::1/64"]'
        p2v6='
    ipv6: ["fd00:12::1/64"]'
        af="ipv4; ipv6;"
        r1_v6_static='protocol static s_wd6 { ipv6; route fd00:201::1/128 via "lo"; }'
    fi
    IF0="$(rsw_ifname p0)"; IF1="$(rsw_ifname p1)"; IF2="$(rsw_ifname p2)"
    IFR2="$(rsw_ifname r2)"; IFH2="$(rsw_ifname h2)"
    H1="$(rsw_ns h1)"; H2="$(rsw_ns h2)"; R1="$(rsw_ns r1)"
    CFG="$RSW_TMP/switch.yaml"; LOG="$RSW_TMP/roceswd.log"; SOCK="$RSW_TMP/ctl.sock"
    SW_BIRD="$RSW_TMP/bird-sw.ctl"; R1_BIRD="$RSW_TMP/bird-r1.ctl"; R1_CONF="$RSW_TMP/bird-r1.conf"
    cat >"$CFG" <<EOC
switch:
  name: ${RSW_TAG}
  workers: 1
  idle: adaptive
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
ports:
  - name: p0
    device: "$(bgp_port_device 0 p0)"
    mac: "02:00:00:00:01:01"
    ipv4: ["10.0.1.1/24"]${p0v6}${p0mtu}
  - name: p1
    device: "$(bgp_port_device 1 p1)"
    mac: "02:00:00:00:11:01"
    ipv4: ["10.0.11.1/24"]${p1v6}
  - name: p2
    device: "$(bgp_port_device 2 p2)"
    mac: "02:00:00:00:12:01"
    ipv4: ["10.0.12.1/24"]${p2v6}
${cfg_extra}
EOC
    echo "== $(basename "$0"): tag $RSW_TAG, temp dir $RSW_TMP$([ "$RSW_BGP_KERNEL" = 1 ] && echo ', KERNEL SWITCH (dry run)')"
    if ! bgp_start_switch "$CFG" "$LOG" p0 p1 p2; then
        rsw_fail "roceswd starts in its namespace with host interfaces p0 p1 p2"
        return 1
    fi
    rsw_pass "switch up in $RSW_SW_NS (pid ${RSW_SWITCH_PID:-kernel}); host interfaces: $(ip -n "$RSW_SW_NS" -br addr show | awk '$1 ~ /^p[0-9]/ {sub(/@.*/, "", $1); printf "%s %s %s; ", $1, $2, $3}')"
    # The MAC h1 sends to: p0's (the host interface has the port's MAC; kernel mode: the veth's).
    # shellcheck disable=SC2034  # read by the tests
    P0_MAC="$(bgp_mac "$RSW_SW_NS" p0)"

    bgp_attach p0 "$H1"
    if [ -n "${BGP_LAB_P0_MTU:-}" ]; then
        ip -n "$H1" link set dev "$IF0" mtu "$BGP_LAB_P0_MTU"
        # Kernel mode: the switch's own end (roceswd sets its TAP's MTU from the config).
        [ "$RSW_BGP_KERNEL" != 1 ] || ip -n "$RSW_SW_NS" link set dev p0 mtu "$BGP_LAB_P0_MTU"
    fi
    bgp_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 10.0.1.1
    bgp_attach p1 "$R1"
    bgp_attach p2 "$R1"
    bgp_host "$R1" "$IF1" 02:00:00:00:11:02 10.0.11.2/24 ""
    bgp_host "$R1" "$IF2" 02:00:00:00:12:02 10.0.12.2/24 ""
    bgp_ns "$H2"
    ip -n "$R1" link add "$IFR2" type veth peer name "$IFH2" netns "$H2"
    ip -n "$R1" addr add 10.0.2.1/24 dev "$IFR2"
    ip -n "$R1" link set "$IFR2" up
    bgp_host "$H2" "$IFH2" 02:00:00:00:02:02 10.0.2.2/24 10.0.2.1
    for a in 10.201.0.1 10.201.0.2 10.201.0.3 10.250.0.1; do ip -n "$R1" addr add "$a/32" dev lo; done
    ip netns exec "$R1" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
        net.ipv4.conf.default.rp_filter=0 net.ipv4.fib_multipath_hash_policy=1 >/dev/null
    bgp_redo_dad "$RSW_SW_NS"
    sw_sessions=(r1_a:10.0.11.2:65201:p1 r1_b:10.0.12.2:65201:p2)
    r1_sessions=(sw_a:10.0.11.1:65101:"$IF1" sw_b:10.0.12.1:65101:"$IF2")
    if [ "$v6" = 1 ]; then
        ip -n "$H1" -6 addr add fd00:1::2/64 dev "$IF0" nodad
        ip -n "$H1" -6 route add default via fd00:1::1 dev "$IF0"
        ip -n "$R1" -6 addr add fd00:11::2/64 dev "$IF1" nodad
        ip -n "$R1" -6 addr add fd00:12::2/64 dev "$IF2" nodad
        ip -n "$R1" -6 addr add fd00:2::1/64 dev "$IFR2" nodad
        ip -n "$R1" -6 addr add fd00:201::1/128 dev lo
        ip -n "$H2" -6 addr add fd00:2::2/64 dev "$IFH2" nodad
        ip -n "$H2" -6 route add default via fd00:2::1 dev "$IFH2"
        ip netns exec "$R1" sysctl -qw net.ipv6.conf.all.forwarding=1 \
            net.ipv6.fib_multipath_hash_policy=1 >/dev/null
        sw_sessions+=(r1_a6:fd00:11::2:65201:p1 r1_b6:fd00:12::2:65201:p2)
        r1_sessions+=(sw_a6:fd00:11::1:65101:"$IF1" sw_b6:fd00:12::1:65101:"$IF2")
    fi

    bgp_bird_conf "$RSW_TMP/bird-sw.conf" 10.0.11.1 65101 'source = RTS_DEVICE' \
        "protocol direct d_hosts { $af interface \"p0\"; }
$(bgp_lab_bfd p1 p2)" "${sw_sessions[@]}"
    bgp_bird_conf "$R1_CONF" 10.0.11.2 65201 'source ~ [ RTS_DEVICE, RTS_STATIC ]' \
        "protocol direct d_h2 { $af interface \"$IFR2\"; }
$(bgp_lab_bfd "$IF1" "$IF2")
protocol static s_keep { ipv4; route 10.201.0.2/32 via \"lo\"; route 10.201.0.3/32 via \"lo\"; }
protocol static s_wd { ipv4; route 10.201.0.1/32 via \"lo\"; }
$r1_v6_static
$r1_extra" \
        "${r1_sessions[@]}"
    BGP_T_BIRD=$(date +%s%N)
    bgp_start_bird "$RSW_SW_NS" "$RSW_TMP/bird-sw.conf" "$SW_BIRD" "$RSW_TMP/bird-sw.log" ||
        { rsw_fail "BIRD starts in $RSW_SW_NS"; return 1; }
    # shellcheck disable=SC2034  # read by the tests
    SW_BIRD_PID="$BGP_BIRD_PID"
    bgp_start_bird "$R1" "$R1_CONF" "$R1_BIRD" "$RSW_TMP/bird-r1.log" ||
        { rsw_fail "BIRD starts in $R1"; return 1; }
    # shellcheck disable=SC2034  # read by the tests
    R1_BIRD_PID="$BGP_BIRD_PID"
    return 0
}

# bgp_lab_bfd IFACE...: with BGP_LAB_BFD=1, BIRD's BFD protocol on IFACE... (200 ms x 5: a
# failure is noticed within about 1 s, and a loaded 2-core machine does not miss 5 in a row);
# the sessions need "bfd on;" or "bfd graceful;" in BGP_BIRD_SESSION_EXTRA. Else nothing.
bgp_lab_bfd() {
    [ "${BGP_LAB_BFD:-0}" = 1 ] || return 0
    local i list=""
    for i in "$@"; do list="${list:+$list, }\"$i\""; done
    printf 'protocol bfd { interface %s { min rx interval 200 ms; min tx interval 200 ms; multiplier 5; }; }\n' "$list"
}

# bgp_lab_sessions TIMEOUT_S: PASS/FAIL line for both sessions Established (time since BIRD
# start); status 1 when they are not.
bgp_lab_sessions() {
    if bgp_wait_established "$1" "$SW_BIRD" r1_a r1_b >/dev/null; then
        rsw_pass "2 BGP sessions (MD5 + GTSM) Established over p1 and p2, $(bgp_elapsed "$BGP_T_BIRD") s after BIRD start"
        return 0
    fi
    rsw_fail "BGP sessions Established within $1 s: r1_a $(bgp_state "$SW_BIRD" r1_a), r1_b $(bgp_state "$SW_BIRD" r1_b)"
    birdc -s "$SW_BIRD" show protocols all r1_a 2>&1 | sed 's/^/    | /' | head -n 30
    tail -n 15 "$RSW_TMP/bird-sw.log" | sed 's/^/    | sw bird: /'
    return 1
}

# --- a numbered UDP stream --------------------------------------------------------------------
#
# bgp_stream_rx NS BIND_IP PORT OUT IDLE_S: background receiver (PID in RSW_LAST_PID), returns
# once its socket is bound (rsw_wait_listen). Ends on
# the sender's END datagrams + 2 s, or IDLE_S seconds after the last datagram; writes to OUT:
# "<sent> <received of those> <last send timestamp received> <first 50 missing seqs...>", and
# the earliest send timestamp received to OUT.first.
# While it runs, OUT.count holds the number of datagrams received so far (bgp_stream_wait).
# bgp_stream_tx NS DST_IP PORT PPS STOPFILE: background sender (PID in RSW_LAST_PID) of
# datagrams "<seq> <CLOCK_REALTIME at send>" at PPS until STOPFILE exists, then 5 x "END <n>".
bgp_stream_tools() {
    [ -e "$RSW_TMP/stream_rx.py" ] && return 0
    cat >"$RSW_TMP/stream_rx.py" <<'EOP'
import os, socket, sys, time
out, ip, port, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)  # SO_RCVBUFFORCE
s.bind((ip, port))
s.settimeout(0.2)
seen, end, last, last_ts, first_ts = set(), None, time.time(), 0.0, None
written, written_at = -1, 0.0
def progress(force=False):
    # "<datagrams received so far>" in OUT.count, replaced atomically (bgp_stream_wait reads it).
    global written, written_at
    now = time.time()
    if len(seen) != written and (force or now - written_at >= 0.05):
        with open(out + ".count.tmp", "w") as fo:
            fo.write("%d\n" % len(seen))
        os.replace(out + ".count.tmp", out + ".count")
        written, written_at = len(seen), now
progress(True)
while True:
    progress()
    try:
        data, _ = s.recvfrom(2048)
    except socket.timeout:
        progress(True)
        quiet = time.time() - last
        if (end is not None and quiet > 2) or (seen and quiet > idle) or quiet > 300:
            break
        continue
    last = time.time()
    f = data.split()
    if f[0] == b"END":
        end = int(f[1])
        continue
    seen.add(int(f[0]))
    last_ts = max(last_ts, float(f[1]))
    first_ts = float(f[1]) if first_ts is None else min(first_ts, float(f[1]))
if end is None:
    end = max(seen) + 1 if seen else 0
progress(True)
missing = [i for i in range(end) if i not in seen]
with open(out, "w") as fo:
    fo.write("%d %d %.6f %s\n" % (end, len(seen & set(range(end))), last_ts,
                                  " ".join(map(str, missing[:50]))))
with open(out + ".first", "w") as fo:
    fo.write("%.6f\n" % (first_ts or 0.0))
EOP
    cat >"$RSW_TMP/stream_tx.py" <<'EOP'
import os, socket, sys, time
ip, port, pps, stop = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
seq, t0 = 0, time.time()
while not os.path.exists(stop):
    try:
        s.sendto(b"%d %.6f" % (seq, time.time()), (ip, port))
    except OSError:
        pass  # e.g. unreachable: still counted as sent
    seq += 1
    delay = t0 + seq / pps - time.time()
    if delay > 0:
        time.sleep(delay)
time.sleep(0.5)
for _ in range(5):
    try:
        s.sendto(b"END %d" % seq, (ip, port))
    except OSError:
        pass
    time.sleep(0.05)
print(seq, "%.3f" % (time.time() - t0))
EOP
}
bgp_stream_rx() {
    local pid
    bgp_stream_tools
    rsw_bg ip netns exec "$1" "$RSW_PYTHON" "$RSW_TMP/stream_rx.py" "$4" "$2" "$3" "$5" \
        >"$4.log" 2>&1
    pid="$RSW_LAST_PID"
    # Ready when its socket is bound (a sender started earlier would lose the first datagrams).
    rsw_wait_listen "$1" udp "$3" || rsw_fail "UDP receiver bound to $2:$3 in $1"
    RSW_LAST_PID="$pid"
}
# bgp_stream_wait OUT N [TIMEOUT_S=10]: waits until the receiver writing OUT has received N
# datagrams (the stream flows, and has run for N of them). Status 1 (logged) on timeout.
bgp_stream_wait() {
    local out="$1" n="$2" timeout="${3:-10}" deadline c=0
    deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
    while :; do
        c="$(cat "$out.count" 2>/dev/null || echo 0)"
        [ "${c:-0}" -ge "$n" ] && return 0
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            rsw_log "bgp_stream_wait: $c of $n datagrams at the receiver of $out after ${timeout} s"
            return 1
        fi
        sleep 0.05
    done
}
bgp_stream_tx() {
    bgp_stream_tools
    rsw_bg ip netns exec "$1" "$RSW_PYTHON" "$RSW_TMP/stream_tx.py" "$2" "$3" "$4" "$5" \
        >"$5.log" 2>&1
}

# bgp_multipath_mismatch: "PREFIX KERNEL_PATHS SWITCH_PATHS" for every proto bird prefix whose
# path count differs between the kernel of the switch namespace and the switch (rocectl routes
# + lb); nothing when they agree. Kernel mode: nothing.
bgp_multipath_mismatch() {
    bgp_have_ctl || return 0
    ip -n "$RSW_SW_NS" -j -4 route show proto "$BGP_KERNEL_PROTO" >"$RSW_TMP/mm-kernel.json"
    ip -n "$RSW_SW_NS" -j -6 route show proto "$BGP_KERNEL_PROTO" >"$RSW_TMP/mm-kernel6.json"
    ip -n "$RSW_SW_NS" -j nexthop show >"$RSW_TMP/mm-nexthops.json" 2>/dev/null || echo '[]' >"$RSW_TMP/mm-nexthops.json"
    rsw_ctl --json show routes >"$RSW_TMP/mm-routes.json"
    rsw_ctl --json show lb >"$RSW_TMP/mm-lb.json"
    "$RSW_PYTHON" - "$RSW_TMP/mm-kernel.json" "$RSW_TMP/mm-routes.json" "$RSW_TMP/mm-lb.json" \
        "$RSW_TMP/mm-kernel6.json" "$RSW_TMP/mm-nexthops.json" <<'EOF'
import json, sys
kernel = json.load(open(sys.argv[1])) + json.load(open(sys.argv[4]))
routes = {r["prefix"]: r for r in json.load(open(sys.argv[2]))["routes"]}
groups = json.load(open(sys.argv[3])).get("groups", [])
objects = {o["id"]: o for o in (json.load(open(sys.argv[5])) or [])}
by_prefix = {g.get("prefix"): g for g in groups}
by_id = {str(g.get("id")): g for g in groups}
for k in kernel:
    p = k["dst"] if "/" in k["dst"] else k["dst"] + ("/128" if ":" in k["dst"] else "/32")
    kp = len(k.get("nexthops", [])) or 1
    # A route naming a kernel nexthop object (FRR's default) without its next hops in the
    # route (nexthop_compat_mode 0): the object's group members.
    if "nexthops" not in k and k.get("nhid") in objects:
        kp = len(objects[k["nhid"]].get("group", [])) or 1
    r = routes.get(p)
    if r is None:
        sp = 0
    elif (r.get("nexthop") or {}).get("kind") != "ecmp_group":
        sp = 1
    else:
        g = by_prefix.get(p) or by_id.get(str(r["nexthop"].get("port", "")).replace("group", "").strip())
        sp = sum(1 for m in g["members"] if m.get("alive", True)) if g else -1
    if sp != kp:
        print(p, kp, sp)
EOF
}

# bgp_udp_to NS IFACE DST_MAC SRC_IP PER_DST DST_IP...: PER_DST UDP packets to each DST_IP
# (one flow each), sent by scapy as Ethernet frames, about 2000 packets/s.
bgp_udp_to() {
    ip netns exec "$1" "$RSW_PYTHON" - "$@" <<'EOP'
import sys
from scapy.all import Ether, IP, UDP, Raw, sendp, get_if_hwaddr, conf
conf.verb = 0
_, ns, ifc, dmac, src, per, *dsts = sys.argv
smac = get_if_hwaddr(ifc)
frames = [Ether(src=smac, dst=dmac) / IP(src=src, dst=d, ttl=64) / UDP(sport=30000, dport=9) /
          Raw(b"y" * 32) for _ in range(int(per)) for d in dsts]
sendp(frames, iface=ifc, inter=0.0005)
EOP
}

# --- several switches linked by memif (tools/soak) ------------------------------------------

# bgp_switch_conf LETTER SWITCH_EXTRA TOP_EXTRA PORT...: prints the config of switch LETTER of
# a test with several switches: name and EAL file prefix <tag>LETTER (bgp_multi_switch_traps
# removes its runtime dir), control socket $RSW_TMP/ctl-LETTER.sock, one worker, adaptive idle,
# host interfaces and netlink on, the punt rates of the BGP tests. PORT is
# "NAME|DEVICE|MAC|V4/LEN[|MORE]" (MORE: more flow-map keys, such as "speed: 1G");
# SWITCH_EXTRA is more switch: keys (indented two spaces), TOP_EXTRA more top-level sections.
bgp_switch_conf() {
    local letter="$1" sw_extra="$2" top_extra="$3" p name dev mac v4 more
    shift 3
    printf 'switch:\n  name: %s\n  workers: 1\n  idle: adaptive\n  file_prefix: %s\n' \
        "${RSW_TAG}$letter" "$(rsw_file_prefix)$letter"
    printf '  control_socket: %s\n  telemetry: false\n' "$RSW_TMP/ctl-$letter.sock"
    [ -z "$sw_extra" ] || printf '%s\n' "$sw_extra"
    printf 'ports:\n'
    for p in "$@"; do
        IFS='|' read -r name dev mac v4 more <<<"$p"
        printf '  - {name: %s, device: "%s", mac: "%s", ipv4: ["%s"]%s}\n' \
            "$name" "$dev" "$mac" "$v4" "${more:+, $more}"
    done
    cat <<EOC
control_plane:
  host_interfaces: true
  netlink: true
  punt_pps: {arp: 600, nd: 600, icmp: 600, bgp: 2000, l4: 1000, lldp: 100, ttl: 200, unreachable: 200, mtu: 200, glean: 200, other: 100}
EOC
    # BGP_CP_EXTRA: further control_plane keys, e.g. "  allow_route_learn: true" (tools/soak).
    [ -z "${BGP_CP_EXTRA:-}" ] || printf '%s\n' "$BGP_CP_EXTRA"
    [ -z "$top_extra" ] || printf '%s\n' "$top_extra"
}

# bgp_multi_switch_traps LETTER...: the cleanup traps (EXIT, INT, TERM) of lib.sh's rsw_init,
# also removing the EAL runtime dirs /var/run/dpdk/<tag>LETTER of the switches bgp_switch_conf
# named. Call after rsw_init.
BGP_SWITCH_LETTERS=()
bgp_multi_switch_traps() {
    BGP_SWITCH_LETTERS=("$@")
    trap 'bgp_multi_cleanup' EXIT
    trap 'echo "interrupted: cleaning up" >&"$RSW_ERR_FD"; bgp_multi_cleanup; trap - EXIT; exit 130' INT
    trap 'echo "terminated: cleaning up" >&"$RSW_ERR_FD"; bgp_multi_cleanup; trap - EXIT; exit 143' TERM
}
bgp_multi_cleanup() {
    local rc=$? l
    cleanup
    if [ "${RSW_KEEP:-0}" != 1 ] && [ -n "$RSW_TAG" ]; then
        for l in "${BGP_SWITCH_LETTERS[@]}"; do rm -rf -- "/var/run/dpdk/${RSW_TAG}$l"; done
    fi
    return "$rc"
}

# bgp_port_up PORT: the current switch reports PORT's link up (rocectl show ports).
bgp_port_up() {
    rsw_ctl --json show ports | "$RSW_PYTHON" -c '
import json, sys
p = [p for p in json.load(sys.stdin)["ports"] if p["name"] == sys.argv[1]]
sys.exit(0 if p and p[0]["link"]["up"] else 1)' "$1"
}
