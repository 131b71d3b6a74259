#!/usr/bin/python3
"""rocelab's real engine moves a link event's routes (--routing static) switch by switch in an
order that forms no transient loop (tools/rocelab_lib/real.py route_update_order): on the 2x2
leaf-spine of link-failure-lab (hosts 0-3, leaves 4-5, spines 6-7), when leaf0-spine0 fails
spine0's new route to leaf0's hosts goes through leaf1, so leaf1 (which drops spine0) must be
updated first; when it comes back leaf1 sends to spine0 again, so spine0 (direct to leaf0
again) must be updated first. Updated in the lab's order the restore looped leaf1 <-> spine0
and PFC froze the loop (seen in real_labs.sh). No processes started."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from rocelab_lib import real  # noqa: E402

failed = 0


def check(what, ok):
    global failed
    failed += not ok
    print(("ok  " if ok else "FAIL") + " " + what)


# Cabling: (a, port_a, b, port_b); leaf L's hosts are 11.0.(2(L-4)+i).0/24.
LINKS = [(0, 0, 4, 0), (1, 0, 4, 1), (2, 0, 5, 0), (3, 0, 5, 1),
         (4, 2, 6, 0), (4, 3, 7, 0), (5, 2, 6, 1), (5, 3, 7, 1)]
lab = {"links": [{"a": a, "port_a": pa, "b": b, "port_b": pb} for a, pa, b, pb in LINKS]}
P0, P1 = ["11.0.0.0/24", "11.0.1.0/24"], ["11.0.2.0/24", "11.0.3.0/24"]


def routes(prefixes, *ports):
    return [{"prefix": p, "next_hops": [{"port": q, "via": "x"} for q in ports]} for p in prefixes]


down = {"4": routes(P1, 3), "5": routes(P0, 3), "6": routes(P0 + P1, 1),
        "7": routes(P0, 0) + routes(P1, 1)}
up = {"4": routes(P1, 2, 3), "5": routes(P0, 2, 3), "6": routes(P0, 0) + routes(P1, 1),
      "7": routes(P0, 0) + routes(P1, 1)}


def before(order, a, b):
    return order.index(a) < order.index(b)


o = real.route_update_order(lab, down)
check(f"link down: every switch once ({o})", sorted(o) == [4, 5, 6, 7])
check("link down: leaf1 (drops spine0) before spine0 (now via leaf1)", before(o, 5, 6))
check("link down: spine1 (leaf0's and leaf1's only spine left) before both leaves",
      before(o, 7, 4) and before(o, 7, 5))
o = real.route_update_order(lab, up)
check(f"link up: every switch once ({o})", sorted(o) == [4, 5, 6, 7])
check("link up: spine0 (direct to leaf0 again) before leaf1 (sends to spine0 again)",
      before(o, 6, 5))
check("link up: spine0 before leaf0 (sends to spine0 again)", before(o, 6, 4))
# A cycle over every destination together still gives every switch once, in the lab's order.
ring = {"links": [{"a": 1, "port_a": 0, "b": 2, "port_b": 0}, {"a": 2, "port_a": 1, "b": 1,
                                                                "port_b": 1}]}
o = real.route_update_order(ring, {"1": routes(["10.0.0.0/24"], 0), "2": routes(["10.0.0.0/24"], 1)})
check(f"a cycle: every switch once, the lab's order ({o})", o == [1, 2])
sys.exit(1 if failed else 0)
