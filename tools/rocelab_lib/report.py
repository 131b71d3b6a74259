"""The run report: DIR/report.html, self-contained (figures inlined as base64 PNG, no script,
no network), and the figures as PNG files next to it (plots.FIGURES)."""
import base64
import html
import os

from . import notes, plots
from .results import Results, host_address


def _table(header, rows):
    out = ["<table><tr>" + "".join("<th>%s</th>" % html.escape(str(h)) for h in header) + "</tr>"]
    for row in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % html.escape(str(c)) for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _notes_for(r):
    for p in (os.path.join(r.path, "scenario.yaml"), r.meta.get("scenario", "")):
        if p and os.path.exists(p):
            return notes.read_notes(p)
    return {"title": "", "sections": []}


def findings(r):
    """Facts the report states in words, computed from the result files."""
    out = []
    t = r.totals()
    if t["watchdog_storms"]:
        by_port = r.watchdog_storms_by_port()
        out.append("The PFC watchdog detected %d storm(s) and restored %d queue(s)%s."
                   % (t["watchdog_storms"], t["watchdog_restores"], ": " + ", ".join(
                       "%s p%d (%d)" % (r.topo.name(n), p, k) for (n, p), k in sorted(
                           by_port.items())) if by_port else ""))
    cycles = r.wait_for_cycles()
    for start, end, cyc in cycles[:5]:
        names = " -> ".join("%s (p%d)" % (r.topo.name(n), p) for n, p, _m in cyc)
        out.append("Cycle of paused ports from %.3f to %.3f ms: %s -> back to %s: a cyclic "
                   "buffer dependency (PFC deadlock) while it lasts."
                   % (start / 1e6, end / 1e6, names, r.topo.name(cyc[0][0])))
    lost = [l for l in r.link_loads() if l["lost"]]
    if lost:
        out.append("Frames lost on links: " + ", ".join(
            "%s->%s %d" % (r.topo.name(l["from"]), r.topo.name(l["to"]), l["lost"])
            for l in lost) + ".")
    up = r.uplinks()
    if len(up) > 1:
        out.append("Uplink imbalance of the busiest leaf (max/mean - 1 of the bytes sent on "
                   "its uplinks; 0 is even): %.2f." % r.imbalance())
    b = r.summary.get("bgp")
    if b:  # the real engine's BGP routing (doc/rocelab.md, "Routing")
        out.append("Routing: BGP, %d sessions Established %.1f s after BIRD started, every "
                   "switch's FIB converged after %.1f s, before the workload."
                   % (b["sessions"], b["established_s"], b["converged_s"]))
        for e in r.summary.get("events_applied", []):
            if e.get("kind") in ("link_down", "link_up") and "bgp_converged" in e:
                name = "link %d %s at %.1f ms" % (e["link"], e["kind"].split("_")[1],
                                                   e["link_set_at_ns"] / 1e6)
                out.append(name + (": BGP moved every FIB's routes %.0f ms after the link was set."
                                   % (e["convergence_us"] / 1e3) if e["bgp_converged"] else
                                   ": BGP had not moved every FIB's routes when the run ended."))
        if r.summary.get("switch_drops", {}).get("no_route"):
            out.append("%d frames dropped for want of a route while BGP converged (no_route)."
                       % r.summary["switch_drops"]["no_route"])
    if t["flows"] and t["flows_completed"] < t["flows"]:
        out.append("%d of %d flows did not complete." % (t["flows"] - t["flows_completed"],
                                                          t["flows"]))
    return out


def _jobs_table(r):
    if not r.jobs:
        return ""
    rows = [(j.get("job"), j.get("iteration"), "%.1f" % (int(j.get("duration_ns", 0)) / 1000))
            for j in r.jobs]
    return "<h2>Collective jobs</h2>\n" + _table(["job", "iteration", "duration (us)"], rows)


def _flows_table(r):
    if not r.fct or len(r.fct) > 24:
        return ""
    names = {host_address(h): r.topo.name(h) for h in r.topo.hosts()}
    rows = [(names.get(f["sip"], "%08x" % f["sip"]), names.get(f["dip"], "%08x" % f["dip"]),
             f["size"], "%.1f" % (f["start_ns"] / 1000), "%.1f" % (f["fct_ns"] / 1000),
             "%.2f" % (f["fct_ns"] / f["ideal_ns"] if f["ideal_ns"] else 0))
            for f in sorted(r.fct, key=lambda f: (f["sip"], f["dip"], f["start_ns"]))]
    return "<h2>Flows</h2>\n" + _table(["from", "to", "bytes", "start (us)", "FCT (us)",
                                         "slowdown"], rows)


LATENCY_ROWS = 40  # the report's table: switches x classes beyond this keep the highest p99


def _latency_table(r):
    """Each switch's time per class (switch_latency.csv): where the queues held which class."""
    rows = r.switch_latency
    if not rows:
        return ""
    note = ""
    if len(rows) > LATENCY_ROWS:
        note = ("<p>The %d (switch, class) pairs with the highest p99 of %d.</p>"
                % (LATENCY_ROWS, len(rows)))
        rows = sorted(rows, key=lambda x: -x["p99_ns"])[:LATENCY_ROWS]
    us = lambda ns: "%.2f" % (ns / 1000)  # noqa: E731
    return ("<h2>Time in each switch, per class</h2>\n" + note + _table(
        ["switch", "class", "packets", "p50 (us)", "p99 (us)", "p99.9 (us)", "max (us)",
         "mean (us)"],
        [(r.topo.name(x["node"]), x["tc"], x["packets"], us(x["p50_ns"]), us(x["p99_ns"]),
          us(x["p999_ns"]), us(x["max_ns"]), us(x["mean_ns"]))
         for x in sorted(rows, key=lambda x: (x["node"], x["tc"]))]))


def write_index(out_dir, names):
    """DIR/index.html for several scenarios run into DIR/NAME: one row of totals each, with a
    link to each report (the variants of a scenario side by side)."""
    rows = []
    for n in names:
        r = Results(os.path.join(out_dir, n))
        t = r.totals()
        sd = [x[1] for x in r.slowdowns()]
        rows.append("<tr><td style=\"text-align:left\"><a href=\"%s/report.html\">%s</a></td>"
                    % (html.escape(n), html.escape(n)) + "".join(
                        "<td>%s</td>" % html.escape(str(v)) for v in (
                            "%.3f" % (r.duration_ns() / 1e6), "%d/%d" % (t["flows_completed"],
                                                                          t["flows"]),
                            "%.1f" % (max([f["fct_ns"] for f in r.fct] or [0]) / 1000),
                            "%.2f" % (sorted(sd)[len(sd) // 2] if sd else 0), t["pfc_frames"],
                            t["ecn_marks"], t["cnps"], t["switch_drops"] + t["link_drops"],
                            t["watchdog_storms"])) + "</tr>")
    head = ["scenario", "time (ms)", "flows done", "last FCT (us)", "median slowdown",
            "PFC frames", "ECN marks", "CNPs", "drops", "watchdog storms"]
    path = os.path.join(out_dir, "index.html")
    with open(path, "w") as fh:
        fh.write("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>rocelab runs</title><style>body{font-family:sans-serif}"
                 "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
                 "text-align:right}</style></head><body><h1>rocelab runs</h1>\n<table><tr>"
                 + "".join("<th>%s</th>" % h for h in head) + "</tr>\n" + "\n".join(rows)
                 + "\n</table></body></html>\n")
    return path


def write_report(out_dir):
    """Writes the figures and report.html into `out_dir` (a result directory). Returns the
    report's path."""
    r = Results(out_dir)
    figs = []
    for name, caption, fn in plots.FIGURES:
        p = os.path.join(out_dir, name)
        fn(r, p)
        with open(p, "rb") as f:
            figs.append((name, caption, base64.b64encode(f.read()).decode()))
    n = _notes_for(r)
    title = r.meta.get("name", os.path.basename(os.path.abspath(out_dir)))
    engine = r.meta.get("engine", "?")
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>rocelab: %s</title>" % html.escape(title),
             "<style>body{font-family:sans-serif;max-width:1000px;margin:1em auto;}"
             "table{border-collapse:collapse;margin:0.5em 0;}td,th{border:1px solid #ccc;"
             "padding:2px 8px;text-align:right;font-size:90%;}img{max-width:100%;}"
             ".flag{color:#b00;font-weight:bold;}</style>",
             "</head><body>",
             "<h1>rocelab: %s (%s engine)</h1>" % (html.escape(title), html.escape(engine))]
    if n["title"]:
        parts.append("<p><b>%s</b></p>" % html.escape(n["title"]))
    for name, text in n["sections"]:
        parts.append("<p><b>%s:</b> %s</p>" % (html.escape(name), html.escape(text)))
    f = findings(r)
    if f:
        parts.append("<h2>Findings</h2><ul>" + "".join(
            "<li>%s</li>" % html.escape(x) for x in f) + "</ul>")
    t = r.totals()
    parts.append("<h2>Totals</h2>")
    parts.append(_table(["simulated/run time (ms)"] + list(t.keys()),
                        [["%.3f" % (r.duration_ns() / 1e6)] + list(t.values())]))
    parts.append("<h2>FCT by size bin</h2>")
    parts.append(_table(["bin", "flows", "median FCT (us)", "median slowdown", "p99 slowdown"],
                        [(b["bin"], b["flows"], "%.1f" % b["median_fct_us"],
                          "%.2f" % b["median_slowdown"], "%.2f" % b["p99_slowdown"])
                         for b in r.fct_bins()]))
    parts.append(_flows_table(r))
    parts.append(_jobs_table(r))
    parts.append(_latency_table(r))
    for name, caption, b64 in figs:
        parts.append("<h2>%s</h2>" % html.escape(caption))
        parts.append("<img alt=\"%s\" src=\"data:image/png;base64,%s\">" % (html.escape(name), b64))
    parts.append("<p>Files: %s</p>" % html.escape(", ".join(sorted(
        x for x in os.listdir(out_dir) if not x.endswith(".png") and x != "report.html"))))
    parts.append("</body></html>")
    path = os.path.join(out_dir, "report.html")
    with open(path, "w") as fh:
        fh.write("\n".join(parts) + "\n")
    return path
