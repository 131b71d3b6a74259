#!/bin/bash
# System test (TESTPLAN C4): control-plane policing. In the lab of lib_bgp.sh (roceswd + BIRD
# in netns <tag>-sw, r1 over p1 and p2) the config limits punted ARP and ICMP to 200 packets/s
# each. h1 floods the switch's address 10.0.1.1 with ARP requests and ICMP echo requests at
# RSW_COPP_PPS (default 2000, 10x the limit) per class for 8 s, from an AF_PACKET socket.
#
# Checks: over a 3 s window inside the flood, the ARP requests and echo requests that reach the
# host interface p0 (counted by an AF_PACKET socket on p0 in the switch's namespace; rocectl
# `show punt` is printed next to it) are 0.9-1.3x the limit per class; punt_policed drops on p0
# rise; both BGP sessions with r1 (over p1 and p2) stay Established, checked every 0.5 s, and
# do not restart; h1 still reaches h2 afterwards; the switch lives.
#
# RSW_BGP_KERNEL_SWITCH=1 runs it with the kernel as the switch: nothing is policed there, so
# the rate check becomes "measured = offered" (a check of the measurement itself).
# Needs root. Run: sudo test/system/test_copp.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"

rsw_require_root

LIMIT=200
PPS="${RSW_COPP_PPS:-2000}"
FLOOD_S=8
WINDOW_S=3

rsw_init
bgp_need_tools || rsw_finish
bgp_lab "control_plane:
  host_interfaces: true
  netlink: true
  punt_pps: {arp: ${LIMIT}, nd: 600, icmp: ${LIMIT}, bgp: 2000, l4: 1000, lldp: 100, ttl: 200, unreachable: 200, mtu: 200, glean: 200, other: 100}" || rsw_finish
bgp_lab_sessions 20 || rsw_finish
ip netns exec "$H1" ping -c 2 -i 0.2 -W 2 10.0.1.1 >/dev/null 2>&1 || true

# The flood: ARP who-has 10.0.1.1 (broadcast) and ICMP echo to 10.0.1.1, PPS each, paced in
# 5 ms batches.
cat >"$RSW_TMP/flood.py" <<'EOF'
import socket, sys, time
from scapy.all import Ether, ARP, IP, ICMP, Raw, get_if_hwaddr
ifc, dmac, pps, secs, started = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
smac = get_if_hwaddr(ifc)
arp = [bytes(Ether(src=smac, dst="ff:ff:ff:ff:ff:ff") /
             ARP(op=1, hwsrc=smac, psrc="10.0.1.2", pdst="10.0.1.1")) for _ in range(1)]
icmp = [bytes(Ether(src=smac, dst=dmac) / IP(src="10.0.1.2", dst="10.0.1.1") /
              ICMP(type=8, id=0x4242, seq=i) / Raw(b"copp" * 8)) for i in range(1024)]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifc, 0))
t0 = time.time()
open(started, "w").close()  # scapy takes seconds to import on a busy machine: say when it starts
n = 0
errs = 0
while True:
    now = time.time() - t0
    if now >= secs:
        break
    due = int(now * pps)
    while n < due:
        try:
            s.send(arp[0])
            s.send(icmp[n % 1024])
        except OSError:
            errs += 1
        n += 1
    time.sleep(0.005)
print("sent %d ARP + %d ICMP in %.2f s (%d send errors)" % (n, n, time.time() - t0, errs))
EOF
# The counter on the host interface: frames arriving on p0 (not the kernel's own outgoing
# ones), ARP requests and ICMP echo requests, over WINDOW_S seconds.
cat >"$RSW_TMP/count.py" <<'EOF'
import socket, struct, sys, time
ifc, window = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE: never the bottleneck
s.bind((ifc, 0))
s.settimeout(0.1)
arp = icmp = other = 0
t0 = time.time()
while time.time() - t0 < window:
    try:
        data, addr = s.recvfrom(2048)
    except socket.timeout:
        continue
    if addr[2] == socket.PACKET_OUTGOING:
        continue
    et = struct.unpack("!H", data[12:14])[0]
    if et == 0x0806 and data[20:22] == b"\x00\x01":
        arp += 1
    elif et == 0x0800 and data[23] == 1 and data[14 + (data[14] & 15) * 4] == 8:
        icmp += 1
    else:
        other += 1
drops = struct.unpack("II", s.getsockopt(263, 6, 8))[1]  # PACKET_STATISTICS: tp_drops
print(arp, icmp, other, "%.3f" % (time.time() - t0), drops)
EOF

# rocectl's per-class punt counters (empty in kernel mode or when the command fails).
punt_json() {
    local out
    bgp_have_ctl || return 0
    if out="$(rsw_ctl --json show punt 2>/dev/null)" || out="$(rsw_ctl --json call punt 2>/dev/null)"; then
        printf '%s\n' "$out"
    fi
}
since() { birdc -s "$SW_BIRD" show protocols "$1" 2>/dev/null | awk -v p="$1" '$1 == p { print $5 }'; }
# moved SINCE_BEFORE SINCE_AFTER: how far BIRD's "since" (HH:MM:SS.mmm) moved, in ms, across
# midnight too. BIRD prints its monotonic stamp through the wall clock's offset at each call, so
# the same state change may read 1 ms apart; a restart moves it by the flood's seconds.
moved() {
    awk -v a="$1" -v b="$2" 'function ms(t, f) { split(t, f, ":"); return ((f[1] * 60 + f[2]) * 60 + f[3]) * 1000 }
        BEGIN { if (a !~ /^[0-9]+:[0-9]+:[0-9.]+$/ || b !~ /^[0-9]+:[0-9]+:[0-9.]+$/) { print "unparsed"; exit }
                d = (ms(b) - ms(a)) % 86400000; if (d < 0) d += 86400000; if (d > 43200000) d -= 86400000
                printf "%d", (d < 0 ? -d : d) }'
}
since_a="$(since r1_a)"; since_b="$(since r1_b)"
pol0="$(bgp_drops p0 punt_policed)"

txf0="$(bgp_if_counter "$H1" "$IF0" tx_packets)"
rsw_bg ip netns exec "$H1" "$RSW_PYTHON" "$RSW_TMP/flood.py" "$IF0" "$P0_MAC" "$PPS" "$FLOOD_S" \
    "$RSW_TMP/flood.started" >"$RSW_TMP/flood.log" 2>&1
FLOOD_PID="$RSW_LAST_PID"
for _ in $(seq 1 200); do [ -e "$RSW_TMP/flood.started" ] && break; sleep 0.05; done
sleep 1.5
# What h1 offered over the same window: its interface's tx counter (ARP + ICMP), before the
# counter starts and after it ends (the window is a little longer than WINDOW_S).
tx0="$(bgp_if_counter "$H1" "$IF0" tx_packets)"; t_tx0=$(date +%s%N)
rsw_bg ip netns exec "$RSW_SW_NS" "$RSW_PYTHON" "$RSW_TMP/count.py" p0 "$WINDOW_S" \
    >"$RSW_TMP/count.log" 2>&1
COUNT_PID="$RSW_LAST_PID"
punt_a="$(punt_json)"; t_a=$(date +%s%N)

# BGP every 0.5 s while the flood runs.
polls=0; bad=0
while rsw_alive "$FLOOD_PID"; do
    sa="$(bgp_state "$SW_BIRD" r1_a)"; sb="$(bgp_state "$SW_BIRD" r1_b)"
    polls=$((polls + 1))
    if [ "$sa" != Established ] || [ "$sb" != Established ]; then
        bad=$((bad + 1)); rsw_log "  poll $polls: r1_a $sa, r1_b $sb"
    fi
    if [ "$(( ($(date +%s%N) - t_a) / 1000000 ))" -ge $((WINDOW_S * 1000)) ] && [ -z "${punt_b:-}" ]; then
        punt_b="$(punt_json)"; t_b=$(date +%s%N)
    fi
    if [ -z "${tx1:-}" ] && ! rsw_alive "$COUNT_PID"; then
        tx1="$(bgp_if_counter "$H1" "$IF0" tx_packets)"; t_tx1=$(date +%s%N)
    fi
    sleep 0.5
done
rsw_wait_pid "$FLOOD_PID" 5 || true
rsw_wait_pid "$COUNT_PID" 5 || true
txf1="$(bgp_if_counter "$H1" "$IF0" tx_packets)"
if [ -z "${tx1:-}" ]; then tx1="$(bgp_if_counter "$H1" "$IF0" tx_packets)"; t_tx1=$(date +%s%N); fi
offered="$(awk -v a="$tx0" -v b="$tx1" -v t0="$t_tx0" -v t1="$t_tx1" 'BEGIN { printf "%.0f", (b - a) / 2 / ((t1 - t0) / 1e9) }')"
rsw_log "  flood: $(tail -n 1 "$RSW_TMP/flood.log")"
# Each poll is two birdc calls, slow on a loaded machine: the count proves the polls spanned the
# flood (one per 2 s at least); that no session restarted is the "since" checks' job.
check_ge "BGP polled about every 0.5 s during the 8 s flood (at least one per 2 s)" "$polls" 4
check_eq "BGP sessions Established at every poll ($polls polls)" "$bad" 0
for p in r1_a r1_b; do
    if [ "$p" = r1_a ]; then s0="$since_a"; else s0="$since_b"; fi
    s1="$(since "$p")"; d="$(moved "$s0" "$s1")"
    if [[ "$d" =~ ^[0-9]+$ ]] && [ "$d" -le 50 ]; then
        rsw_pass "$p did not restart during the flood (since $s0, now $s1: ${d} ms)"
    else
        rsw_fail "$p did not restart during the flood: since $s0 before, $s1 after (moved ${d} ms, at most 50)"
    fi
done

read -r n_arp n_icmp n_other secs sockdrops <"$RSW_TMP/count.log" ||
    { n_arp=-1; n_icmp=-1; n_other=-1; secs=1; sockdrops=-1; }
r_arp="$(awk -v n="$n_arp" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')"
r_icmp="$(awk -v n="$n_icmp" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')"
rsw_log "  at host interface p0 over $secs s: $n_arp ARP requests ($r_arp/s), $n_icmp echo requests ($r_icmp/s), $n_other other (counter socket drops: $sockdrops)"
rsw_log "  h1 offered over the window: $offered/s per class (target $PPS/s; a busy machine paces the sender unevenly)"
check_ge "the flood offered >= 5x the limit per class over the window" "$offered" $((5 * LIMIT))
if bgp_have_ctl; then
    lo="$(awk -v l="$LIMIT" 'BEGIN { printf "%d", l * 0.9 }')"; hi="$(awk -v l="$LIMIT" 'BEGIN { printf "%d", l * 1.3 }')"
else
    lo="$(awk -v l="$offered" 'BEGIN { printf "%d", l * 0.85 }')"; hi="$(awk -v l="$offered" 'BEGIN { printf "%d", l * 1.1 }')"
    rsw_log "  (kernel switch: no policing, expecting the offered rate)"
fi
for c in arp:"$r_arp" icmp:"$r_icmp"; do
    cls="${c%%:*}"; rate="${c#*:}"
    if [ "$rate" -ge "$lo" ] && [ "$rate" -le "$hi" ]; then
        rsw_pass "punted $cls rate $rate/s within [$lo, $hi] (limit $LIMIT/s, offered $PPS/s)"
    else
        rsw_fail "punted $cls rate $rate/s outside [$lo, $hi] (limit $LIMIT/s, offered $PPS/s)"
    fi
done

if bgp_have_ctl; then
    pol1="$(rsw_wait_counter 1 1 bgp_drops p0 punt_policed)"
    # Everything h1 sent during the flood beyond what the two classes may pass (1.3 x limit)
    # must have been policed.
    check_ge "p0 punt_policed drops rise by the flood minus the allowed rate ($((txf1 - txf0)) frames sent)" \
        "$((pol1 - pol0))" "$(( txf1 - txf0 - 2 * LIMIT * 13 * (FLOOD_S + 1) / 10 ))"
    # rocectl's own per-class counters over about the same window (punted and policed).
    if [ -n "$punt_a" ] && [ -n "${punt_b:-}" ]; then
        printf '%s\n' "$punt_a" >"$RSW_TMP/punt-a.json"
        printf '%s\n' "$punt_b" >"$RSW_TMP/punt-b.json"
        "$RSW_PYTHON" - "$RSW_TMP/punt-a.json" "$RSW_TMP/punt-b.json" "$(( (t_b - t_a) / 1000000 ))" \
            >"$RSW_TMP/punt-rates.txt" <<'EOF' || true
import json, sys
a, b, ms = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
ca = {c["class"]: c for c in a.get("classes", [])}
for c in b.get("classes", []):
    o = ca.get(c["class"], {})
    d = {k: c[k] - o.get(k, 0) for k in ("punted", "policed", "queue_full") if k in c}
    print(c["class"], "%.0f" % (d.get("punted", 0) * 1000.0 / ms), d.get("policed", 0),
          d.get("queue_full", 0), ms)
EOF
        for cls in arp icmp; do
            read -r _ rate pol qf ms < <(grep "^$cls " "$RSW_TMP/punt-rates.txt" || echo "$cls -1 0 0 0")
            if [ "$rate" -ge "$lo" ] && [ "$rate" -le "$hi" ]; then
                rsw_pass "rocectl punt: $cls punted $rate/s within [$lo, $hi] over $ms ms (policed +$pol, queue_full +$qf)"
            else
                rsw_fail "rocectl punt: $cls punted $rate/s outside [$lo, $hi] over $ms ms (policed +$pol, queue_full +$qf)"
            fi
        done
        bgpq="$(awk '$1 == "bgp" { print $3 + $4 }' "$RSW_TMP/punt-rates.txt")"
        check_eq "rocectl punt: no BGP packet policed or dropped during the flood" "${bgpq:-missing}" 0
    else
        rsw_fail "rocectl show punt / call punt gave no JSON"
    fi
fi

check "ping h1 -> h2 after the flood" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.0.2.2
check "ping h1 -> switch 10.0.1.1 after the flood" rsw_ping_ok ip netns exec "$H1" ping -c 3 -i 0.2 -W 2 10.0.1.1
if bgp_have_ctl; then
    if rsw_alive "$RSW_SWITCH_PID"; then rsw_pass "roceswd alive after the flood"; else rsw_fail "roceswd died"; fi
    rsw_assert_accounting
    rc=0
    stop_switch 10 || rc=$?
    check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
fi
rsw_finish
