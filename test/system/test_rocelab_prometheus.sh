#!/bin/bash
# One Prometheus scrapes a whole rocelab lab from the root namespace (OUT/prometheus.yml,
# doc/rocelab.md "Management network"), on the 2-leaf, 2-spine leaf-spine at 1 Gb/s
# (config/scenarios/leaf-spine-small.yaml), the lab held up after its workload (--hold):
#  1. BGP routing: every switch in its namespace with a management veth (mgmt0, a /31 of
#     169.254.0.0/16 to the root namespace): prometheus.yml lists the 4 switches, each at its
#     own management address with its `switch` label; each target, fetched from the root
#     namespace (urllib), serves rocesw_info with that switch's name and port counters that
#     lie between two `rocectl show ports` of that switch read around the scrape; the
#     management prefix is in each namespace's kernel table but in no BIRD table and no
#     roceswd FIB (rocectl show routes), and the BIRD configs reject it in both filters;
#     Ctrl-C ends the hold and the run exits 0, every flow completed, summary.json's
#     bgp.management matches prometheus.yml; nothing left (veths, namespaces, processes,
#     work directory, DPDK runtime directories).
#  2. Static routing: no namespaces, no veths; the targets are 127.0.0.1 ports and scrape the
#     same way; nothing left.
#  3. SIGTERM once the management veths exist (switches starting): exit 130, nothing left.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"
rsw_require_root
rsw_init
rsw_rocelab_init
bgp_need_tools || rsw_finish
SCEN="$RSW_REPO/config/scenarios/leaf-spine-small.yaml"
d="$RSW_TMP"
start=$(date +%s)

# run_tag DIR: the tag of the run whose configs are in DIR (empty before they are written).
run_tag() { { sed -n 's#.*/tmp/\(rl[0-9a-f]*\)\..*#\1#p' "$1/configs/leaf0.yaml" 2>/dev/null || true; } | head -n1; }
leftovers() { rsw_lab_leftovers "$@"; }  # TAG OUT: nothing when clean
# guard TAG: the test's clean-up removes the run's namespaces and veths if rocelab could not.
guard() {
    local sw
    for sw in leaf0 leaf1 spine0 spine1; do RSW_NETNS+=("$1-$sw"); done
    for i in 0 1 2 3; do RSW_LINKS+=("$1m$i"); done
}
# start_held NAME ROUTING: rocelab run in the background with --hold; waits until it holds.
start_held() {
    "$LAB" run "$SCEN" --engine real --routing "$2" --out "$d/$1" --timeout 60 --no-report \
        --hold 120 > "$d/$1.log" 2>&1 &
    LAB_PID=$!
    RSW_PIDS+=("$LAB_PID")
    TAG=""
    for _ in $(seq 1 1800); do
        [ -z "$TAG" ] && TAG="$(run_tag "$d/$1")" && [ -n "$TAG" ] && guard "$TAG"
        grep -q "holding the lab" "$d/$1.log" 2>/dev/null && return 0
        rsw_alive "$LAB_PID" || break
        sleep 0.1
    done
    cat "$d/$1.log"
    return 1
}
# end_hold NAME: Ctrl-C ends the hold; RC is rocelab's exit status.
end_hold() {
    kill -INT "$LAB_PID"
    RC=124
    if rsw_wait_pid "$LAB_PID" 60; then RC="$RSW_WAIT_RC"; fi
    cat "$d/$1.log"
}

# scrape OUT MODE: every target of OUT/prometheus.yml from this (the root) namespace.
scrape() {
    "$RSW_PYTHON" - "$1" "$2" "$ROCECTL" <<'PY'
import ipaddress, json, re, subprocess, sys, urllib.request
import yaml
out, mode, rocectl = sys.argv[1:]
lab = json.load(open(out + "/lab.json"))
names = sorted(n["name"] for n in lab["nodes"] if n["kind"] == "switch")
sc = yaml.safe_load(open(out + "/prometheus.yml"))["scrape_configs"]
targets = {c["labels"]["switch"]: c["targets"] for c in sc[0]["static_configs"]}
assert sorted(targets) == names and all(len(t) == 1 for t in targets.values()), targets
hosts = [t[0].rsplit(":", 1)[0] for t in targets.values()]
if mode == "bgp":  # each its own management address, 169.254/16, the default port
    assert len(set(hosts)) == len(hosts), hosts
    assert all(ipaddress.ip_address(h) in ipaddress.ip_network("169.254.0.0/16") for h in hosts), hosts
    assert all(t[0].endswith(":9417") for t in targets.values()), targets
else:
    assert set(hosts) == {"127.0.0.1"}, hosts

def ports(sock):
    p = json.loads(subprocess.run([rocectl, "--socket", sock, "--json", "show", "ports"],
                                  check=True, capture_output=True, text=True).stdout)
    return {x["name"]: x for x in p.get("ports", p)}

for name in names:
    cfg = yaml.safe_load(open("%s/configs/%s.yaml" % (out, name)))["switch"]
    before = ports(cfg["control_socket"])
    text = urllib.request.urlopen("http://%s/metrics" % targets[name][0], timeout=10).read().decode()
    after = ports(cfg["control_socket"])
    info = re.findall(r'^rocesw_info\{name="([^"]*)"', text, re.M)
    assert info == [cfg["name"]], (name, info, cfg["name"])
    moved = 0
    for field in ("rx_packets", "tx_packets"):
        got = {m[0]: int(m[1]) for m in re.findall(
            r'^rocesw_port_%s_total\{port="([^"]*)"\} (\d+)' % field, text, re.M)}
        assert sorted(got) == sorted(before), (name, field, got)
        for port, v in got.items():
            assert before[port][field] <= v <= after[port][field], (name, field, port, before[port][field], v, after[port][field])
            moved += v > 0
    print("%s at %s: rocesw_info name %s, rx %s" % (name, targets[name][0], info[0],
          {p: before[p]["rx_packets"] for p in sorted(before)}))
    assert moved >= 4, (name, "no traffic counted")
PY
}

# --- 1. BGP routing: the management network
if start_held bgp bgp; then
    rsw_pass "BGP: the lab holds after its workload (tag $TAG)"
    check "BGP: every target of prometheus.yml scraped from the root namespace is its switch" scrape "$d/bgp" bgp
    check "BGP: the management prefix is in each namespace's kernel, in no BIRD table, no FIB" \
        "$RSW_PYTHON" - "$d/bgp" "$ROCECTL" "$TAG" <<'PY'
import glob, json, subprocess, sys
import yaml
out, rocectl, tag = sys.argv[1:]
lab = json.load(open(out + "/lab.json"))
for name in sorted(n["name"] for n in lab["nodes"] if n["kind"] == "switch"):
    ns = "%s-%s" % (tag, name)
    sock = yaml.safe_load(open("%s/configs/%s.yaml" % (out, name)))["switch"]["control_socket"]
    kernel = subprocess.run(["ip", "-n", ns, "-4", "route"], check=True, capture_output=True, text=True).stdout
    mg = [l for l in kernel.splitlines() if l.startswith("169.254.") and "dev mgmt0" in l]
    assert len(mg) == 1, (ns, kernel)
    bird = subprocess.run(["ip", "netns", "exec", ns, "birdc", "-s", sock[:-4] + ".bird", "show", "route",
                           "all"], check=True, capture_output=True, text=True).stdout
    assert "11.0." in bird and "169.254" not in bird and "mgmt0" not in bird, (ns, bird)
    routes = json.loads(subprocess.run([rocectl, "--socket", sock, "--json", "show", "routes"],
                                       check=True, capture_output=True, text=True).stdout)["routes"]
    fib = [r["prefix"] for r in routes]
    assert any(p.startswith("11.0.") for p in fib) and not any(p.startswith("169.254.") for p in fib), (ns, fib)
    conf = open("%s/configs/%s.bird.conf" % (out, name)).read()
    assert "define MGMT4 = [ 169.254.0.0/16+ ];" in conf and conf.count("if net ~ MGMT4 then reject;") == 2, conf
    print("%s: kernel %s; BIRD %d routes, FIB %d, none in 169.254/16" % (name, mg[0], bird.count("unicast"), len(fib)))
PY
    end_hold bgp
    s="$d/bgp/summary.json"
    check_eq "BGP: Ctrl-C ends the hold, the run exits 0" "$RC" "0"
    check "BGP: every flow completed" "$RSW_PYTHON" -c '
import json, sys; s = json.load(open(sys.argv[1])); sys.exit(s["completed"] != s["flows"])' "$s"
    check "BGP: summary.json's bgp.management is prometheus.yml's targets" "$RSW_PYTHON" -c '
import json, sys, yaml
m = json.load(open(sys.argv[1]))["bgp"]["management"]
sc = yaml.safe_load(open(sys.argv[2]))["scrape_configs"][0]["static_configs"]
t = {c["labels"]["switch"]: c["targets"][0] for c in sc}
sys.exit(not (t == {n: v["address"] + ":9417" for n, v in m.items()}
              and all(v["interface"] == "mgmt0" and v["root_interface"].startswith(sys.argv[3]) for v in m.values())))' \
        "$s" "$d/bgp/prometheus.yml" "$TAG"
    check_eq "BGP: nothing of the run is left (veths, namespaces, processes, sockets)" "$(leftovers "$TAG" "$d/bgp")" ""
else
    rsw_fail "BGP: rocelab run --hold did not reach its hold"
fi

# --- 2. static routing: exporters on 127.0.0.1
if start_held static static; then
    check_eq "static: no management veths" "$(ip -o link show | awk -F': ' '{print $2}' | grep -c -- "^${TAG}m" || true)" "0"
    check "static: every target of prometheus.yml (127.0.0.1) is its switch" scrape "$d/static" static
    end_hold static
    check_eq "static: Ctrl-C ends the hold, the run exits 0" "$RC" "0"
    check_eq "static: nothing of the run is left" "$(leftovers "$TAG" "$d/static")" ""
else
    rsw_fail "static: rocelab run --hold did not reach its hold"
fi

# --- 3. SIGTERM once the management veths exist
"$LAB" run "$SCEN" --engine real --routing bgp --out "$d/term" --timeout 60 --no-report > "$d/term.log" 2>&1 &
lab_pid=$!
RSW_PIDS+=("$lab_pid")
tag=""
for _ in $(seq 1 600); do
    tag="$(run_tag "$d/term")"
    [ -n "$tag" ] && break
    sleep 0.05
done
[ -n "$tag" ] && guard "$tag"
check "the management veths exist when SIGTERM comes ($tag)" ip link show "${tag}m3"
kill -TERM "$lab_pid"
rsw_wait_pid "$lab_pid" 60 || true
cat "$d/term.log"
check_eq "SIGTERM stops the run with status 130" "$RSW_WAIT_RC" "130"
check_eq "nothing of the terminated run is left (veths, namespaces)" "$(leftovers "$tag" "$d/term")" ""
echo "test time: $(( $(date +%s) - start )) s"
rsw_finish
