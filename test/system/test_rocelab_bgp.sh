#!/bin/bash
# rocelab's real engine with BGP routing (--routing bgp) on the 2-leaf, 2-spine, 4-host
# leaf-spine at 1 Gb/s (config/scenarios/leaf-spine-small.yaml): every switch in its own
# network namespace with host interfaces and its own BIRD (the config rocelab render writes,
# render.bird_conf), eBGP over every fabric link; the engine waits for every session and every
# FIB before the workload.
#  1. The run: all 8 sessions Established (and still at the end); the convergence time is in
#     summary.json; every switch's FIB as the workload started holds exactly the routes BGP
#     must give it, computed here from lab.json's cabling and addressing (not from rocesim's
#     routes): a leaf reaches each host of the other leaf over both spines (an ECMP group of
#     two, via the spines' /31 addresses), a spine each host over its leaf; learned from BIRD;
#     every flow completes; each leaf sent on both uplinks; accounting balanced on every
#     switch; every roceswd and BIRD exited 0; nothing left (process, namespace, work
#     directory with its sockets, DPDK runtime directory).
#  2. A link down handled by BGP: leaf0 - spine0 set down 20 ms into the workload (no route
#     move by the engine): BIRD's sessions over it go down with the carrier, every FIB reaches
#     the converged routes (convergence time recorded), the flows complete, the only drops
#     are the down link's, 6 sessions Established at the end, accounting balanced.
#  3. SIGTERM while BIRD converges: exit 130, nothing left (Ctrl-C during the workload, with
#     BGP the default: test_rocelab_real.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_bgp.sh"
rsw_require_root
rsw_init
rsw_rocelab_init
bgp_need_tools || rsw_finish
SCEN="$RSW_REPO/config/scenarios/leaf-spine-small.yaml"
d="$RSW_TMP"
json() { "$RSW_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
start=$(date +%s)

leftovers() { rsw_lab_leftovers "$@"; }  # TAG OUT: nothing when clean (veths included)
# run_tag DIR: the tag of the run whose configs are in DIR.
run_tag() { sed -n 's#.*/tmp/\(rl[0-9a-f]*\)\..*#\1#p' "$1/configs/leaf0.yaml" | head -n1; }

# --- 1. the run
rc=0
timeout 150 "$LAB" run "$SCEN" --engine real --routing bgp --out "$d/bgp" --timeout 60 \
    --no-report > "$d/bgp.log" 2>&1 || rc=$?
cat "$d/bgp.log"
s="$d/bgp/summary.json"
check_eq "rocelab run --routing bgp exits 0" "$rc" "0"
check_eq "summary.json: routing bgp, 8 sessions" "$(json "$s" 'd["routing"] + " " + str(d["bgp"]["sessions"])')" "bgp 8"
check_eq "every session still Established at the end" \
    "$(json "$s" 'sorted(set(st for v in d["bgp"]["sessions_at_end"].values() for st in v.values())) + [sum(len(v) for v in d["bgp"]["sessions_at_end"].values())]')" "['Established', 8]"
check "the convergence time is recorded (sessions, then every FIB)" "$RSW_PYTHON" -c '
import json, sys; b = json.load(open(sys.argv[1]))["bgp"]
print("BGP: Established after %.2f s, FIBs converged after %.2f s" % (b["established_s"], b["converged_s"]))
sys.exit(not (0 < b["established_s"] <= b["converged_s"] < 60))' "$s"
check_eq "ASNs: one per leaf, the spines share one" "$(json "$s" 'sorted(d["bgp"]["asn"].items())')" \
    "[('leaf0', 65100), ('leaf1', 65101), ('spine0', 65000), ('spine1', 65000)]"
check "every switch's FIB holds exactly BGP's routes (from lab.json's cabling)" "$RSW_PYTHON" - "$d/bgp" <<'PY'
import json, sys
out = sys.argv[1]
lab = json.load(open(out + "/lab.json"))
nodes = {n["id"]: n for n in lab["nodes"]}
sws = [n for n in lab["nodes"] if n["kind"] == "switch"]
hosts_of = {sw["id"]: [p["peer"] for p in sw["ports"] if nodes[p["peer"]]["kind"] == "host"] for sw in sws}
leaf_of = {h: s for s, hs in hosts_of.items() for h in hs}
def subnet(h):  # doc/rocelab.md: host i is 11.(i/256).(i%256).1/24
    return "11.%d.%d.0/24" % (h // 256, h % 256)
def peer_addr(sw, p):
    return nodes[p["peer"]]["ports"][p["peer_port"]]["ipv4"].split("/")[0]
for sw in sws:
    leaf = bool(hosts_of[sw["id"]])
    want = {}
    for h, l in leaf_of.items():
        if l == sw["id"]:
            continue
        if leaf:   # over every spine: the fabric ports
            want[subnet(h)] = sorted(("p%d" % p["port"], peer_addr(sw, p)) for p in sw["ports"]
                                     if nodes[p["peer"]]["kind"] == "switch")
        else:      # a spine: over the host's leaf
            want[subnet(h)] = sorted(("p%d" % p["port"], peer_addr(sw, p)) for p in sw["ports"] if p["peer"] == l)
    v = json.load(open("%s/switches/%s.routes.json" % (out, sw["name"])))
    groups = {g["id"]: g for g in v["lb"]["groups"]}
    have = {}
    for r in v["routes"]["routes"]:
        if r["type"] in ("connected", "local", "neighbour", "static"):
            continue
        assert r["origin"] == "bird", r
        nh = r["nexthop"]
        if nh["kind"] == "ecmp_group":
            g = groups[int(nh["port"].split()[1])]
            have[r["prefix"]] = sorted((m["port"], m["via"]) for m in g["members"] if m["alive"])
        else:
            assert nh["kind"] == "forward", r
            have[r["prefix"]] = [(nh["port"], nh["via"])]
    print("%s: %d learned routes, %s" % (sw["name"], len(have),
          "; ".join("%s via %s" % (p, ",".join("%s:%s" % x for x in v)) for p, v in sorted(have.items()))))
    assert have == want, (sw["name"], have, want)
    assert len(want) == (2 if leaf else 4) and all(len(x) == (2 if leaf else 1) for x in want.values()), want
PY
n="$(json "$s" 'd["flows"]')"
check_eq "every flow completed" "$(json "$s" 'd["completed"]')" "$n"
rsw_lab_uplinks_used "$s" "BGP multipath, an ECMP group"
check_eq "no switch dropped a packet" "$(json "$s" 'sum(x["drops"] for x in d["switches"].values())')" "0"
check_eq "every switch's accounting identity balanced" "$(json "$s" 'd["accounting"]["verdict"] + " " + str(d["accounting"]["balanced"])')" "balanced 4"
check_eq "every roceswd and every BIRD exited 0" \
    "$(json "$s" 'sorted(set(d["switch_exit_status"].values()) | set(d["bgp"]["bird_exit_status"].values())) + [len(d["bgp"]["bird_exit_status"])]')" "[0, 4]"
tag="$(json "$s" 'd["tag"]')"
check_eq "nothing of the run is left (BIRD, roceswd, namespaces, sockets, runtime dirs)" "$(leftovers "$tag" "$d/bgp")" ""

# --- 2. a link down, handled by BGP
{ sed "s#^qos_profile: \.\./#qos_profile: $RSW_REPO/config/#" "$SCEN"
  echo "events:"
  echo "  - {at: 20ms, link_down: [4, 6], convergence: 0us}"; } > "$d/linkdown.yaml"
rc=0
timeout 150 "$LAB" run "$d/linkdown.yaml" --engine real --routing bgp --out "$d/ld" --timeout 60 \
    --no-report > "$d/ld.log" 2>&1 || rc=$?
cat "$d/ld.log"
s="$d/ld/summary.json"
check_eq "link down: rocelab run exits 0, every flow completed" "$rc $(json "$s" 'd["completed"] == d["flows"]')" "0 True"
check "link down: BGP moved the routes (every FIB converged, no route move by the engine)" "$RSW_PYTHON" -c '
import json, sys; e = json.load(open(sys.argv[1]))["events_applied"][0]
print("link set %.1f ms after at; every FIB converged %.1f ms later" % (e["link_late_us"] / 1e3, e.get("convergence_us", -1) / 1e3))
sys.exit(not (e["kind"] == "link_down" and e["bgp_converged"] and "late_us" not in e
              and e["routes_moved_at_ns"] >= e["link_set_at_ns"] and 0 < e["convergence_us"] < 20e6))' "$s"
check_eq "link down: leaf0 and spine0 lost their session, 6 of 8 Established" \
    "$(json "$s" 'sum(st == "Established" for v in d["bgp"]["sessions_at_end"].values() for st in v.values())')" "6"
# While BGP converges, frames meet the down link (port_stopped, the link's loss) or a switch
# that lost its route before its peers moved theirs (no_route at spine0, BGP's loss).
check "link down: the only drops are the down link's and no_route while BGP converged" "$RSW_PYTHON" -c '
import json, sys; s = json.load(open(sys.argv[1]))
print("switch drops", s["switch_drops"], "link_drops", s["link_drops"])
sys.exit(not (set(s["switch_drops"]) <= {"no_route"} and s["link_drops"]["link_down"] > 0
              and all(set(x["drops_by_reason"]) <= {"port_stopped", "no_route"} for x in s["switches"].values())))' "$s"
check_eq "link down: every switch's accounting identity balanced" "$(json "$s" 'd["accounting"]["verdict"]')" "balanced"
check_eq "link down: nothing of the run is left" "$(leftovers "$(json "$s" 'd["tag"]')" "$d/ld")" ""

# --- 3. SIGTERM while BIRD converges
"$LAB" run "$SCEN" --engine real --routing bgp --out "$d/term" --timeout 60 > "$d/term.log" 2>&1 &
lab_pid=$!
RSW_PIDS+=("$lab_pid")
for _ in $(seq 1 600); do
    [ -e "$d/term/logs/spine1.bird.log" ] && break
    sleep 0.05
done
tag="$(run_tag "$d/term")"
check "BIRD was started when SIGTERM came ($tag)" test -n "$tag" -a -e "$d/term/logs/spine1.bird.log"
sleep 0.3
kill -TERM "$lab_pid"
rsw_wait_pid "$lab_pid" 60 || true
cat "$d/term.log"
check_eq "SIGTERM stops the run with status 130" "$RSW_WAIT_RC" "130"
check_eq "nothing of the terminated run is left" "$(leftovers "$tag" "$d/term")" ""
echo "test time: $(( $(date +%s) - start )) s"
rsw_finish
