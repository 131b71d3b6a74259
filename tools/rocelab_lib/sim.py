"""The sim engine: the scenario in rocesim (doc/rocesim.md), which parses it and writes the
result files; rocelab adds topology.txt (--write-topology), a copy of the scenario, rocesim's
console output (rocesim.log) and rocelab.json."""
import os
import shutil
import subprocess
import sys
import time

from . import paths


def find_rocesim():
    """$ROCESIM, else the build tree's rocesim, else `rocesim` on PATH."""
    env = os.environ.get("ROCESIM")
    if env:
        return env
    built = os.path.join(paths.repo_root(), "build", "app", "rocesim", "rocesim")
    if os.path.exists(built):
        return built
    found = shutil.which("rocesim")
    if found:
        return found
    raise RuntimeError("rocesim not found: build it (tools/build) or set ROCESIM")


def run_sim(scenario, out_dir, args):
    """Runs `scenario` in rocesim into `out_dir`. Returns the wall time in seconds; raises
    RuntimeError with rocesim's message when it fails."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = [find_rocesim(), "--scenario", scenario, "--out", out_dir,
           "--write-topology", os.path.join(out_dir, "topology.txt")]
    if getattr(args, "seed", None) is not None:
        cmd += ["--seed", str(args.seed)]
    if getattr(args, "until", None):
        cmd += ["--until", args.until]
    t0 = time.monotonic()
    with open(os.path.join(out_dir, "rocesim.log"), "w") as log:
        p = subprocess.run(cmd, stdout=log, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError("rocesim failed (exit %d): %s" % (p.returncode, p.stderr.strip()))
    if p.stderr.strip():
        sys.stderr.write(p.stderr)
    shutil.copyfile(scenario, os.path.join(out_dir, "scenario.yaml"))
    paths.write_meta(out_dir, scenario, "sim", getattr(args, "seed", None), wall)
    return wall
