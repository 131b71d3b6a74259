#!/bin/bash
# System test: the Prometheus endpoint, rocectl watch/clear and the event trace of a running
# roceswd under congestion (issue 7).
#
#   h1 (netns) --- <tag>p0 [p0]  roceswd  [p1 @ 20 Mb/s] <tag>p1 --- h2 (netns)
#                  10.0.1.1                10.0.2.1
#
# QoS profile config/qos/nvidia-roce.yaml (DSCP 26 -> queue 3 with ECN). Metrics on
# 127.0.0.1:<free port>; trace every 20 ms. Checks:
#   - the exposition parses; every family has HELP and TYPE; counters end in _total; labels
#     are among port, queue, pg, reason, priority, member, pool, family, worker, name, version;
#   - counters move as the traffic predicts between two scrapes: 20 pings h1 -> h2 raise
#     rx_packets{p0} and tx_packets{p1} by >= 20, 3 pings to an unrouted address raise
#     drops_total{p0,no_route} by exactly 3; 30 Mb/s of ECT UDP into the 20 Mb/s port raise
#     queue 3's ECN marks and watermark; scrape values agree with rocectl --json;
#   - POST/PUT/DELETE get 405 and change nothing; an unknown path gets 404;
#   - the endpoint is not reachable from a host on a data-plane port (10.0.1.1:<port>);
#   - rocectl watch prints frames (text and JSON) and stops after --count;
#   - rocectl clear watermarks works (allow_clear: true here);
#   - the trace holds queue depth samples of p1 queue 3 and tools/plot makes PNGs of it;
#   - the PFC, load-balancer and latency families in a real scrape: 5 PFC XOFF + 2 XON frames
#     for priority 3 sent by h2 raise rocesw_pfc_frames_received_total / _xon_received_total
#     {p1,3} by exactly that, and every rocesw_pfc_* sample equals `rocectl show pfc`; 256
#     packets of 64 flows to a 2-member ECMP route (rocectl call route_learn) make
#     rocesw_lb_member_packets_total sum to 256, each member equal to `rocectl show lb`, and
#     rocesw_lb_path_changes_total equals its policies; rocesw_latency_seconds (telemetry
#     latency on) has _count{tc} = `rocectl show latency` packets per class and = its +Inf
#     bucket, and its tc 0 count rose by exactly the 256 forwarded packets.
# Needs root (namespaces, TAP). Run: sudo test/system/test_prometheus.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"   # bgp_udp_flows, bgp_wait_if_counter

rsw_require_root ip ping iperf3 curl

rsw_init
IF0="$(rsw_ifname p0)"
IF1="$(rsw_ifname p1)"
H1="$(rsw_ns h1)"
H2="$(rsw_ns h2)"
CFG="$RSW_TMP/switch.yaml"
LOG="$RSW_TMP/roceswd.log"
SOCK="$RSW_TMP/ctl.sock"
TRACE="$RSW_TMP/trace.csv"
QOS="$RSW_REPO/config/qos/nvidia-roce.yaml"
# A free TCP port on 127.0.0.1 (the kernel picks it; a small window for a race is accepted).
PORT="$("$RSW_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
URL="http://127.0.0.1:${PORT}/metrics"

cat >"$CFG" <<EOF
switch:
  name: ${RSW_TAG}
  workers: 1
  file_prefix: $(rsw_file_prefix)
  control_socket: ${SOCK}
  telemetry: false
  qos: ${QOS}
ports:
  - {name: p0, device: "net_tap0,iface=${IF0}", mac: "02:00:00:00:01:01", speed: 10G, ipv4: ["10.0.1.1/24"]}
  - {name: p1, device: "net_tap1,iface=${IF1}", mac: "02:00:00:00:02:01", speed: 20M, ipv4: ["10.0.2.1/24"]}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02"}
control_plane:
  allow_route_learn: true  # the ECMP route below (refused by default: doc/security.md)
telemetry:
  prometheus:
    listen: "127.0.0.1:${PORT}"
  allow_clear: true
  latency: true
  trace:
    file: ${TRACE}
    interval_ms: 20
EOF

# prom.py URL OUT: scrapes URL, checks the format rules, writes {"name{labels}": value} JSON.
# prom.py --get OUT NAME LABEL=VALUE...: prints the sample's value (0 when absent).
# prom.py --sum OUT NAME LABEL=VALUE...: prints the sum over samples matching the labels.
cat >"$RSW_TMP/prom.py" <<'EOF'
import json, re, sys, urllib.request

ALLOWED = {"port", "queue", "pg", "reason", "priority", "member", "pool", "family", "worker",
           "name", "version", "group", "direction", "policy",
           # control plane (doc/control-plane.md)
           "source", "class", "result", "stat",
           # rocesw_accounting_difference (doc/accounting.md): "received" or "sent"
           "identity",
           # rocesw_latency_seconds (a histogram: le on its buckets)
           "tc", "le"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

def family(name, types):
    # A histogram's samples are NAME_bucket, NAME_sum, NAME_count under "# TYPE NAME histogram".
    for suf in HISTOGRAM_SUFFIXES:
        if name.endswith(suf) and types.get(name[:-len(suf)]) == "histogram":
            return name[:-len(suf)]
    return name
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')

def labels_of(text):
    out, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError("bad labels: " + text)
        out[m.group(1)] = m.group(2)
        pos = m.end()
    return out

def scrape(url, out):
    with urllib.request.urlopen(url, timeout=5) as r:
        ctype = r.headers.get("Content-Type", "")
        body = r.read().decode()
    errors = []
    if not ctype.startswith("text/plain; version=0.0.4"):
        errors.append("content type " + ctype)
    helps, types, samples = set(), {}, {}
    for line in body.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
        elif line.startswith("# TYPE "):
            _, _, name, t = line.split()
            types[name] = t
        elif line and not line.startswith("#"):
            m = SAMPLE.match(line)
            if not m:
                errors.append("unparsable: " + line)
                continue
            name, lab = m.group(1), labels_of(m.group(3) or "")
            if family(name, types) not in types:
                errors.append("no TYPE before " + name)
            for k in lab:
                if k not in ALLOWED:
                    errors.append("unexpected label %s in %s" % (k, name))
            key = name + json.dumps(sorted(lab.items()))
            if key in samples:
                errors.append("duplicate sample " + line)
            samples[key] = {"name": name, "labels": lab, "value": float(m.group(4))}
    for name, t in types.items():
        if name not in helps:
            errors.append("no HELP for " + name)
        if t == "counter" and not name.endswith("_total"):
            errors.append("counter without _total: " + name)
        if t == "histogram" and not any(s["name"] == name + "_count" for s in samples.values()):
            errors.append("histogram without _count: " + name)
        if t == "gauge" and name.endswith("_total"):
            errors.append("gauge with _total: " + name)
        if not name.startswith("rocesw_"):
            errors.append("no rocesw_ prefix: " + name)
    json.dump({"types": types, "samples": list(samples.values()), "errors": errors},
              open(out, "w"))
    for e in errors[:10]:
        print(e)
    print("%d families, %d samples, %d errors" % (len(types), len(samples), len(errors)))
    return 0 if not errors else 1

def match(doc, name, sel):
    want = dict(s.split("=", 1) for s in sel)
    return [s["value"] for s in doc["samples"]
            if s["name"] == name and all(s["labels"].get(k) == v for k, v in want.items())]

if sys.argv[1] == "--get":
    v = match(json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4:])
    print(int(v[0]) if v else 0)
elif sys.argv[1] == "--sum":
    print(int(sum(match(json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4:]))))
else:
    sys.exit(scrape(sys.argv[1], sys.argv[2]))
EOF
prom() { "$RSW_PYTHON" "$RSW_TMP/prom.py" "$@"; }
S1="$RSW_TMP/scrape1.json"
S2="$RSW_TMP/scrape2.json"
delta() { echo $(( $(prom --get "$S2" "$@") - $(prom --get "$S1" "$@") )); }
delta_sum() { echo $(( $(prom --sum "$S2" "$@") - $(prom --sum "$S1" "$@") )); }

echo "== $(basename "$0"): tag $RSW_TAG, switch log $LOG, metrics $URL"
if ! start_switch "$CFG" "$LOG"; then
    rsw_fail "roceswd starts with a metrics endpoint"
    rsw_finish
fi
rsw_pass "roceswd starts (pid $RSW_SWITCH_PID)"
if grep -q "prometheus: serving http://127.0.0.1:${PORT}/metrics" "$LOG"; then
    rsw_pass "log names the metrics endpoint"
else
    rsw_fail "log names the metrics endpoint"
fi

make_host "$H1" "$IF0" 02:00:00:00:01:02 10.0.1.2/24 fd00:1::2/64 10.0.1.1 fd00:1::1
make_host "$H2" "$IF1" 02:00:00:00:02:02 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
in1() { ip netns exec "$H1" "$@"; }
in2() { ip netns exec "$H2" "$@"; }
in1 ping -c 1 -W 2 10.0.2.2 >/dev/null 2>&1 || true
sleep 0.3

check "scrape 1 parses and follows the format rules" prom "$URL" "$S1"
check "ping h1 -> h2 (20 packets)" rsw_ping_ok in1 ping -c 20 -i 0.05 -W 2 10.0.2.2
check_fails "ping to 192.0.2.1 (no route) gets no reply" in1 ping -c 3 -i 0.2 -W 1 192.0.2.1

# Congestion: 30 Mb/s of DSCP 26 ECT(0) UDP into the 20 Mb/s port, 3 s.
rsw_bg ip netns exec "$H2" iperf3 -s -1 -B 10.0.2.2 >"$RSW_TMP/iperf3-server.log" 2>&1
IPERF_SERVER="$RSW_LAST_PID"
rsw_wait_listen "$H2" tcp 5201 || true  # the client reports a failure to connect
check "iperf3 UDP 30 Mb/s DSCP 26 ECT(0) h1 -> h2 for 3 s" \
    in1 iperf3 -c 10.0.2.2 -u -b 30M -l 1000 --tos 0x6a -t 3
rsw_wait_pid "$IPERF_SERVER" 5 || true
# Let queue 3 of p1 drain (up to ~5 MB at 20 Mb/s: about 2 s).
q3_depth() {
    rsw_ctl --json show queues p1 | "$RSW_PYTHON" -c 'import json,sys; print([q for q in json.load(sys.stdin)["queues"] if q["queue"]==3][0]["depth_bytes"])'
}
for _ in $(seq 1 150); do
    [ "$(q3_depth)" = 0 ] && break
    sleep 0.1
done

check "scrape 2 parses and follows the format rules" prom "$URL" "$S2"

for fam in rocesw_port_rx_packets_total rocesw_port_tx_bytes_total rocesw_drops_total \
    rocesw_queue_depth_bytes rocesw_queue_watermark_bytes rocesw_queue_ecn_marked_total \
    rocesw_queue_enqueued_packets_total rocesw_queue_drops_total rocesw_pg_bytes \
    rocesw_pg_watermark_bytes rocesw_pg_headroom_drops_total rocesw_routes \
    rocesw_worker_polls_total rocesw_port_local_packets_total \
    rocesw_port_cut_through_packets_total; do
    if "$RSW_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(sys.argv[2] not in d["types"])' "$S2" "$fam"; then
        rsw_pass "family $fam present"
    else
        rsw_fail "family $fam missing"
    fi
done
# The Grafana dashboard queries only families the switch serves, or the PFC/LB families their
# issues add (doc/observability.md, "Planned families").
check "config/grafana/rocesw.json queries only served or planned families" "$RSW_PYTHON" -c '
import json, re, sys
served = set(json.load(open(sys.argv[1]))["types"])
planned = {"rocesw_pfc_frames_sent_total", "rocesw_pfc_frames_received_total",
           "rocesw_pfc_xon_sent_total", "rocesw_pfc_xon_received_total",
           "rocesw_pfc_pause_seconds_total", "rocesw_pfc_watchdog_storms_total",
           "rocesw_lb_member_packets_total"}
used = set(re.findall(r"rocesw_[a-z0-9_]+", open(sys.argv[2]).read())) - {"rocesw"}
missing = sorted(used - served - planned)
print("missing:", missing)
sys.exit(1 if missing else 0)' "$S2" "$RSW_REPO/config/grafana/rocesw.json"
check "every served family is listed in doc/observability.md" "$RSW_PYTHON" -c '
import json, sys
doc = open(sys.argv[2]).read()
missing = [f for f in json.load(open(sys.argv[1]))["types"] if "`" + f + "`" not in doc]
print("undocumented:", missing)
sys.exit(1 if missing else 0)' "$S2" "$RSW_REPO/doc/observability.md"
check_eq "drops_total has one sample per (port, reason), zeros included" \
    "$("$RSW_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); s=[x for x in d["samples"] if x["name"]=="rocesw_drops_total"]; print(len(s) == len({(x["labels"]["port"], x["labels"]["reason"]) for x in s}) and len(s) % 2 == 0 and len(s) >= 40)' "$S2")" True

check_ge "rx_packets_total{p0} rises by >= 23 (20 pings + 3 unrouted)" "$(delta rocesw_port_rx_packets_total port=p0)" 23
check_ge "tx_packets_total{p1} rises by >= 20" "$(delta rocesw_port_tx_packets_total port=p1)" 20
check_ge "rx_packets_total{p1} rises by >= 20 (echo replies)" "$(delta rocesw_port_rx_packets_total port=p1)" 20
check_ge "tx_packets_total{p0} rises by >= 20 (echo replies)" "$(delta rocesw_port_tx_packets_total port=p0)" 20
check_eq "drops_total{p0,no_route} rises by exactly 3" "$(delta rocesw_drops_total port=p0 reason=no_route)" 3
check_ge "forwarded_packets_total{p0} rises by >= 20 (the pings to h2)" "$(delta rocesw_port_forwarded_packets_total port=p0)" 20
check_ge "forwarded_out_packets_total{p1} rises by >= 20" "$(delta rocesw_port_forwarded_out_packets_total port=p1)" 20
check_ge "tx_bytes_total{p1} rises by >= 7 MB (3 s at 20 Mb/s)" "$(delta rocesw_port_tx_bytes_total port=p1)" 7000000
check_ge "queue 3 of p1: enqueued packets rise by >= 7000" "$(delta rocesw_queue_enqueued_packets_total port=p1 queue=3)" 7000
check_ge "queue 3 of p1: ECN marks rise" "$(delta rocesw_queue_ecn_marked_total port=p1 queue=3)" 1
check_ge "queue 3 of p1: watermark above Kmin (150 KB)" "$(prom --get "$S2" rocesw_queue_watermark_bytes port=p1 queue=3)" 150000
check_eq "queue 3 of p1 drained (depth 0)" "$(prom --get "$S2" rocesw_queue_depth_bytes port=p1 queue=3)" 0
check_eq "queue drops of p1 queue 3 (sum over reasons) == rocectl's" \
    "$(prom --sum "$S2" rocesw_queue_drops_total port=p1 queue=3)" \
    "$(rsw_ctl --json show queues p1 | "$RSW_PYTHON" -c 'import json,sys; print([q for q in json.load(sys.stdin)["queues"] if q["queue"]==3][0]["drops"])')"
check_ge "IPv4 routes >= 2 (connected)" "$(prom --get "$S2" rocesw_routes family=ipv4)" 2
check_ge "worker 0 polls rise" "$(delta rocesw_worker_polls_total worker=0)" 1
# Scrape vs rocectl: rx_packets of p0 from rocectl (read after the scrape) is >= the scrape's.
check_ge "rocectl rx_packets{p0} >= scraped value" \
    "$(( $(rsw_port_counter p0 rx_packets) - $(prom --get "$S2" rocesw_port_rx_packets_total port=p0) ))" 0
check_eq "rocectl ecn_marked of p1 queue 3 == scraped value (queue idle)" \
    "$(rsw_ctl --json show queues p1 | "$RSW_PYTHON" -c 'import json,sys; print([q for q in json.load(sys.stdin)["queues"] if q["queue"]==3][0]["ecn_marked"])')" \
    "$(prom --get "$S2" rocesw_queue_ecn_marked_total port=p1 queue=3)"

# Read-only: every other method gets 405; unknown paths 404.
for m in POST PUT DELETE; do
    check_eq "$m /metrics is refused with 405" \
        "$(curl -s -o /dev/null -w '%{http_code}' -X "$m" --data 'x=1' "$URL" || true)" 405
done
check_eq "GET /nope is 404" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT}/nope" || true)" 404
check_fails "endpoint unreachable from h1 via the data-plane port (10.0.1.1:${PORT})" \
    in1 curl -s --max-time 3 "http://10.0.1.1:${PORT}/metrics"
check_fails "endpoint unreachable from h1 on its own loopback" \
    in1 curl -s --max-time 2 "http://127.0.0.1:${PORT}/metrics"

# rocectl watch and clear.
WATCH="$RSW_TMP/watch.txt"
check "rocectl watch --count 2 exits 0" bash -c "'$ROCECTL' --socket '$SOCK' watch --count 2 --interval 0.2 >'$WATCH'"
check_eq "watch printed two frames" "$(grep -c '^PORT  *LINK' "$WATCH")" 2
check "watch lists p1 queue 3" grep -Eq '^p1 +3 ' "$WATCH"
if rsw_ctl --json call help | grep -q '"cmd": "pfc"'; then
    check "watch shows the PFC pause section (the switch serves 'pfc')" grep -Eq '^PORT +PRIO +RX XOFF' "$WATCH"
fi
check_eq "watch --json prints one JSON line per frame" \
    "$(rsw_ctl --json watch --count 2 --interval 0.1 | "$RSW_PYTHON" -c 'import json,sys; print(sum(1 for l in sys.stdin if "queues" in json.loads(l)))')" 2
check "rocectl clear watermarks p1 (allowed here)" rsw_ctl clear watermarks p1
wm=""
for _ in $(seq 1 20); do
    wm="$(rsw_ctl --json show queues p1 | "$RSW_PYTHON" -c 'import json,sys; print([q for q in json.load(sys.stdin)["queues"] if q["queue"]==3][0]["watermark_bytes"])')"
    [ "$wm" = 0 ] && break
    sleep 0.1
done
check_eq "p1 queue 3 watermark is 0 after the clear" "$wm" 0

# PFC, load balancer and latency families in a real scrape, against rocectl's counters. Each
# comparison reads the scrape and rocectl with no traffic in between, so they must be equal.
S3="$RSW_TMP/scrape3.json"
S4="$RSW_TMP/scrape4.json"
check "scrape 3 parses and follows the format rules" prom "$URL" "$S3"
# PFC: h2 sends 5 XOFF frames (pause 10 quanta: 256 us at p1's 20 Mb/s) and 2 XON for
# priority 3 (lossless in the profile) into p1, through a raw socket.
rsw_pfc_frames "$RSW_TMP" 02:00:00:00:02:02 3 xoff=10 xon=0
rx0="$(rsw_port_counter p1 rx_packets)"
ip netns exec "$H2" "$RSW_PYTHON" - "$IF1" "$RSW_TMP" <<'PY'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for name, n in (("xoff", 5), ("xon", 2)):
    frame = open(sys.argv[2] + "/pfc-%s.bin" % name, "rb").read()
    for _ in range(n):
        s.send(frame)
PY
# The 7 frames received (rx_packets counts every frame the port took in).
rsw_wait_counter $((rx0 + 7)) 5 rsw_port_counter p1 rx_packets >/dev/null
# ECMP: a learned route with two next hops (h1 over p0, h2 over p1), 64 flows x 4 packets.
check "rocectl call route_learn 10.9.0.0/24 p0:10.0.1.2 p1:10.0.2.2 (an ECMP group)" \
    rsw_ctl call route_learn 10.9.0.0/24 p0:10.0.1.2 p1:10.0.2.2
tx_total() {
    rsw_ctl --json show ports | "$RSW_PYTHON" -c 'import json,sys; print(sum(p["tx_packets"] for p in json.load(sys.stdin)["ports"]))'
}
lbtx0="$(tx_total)"
bgp_udp_flows "$H1" "$IF0" 02:00:00:00:01:01 10.0.1.2 10.9.0.7 64 4
# All 256 left the switch (over p0 back to h1 or over p1 to h2; neither host takes them).
rsw_wait_counter $((lbtx0 + 256)) 10 tx_total >/dev/null
check "scrape 4 parses and follows the format rules" prom "$URL" "$S4"
rsw_ctl --json show pfc >"$RSW_TMP/pfc.json"
rsw_ctl --json show lb >"$RSW_TMP/lb.json"
rsw_ctl --json show latency >"$RSW_TMP/latency.json"

dprom() { echo $(( $(prom --get "$S4" "$@") - $(prom --get "$S3" "$@") )); }
check_eq "rocesw_pfc_frames_received_total{p1,3} rises by exactly the 5 XOFF frames" \
    "$(dprom rocesw_pfc_frames_received_total port=p1 priority=3)" 5
check_eq "rocesw_pfc_xon_received_total{p1,3} rises by exactly the 2 XON frames" \
    "$(dprom rocesw_pfc_xon_received_total port=p1 priority=3)" 2
# rocesw_pfc_pause_seconds_total is compared with rocectl below, not asserted to rise: the
# XON may arrive in the XOFFs' burst, and then the pause lasts no measurable time.
# Every PFC sample of scrape 4 against rocectl show pfc (same instant: no traffic since).
check "every rocesw_pfc_* sample equals rocectl show pfc (frames, XON, paused, pause time, watchdog)" \
    "$RSW_PYTHON" - "$S4" "$RSW_TMP/pfc.json" <<'PY'
import json, sys
scrape = json.load(open(sys.argv[1]))["samples"]
ports = {p["port"]: p for p in json.load(open(sys.argv[2]))["ports"]}
def prio(port, pr):
    return [x for x in ports[port]["priorities"] if x["priority"] == int(pr)][0]
want = {"rocesw_pfc_frames_sent_total": "tx_pause", "rocesw_pfc_frames_received_total": "rx_pause",
        "rocesw_pfc_xon_sent_total": "tx_xon", "rocesw_pfc_xon_received_total": "rx_xon",
        "rocesw_pfc_paused": "rx_paused_now"}
bad, n, fams = [], 0, set()
for s in scrape:
    name, l, v = s["name"], s["labels"], s["value"]
    if not name.startswith("rocesw_pfc_"):
        continue
    fams.add(name)
    if name in want:
        exp = prio(l["port"], l["priority"])[want[name]]
    elif name == "rocesw_pfc_pause_seconds_total":
        us = prio(l["port"], l["priority"])["rx_pause_us" if l["direction"] == "received" else "tx_pause_us"]
        if abs(v * 1e6 - us) >= 1.0:  # rocectl truncates to whole microseconds
            bad.append((name, l, v, us))
        n += 1
        continue
    elif name.startswith("rocesw_pfc_watchdog_"):
        key = "storms" if name.endswith("storms_total") else "restores"
        q = [w for w in ports[l["port"]]["watchdog"]["queues"] if w["queue"] == int(l["priority"])]
        exp = q[0][key] if q else 0
    else:
        bad.append(("unknown family", name))
        continue
    n += 1
    if v != exp:
        bad.append((name, l, v, exp))
print(n, "samples of", sorted(fams), "mismatches:", bad[:5])
sys.exit(1 if bad or n == 0 or len(fams) < 8 else 0)
PY
check "rocesw_lb_member_packets_total of 10.9.0.0/24: 256 in all, both members used, each equal to rocectl show lb" \
    "$RSW_PYTHON" - "$S4" "$RSW_TMP/lb.json" <<'PY'
import json, sys
scrape = json.load(open(sys.argv[1]))["samples"]
lb = json.load(open(sys.argv[2]))
prom = {s["labels"]["member"]: s["value"] for s in scrape
        if s["name"] == "rocesw_lb_member_packets_total" and s["labels"]["group"] == "10.9.0.0/24"}
g = [g for g in lb["groups"] if g["prefix"] == "10.9.0.0/24"][0]
ctl = {m["via"]: m["packets"] for m in g["members"]}
print("scrape", prom, "rocectl", ctl)
sys.exit(0 if prom == ctl and sum(prom.values()) == 256 and min(prom.values()) > 0 and len(prom) == 2 else 1)
PY
check "rocesw_lb_path_changes_total{policy} equals rocectl show lb's policies" \
    "$RSW_PYTHON" - "$S4" "$RSW_TMP/lb.json" <<'PY'
import json, sys
scrape = json.load(open(sys.argv[1]))["samples"]
prom = {s["labels"]["policy"]: s["value"] for s in scrape if s["name"] == "rocesw_lb_path_changes_total"}
ctl = {p["name"]: p["path_changes"] for p in json.load(open(sys.argv[2]))["policies"]}
print("scrape", prom, "rocectl", ctl)
sys.exit(0 if prom == ctl and prom else 1)
PY
check "rocesw_lb_flowlets_carried_total equals rocectl show lb's flowlet_table.carried" \
    "$RSW_PYTHON" - "$S4" "$RSW_TMP/lb.json" <<'PY'
import json, sys
scrape = json.load(open(sys.argv[1]))["samples"]
prom = [s["value"] for s in scrape if s["name"] == "rocesw_lb_flowlets_carried_total"]
ctl = json.load(open(sys.argv[2]))["flowlet_table"]["carried"]
print("scrape", prom, "rocectl", ctl)
sys.exit(0 if prom == [ctl] else 1)
PY
check "rocesw_latency_seconds: _count{tc} = +Inf bucket = rocectl show latency packets, every class" \
    "$RSW_PYTHON" - "$S4" "$RSW_TMP/latency.json" <<'PY'
import json, sys
scrape = json.load(open(sys.argv[1]))["samples"]
lat = json.load(open(sys.argv[2]))
ctl = {str(c["tc"]): c["packets"] for c in lat["classes"]}
cnt = {s["labels"]["tc"]: s["value"] for s in scrape if s["name"] == "rocesw_latency_seconds_count"}
inf = {s["labels"]["tc"]: s["value"] for s in scrape
       if s["name"] == "rocesw_latency_seconds_bucket" and s["labels"]["le"] == "+Inf"}
buckets = {}
for s in scrape:
    if s["name"] == "rocesw_latency_seconds_bucket":
        buckets.setdefault(s["labels"]["tc"], []).append(s["value"])
monotonic = all(b == sorted(b) for b in buckets.values())
print("enabled", lat["enabled"], "count", cnt, "rocectl", ctl, "buckets cumulative", monotonic)
sys.exit(0 if lat["enabled"] and cnt == ctl == inf and len(cnt) == 8 and monotonic else 1)
PY
check_eq "rocesw_latency_seconds_count{tc=0} rose by exactly the 256 forwarded ECMP packets (TC 0)" \
    "$(dprom rocesw_latency_seconds_count tc=0)" 256

rsw_assert_accounting
# Shutdown, then the trace and its plots.
rc=0
stop_switch 15 || rc=$?
check_eq "roceswd exits 0 on SIGTERM" "$rc" 0
check_ge "trace has queue_bytes samples of p1 queue 3" "$(grep -c ',queue_bytes,p1,3,' "$TRACE" || true)" 20
check_ge "trace shows queue 3 of p1 above 150 KB" \
    "$(awk -F, '$2=="queue_bytes" && $3=="p1" && $4==3 && $5>m {m=$5} END {print m+0}' "$TRACE")" 150000
PLOTS="$RSW_TMP/plots"
check "tools/plot turns the trace into PNGs" "$RSW_PYTHON" "$RSW_REPO/tools/plot" "$TRACE" -o "$PLOTS"
for f in queue_depth.png pause_timeline.png ecn_marks.png; do
    check_ge "$f is non-empty" "$(stat -c %s "$PLOTS/$f" 2>/dev/null || echo 0)" 5000
done

rsw_finish
