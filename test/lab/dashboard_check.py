#!/usr/bin/python3
"""The Grafana dashboard works across the switches of a lab: every query selects by the
`switch` label (set per switch by rocelab's prometheus.yml) and by instance, aggregations keep
both, and legends name the switch. The scrape config rocelab writes gives each target that
label. (doc/observability.md, doc/rocelab.md)"""
import json
import os
import re
import sys
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from rocelab_lib import real  # noqa: E402

failed = 0


def check(ok, what):
    global failed
    print("%s: %s" % ("ok  " if ok else "FAIL", what))
    failed += 0 if ok else 1


d = json.load(open(os.path.join(ROOT, "config", "grafana", "rocesw.json")))
names = [v["name"] for v in d["templating"]["list"]]
check(names.index("switch") < names.index("instance") < names.index("port"),
      "variables switch, instance, port in that order (%s)" % names)
sw = d["templating"]["list"][names.index("switch")]
check(sw["query"]["query"] == "label_values(rocesw_info, switch)" and sw["allValue"] == ".*"
      and sw["includeAll"], "switch: from rocesw_info, All = .* (matches targets without it)")
exprs = [(p.get("title", "?"), t) for p in d["panels"] for t in p.get("targets", [])
         if t.get("expr")]
check(len(exprs) >= 20, "%d panel queries" % len(exprs))
for title, t in exprs:
    e = t["expr"]
    selectors = re.findall(r"rocesw_\w+\{([^}]*)\}", e)
    bare = re.findall(r"rocesw_\w+(?![\w{])", e)
    check(selectors and not bare and all('switch=~"$switch"' in s and 'instance=~"$instance"' in s
                                         for s in selectors),
          "%s: every selector by switch and instance" % title)
    for by in re.findall(r"(?:sum|max|min|avg) by \(([^)]*)\)", e):
        keys = [k.strip() for k in by.split(",")]
        check("switch" in keys and "instance" in keys, "%s: aggregation keeps switch and instance"
              % title)
    check(t.get("legendFormat", "").startswith("{{switch}}"), "%s: legend names the switch" % title)

with tempfile.TemporaryDirectory() as tmp:
    real.write_scrape_config(tmp, {"leaf0": 9418, "spine0": 9419, "gone": 0})
    cfg = yaml.safe_load(open(os.path.join(tmp, "prometheus.yml")))
    sc = cfg["scrape_configs"][0]["static_configs"]
    check([(s["targets"], s["labels"]) for s in sc] ==
          [(["127.0.0.1:9418"], {"switch": "leaf0"}), (["127.0.0.1:9419"], {"switch": "spine0"})],
          "rocelab's prometheus.yml: one target per running switch with its switch label")
    # BGP routing: each switch at its management address (mgmt.py), its namespace in a comment
    real.write_scrape_config(tmp, {"leaf0": 9417, "spine0": 9417},
                             {"leaf0": "169.254.7.1", "spine0": "169.254.7.3"},
                             {"leaf0": "rl00000-leaf0", "spine0": "rl00000-spine0"})
    text = open(os.path.join(tmp, "prometheus.yml")).read()
    sc = yaml.safe_load(text)["scrape_configs"][0]["static_configs"]
    check([(s["targets"], s["labels"]) for s in sc] ==
          [(["169.254.7.1:9417"], {"switch": "leaf0"}), (["169.254.7.3:9417"], {"switch": "spine0"})]
          and "# namespace rl00000-spine0" in text,
          "rocelab's prometheus.yml with BGP: the management addresses, the switch labels")

print("%d check(s) failed" % failed if failed else "dashboard: ok")
sys.exit(1 if failed else 0)
