"""roceswd's control socket (rocectl's protocol, lib/telemetry/control_protocol.h) and the
per-class drop summary the benchmarks report after a run."""

import json
import socket

# Queue drop reasons (lib/qos/stats.h) that lose a packet in a queue; `discarded` is the
# shutdown flush, not a forwarding loss, and is reported apart.
QUEUE_LOSS = ("queue_full", "buffer_full", "wred_drop", "headroom_exhausted", "pfc_watchdog")


class Control:
    """One connection; request(cmd, *args) returns the reply's data or raises OSError."""

    def __init__(self, path, timeout=5.0):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b""

    def request(self, cmd, *args):
        self.s.sendall(json.dumps({"cmd": cmd, "args": list(args)}).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise OSError("control socket closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        r = json.loads(line)
        if not r.get("ok"):
            raise OSError(f"{cmd}: {r.get('error')}")
        return r["data"]

    def close(self):
        self.s.close()


def qos_map(qos_yaml_path):
    """{tc: (queue, lossless)} of the profile's `default` PORT_QOS_MAP (a profile without one:
    identity, lossy). Read with a tiny parser-free approach: PyYAML from Debian."""
    import yaml
    with open(qos_yaml_path) as f:
        d = yaml.safe_load(f)
    pq = (d.get("PORT_QOS_MAP") or {}).get("default", {})
    q = d.get("TC_TO_QUEUE_MAP", {}).get(pq.get("tc_to_queue_map"), {})
    lossless = {int(x) for x in str(pq.get("pfc_enable", "")).split(",") if x.strip()}
    return {tc: (int(q.get(str(tc), tc)), tc in lossless) for tc in range(8)}


def class_drops(ctl, tc_map, port=None):
    """Per traffic class (through its queue) on every port or one: enqueued, dequeued, ECN marks
    and queue drops by reason; plus the switch's drop counters by reason and the lossless total.
    `tc_map`: {tc: (queue, lossless)} (qos_map)."""
    queues = ctl.request("queues", *([port] if port else []))["queues"]
    drops = ctl.request("drops")
    by_q = {}
    for q in queues:
        e = by_q.setdefault(q["queue"], {"enq": 0, "deq": 0, "ecn_marked": 0, "drops": {},
                                         "watermark_bytes": 0})
        e["enq"] += q["enq_packets"]
        e["deq"] += q["deq_packets"]
        e["ecn_marked"] += q["ecn_marked"]
        e["watermark_bytes"] = max(e["watermark_bytes"], q["watermark_bytes"])
        for r, n in q["drops_by_reason"].items():
            e["drops"][r] = e["drops"].get(r, 0) + n
    classes = {}
    for tc, (qn, lossless) in tc_map.items():
        e = by_q.get(qn)
        if not e:
            continue
        lost = sum(n for r, n in e["drops"].items() if r in QUEUE_LOSS)
        c = classes.setdefault(str(qn), {"tcs": [], "queue": qn, "lossless": lossless,
                                         "enq": e["enq"], "deq": e["deq"],
                                         "ecn_marked": e["ecn_marked"],
                                         "watermark_bytes": e["watermark_bytes"],
                                         "drops": lost, "drops_by_reason": e["drops"]})
        c["tcs"].append(tc)
        c["lossless"] = c["lossless"] or lossless
    switch = {}
    for d in drops["drops"]:
        switch[d["reason"]] = switch.get(d["reason"], 0) + d["packets"]
    return {"classes": classes,
            "lossless_drops": sum(c["drops"] for c in classes.values() if c["lossless"]),
            "switch_drops": switch, "switch_drops_total": drops["total"]}
