#!/bin/sh
# rocelab's report and comparison on sim runs: `rocelab run` writes report.html with its seven
# figures inlined, Chromium renders it with no console error and every image decoded
# (check_report.py; skipped when chromium is missing); `rocelab compare` of a run with itself
# flags nothing, of incast-dcqcn against incast-pfc flags the PFC frames; the same scenario
# under two seeds gives a table; --engine real without tools/rocelab_lib/real.py is a clear
# error. Usage: report_and_compare.sh (rocesim from $ROCESIM or build/).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
lab="$root/tools/rocelab"
tmp=$(mktemp -d /tmp/rocelab-report-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

"$lab" --help | grep -q "rocelab run SCENARIO" || fail "--help"
"$lab" run "$root/config/scenarios/victim-flow.yaml" --out "$tmp/victim" >/dev/null
for f in report.html fabric.png flow_rates.png queue_depth.png pause_timeline.png \
         ecn_marks.png fct_slowdown.png link_load.png fct.txt summary.json links.csv \
         port_samples.csv topology.txt rocelab.json switch_latency.csv; do
  [ -s "$tmp/victim/$f" ] || fail "run wrote no $f"
done
[ "$(grep -c 'src="data:image/png;base64,' "$tmp/victim/report.html")" -eq 7 ] || fail "7 inline figures"
grep -q "head-of-line blocking" "$tmp/victim/report.html" || fail "the scenario's text is in the report"
if grep -Eq '(src|href)="https?:' "$tmp/victim/report.html"; then fail "report refers to the network"; fi
rm "$tmp/victim/report.html" "$tmp/victim/fabric.png"
"$lab" report "$tmp/victim" >/dev/null
[ -s "$tmp/victim/report.html" ] && [ -s "$tmp/victim/fabric.png" ] || fail "rocelab report DIR"
set +e
/usr/bin/python3 "$root/test/lab/check_report.py" "$tmp/victim/report.html" --min-images 7
rc=$?
set -e
[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "the report does not render cleanly in Chromium"

"$lab" compare "$tmp/victim" "$tmp/victim" > "$tmp/same.txt"
grep -q "^0 of [0-9]* rows differ" "$tmp/same.txt" || fail "a run against itself differs"
"$lab" run "$root/config/scenarios/incast-dcqcn.yaml" --out "$tmp/dcqcn" --no-report >/dev/null
"$lab" run "$root/config/scenarios/incast-pfc.yaml" --out "$tmp/pfc" --no-report >/dev/null
"$lab" compare "$tmp/dcqcn" "$tmp/pfc" --out "$tmp/cmp" > /dev/null
cat "$tmp/cmp.txt"
grep -E "^pfc_frames .*DIFFERS" "$tmp/cmp.txt" >/dev/null || fail "PFC frames not flagged"
grep -E "^FCT slowdown median 1MB-10MB " "$tmp/cmp.txt" >/dev/null || fail "no FCT row"
grep -E "^load sw8->h0 " "$tmp/cmp.txt" >/dev/null || fail "no per-link load row"
# Each switch's time per class (switch_latency.csv): the incast's lossless class (TC 3) at its
# switch waits longer behind PFC's deep queue than behind DCQCN's ECN-held one.
grep -E "^latency p99 sw8 TC3 \(us\) " "$tmp/cmp.txt" >/dev/null || fail "no per-class latency row"
/usr/bin/python3 - "$tmp/dcqcn/switch_latency.csv" "$tmp/pfc/switch_latency.csv" <<'PY' || fail "latency: PFC's queue not the longer wait"
import csv, sys
p99 = [{(r["node"], r["tc"]): int(r["p99_ns"]) for r in csv.DictReader(open(f))} for f in sys.argv[1:]]
print("sw8 TC3 p99: dcqcn %d ns, pfc %d ns" % (p99[0][("8", "3")], p99[1][("8", "3")]))
assert 0 < p99[0][("8", "3")] < p99[1][("8", "3")], p99
PY
grep -q "Time in each switch, per class" "$tmp/victim/report.html" || fail "no latency table in the report"
[ -s "$tmp/cmp.html" ] || fail "compare.html"
# Two seeds of one scenario (the seed moves the ECMP-independent random streams only).
"$lab" run "$root/config/scenarios/incast-dcqcn.yaml" --out "$tmp/seed2" --seed 2 --no-report >/dev/null
"$lab" compare "$tmp/dcqcn" "$tmp/seed2" | tail -1 | grep -q "rows differ" || fail "seed compare"

if [ ! -f "$root/tools/rocelab_lib/real.py" ]; then
  set +e
  "$lab" run "$root/config/scenarios/incast-dcqcn.yaml" --engine both --out "$tmp/both" 2> "$tmp/err"
  rc=$?
  set -e
  [ $rc -ne 0 ] && grep -q "real engine not built yet" "$tmp/err" || fail "--engine both without real.py"
fi
echo "report and compare: ok"
