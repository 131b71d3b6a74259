#!/usr/bin/python3
"""rocelab's real engine builds queue_depth.csv from the switches' event traces
(tools/rocelab_lib/real.py switch_queue_depth): a handcrafted trace of two sample rounds plus
samples before time 0 and after the run's end, on a switch clock 5 s behind CLOCK_MONOTONIC,
becomes rocesim's rows on the scenario's clock: bytes and packets of one (time, port, queue)
joined, empty queues and other events left out, nothing outside [0, end]. Also the trace's
sample period (trace_interval_ms): the scenario's sample_interval rounded up to ms, at least
1 ms, at most 1 s, coarser for a long --timeout. No processes started."""
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from rocelab_lib import real  # noqa: E402

failed = 0


def check_eq(what, got, want):
    global failed
    ok = got == want
    failed += not ok
    print(("ok  " if ok else "FAIL") + f" {what}" + ("" if ok else f": got {got!r}, want {want!r}"))


lab = {"sample_interval_ns": 100_000,
       "nodes": [{"kind": "host", "name": "h0", "id": 0},
                 {"kind": "switch", "name": "leaf0", "id": 4},
                 {"kind": "switch", "name": "leaf1", "id": 5}]}
# switch clock + 5 s = CLOCK_MONOTONIC; the scenario's time 0 at monotonic 7 s (switch 2 s)
switches = {"leaf0": {"clock_offset_ns": 5_000_000_000}, "leaf1": {"clock_offset_ns": None}}
t0 = 7_000_000_000
TRACE = """time_ns,event,port,id,value
1999000000,queue_bytes,p2,3,9000
1999000000,queue_packets,p2,3,9
2001000000,queue_bytes,p0,3,65536
2001000000,queue_packets,p0,3,64
2001000000,ecn_marked,p0,3,7
2001000000,queue_drops,p0,3,0
2001000000,queue_bytes,p1,0,0
2001000000,queue_packets,p1,0,0
2001500000,pfc_xoff_sent,p1,3,65535
2002000000,queue_bytes,p0,3,1024
2002000000,queue_packets,p0,3,1
2002000000,queue_bytes,p1,0,2048
2002000000,queue_packets,p1,0,2
2009000000,queue_bytes,p0,3,4096
2009000000,queue_packets,p0,3,4
"""
with tempfile.TemporaryDirectory() as out:
    os.makedirs(os.path.join(out, "switches"))
    for name in ("leaf0", "leaf1"):  # leaf1: no clock offset, so its trace is not read
        with open(os.path.join(out, "switches", name + ".trace.csv"), "w") as f:
            f.write(TRACE)
    check_eq("queue samples on the scenario's clock, within [0, end], non-empty only",
             real.switch_queue_depth(lab, out, switches, t0, 5_000_000),
             [(1_000_000, 4, 0, 3, 65536, 64), (2_000_000, 4, 0, 3, 1024, 1),
              (2_000_000, 4, 1, 0, 2048, 2)])
    check_eq("no end (0): every sample from time 0 on",
             len(real.switch_queue_depth(lab, out, switches, t0, 0)), 4)
    check_eq("PFC events from the same trace on the same clock",
             real.switch_pfc_events(lab, out, switches, t0),
             [(1_500_000, 4, 1, 3, "xoff", 65535)])
    check_eq("no sample_interval: no samples (as rocesim)",
             real.switch_queue_depth(dict(lab, sample_interval_ns=0), out, switches, t0, 0), [])

for ns, timeout, want in ((100_000, 100, 1), (10_000, 120, 1), (2_500_000, 100, 3),
                          (0, 100, 1000), (5_000_000_000, 100, 1000), (1_000_000, 1000, 5)):
    check_eq(f"trace interval for sample_interval {ns} ns, --timeout {timeout}",
             real.trace_interval_ms({"sample_interval_ns": ns}, timeout), want)
sys.exit(1 if failed else 0)
