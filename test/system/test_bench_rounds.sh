#!/usr/bin/env bash
# tools/bench's throughput rounds (doc/performance.md "Method"): a round starts every program
# afresh, pins its forwarding thread to one CPU (--fwd-cpu, the lowest by default) and parks it;
# then each program forwards alone for its window, in alternating order. Exactly:
#   - one row per program and round, in the round's order (forward, then reverse), each with
#     packets forwarded and the thread on the lowest CPU the bench may use;
#   - roceswd's counters on each of its rows (read with the process resumed): every packet in
#     queue 0 (rsw-pass: one class), no drop of any reason, no lossless drop;
#   - no program left running or parked afterwards;
#   - a --fwd-cpu that is not a CPU the bench may use is refused with the list.
# Rates are printed, not judged (a shared machine).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rsw_require_root
rsw_init

out="$RSW_TMP/rounds.json"
check "two rounds of testpmd and rsw-pass at 64 B (tools/bench --pairs 2)" \
    timeout 240 "$RSW_PYTHON" "$RSW_REPO/tools/bench" --no-setup --build-dir "$BUILD_DIR" \
    --work-dir "$RSW_TMP" --out "$out" --sizes 64 --pairs 2 --programs testpmd,rsw-pass \
    --routes 1024 --duration 0.5 --warmup 0.5 --no-lossless --start-timeout 60

"$RSW_PYTHON" - "$out" > "$RSW_TMP/checks.txt" <<'EOF' || true
import json
import os
import sys

d = json.load(open(sys.argv[1]))
cpu = min(os.sched_getaffinity(0))


def check(ok, what):
    print(("ok " if ok else "FAIL ") + what)


rows = d["runs"]
order = [(r["round"], r["program"]) for r in rows]
want = [(0, "testpmd"), (0, "rsw-pass"), (1, "rsw-pass"), (1, "testpmd")]
check(order == want, f"one row per program and round, in the rounds' order: {order}")
check(d["params"]["fwd_cpu"] == cpu, f"params: forwarding threads on CPU {d['params']['fwd_cpu']}")
for r in rows:
    name = f"round {r['round']} {r['program']}"
    check(not r.get("error") and (r.get("mpps") or 0) > 0,
          f"{name}: forwarded {r.get('mpps')} Mpps ({r.get('error', 'no error')})")
    check(r.get("fwd_cpu") == cpu, f"{name}: its forwarding thread ran on CPU {r.get('fwd_cpu')}")
    if r["program"] == "rsw-pass":
        q = r.get("classes", {})
        enq = q.get("0", {}).get("enq", 0)
        others = sum(c["enq"] for k, c in q.items() if k != "0")
        check(enq > 0 and others == 0 and all(c["drops"] == 0 for c in q.values()),
              f"{name}: queue 0 enqueued {enq}, other queues {others}, no queue drops")
        check(r.get("lossless_drops") == 0 and r.get("switch_drops") == {},
              f"{name}: lossless drops {r.get('lossless_drops')}, drops by reason "
              f"{r.get('switch_drops')}")
    print(f"info {name}: {r.get('mpps', 0):.2f} Mpps, thread CPU {r.get('fwd_thread_cpu')}, "
          f"started in {r.get('startup_s')} s")
EOF
rsw_report_checks "$RSW_TMP/checks.txt" "the bench's results ($out)"

left="$(pgrep -f -- "$RSW_TMP/" || true)"
if [ -z "$left" ]; then
    rsw_pass "no program of the bench left running or parked"
else
    rsw_fail "programs of the bench left: $left"
    kill -CONT $left 2>/dev/null || true
    kill $left 2>/dev/null || true
fi

bad="$("$RSW_PYTHON" "$RSW_REPO/tools/bench" --no-setup --build-dir "$BUILD_DIR" \
    --work-dir "$RSW_TMP" --fwd-cpu 4096 --sizes 64 2>&1 || true)"
case "$bad" in
    *"--fwd-cpu 4096: one of the CPUs it may use"*) rsw_pass "--fwd-cpu 4096 refused: $bad" ;;
    *) rsw_fail "--fwd-cpu 4096 refused with the CPUs listed: $bad" ;;
esac
rsw_finish
