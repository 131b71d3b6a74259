"""The report's figures (PNG, matplotlib Agg): one function per figure, each reading a
Results and writing one file. A figure whose data the run lacks is still written, with a
note, so the report always has the same images."""
import collections

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import cm, colors  # noqa: E402

MAX_SERIES = 10
RATE_WINDOW_NS = 50_000  # per-flow rate plot: trailing window


def _note(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="gray")


def _finish(fig, ax, path, xlabel, ylabel):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _save(fig, path)


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _port_label(r, node, port):
    peer = r.peer(node, port)
    return "%s p%d -> %s" % (r.topo.name(node), port,
                             r.topo.name(peer) if peer is not None else "?")


def _flow_labels(r):
    labels = {}
    for f in r.flows:
        labels[f["flow"]] = "flow %s %s->%s" % (f["flow"], f["src"], f["dst"])
    return labels


def flow_rates(r, path):
    fig, ax = plt.subplots(figsize=(9, 4))
    series = collections.defaultdict(lambda: ([], []))
    for row in r.flow_bytes:
        ts, bs = series[row["flow"]]
        ts.append(int(row["t_ns"]))
        bs.append(int(row["acked_bytes"]))
    top = sorted(series, key=lambda k: -series[k][1][-1])[:MAX_SERIES]
    labels = _flow_labels(r)
    for k in sorted(top, key=lambda k: int(k)):
        ts, bs = series[k]
        # Rate over a trailing window (acknowledgements arrive in bursts, and PFC turns a
        # sender on and off within a few samples: per-sample rates only show that flicker).
        xs, ys = [], []
        j = 0
        for i in range(1, len(ts)):
            while j < i - 1 and ts[i] - ts[j + 1] >= RATE_WINDOW_NS:
                j += 1
            dt = ts[i] - ts[j]
            if dt > 0:
                xs.append(ts[i] / 1e6)
                ys.append((bs[i] - bs[j]) * 8 / dt)  # Gb/s
        ax.plot(xs, ys, label=labels.get(k, "flow " + k), linewidth=1)
    if top:
        ax.legend(fontsize=7, loc="upper right", ncol=2)
        if len(series) > MAX_SERIES:
            ax.set_title("per-flow rate (the %d largest of %d flows)" % (MAX_SERIES, len(series)))
        else:
            ax.set_title("per-flow rate (acknowledged bytes, %d µs window)" % (RATE_WINDOW_NS // 1000))
    else:
        _note(ax, "no per-flow byte samples (hosts.byte_samples not set, or no RoCE flows)")
        ax.set_title("per-flow rate")
    _finish(fig, ax, path, "time (ms)", "Gb/s")


def queue_depth(r, path):
    fig, ax = plt.subplots(figsize=(9, 4))
    by = collections.defaultdict(dict)
    times = sorted({q[0] for q in r.queues})
    for t, n, p, q, b in r.queues:
        by[(n, p, q)][t] = b
    top = sorted(by, key=lambda k: -max(by[k].values()))[:MAX_SERIES]
    for k in sorted(top):
        ys = [by[k].get(t, 0) / 1000 for t in times]
        ax.step([t / 1e6 for t in times], ys, where="post", linewidth=1,
                label="%s q%d" % (_port_label(r, k[0], k[1]), k[2]))
    if top:
        ax.legend(fontsize=7, loc="upper right")
        ax.set_title("queue depth per hop (the %d deepest egress queues)" % len(top))
    else:
        _note(ax, "no queue ever held a packet at a sample (or no samples)")
        ax.set_title("queue depth per hop")
    _finish(fig, ax, path, "time (ms)", "KB")


def pause_timeline(r, path):
    iv = r.pause_intervals()
    keys = sorted(iv, key=lambda k: (not r.topo.is_switch(k[0]), k))[:24]
    fig, ax = plt.subplots(figsize=(9, max(2.5, 0.35 * len(keys) + 1.2)))
    for row, k in enumerate(keys):
        spans = [(a / 1e6, max(b - a, 1) / 1e6) for a, b in iv[k]]
        color = "tab:red" if r.topo.is_switch(k[0]) else "tab:purple"
        ax.broken_barh(spans, (row - 0.4, 0.8), color=color)
    for n, (a, b, _cyc) in enumerate(r.wait_for_cycles()):
        ax.axvspan(a / 1e6, b / 1e6, color="gold", alpha=0.3, zorder=0,
                   label="pause cycle (deadlock)" if n == 0 else None)
    if r.wait_for_cycles():
        ax.legend(fontsize=7, loc="lower right")
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(["%s (prio %d)" % (_port_label(r, k[0], k[1]), k[2]) for k in keys],
                       fontsize=7)
    if not keys:
        _note(ax, "no PFC frame was sent")
    ax.set_xlabel("time (ms)")
    ax.set_title("PFC pause timeline: who pauses whom (red: a switch, purple: a host NIC)")
    _save(fig, path)


def ecn_marks(r, path):
    fig, ax = plt.subplots(figsize=(9, 4))
    totals = {k: vs[-1] for k, (_ts, vs) in r.port_series("ecn_marked").items() if vs}
    rates = r.port_rates("ecn_marked")
    keys = [k for k in sorted(totals, key=lambda k: -totals[k]) if totals[k]][:MAX_SERIES]
    for k in keys:
        ts, ys = rates[k]
        ax.plot([t / 1e6 for t in ts], [y * 1e6 for y in ys], marker=".", linewidth=1,
                markersize=3, label="%s (%d marks)" % (_port_label(r, *k), totals[k]))
    if keys:
        ax.legend(fontsize=7, loc="upper right")
    else:
        _note(ax, "no ECN marks (no queue above its ECN threshold, or ECN off)")
    ax.set_title("ECN CE marks per egress port")
    _finish(fig, ax, path, "time (ms)", "marks per ms")


def fct_slowdown(r, path):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    bins = [b for b in r.fct_bins()]
    xs = range(len(bins))
    a1.bar([x - 0.2 for x in xs], [b["median_slowdown"] for b in bins], 0.4, label="median")
    a1.bar([x + 0.2 for x in xs], [b["p99_slowdown"] for b in bins], 0.4, label="p99")
    a1.set_xticks(list(xs))
    a1.set_xticklabels(["%s\n(%d)" % (b["bin"], b["flows"]) for b in bins], fontsize=7)
    a1.set_ylabel("FCT slowdown (FCT / ideal)")
    a1.set_title("slowdown by size bin (flows)")
    a1.legend(fontsize=7)
    sd = r.slowdowns()
    if sd:
        a2.scatter([x[0] for x in sd], [x[1] for x in sd], s=8)
        a2.set_xscale("log")
    else:
        _note(a2, "no completed flow")
        _note(a1, "no completed flow")
    a2.set_title("every flow")
    _finish(fig, a2, path, "flow size (bytes)", "slowdown")


def fabric(r, path):
    fig, ax = plt.subplots(figsize=(9, 5))
    if not r.topo.nodes:
        _note(ax, "no topology.txt")
        ax.axis("off")
        _save(fig, path)
        return
    layer = r.topo.layers()
    rows = collections.defaultdict(list)
    for n in range(r.topo.nodes):
        rows[layer[n]].append(n)
    pos = {}
    for lv, ns in rows.items():
        for i, n in enumerate(sorted(ns)):
            pos[n] = ((i + 1) / (len(ns) + 1), lv)
    loads = collections.defaultdict(float)
    up = {}
    for l in r.link_loads():
        loads[l["link"]] = max(loads[l["link"]], l["util"])
        up[l["link"]] = l["up"]
    norm = colors.Normalize(vmin=0, vmax=max(1.0, max(loads.values(), default=0)))
    cmap = cm.get_cmap("plasma_r")
    arcs = False
    for i, (a, b, _rate) in enumerate(r.topo.links):
        u = loads.get(i, 0.0)
        (xa, ya), (xb, yb) = pos[a], pos[b]
        style = "-" if up.get(i, 1) else "--"
        width = 1 + 6 * min(u, 1)
        if ya == yb and abs(xa - xb) > 1.5 / (len(rows[ya]) + 1):
            # same layer, not neighbours (a ring's closing link): an arc above the row
            ax.annotate("", xy=(xb, yb), xytext=(xa, ya), zorder=1, arrowprops=dict(
                arrowstyle="-", color=cmap(norm(u)), linewidth=width,
                linestyle=style, connectionstyle="arc3,rad=0.25"))
            ya = yb = ya + 0.55  # the label on the arc's top
            arcs = True
        else:
            ax.plot([xa, xb], [ya, yb], style, color=cmap(norm(u)), linewidth=width, zorder=1)
        if r.topo.is_switch(a) and r.topo.is_switch(b) or len(r.topo.links) <= 16:
            ax.text((xa + xb) / 2, (ya + yb) / 2, "%.0f%%%s" % (100 * u, "" if up.get(i, 1)
                                                                else " down"),
                    fontsize=7, ha="center", va="center",
                    bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=0.5))
    for n, (x, y) in pos.items():
        sw = r.topo.is_switch(n)
        ax.scatter([x], [y], s=300 if sw else 120, marker="s" if sw else "o",
                   color="tab:blue" if sw else "tab:gray", zorder=2)
        ax.text(x, y - 0.18 if not sw else y + 0.16, r.topo.name(n), ha="center", fontsize=7)
    sm = cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax, label="mean load (busier direction)")
    ax.set_title("fabric and per-link load over the run (dashed: down at the end)")
    ax.set_ylim(-0.5, max(rows) + (0.8 if arcs else 0.5))
    ax.axis("off")
    _save(fig, path)


def link_load(r, path):
    """Load over time of the switch-to-switch ports (where ECMP and failures show)."""
    fig, ax = plt.subplots(figsize=(9, 4))
    totals = {k: vs[-1] for k, (_ts, vs) in r.port_series("tx_bytes").items() if vs}
    rates = r.port_rates("tx_bytes")
    keys = [k for k in totals if r.topo.is_switch(k[0]) and r.topo.is_switch(r.peer(*k))]
    keys = sorted(keys, key=lambda k: -totals[k])[:12]
    for k in sorted(keys):
        ts, ys = rates[k]
        rate = r.link_rate(*k) or 1
        ax.plot([t / 1e6 for t in ts], [100 * y * 8e9 / rate for y in ys], linewidth=1,
                label=_port_label(r, *k))
    if keys:
        ax.legend(fontsize=7, loc="upper right", ncol=2)
    else:
        _note(ax, "no switch-to-switch link carried traffic (or no samples)")
    ax.set_title("load of switch-to-switch links over time (bytes sent per sample)")
    _finish(fig, ax, path, "time (ms)", "% of link rate")


# The report's figures, in report order: (file, caption, function).
FIGURES = [
    ("fabric.png", "Fabric diagram with the mean load of every link", fabric),
    ("flow_rates.png", "Per-flow rates", flow_rates),
    ("queue_depth.png", "Queue depth per hop", queue_depth),
    ("pause_timeline.png", "PFC pause timeline per port", pause_timeline),
    ("ecn_marks.png", "ECN marks", ecn_marks),
    ("fct_slowdown.png", "FCT slowdown by size bin", fct_slowdown),
    ("link_load.png", "Switch-to-switch link load over time", link_load),
]
