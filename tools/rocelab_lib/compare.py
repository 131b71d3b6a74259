"""Side-by-side comparison of two result directories (sim vs real, or two runs of one
engine): FCT slowdown per size bin, PFC frames, ECN marks, drops, per-link load, each
switch's p99 time per class. A row is
flagged when the two differ by more than the tolerance (relative, with an absolute floor so
that 0 vs 2 PFC frames is not a 100 % alarm)."""
import html

from .results import Results, median

REL_TOL = 0.15  # the agreement target for median FCT per size bin

# (label, absolute floor under which a difference is not flagged)
# us: a switch's time per class; the real engine's includes its software path (several us on
# two shared cores), which rocesim's does not.
FLOORS = {"slowdown": 0.05, "count": 10, "load": 0.02, "ms": 0.5, "us": 10.0}


def _row(label, a, b, kind):
    diff = b - a
    base = max(abs(a), abs(b))
    rel = abs(diff) / base if base else 0.0
    flagged = abs(diff) > FLOORS[kind] and rel > REL_TOL
    return {"metric": label, "a": a, "b": b, "diff": diff, "rel": rel, "flag": flagged}


def compare(dir_a, dir_b):
    """Returns the rows of the side-by-side table."""
    ra, rb = Results(dir_a), Results(dir_b)
    rows = []
    ba, bb = ra.fct_bins(), rb.fct_bins()
    for x, y in zip(ba, bb):
        if not x["flows"] and not y["flows"]:
            continue
        rows.append(_row("FCT slowdown median %s" % x["bin"], x["median_slowdown"],
                         y["median_slowdown"], "slowdown"))
        rows.append(_row("FCT slowdown p99 %s" % x["bin"], x["p99_slowdown"],
                         y["p99_slowdown"], "slowdown"))
    ta, tb = ra.totals(), rb.totals()
    for k in ("flows_completed", "pfc_frames", "pfc_xoff_by_switches", "ecn_marks", "cnps",
              "switch_drops", "link_drops", "watchdog_storms"):
        rows.append(_row(k, ta[k], tb[k], "count"))
    if ta["storm_frames"] or tb["storm_frames"]:  # a row only for runs with a PFC storm
        rows.append(_row("storm_frames", ta["storm_frames"], tb["storm_frames"], "count"))
    if ta["udp_flows"] or tb["udp_flows"]:  # rows only for runs with UDP flows
        for k in ("udp_sent", "udp_received"):
            rows.append(_row(k, ta[k], tb[k], "count"))
    ja, jb = _job_times(ra), _job_times(rb)
    for k in sorted(set(ja) | set(jb), key=lambda k: (int(k[0]), k[1] == "all", k[1])):
        rows.append(_row("job %s %s (ms)" % k, ja.get(k, 0.0), jb.get(k, 0.0), "ms"))
    la = {(l["from"], l["to"]): l["util"] for l in ra.link_loads()}
    lb = {(l["from"], l["to"]): l["util"] for l in rb.link_loads()}
    topo = ra.topo if ra.topo.nodes else rb.topo  # names from whichever has a topology
    for k in sorted(set(la) | set(lb)):
        if not (topo.is_switch(k[0]) or topo.is_switch(k[1])):
            continue
        rows.append(_row("load %s->%s" % (topo.name(k[0]), topo.name(k[1])),
                         la.get(k, 0.0), lb.get(k, 0.0), "load"))
    qa = {(x["node"], x["tc"]): x["p99_ns"] / 1000 for x in ra.switch_latency}
    qb = {(x["node"], x["tc"]): x["p99_ns"] / 1000 for x in rb.switch_latency}
    for k in sorted(set(qa) | set(qb)):
        rows.append(_row("latency p99 %s TC%d (us)" % (topo.name(k[0]), k[1]),
                         qa.get(k, 0.0), qb.get(k, 0.0), "us"))
    return rows


def _job_times(r):
    """Collective jobs (jobs.csv, either engine): (job, "median iteration" | "all") -> ms."""
    out, its = {}, {}
    for j in r.jobs:
        ms = int(j["duration_ns"]) / 1e6
        if j["iteration"] == "all":
            out[(j["job"], "all")] = ms
        else:
            its.setdefault(j["job"], []).append(ms)
    for job, xs in its.items():
        out[(job, "median iteration")] = median(xs)
    return out


def distortion_notes(dirs):
    """One line per distorted run among (name, dir): a real-engine run during which the
    machine fell behind (doc/rocelab.md, "Distortion"); its figures do not describe the
    fabric, and the table must not present them as if they did."""
    out = []
    for name, d in dirs:
        s = Results(d).summary
        if s.get("distorted"):
            reasons = s.get("distortion", {}).get("reasons", [])
            out.append("%s: DISTORTED run (%d stalls reported, first: %s): its figures measure a "
                       "machine that fell behind, not the fabric" %
                       (name, len(reasons), reasons[0] if reasons else "?"))
    return out


def _fmt(v):
    return "%.3f" % v if isinstance(v, float) else str(v)


def format_table(rows, name_a, name_b):
    w = max([len(r["metric"]) for r in rows] + [6])
    out = ["%-*s %12s %12s %12s  %s" % (w, "metric", name_a[:12], name_b[:12], "diff", "")]
    for r in rows:
        out.append("%-*s %12s %12s %12s  %s" % (w, r["metric"], _fmt(r["a"]), _fmt(r["b"]),
                                              _fmt(r["diff"]),
                                              "DIFFERS (%.0f %%)" % (100 * r["rel"])
                                              if r["flag"] else ""))
    flagged = sum(r["flag"] for r in rows)
    out.append("%d of %d rows differ by more than %.0f %%" % (flagged, len(rows), 100 * REL_TOL))
    return "\n".join(out) + "\n"


def format_html(rows, name_a, name_b):
    out = ["<table><tr><th>metric</th><th>%s</th><th>%s</th><th>diff</th><th></th></tr>"
           % (html.escape(name_a), html.escape(name_b))]
    for r in rows:
        out.append("<tr><td style=\"text-align:left\">%s</td><td>%s</td><td>%s</td><td>%s</td>"
                   "<td class=\"flag\">%s</td></tr>"
                   % (html.escape(r["metric"]), _fmt(r["a"]), _fmt(r["b"]), _fmt(r["diff"]),
                      "differs (%.0f %%)" % (100 * r["rel"]) if r["flag"] else ""))
    out.append("</table>")
    return "\n".join(out)
