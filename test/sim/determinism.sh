#!/bin/sh
# Runs rocesim twice on one scenario and compares every output file byte for byte
# (summary.json without its wall_time_s and peak_rss_kb lines).
set -eu
rocesim=$1
scenario=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$rocesim" --scenario "$scenario" --out "$d/a" --seed 7
"$rocesim" --scenario "$scenario" --out "$d/b" --seed 7
for f in fct.txt pfc_events.csv queue_depth.csv udp_flows.csv udp_delays.csv; do
    cmp "$d/a/$f" "$d/b/$f"
done
grep -v -e wall_time_s -e peak_rss_kb "$d/a/summary.json" > "$d/a.json"
grep -v -e wall_time_s -e peak_rss_kb "$d/b/summary.json" > "$d/b.json"
cmp "$d/a.json" "$d/b.json"
test "$(wc -l < "$d/a/udp_delays.csv")" -gt 100
echo "identical: $(ls "$d/a" | tr '\n' ' ')"
