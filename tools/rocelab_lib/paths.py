"""Where things are, and the run's own record (rocelab.json), shared by both engines."""
import json
import os


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_meta(out_dir, scenario, engine, seed, wall_s, **extra):
    meta = {"scenario": os.path.abspath(scenario), "name": scenario_name(scenario),
            "engine": engine, "seed": seed, "wall_time_s": round(wall_s, 3)}
    meta.update(extra)
    with open(os.path.join(out_dir, "rocelab.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def scenario_name(path):
    return os.path.splitext(os.path.basename(path))[0]
