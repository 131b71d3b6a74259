#!/bin/bash
# A load-balancing policy from a plugin (lib/lb/plugins' two_choices, doc/load-balancing.md "A
# policy as a plugin") in both engines, each loading it from its own file:
#   - roceswd, `lb.plugins` in its config: a multipath route with `policy: two_choices` over p1
#     and p2 (net_pcap ports); 256 UDP flows (scapy) enter p0. `show lb`: the group's policy is
#     two_choices, 256 decisions, both members used (no queue: the call's tally alternates
#     them); every frame leaves p1 or p2 as the member counters say (tshark counts the pcaps);
#   - `--check-config` refuses a plugin file that is not a shared object and a missing one, with
#     the config's line and field, exit status 1;
#   - rocesim, config/scenarios/ecmp-collision-lab-two-choices.yaml (`lb: {policy: two_choices,
#     plugins: [two_choices]}`: the plugin built with the program): both elephants complete,
#     on different uplinks of their leaf; a scenario naming a bad plugin is refused;
#   - `tools/rocelab render` of that scenario writes the plugin's path into every switch's
#     config, and each passes `roceswd --check-config`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rsw_init
d="$RSW_TMP"
PLUGIN="$BUILD_DIR/lib/lb/plugins/rocesw_lb_two_choices.so"
: "${ROCESIM:=$BUILD_DIR/app/rocesim/rocesim}"
[ -f "$PLUGIN" ] || { rsw_fail "$PLUGIN is not built (ninja -C $BUILD_DIR)"; rsw_finish; }

# 256 flows from h1 (behind p0) to 10.99.0.0/16, one frame each, differing in UDP source port.
"$RSW_PYTHON" - "$d" <<'EOF'
import sys
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap
d = sys.argv[1]
wrpcap(d + "/p0-in.pcap", [Ether(src="02:00:00:00:01:02", dst="02:00:00:00:01:01") /
                           IP(src="10.0.1.2", dst="10.99.%d.%d" % (i // 200, i % 200 + 1)) /
                           UDP(sport=1000 + 7 * i, dport=4791) / (b"x" * 64) for i in range(256)])
wrpcap(d + "/empty.pcap", [])
EOF
cat >"$d/sw.yaml" <<EOF
switch:
  name: $RSW_TAG
  workers: 1
  mbufs: 4096
  file_prefix: $(rsw_file_prefix)
  control_socket: $d/ctl.sock
  telemetry: false
ports:
  - {name: p0, device: "net_pcap0,rx_pcap=$d/p0-in.pcap,tx_pcap=$d/p0-out.pcap",
     mac: "02:00:00:00:01:01", ipv4: [10.0.1.1/24]}
  - {name: p1, device: "net_pcap1,rx_pcap=$d/empty.pcap,tx_pcap=$d/p1-out.pcap",
     mac: "02:00:00:00:02:01", ipv4: [10.0.2.1/24]}
  - {name: p2, device: "net_pcap2,rx_pcap=$d/empty.pcap,tx_pcap=$d/p2-out.pcap",
     mac: "02:00:00:00:03:01", ipv4: [10.0.3.1/24]}
routes:
  - {prefix: 10.99.0.0/16, via: [10.0.2.2, 10.0.3.2], policy: two_choices}
neighbours:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02", port: p0}
  - {ip: 10.0.2.2, mac: "02:00:00:00:02:02", port: p1}
  - {ip: 10.0.3.2, mac: "02:00:00:00:03:02", port: p2}
lb:
  plugins: [$PLUGIN]
EOF

check "roceswd --check-config accepts the plugin's policy" "$ROCESWD" --check-config "$d/sw.yaml"
start_switch "$d/sw.yaml" "$d/sw.log"
rsw_wait_counter 256 20 rsw_port_counter p0 rx_packets >/dev/null || true
check_eq "p0 received the 256 frames" "$(rsw_port_counter p0 rx_packets)" 256
for _ in $(seq 1 50); do
    [ "$(( $(rsw_port_counter p1 tx_packets) + $(rsw_port_counter p2 tx_packets) ))" -ge 256 ] && break
    sleep 0.1
done
lb="$(rsw_ctl --json show lb | "$RSW_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
g = [g for g in d["groups"] if g["prefix"] == "10.99.0.0/16"][0]
pol = [p for p in d["policies"] if p["name"] == "two_choices"][0]
m = {x["port"]: x["packets"] for x in g["members"]}
print(g["policy"], pol["decisions"], pol["packets"], m.get("p1", 0), m.get("p2", 0))')"
read -r policy decisions packets m1 m2 <<<"$lb"
echo "two_choices: $decisions decisions, p1 $m1 and p2 $m2 packets" >&2
check_eq "the group's policy is the plugin's" "$policy" "two_choices"
check_eq "two_choices decided each of the 256 new flows" "$decisions" 256
check_eq "two_choices counted 256 packets" "$packets" 256
check_ge "member p1 used" "$m1" 100
check_ge "member p2 used" "$m2" 100
check_eq "the members' packets add up to 256" "$((m1 + m2))" 256
drops="$(rsw_ctl --json show drops --all | "$RSW_PYTHON" -c '
import json, sys; print(sum(e["packets"] for e in json.load(sys.stdin)["drops"]))')"
check_eq "no drop" "$drops" 0
rc=0
stop_switch || rc=$?
check_eq "roceswd exits cleanly" "$rc" 0
count() { tshark -r "$1" -Y "udp.dstport == 4791 && ip.dst == 10.99.0.0/16" 2>/dev/null | wc -l; }
check_eq "p1's pcap holds its member's packets (tshark)" "$(count "$d/p1-out.pcap")" "$m1"
check_eq "p2's pcap holds its member's packets (tshark)" "$(count "$d/p2-out.pcap")" "$m2"

# Refusals at load: the config's line and field, the reason, exit status 1.
line="$(grep -n '^  plugins:' "$d/sw.yaml" | cut -d: -f1)"
echo "not a shared object" >"$d/bad.so"
sed "s|plugins: \[.*\]|plugins: [bad.so]|" "$d/sw.yaml" >"$d/bad.yaml"
out="$("$ROCESWD" --check-config "$d/bad.yaml" 2>&1)" && rc=0 || rc=$?
check_eq "a file that is not a shared object: exit status 1" "$rc" 1
check "... named with its line, field and dlopen's reason" \
    grep -q "bad.yaml:$line: lb.plugins\[0\]: $d/bad.so: cannot load: " <<<"$out"
sed "s|plugins: \[.*\]|plugins: [missing.so]|" "$d/sw.yaml" >"$d/missing.yaml"
out="$("$ROCESWD" --check-config "$d/missing.yaml" 2>&1)" && rc=0 || rc=$?
check_eq "a missing file: exit status 1" "$rc" 1
check "... named with its line and field" \
    grep -q "missing.yaml:$line: lb.plugins\[0\]: $d/missing.so: no such file" <<<"$out"
sed "s|plugins: \[.*\]|plugins: [two_choices]|" "$d/sw.yaml" >"$d/bare.yaml"
check "the plugin by its bare name (the one built with roceswd)" "$ROCESWD" --check-config "$d/bare.yaml"
sed "s|plugins: \[.*\]|plugins: []|" "$d/sw.yaml" >"$d/none.yaml"
out="$("$ROCESWD" --check-config "$d/none.yaml" 2>&1)" && rc=0 || rc=$?
check_eq "without the plugin: exit status 1" "$rc" 1
check "... the route's policy is unknown" grep -q "unknown policy 'two_choices'" <<<"$out"

# rocesim: the library's scenario, which names the plugin by its bare name.
SCEN="$RSW_REPO/config/scenarios/ecmp-collision-lab-two-choices.yaml"
check "rocesim runs $(basename "$SCEN")" "$ROCESIM" --scenario "$SCEN" --out "$d/sim"
check_eq "both elephants complete (fct.txt)" "$(wc -l <"$d/sim/fct.txt")" 2
# links.csv: bytes from leaf 4 (the senders' leaf) to spines 6 and 7.
uplinks="$("$RSW_PYTHON" - "$d/sim/links.csv" <<'EOF'
import csv, sys
used = []
for r in csv.DictReader(open(sys.argv[1])):
    a, b = int(r["node_a"]), int(r["node_b"])
    if {a, b} & {4} and {a, b} & {6, 7}:
        used.append(int(r["bytes_ab"] if a == 4 else r["bytes_ba"]) > 3000000)
print(sum(used))
EOF
)"
check_eq "the elephants take both uplinks of leaf 4 (> 3 MB each)" "$uplinks" 2
copy() {  # copy SED_EXPR OUT: the scenario with one change, its QoS profile found from $d
    sed -e "$1" -e "s|^qos_profile: \.\./|qos_profile: $RSW_REPO/config/|" "$SCEN" >"$2"
}
copy "s|plugins: \[two_choices\]|plugins: [$d/bad.so]|" "$d/bad-scenario.yaml"
out="$("$ROCESIM" --scenario "$d/bad-scenario.yaml" --out "$d/sim-bad" 2>&1)" && rc=0 || rc=$?
check_ge "rocesim refuses a bad plugin (status)" "$rc" 1
check "... naming the scenario's line and field" \
    grep -q "bad-scenario.yaml:[0-9]*: lb.plugins\[0\]: .*bad.so: cannot load: " <<<"$out"
copy "s|plugins: \[two_choices\]|plugins: [no_such_policy]|" "$d/unknown.yaml"
out="$("$ROCESIM" --scenario "$d/unknown.yaml" --out "$d/sim-unknown" 2>&1)" && rc=0 || rc=$?
check "a bare name with no plugin built: the path looked for" \
    grep -q "lb.plugins\[0\]: .*lib/lb/plugins/rocesw_lb_no_such_policy.so: " <<<"$out"

# rocelab render (static routes, the 2x2 inventory's devices): every switch's config names the
# plugin and passes the check.
export ROCELAB_BUILD="$BUILD_DIR"
check "rocelab render of the scenario" "$RSW_REPO/tools/rocelab" render "$SCEN" \
    --inventory "$RSW_REPO/config/rocelab/inventory-leaf-spine-small.yaml" --out "$d/render" \
    --routing static
for sw in leaf0 leaf1 spine0 spine1; do
    check "$sw: lb.plugins rendered" grep -q "plugins: \[\"$PLUGIN\"\]" "$d/render/$sw/roceswd.yaml"
    check "$sw: passes roceswd --check-config" "$ROCESWD" --check-config "$d/render/$sw/roceswd.yaml"
done
rsw_finish
