#!/usr/bin/python3
"""tools/plot on a small generated trace: a queue that fills and drains, ECN marks while it is
deep, one PFC pause sent and one received, a watchdog storm. Checks the three PNGs exist, are
PNG files and are not trivially small; a malformed trace is refused with exit status 1.

    /usr/bin/python3 test/unit/prom_trace_plot_test.py [path/to/tools/plot]
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "tools", "plot")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_trace(path):
    lines = ["time_ns,event,port,id,value"]
    marks = 0
    for i in range(100):
        t = 1_000_000_000 + i * 10_000_000  # 10 ms samples over 1 s
        depth = (i * 20_000 if i < 50 else (100 - i) * 20_000)
        if depth > 300_000:
            marks += 7
        lines.append("%d,queue_bytes,p1,3,%d" % (t, depth))
        lines.append("%d,queue_packets,p1,3,%d" % (t, depth // 1000))
        lines.append("%d,ecn_marked,p1,3,%d" % (t, marks))
        lines.append("%d,queue_drops,p1,3,0" % t)
        lines.append("%d,queue_bytes,p1,0,0" % t)  # an idle queue: not drawn
    lines += [
        "1300000000,pfc_xoff_sent,p0,3,65535",
        "1600000000,pfc_xon_sent,p0,3,0",
        "1400000000,pfc_xoff_received,p1,3,65535",
        "1450000000,pfc_xoff_received,p1,3,0",
        "1500000000,watchdog_storm,p1,3,1",
        "1550000000,ecn_mark_sample,p1,3,1",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    failures = 0

    def check(ok, what):
        nonlocal failures
        print("%s  %s" % ("PASS" if ok else "FAIL", what))
        failures += 0 if ok else 1

    with tempfile.TemporaryDirectory(prefix="rocesw_plot_") as d:
        trace = os.path.join(d, "trace.csv")
        write_trace(trace)
        out = os.path.join(d, "png")
        r = subprocess.run([sys.executable, PLOT, trace, "-o", out, "--title", "test"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "tools/plot exits 0 (%s)" % r.stderr.strip()[-300:])
        for name in ("queue_depth.png", "pause_timeline.png", "ecn_marks.png"):
            p = os.path.join(out, name)
            ok = os.path.isfile(p)
            check(ok, "%s written" % name)
            if ok:
                with open(p, "rb") as f:
                    data = f.read()
                check(data.startswith(PNG_MAGIC), "%s is a PNG" % name)
                check(len(data) > 5000, "%s has content (%d bytes)" % (name, len(data)))

        # A trace without PFC or marks still yields all three figures.
        quiet = os.path.join(d, "quiet.csv")
        with open(quiet, "w") as f:
            f.write("time_ns,event,port,id,value\n5,queue_bytes,p0,0,0\n")
        r = subprocess.run([sys.executable, PLOT, quiet, "-o", os.path.join(d, "q")],
                           capture_output=True, text=True)
        check(r.returncode == 0 and len(os.listdir(os.path.join(d, "q"))) == 3,
              "an event-less trace still gives three figures")

        bad = os.path.join(d, "bad.csv")
        with open(bad, "w") as f:
            f.write("time,what\n1,2\n")
        r = subprocess.run([sys.executable, PLOT, bad, "-o", os.path.join(d, "b")],
                           capture_output=True, text=True)
        check(r.returncode == 1 and "header" in r.stderr, "a malformed trace exits 1")

    print("prom_trace_plot_test: %s" % ("PASS" if failures == 0 else "FAIL"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
