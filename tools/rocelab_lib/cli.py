"""rocelab's command line: run, report, compare. Thin: the work is in sim.py / real.py (the
engines), results.py, report.py and compare.py."""
import argparse
import html
import importlib
import os
import sys

from . import compare, paths, render, report, sim

USAGE = """\
rocelab: whole fabrics from one scenario file (doc/rocelab.md).

  rocelab run SCENARIO.yaml [SCENARIO.yaml ...] [--engine real|sim|both] [--out DIR]
          [--seed N] [--until TIME] [--no-report]
      runs each scenario (rocesim's YAML, config/scenarios/) and writes the result files and
      report.html. One scenario: into DIR (default rocelab-out/NAME); several: DIR/NAME each
      and DIR/index.html (their totals side by side, links to the reports).
      --engine both: DIR/sim and DIR/real, and DIR/compare.txt (+ compare.html), the
      side-by-side table with differences flagged.
      real engine: --timeout SECONDS (workload limit, default 100), --keep (keep the work
      directory: generated configs, memif sockets), --routing bgp|static (bgp, the default:
      every switch in its own network namespace with BIRD speaking eBGP per fabric link;
      static: the lab's routes set by rocelab), --hold SECONDS (keep the lab up after the
      workload to scrape it: OUT/prometheus.yml; Ctrl-C ends the hold)
  rocelab render SCENARIO.yaml --inventory FILE --out DIR [--routing bgp|static] [--check]
      per-switch roceswd YAML and BIRD configs for a deployment on servers (--check: every
      file through roceswd --check-config and bird -p)
  rocelab report DIR        (re)writes DIR/report.html and its PNGs from DIR's result files
  rocelab compare DIR_A DIR_B [--out FILE]
                            the side-by-side table of two result directories
"""


def _real_engine():
    try:
        return importlib.import_module(__package__ + ".real")
    except ModuleNotFoundError as e:
        if e.name != __package__ + ".real":
            raise
        return None


def run_engine(engine, scenario, out_dir, args):
    if engine == "sim":
        wall = sim.run_sim(scenario, out_dir, args)
    else:
        real = _real_engine()
        if real is None:
            raise RuntimeError("real engine not built yet (tools/rocelab_lib/real.py is missing)")
        rc = real.run_real(scenario, out_dir, args)
        # 1: not every flow completed; the results are still written and worth a report
        if rc and (rc == 130 or not os.path.exists(os.path.join(out_dir, "summary.json"))):
            return rc
        wall = None
    path = report.write_report(out_dir) if args.report else out_dir
    print("rocelab: %s (%s engine)%s: %s" % (paths.scenario_name(scenario), engine,
                                             " in %.1f s" % wall if wall is not None else "",
                                             path))
    return 0 if engine == "sim" else rc


def write_compare(dir_a, dir_b, name_a, name_b, out_prefix):
    rows = compare.compare(dir_a, dir_b)
    text = compare.format_table(rows, name_a, name_b)
    notes = compare.distortion_notes([(name_a, dir_a), (name_b, dir_b)])
    text += "".join(n + "\n" for n in notes)
    if out_prefix:
        with open(out_prefix + ".txt", "w") as f:
            f.write(text)
        with open(out_prefix + ".html", "w") as f:
            f.write("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>rocelab compare</title><style>td,th{border:1px solid #ccc;"
                    "padding:2px 8px;text-align:right}table{border-collapse:collapse}"
                    ".flag{color:#b00}</style></head><body><h1>%s vs %s</h1>%s</body></html>\n"
                    % (name_a, name_b, compare.format_html(rows, name_a, name_b)
                       + "".join("<p class=\"flag\">%s</p>" % html.escape(n) for n in notes)))
    sys.stdout.write(text)
    return rows


def cmd_run(args):
    engines = ["sim", "real"] if args.engine == "both" else [args.engine]
    for scenario in args.scenario:
        if not os.path.exists(scenario):
            raise RuntimeError("%s: no such scenario file" % scenario)
        name = paths.scenario_name(scenario)
        base = args.out or os.path.join("rocelab-out", name)
        if len(args.scenario) > 1:
            base = os.path.join(args.out or "rocelab-out", name)
        if len(engines) == 1:
            rc = run_engine(engines[0], scenario, base, args)
            if rc:
                return rc
            continue
        worst = 0
        for e in engines:
            rc = run_engine(e, scenario, os.path.join(base, e), args)
            if rc == 130 or (rc and not os.path.exists(os.path.join(base, e, "summary.json"))):
                return rc
            worst = worst or rc  # flows that did not complete: still compared, then reported
        write_compare(os.path.join(base, "sim"), os.path.join(base, "real"), "sim", "real",
                      os.path.join(base, "compare"))
        if worst:
            return worst
    if len(args.scenario) > 1 and len(engines) == 1 and args.report:
        names = [paths.scenario_name(s) for s in args.scenario]
        print("rocelab: %s" % report.write_index(args.out or "rocelab-out", names))
    return 0


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    p = argparse.ArgumentParser(prog="rocelab", usage=USAGE)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("scenario", nargs="+")
    r.add_argument("--engine", choices=["real", "sim", "both"], default="sim")
    r.add_argument("--out")
    r.add_argument("--seed", type=int)
    r.add_argument("--until")
    r.add_argument("--no-report", dest="report", action="store_false",
                   help="result files only (rocelab report DIR writes the report later)")
    real = _real_engine()
    if real is not None:
        real.add_arguments(r)
    d = sub.add_parser("render")
    d.add_argument("scenario")
    d.add_argument("--inventory", required=True)
    d.add_argument("--out", required=True)
    render.add_arguments(d)
    rp = sub.add_parser("report")
    rp.add_argument("dir")
    c = sub.add_parser("compare")
    c.add_argument("dir_a")
    c.add_argument("dir_b")
    c.add_argument("--out", help="FILE prefix: writes FILE.txt and FILE.html")
    args = p.parse_args(argv)
    try:
        if args.cmd == "run":
            return cmd_run(args)
        if args.cmd == "render":
            return render.run(args)
        if args.cmd == "report":
            print(report.write_report(args.dir))
            return 0
        write_compare(args.dir_a, args.dir_b, os.path.basename(os.path.normpath(args.dir_a)),
                      os.path.basename(os.path.normpath(args.dir_b)), args.out)
        return 0
    except (RuntimeError, FileNotFoundError) as e:
        sys.stderr.write("rocelab: %s\n" % e)
        return 1
