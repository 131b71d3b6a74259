#!/usr/bin/env bash
# TESTPLAN "Load": a lossless class loses nothing at any offered load with PFC on; loss and the
# switch's added latency are reported per class.
#
# Runs tools/bench's lossless load sweep (tools/bench_lib/lossless.py, doc/performance.md
# "Lossless check"): roceswd with four memif ports at 1 Gb/s and the lab's NVIDIA RoCE profile
# (DSCP 26 -> TC 3, PFC on priority 3); one rocehost emulating h1, h2, h4 that send h3
# constant-rate UDP streams of LOAD/3 of 1 Gb/s each, 90 % in the lossless class and 10 % lossy
# (TC 0); the hosts pause on PFC. At each load below, above and far
# above the bottleneck (0.5, 1, 2, 3 times p2's rate), exactly:
#   - every stream sent the frames its rate and time give (the load was offered);
#   - lossless: every frame arrived, in order; the switch enqueued them all on p2's queue 3 and
#     dropped none there, none for want of headroom, and none for any reason;
#   - lossy: what did not arrive is what p2's queue 0 dropped;
#   - above the bottleneck the switch sent PFC and the senders honored it;
#   - the latency histograms counted every frame the switch forwarded, per class.
# The latencies and pause counts are printed, not judged (a shared machine).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${ROCEHOST:=$BUILD_DIR/app/rocehost/rocehost}"
rsw_require_root
rsw_init

loads="0.5,1,2,3"
seconds="0.3"
out="$RSW_TMP/sweep.json"
check "the sweep runs (tools/bench --lossless --lossless-parts sweep)" \
    timeout 240 "$RSW_PYTHON" "$RSW_REPO/tools/bench" --lossless --no-setup \
    --build-dir "$BUILD_DIR" --work-dir "$RSW_TMP" --out "$out" --start-timeout 60 \
    --lossless-parts sweep --lossless-loads "$loads" --lossless-seconds "$seconds" \
    --lossless-prefix "$(rsw_file_prefix)"

# One line per check from the JSON: "ok|FAIL <what>".
"$RSW_PYTHON" - "$out" "$loads" "$seconds" > "$RSW_TMP/checks.txt" <<'EOF' || true
import json
import sys

r = json.load(open(sys.argv[1]))["lossless"]["sweep"]
loads = [float(x) for x in sys.argv[2].split(",")]
stop_ps = round(float(sys.argv[3]) * 1e9) * 1000


def check(ok, what):
    print(("ok " if ok else "FAIL ") + what)


def frames(mbps):
    # rocehost's UdpSchedule: frame k leaves at floor(k x wire bits x 1e12 / rate) ps while that
    # is before the stop: ceil(stop x rate / (wire bits x 1e12)) frames.
    bits_ps = (r["lab"]["frame_bytes"] + 24) * 8 * 10**12
    return -(-stop_ps * mbps * 10**6 // bits_ps)


check("error" not in r, f"the sweep ran: {r.get('error', 'no error')}")
pts = r["points"]
check([p["load"] for p in pts] == loads, f"one point per load {loads}: {[p['load'] for p in pts]}")
for p in pts:
    L = p["load"]
    ll, ly = p["classes"]["lossless"], p["classes"]["lossy"]
    st = p["streams"]
    # Each of the three senders offers L/3 of 1 Gb/s: 90 % lossless, 10 % lossy (Mb/s, rounded).
    check(sorted(u["src"] for u in st) == ["h1", "h1", "h2", "h2", "h4", "h4"] and
          all(u["mbps"] == max(1, round(L * 1000 * (0.9 if u["class"] == "lossless" else 0.1) / 3))
              for u in st),
          f"load {L}: 2 streams from each of h1, h2, h4 at 90/10 % of L/3 Gb/s: "
          f"{[(u['src'], u['class'], u['mbps']) for u in st]}")
    check(all(u["sent"] == frames(u["mbps"]) for u in st),
          f"load {L}: each stream sent what its rate and time give: "
          f"{[(u['sent'], frames(u['mbps'])) for u in st]}")
    check(ll["sent"] == sum(u["sent"] for u in st if u["class"] == "lossless") and
          ly["sent"] == sum(u["sent"] for u in st if u["class"] == "lossy"),
          f"load {L}: per class {ll['sent']} lossless, {ly['sent']} lossy")
    check(ll["lost"] == 0 and ll["received"] == ll["sent"],
          f"load {L}: lossless received {ll['received']} of {ll['sent']}")
    check(ll["out_of_order"] == 0, f"load {L}: lossless in order ({ll['out_of_order']} out of order)")
    check(ll["switch_enqueued"] == ll["sent"],
          f"load {L}: p2 queue 3 enqueued {ll['switch_enqueued']} = sent")
    check(ll["switch_drops"] == 0, f"load {L}: p2 queue 3 dropped {ll['switch_drops']}")
    check(p["headroom_drops"] == 0, f"load {L}: {p['headroom_drops']} headroom drops")
    check(ly["lost"] == ly["switch_drops"],
          f"load {L}: lossy lost {ly['lost']} = p2 queue 0 drops {ly['switch_drops']}")
    check(ly["switch_enqueued"] == ly["received"],
          f"load {L}: p2 queue 0 enqueued {ly['switch_enqueued']} = received {ly['received']}")
    other = p["switch_drops"]
    check(sum(other.values()) == ly["switch_drops"],
          f"load {L}: the switch's drops {other or 'none'} are the lossy queue's "
          f"{ly['switch_drops']}")
    check(ll["latency_packets"] == ll["received"] and ly["latency_packets"] == ly["received"],
          f"load {L}: latency counted {ll['latency_packets']} + {ly['latency_packets']} frames "
          f"= received {ll['received']} + {ly['received']}")
    if L > 1:
        check(p["pfc_sent"] > 0 and sum(p["hosts_paused"].values()) > 0,
              f"load {L}: PFC sent {p['pfc_sent']}, honored {p['hosts_paused']}")
    print(f"info load {L}: lossless p50/p99/max {ll['latency_us']['p50']}/"
          f"{ll['latency_us']['p99']}/{ll['latency_us']['max']} us, lossy "
          f"{ly['latency_us']['p50']}/{ly['latency_us']['p99']}/{ly['latency_us']['max']} us, "
          f"XOFF {p['pfc_sent']}, peers paused {p['paused_peer_ms']} ms, PG watermark "
          f"{p['pg_watermark_bytes']} B, lossy lost {ly['lost']}, took {p['rocehost_s']} s")
EOF
rsw_report_checks "$RSW_TMP/checks.txt" "the sweep's results ($out)"
rsw_finish
