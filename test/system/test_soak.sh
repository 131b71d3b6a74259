#!/bin/bash
# System test: tools/soak --minutes 1 (issue 21, part 3): the two-switch memif lab with BGP
# under traffic, route churn, session flaps, scrapes and PFC watchdog trips passes its verdict
# (RSS, DPDK heap and mbufs back to baseline, FIB back to baseline, accounting balanced, no
# lossless drop, no log error), and its samples.csv has a row per switch and sample with the
# documented columns.
# About 2 minutes. Needs root and BIRD 2. Run: sudo test/system/test_soak.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rsw_require_root
if [ "${RSW_BGP_KERNEL_SWITCH:-0}" = 1 ]; then
    echo "SKIP $(basename "$0"): the soak runs roceswd (no kernel mode)"
    exit "$RSW_SKIP"
fi

rsw_init
OUT="$RSW_TMP/out"
echo "== $(basename "$0"): tools/soak --minutes 1 --out $OUT"
t0=$(date +%s)
rc=0
"$RSW_REPO/tools/soak" --minutes 1 --out "$OUT" >"$RSW_TMP/soak.log" 2>&1 || rc=$?
sed 's/^/    | /' "$RSW_TMP/soak.log" | tail -n 20
check_eq "tools/soak --minutes 1 exits 0 ($(( $(date +%s) - t0 )) s)" "$rc" 0
check "tools/soak prints its verdict: PASS" grep -q 'soak: PASS' "$RSW_TMP/soak.log"

# summary.json: the verdict and every check passed; the load really ran.
check "summary.json: verdict pass, every check ok, the load ran" "$RSW_PYTHON" - "$OUT/summary.json" <<'EOP'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["verdict"] == "pass", s["verdict"]
assert s["checks"] and all(c["ok"] for c in s["checks"]), [c for c in s["checks"] if not c["ok"]]
for k in ("route_changes", "flaps", "scrapes", "storms", "wd_storms_A", "udp_received"):
    assert s["load"][k] > 0, k
for sw in ("A", "B"):
    assert s["switches"][sw]["final"]["accounting"] == "balanced"
EOP

# samples.csv: the header, and per switch 1 baseline + 6 soak (every 10 s) + 1 final rows.
check "samples.csv: columns, 16 rows (2 switches x baseline + 6 soak + final), numeric fields" \
    "$RSW_PYTHON" - "$OUT/samples.csv" <<'EOP'
import csv, sys
cols = ("t_s,phase,switch,rss_kb,rss_anon_kb,rss_shmem_kb,dpdk_heap_bytes,mbufs_in_use,mbufs_size,routes,groups,accounting,rx_packets,"
        "tx_packets,drops,lossless_drops,wd_storms,route_changes,flaps,rocectl_calls,scrapes,"
        "storms").split(",")
r = csv.reader(open(sys.argv[1]))
assert next(r) == cols, "header"
rows = [dict(zip(cols, x)) for x in r]
assert len(rows) == 16, len(rows)
for sw in "AB":
    phases = [x["phase"] for x in rows if x["switch"] == sw]
    assert phases == ["baseline"] + ["soak"] * 6 + ["final"], phases
for x in rows:
    assert len(x) == len(cols)
    for c in cols:
        if c not in ("phase", "switch", "accounting"):
            assert int(x[c]) >= 0, (c, x[c])
    assert int(x["rss_kb"]) > int(x["rss_shmem_kb"]) > 0 and int(x["dpdk_heap_bytes"]) > 0
    assert int(x["mbufs_in_use"]) > 0 and int(x["routes"]) > 0
    assert x["accounting"] == "balanced" or x["accounting"].startswith("unbalanced")
EOP
check "no namespace or switch of the soak is left" bash -c \
    "! ip netns list | grep -q \"\$(sed -n 's/.*tag \\(rsw[0-9a-f]*\\),.*/\\1/p' '$RSW_TMP/soak.log')\""
rsw_finish
