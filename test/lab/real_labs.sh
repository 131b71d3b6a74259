#!/bin/bash
# The real-engine lab runs (`tools/test --labs`, doc/rocelab.md "Tests"): every scenario of
# config/scenarios that the real engine runs on two cores (1 Gb/s links, RoCE flows) with
# `rocelab run --engine real`, each asserting that every flow completed, every switch's
# accounting identity balanced and the effect the scenario is named after, from summary.json;
# then the scenarios it refuses, with their exact messages. Ends with a table of the figures
# (wall time, FCTs, PFC, ECN, drops, distortion) for the doc. Root (DPDK runtime directories);
# 5-10 minutes on a shared 2-core machine, so not part of the default suite.
#
#   sudo test/lab/real_labs.sh [FILTER]     # FILTER: only scenarios whose name contains it
set -euo pipefail
source "$(dirname "$0")/../system/lib.sh"
rsw_init
FILTER="${1:-}"
rsw_rocelab_init
SC="$RSW_REPO/config/scenarios"
d="$RSW_TMP"
rows=()

# effect NAME: the scenario's own assertion on OUT/summary.json (Python, d = the summary).
# Collective jobs: every iteration completed, its time in jobs.csv positive, no drop.
JOBS_DONE='d["jobs"]["completed"] == 1 and d["jobs"]["iterations_completed"] == d["jobs"]["iterations"] == 4 and len(r.jobs) == 5 and all(int(j["duration_ns"]) > 0 for j in r.jobs) and d["switch_drops"] == {}'
declare -A EFFECT=(
  [leaf-spine-small]='all(min(p["tx_packets"] for p in d["switches"][l]["ports"] if p["peer"].startswith("spine")) >= 100 for l in ("leaf0", "leaf1")) and d["switch_drops"] == {}'
  [victim-flow-lab]='d["switch_totals"]["pfc_xoff_sent"] > 0 and d["switch_drops"] == {}'
  [incast-lab]='d["switch_totals"]["pfc_xoff_sent"] > 0 and d["switch_drops"] == {} and d["roce"]["cnps_sent"] == 0'
  [pfc-storm-lab]='d["switches"]["leaf0"]["pfc"]["watchdog_storms"] >= 1 and d["switch_totals"]["watchdog_restores"] >= 1 and d["switch_drops"].get("pfc_watchdog", 0) > 0 and d["events_applied"][0]["pfc_xoff_tx"] >= 5'
  [ecmp-collision-lab-hash]='imb >= 0.9 and d["switch_drops"] == {}'
  [ecmp-collision-lab-flowlet]='d["switch_drops"] == {}'
  [ecn-vs-pfc-lab-below]='d["switch_totals"]["ecn_marked"] > 0 and d["roce"]["cnps_sent"] > 0 and d["switch_drops"] == {}'
  [ecn-vs-pfc-lab-above]='d["switch_drops"] == {}'
  [traffic-classes-lab]='(q := d["switches"]["leaf0"]["queues"])["0"]["drops"] > 0 and q["3"]["enq_packets"] > 0 and all(x["queues"].get("3", {}).get("drops", 0) == 0 for x in d["switches"].values()) and d["udp"]["sent"] > d["udp"]["received"] > 0'
  [collective-lab]="$JOBS_DONE"
  [collective-classes-lab]='d["jobs"]["completed"] == 2 and d["jobs"]["iterations_completed"] == 5 and all(x["queues"].get("0", {}).get("enq_packets", 0) > 0 for n, x in d["switches"].items() if n.startswith("leaf")) and all(x["queues"].get("3", {}).get("drops", 0) == 0 for x in d["switches"].values())'
  [collective-lab-incast]="$JOBS_DONE"' and d["switch_totals"]["pfc_xoff_sent"] > 0'
  [pfc-deadlock-lab]='xoff_traced >= d["switch_totals"]["pfc_xoff_sent"] > 0 and all(ring(c) and b - a < 400e6 for a, b, c in cycles) and set(storms) <= ring_ports and d["switch_drops"] == {}'
  [pfc-deadlock-lab-no-watchdog]='xoff_traced >= d["switch_totals"]["pfc_xoff_sent"] > 0 and all(ring(c) for a, b, c in cycles) and (d["completed"] == 0) == closed_at_end == all(p["pfc_paused_now"] for p in ring_egress) and d["switch_drops"] == {}'
  [link-failure-lab]='[e["kind"] for e in d["events_applied"]] == ["link_down", "link_up"] and all("routes_moved_at_ns" in e for e in d["events_applied"]) and d["switch_drops"] == {} and d["link_drops"]["link_down"] == sum(x["drops_by_reason"].get("port_stopped", 0) for x in d["switches"].values())'
)
# Extra rocelab arguments: link-failure-lab's link is down for 20 ms, which the engine's timed
# route move (--routing static) follows; BGP over one shared kernel may not see so short a
# failure (doc/rocelab.md, "Routing").
declare -A ARGS=([link-failure-lab]="--routing static")
declare -A WHAT=(
  [leaf-spine-small]="both uplinks of each leaf carry traffic (hash ECMP), no drop"
  [victim-flow-lab]="the incast makes the switches send XOFF, no drop"
  [incast-lab]="PFC holds the 3:1 incast: XOFFs, no drop, no CNP (DCQCN off)"
  [pfc-storm-lab]="host1's storm trips leaf0's watchdog (storm, restore, pfc_watchdog drops)"
  [ecmp-collision-lab-hash]="hash ECMP: both elephants on one uplink of leaf0 (imbalance >= 0.9), no drop"
  [ecmp-collision-lab-flowlet]="flowlet: no drop (imbalance against hash's below)"
  [ecn-vs-pfc-lab-below]="ECN below XOFF: marks and CNPs, no drop"
  [ecn-vs-pfc-lab-above]="ECN above XOFF: no drop (against -below's marks below)"
  [link-failure-lab]="the link goes down and up, routes move each time, losses counted per link"
  [traffic-classes-lab]="per-queue counters: leaf0's queue 0 (lossy) drops, queue 3 (lossless) forwards and drops nowhere; UDP loses packets"
  [collective-lab]="ring all-reduce: every iteration completes, iteration times > 0, no drop"
  [collective-classes-lab]="two jobs, two classes: both complete; the lossy all-to-all in queue 0 at both leaves, no lossless queue drops"
  [collective-lab-incast]="the same with an incast: every iteration completes, XOFFs, no drop"
  [pfc-deadlock-lab]="every switch XOFF on the timeline (traces); a pause cycle is the ring's and the watchdog breaks it (< 400 ms), storms on ring ports only, no drop"
  [pfc-deadlock-lab-no-watchdog]="every switch XOFF on the timeline; a pause cycle is the ring's; no flow completes exactly when the cycle is closed at the end (traces) and every ring egress is paused when read (counters); no drop"
)
# The ring's deadlock without a watchdog: no flow completes (rocelab exits 1) when the cycle
# closes, which on a shared machine it does only when stalls line up (doc/rocelab.md,
# "Figures"): either exit status.
declare -A RC=([pfc-deadlock-lab-no-watchdog]=any)

for name in leaf-spine-small victim-flow-lab incast-lab pfc-storm-lab link-failure-lab \
        traffic-classes-lab pfc-deadlock-lab pfc-deadlock-lab-no-watchdog \
        ecmp-collision-lab-hash ecmp-collision-lab-flowlet ecn-vs-pfc-lab-below \
        ecn-vs-pfc-lab-above collective-lab collective-lab-incast collective-classes-lab; do
    [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
    out="$d/$name"
    rc=0
    # shellcheck disable=SC2086  # ARGS: words
    timeout 300 "$LAB" run "$SC/$name.yaml" --engine real ${ARGS[$name]:-} --out "$out" --timeout 120 \
        > "$d/$name.log" 2>&1 || rc=$?
    tail -n 4 "$d/$name.log"
    s="$out/summary.json"
    if [ "${RC[$name]:-0}" = 0 ]; then
        check_eq "$name: rocelab run exits 0 (every flow completed)" "$rc" "0"
    else
        check "$name: rocelab run exits 0 or 1 (flows stuck), not an error" test "$rc" -le 1
    fi
    [ -f "$s" ] || continue
    check_eq "$name: every switch's accounting identity balanced" \
        "$("$RSW_PYTHON" -c 'import json,sys; a=json.load(open(sys.argv[1]))["accounting"]; print(a["verdict"], a["balanced"] == a["switches"])' "$s")" "balanced True"
    check "$name: ${WHAT[$name]}" env PYTHONPATH="$RSW_REPO/tools" "$RSW_PYTHON" -c \
        'import sys
from rocelab_lib.results import Results
r = Results(sys.argv[1]); d = r.summary; imb = r.imbalance()
# the ring scenarios: switches 5-9, ports p1 and p2 on the ring; a ring egress is a port whose
# peer is the next switch clockwise (its pauses come from that switch)
ring = lambda c: {x[0] for x in c} == {5, 6, 7, 8, 9}
ring_ports = {(n, p) for n in range(5, 10) for p in (1, 2)}
storms = r.watchdog_storms_by_port()
cycles = r.wait_for_cycles()
iv = r.pause_intervals()  # the ring pauses: each switch pauses the previous one
closed_at_end = all(any(b >= r.duration_ns() for a, b in iv.get((n, 2 if n == 5 else 1, 3), []))
                    for n in range(5, 10))
# the traces also hold the XOFFs sent between the counters being read and the stop
xoff_traced = sum(1 for e in r.pfc if e[4] == "xoff" and r.topo.is_switch(e[1]))
print("  cycles %s, storms %s" % ([("%.1f-%.1f ms" % (a / 1e6, b / 1e6), [x[0] for x in c]) for a, b, c in cycles], storms))
ring_egress = [p for x in d["switches"].values() for p in x["ports"]
               if p["peer"].startswith("switch") and int(p["peer"][6:]) == 5 + (x["node"] - 4) % 5]
sys.exit(not eval(sys.argv[2]))' "$out" "${EFFECT[$name]}"
    # queue_depth.csv from the switches' traces (sampled every sample_interval, 100 us -> 1 ms):
    # rocesim's header and rows, on the scenario's clock within the run, and the incast's queue
    # (leaf0's port to host0, lossless queue 3) held packets.
    if [ "$name" = incast-lab ]; then
        check "$name: queue_depth.csv: rocesim's header, rows within the run every 1 ms, leaf0 p0 q3 (to host0) held packets" \
            "$RSW_PYTHON" -c '
import csv, json, sys
out = sys.argv[1]
d = json.load(open(out + "/summary.json"))
h0 = next(n for n in json.load(open(out + "/lab.json"))["nodes"] if n["name"] == "host0")
with open(out + "/queue_depth.csv") as f:
    header = f.readline().strip()
    rows = [[int(x) for x in r] for r in csv.reader(f)]
times = sorted({r[0] for r in rows})
peak = max([r[4] for r in rows if (r[1], r[2], r[3]) == (h0["switch"], h0["switch_port"], 3)], default=0)
print("  %d rows at %d times in %.1f-%.1f ms of %.1f ms; deepest at leaf0 p0 q3: %d B; trace every %s ms"
      % (len(rows), len(times), times[0] / 1e6 if times else -1, times[-1] / 1e6 if times else -1,
         d["run_ns"] / 1e6, peak, d["real_engine"]["trace_interval_ms"]))
sys.exit(not (header == "time_ns,node,port,queue,depth_bytes,depth_packets"
              and d["real_engine"]["trace_interval_ms"] == 1 and len(times) >= 2
              and all(0 <= r[0] <= d["run_ns"] and (r[4] > 0 or r[5] > 0) for r in rows)
              and peak > 0))' "$out"
    fi
    rows+=("$("$RSW_PYTHON" - "$out" "$name" <<'PY'
import json, sys
out, name = sys.argv[1], sys.argv[2]
d = json.load(open(out + "/summary.json"))
fct = [int(l.split()[6]) / 1e6 for l in open(out + "/fct.txt")]
t = d["switch_totals"]
print("| %s | %s s | %d/%d | %s ms | %d | %d | %d | %d/%d | %s |" % (
    name, d["wall_time"]["total_s"], d["completed"], d["flows"],
    "-".join("%.0f" % x for x in (min(fct), max(fct))) if fct else "-",
    t["pfc_xoff_sent"], t["ecn_marked"], sum(d["switch_drops"].values()) + d["link_drops"]["link_down"],
    t["watchdog_storms"], t["watchdog_restores"],
    "yes (%d us)" % max([d["distortion"]["rocehost_loop_gaps"].get("max_us", 0)] +
                        [g["max_us"] for g in d["distortion"]["switch_poll_gaps"].values()])
    if d["distorted"] else "no"))
PY
)")
done

# traffic-classes-lab: what the sim engine's test asserts (lab_traffic_classes), on the real run.
if [ -f "$d/traffic-classes-lab/summary.json" ]; then
    check "traffic-classes-lab: the lossy class drops, the lossless one pauses (scenario_effects.py --classes)" \
        "$RSW_PYTHON" "$RSW_REPO/test/lab/scenario_effects.py" --classes "$d/traffic-classes-lab"
fi

# collective-classes-lab: what the sim engine's test asserts (lab_collective_classes), on the real run.
if [ -f "$d/collective-classes-lab/summary.json" ]; then
    check "collective-classes-lab: the lossy job drops and resends, the lossless one pauses (scenario_effects.py --job-classes)" \
        "$RSW_PYTHON" "$RSW_REPO/test/lab/scenario_effects.py" --job-classes "$d/collective-classes-lab"
fi

# Variants against each other (both ran): the effect a pair of scenarios is named after.
pair() {  # pair WHAT A B EXPR (Python; a, b: rocelab_lib.results.Results of A and B)
    [ -f "$d/$2/summary.json" ] && [ -f "$d/$3/summary.json" ] || return 0
    check "$1" env PYTHONPATH="$RSW_REPO/tools" "$RSW_PYTHON" -c '
import sys
from rocelab_lib.results import Results
a, b = Results(sys.argv[1]), Results(sys.argv[2])
ta, tb = a.totals(), b.totals()
print("  %s: imbalance %.3f, PFC frames %d, ECN marks %d, CNPs %d; %s: imbalance %.3f, PFC frames %d, ECN marks %d, CNPs %d" % (
    sys.argv[1].rsplit("/", 1)[1], a.imbalance(), ta["pfc_frames"], ta["ecn_marks"], ta["cnps"],
    sys.argv[2].rsplit("/", 1)[1], b.imbalance(), tb["pfc_frames"], tb["ecn_marks"], tb["cnps"]))
sys.exit(not eval(sys.argv[3]))' "$d/$2" "$d/$3" "$4"
}
pair "ecmp-collision-lab: flowlet's uplink imbalance below half of hash's" \
    ecmp-collision-lab-hash ecmp-collision-lab-flowlet 'b.imbalance() < a.imbalance() / 2'
# The PFC side of ecn-vs-pfc (more PFC frames with ECN above XOFF) is asserted in the sim
# engine only (lab_ecn_vs_pfc): here the hosts do not fill h0's 1 Gb/s port, and the XOFFs
# come from the switches' scheduling stalls, not from the incast (doc/rocelab.md, "Figures").
pair "ecn-vs-pfc-lab: ECN below XOFF marks over 5 times as often as ECN above, with more CNPs" \
    ecn-vs-pfc-lab-below ecn-vs-pfc-lab-above \
    'ta["ecn_marks"] > 5 * tb["ecn_marks"] and ta["cnps"] > tb["cnps"]'
# The effect the sim engine shows (lab_collective_lab), in the form the real engine reproduces
# on a loaded machine: the iteration the incast overlaps (the first) is longer. The whole job's
# lengthening varies with the machine's other load between the two runs (doc/rocelab.md).
pair "collective-lab: the background incast lengthens the first iteration by over 20 %" \
    collective-lab collective-lab-incast \
    'int(b.jobs[0]["duration_ns"]) > 1.2 * int(a.jobs[0]["duration_ns"])'

# Scenarios the real engine refuses, with their messages (no process is started).
refused() {  # refused SCENARIO MESSAGE
    local rc=0 msg
    msg="$("$LAB" run "$SC/$1.yaml" --engine real --out "$d/refused-$1" 2>&1 >/dev/null)" || rc=$?
    check_eq "$1: refused by the real engine" "$rc:$msg" "1:$2"
}
if [ -z "$FILTER" ] || [[ "collective-hash incast-pfc" == *"$FILTER"* ]]; then
    refused collective-hash "rocelab: the real engine runs links up to 1 Gb/s on two cores; this scenario has 50 Gb/s links (use its -lab variant, the sim engine, or --any-rate for a distorted run)"
    refused incast-pfc "rocelab: the real engine runs links up to 1 Gb/s on two cores; this scenario has 50 Gb/s links (use its -lab variant, the sim engine, or --any-rate for a distorted run)"
fi

echo
echo "| scenario | wall | flows | FCT min-max | switch XOFF | ECN marks | drops | WD storms/restores | distorted (longest stall) |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
rsw_finish
