"""The lab description: a scenario expanded by rocesim (`rocesim --emit-lab`), the one parser
of the scenario YAML (lib/sim/scenario.cc). Nothing here reads the scenario itself."""
import json
import os
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMAT = "rocelab-lab/1"


def binary(name):
    """build/app/NAME/NAME, or $ROCELAB_BUILD/app/NAME/NAME."""
    build = os.environ.get("ROCELAB_BUILD", os.path.join(REPO, "build"))
    path = os.path.join(build, "app", name, name)
    if not os.access(path, os.X_OK):
        raise SystemExit(f"rocelab: {path} is not built (ninja -C {build} app/{name}/{name})")
    return path


def emit(scenario, out_json=None, topology=None):
    """Runs rocesim --emit-lab; returns the description (and writes it to out_json if given;
    rocesim's HPCC topology.txt, the names the report uses, to `topology` if given)."""
    with tempfile.TemporaryDirectory(prefix="rocelab-emit") as d:
        path = out_json or os.path.join(d, "lab.json")
        extra = ["--write-topology", topology] if topology else []
        p = subprocess.run([binary("rocesim"), "--scenario", scenario, "--emit-lab", path, *extra],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(p.stderr.strip() or f"rocelab: rocesim --emit-lab failed ({p.returncode})")
        with open(path) as f:
            lab = json.load(f)
    if lab.get("format") != FORMAT:
        raise SystemExit(f"rocelab: lab description format {lab.get('format')!r}, expected {FORMAT}")
    return lab


def switches(lab):
    return [n for n in lab["nodes"] if n["kind"] == "switch"]


def hosts(lab):
    return [n for n in lab["nodes"] if n["kind"] == "host"]


def mbps(rate_bps, what):
    if rate_bps % 1_000_000:
        raise SystemExit(f"rocelab: {what}: {rate_bps} b/s is not a whole number of Mb/s")
    return rate_bps // 1_000_000
