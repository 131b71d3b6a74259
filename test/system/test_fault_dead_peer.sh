#!/usr/bin/env bash
# A dead peer: the process behind one switch port is killed (kill -9) while lossless traffic
# flows to it. The switch must drop what that port can no longer send, counted as link_down,
# and nothing else: the senders' lossless traffic to the other ports is neither lost nor held.
#
# Lab (tools/bench_lib/lossless.py's sweep lab): roceswd with four memif ports at 1 Gb/s and the
# NVIDIA RoCE profile (DSCP 26 -> TC 3, PFC on priority 3, PG 3 XOFF at 64 KB). rocehost A
# emulates h1, h2 and h4, rocehost B h3. Lossless constant-rate UDP streams for 3 s:
# h1 -> h3 300 Mb/s, h1 -> h4 200 Mb/s, h2 -> h4 100 Mb/s. B is killed 1.5 s into them.
#
# Before the fix, the frames for h3 stayed in p2's queue (the memif device takes nothing once
# its peer is gone), held p0's PG 3 in XOFF and paused h1 for good, so h1 -> h4 stopped too and
# A never finished. Checked, exactly:
#   - the switch logs the lost link and counts link_down drops on p2 (and no other drop);
#   - p0's PG 3 ends empty and not in XOFF, XON sent;
#   - A finishes: every frame of h1 -> h4 and h2 -> h4 was sent (what rate x time gives) and
#     received, in order;
#   - h1 -> h3: what the switch forwarded to p2 is what it sent there plus its link_down drops;
#   - the accounting identity balances.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${ROCEHOST:=$BUILD_DIR/app/rocehost/rocehost}"
rsw_require_root
rsw_init

d="$RSW_TMP"
prefix="$(rsw_file_prefix)"
"$RSW_PYTHON" - "$d" "$RSW_REPO" "$prefix" <<'EOF'
import sys
d, repo, prefix = sys.argv[1:4]
sys.path.insert(0, repo + "/tools/bench_lib")
import lossless as L

open(d + "/sw.yaml", "w").write(
    L.sweep_switch_config(d, repo + "/" + L.QOS_CFG, prefix + "sw"))
flow = ("  - {{src: {}, dst: {}, rate: {}M, frame_bytes: 1024, start_ns: 0, "
        "stop_ns: 3000000000, dscp: 26, ecn: true, priority: 3, sport: {}}}\n")
open(d + "/A.yaml", "w").write(
    L.rocehost_header("A", 60000) + "hosts:\n" + L.hosts_yaml(d, ("h1", "h2", "h4")) +
    "peers:\n" + L.peers_yaml(("h3",)) + "udp_flows:\n" +
    flow.format("h1", "h3", 300, 10001) + flow.format("h1", "h4", 200, 10002) +
    flow.format("h2", "h4", 100, 10003))
open(d + "/B.yaml", "w").write(
    L.rocehost_header("B", 60000) + "hosts:\n" + L.hosts_yaml(d, ("h3",)) +
    "peers:\n" + L.peers_yaml(("h1", "h2", "h4")))
EOF

start_switch "$d/sw.yaml" "$d/sw.log"
rsw_bg "$ROCEHOST" --config "$d/B.yaml" --out "$d/outB" --dcqcn off --file-prefix "${prefix}B" \
    >"$d/B.log" 2>&1
pid_b="$RSW_LAST_PID"
rsw_bg "$ROCEHOST" --config "$d/A.yaml" --out "$d/outA" --dcqcn off --file-prefix "${prefix}A" \
    >"$d/A.log" 2>&1
pid_a="$RSW_LAST_PID"

# 1.5 s into the streams (A's start delay is 0.3 s): h3's traffic flows through p2.
sleep 1.8
tx_before="$(rsw_port_counter p2 tx_packets)"
check_ge "h1 -> h3 flows through p2 before the kill" "$tx_before" 1000
kill_at="$(date +%s.%N)"
kill -KILL "$pid_b"
if rsw_wait_pid "$pid_a" 40; then
    rsw_pass "rocehost A finishes (the streams to h4 are not held)"
    check_eq "rocehost A exit status" "$RSW_WAIT_RC" "0"
else
    rsw_fail "rocehost A finishes (the streams to h4 are not held): still running after 40 s"
fi
wait "$pid_b" 2>/dev/null || true
cat "$d/A.log" | grep -v "^EAL" | tail -5 >&2 || true

check "the switch logs p2's lost link" grep -q "port p2: link lost" "$d/sw.log"
# How long after the kill the switch noticed (its log's local time against the kill's): the link
# poll's period (50 ms) plus scheduling; a figure for the log, not a check.
"$RSW_PYTHON" - "$d/sw.log" "$kill_at" <<'EOF' >&2 || true
import datetime, sys
for line in open(sys.argv[1]):
    if "port p2: link lost" in line:
        t = datetime.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f").timestamp()
        print(f"the switch noticed p2's lost link {1000 * (t - float(sys.argv[2])):.0f} ms after the kill")
        break
EOF
lost="$(rsw_ctl --json show ports | "$RSW_PYTHON" -c '
import json, sys
print(int([p for p in json.load(sys.stdin)["ports"] if p["name"] == "p2"][0]["link"]["lost"]))')"
check_eq "show ports: p2's link.lost" "$lost" "1"
link_down="$(rsw_drops p2 link_down)"
check_ge "p2 counts link_down drops" "$link_down" 1
other="$(rsw_ctl --json show drops --all | "$RSW_PYTHON" -c '
import json, sys
print(sum(e["packets"] for e in json.load(sys.stdin)["drops"] if e["reason"] != "link_down"))')"
check_eq "no drop of any other reason" "$other" "0"

pfc="$(rsw_ctl --json show pfc p0 | "$RSW_PYTHON" -c '
import json, sys
p = json.load(sys.stdin)["ports"][0]
pr = [x for x in p["priorities"] if x["priority"] == 3][0]
g = [x for x in p["pgs"] if x["pg"] == 3][0]
print(pr["tx_pause"], pr["tx_xon"], g["bytes"], int(bool(g.get("xoff", False))))')"
read -r xoff xon pg_bytes pg_xoff <<<"$pfc"
echo "p0: $xoff XOFF, $xon XON sent; PG 3 holds $pg_bytes bytes" >&2
check_eq "p0's PG 3 is empty" "$pg_bytes" "0"
check_eq "p0's PG 3 is not in XOFF" "$pg_xoff" "0"
check_ge "p0 sent XON (the pause released)" "$xon" 1

# A's streams (udp_flows.csv, the config's order): h1 -> h3, h1 -> h4, h2 -> h4.
rows="$("$RSW_PYTHON" - "$d/outA/udp_flows.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(r["sent"], r["received"], r["out_of_order"])
EOF
)"
mapfile -t r <<<"$rows"
frames() {  # frames a stream of RATE Mb/s sends in 3 s: ceil(3 s x rate / (1048 B x 8))
    "$RSW_PYTHON" -c 'import sys; r = int(sys.argv[1]) * 10**6; print(-(-3 * 10**12 * r // (1048 * 8 * 10**12)))' "$1"
}
read -r s14 r14 o14 <<<"${r[1]}"
read -r s24 r24 o24 <<<"${r[2]}"
read -r s13 _ _ <<<"${r[0]}"
check_eq "h1 -> h4 sent all its frames" "$s14" "$(frames 200)"
check_eq "h1 -> h4 received every frame" "$r14" "$s14"
check_eq "h1 -> h4 in order" "$o14" "0"
check_eq "h2 -> h4 sent all its frames" "$s24" "$(frames 100)"
check_eq "h2 -> h4 received every frame" "$r24" "$s24"
check_eq "h1 -> h3 sent all its frames (not held by PFC)" "$s13" "$(frames 300)"
fwd="$(rsw_ctl --json show accounting | "$RSW_PYTHON" -c '
import json, sys
p = [x for x in json.load(sys.stdin)["ports"] if x["port"] == "p2"][0]["sent"]
print(p["forwarded"], p["tx"], p["queued"])')"
read -r fwd2 tx2 queued2 <<<"$fwd"
check_eq "p2: forwarded = sent + link_down drops" "$fwd2" "$((tx2 + link_down))"
check_eq "p2 holds nothing" "$queued2" "0"
rsw_assert_accounting
rc=0
stop_switch || rc=$?
check_eq "roceswd exit status" "$rc" "0"
rsw_finish
