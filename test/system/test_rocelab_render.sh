#!/bin/bash
# rocelab render: per-switch roceswd and BIRD configs for a deployment on servers, from the
# 2x2 leaf-spine scenario and config/rocelab/inventory-leaf-spine-small.yaml (PCI and AF_XDP
# ports). Every rendered roceswd file passes `roceswd --check-config` and every BIRD file
# `bird -p -c`, in BGP mode (host interfaces, eBGP per fabric link, leaves with their own ASN,
# spines sharing one) and in static mode (the simulator's ECMP routes); a bad inventory is
# refused with the file and the entry named.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rsw_init
export ROCELAB_BUILD="$BUILD_DIR"
LAB="$RSW_REPO/tools/rocelab"
SCEN="$RSW_REPO/config/scenarios/leaf-spine-small.yaml"
INV="$RSW_REPO/config/rocelab/inventory-leaf-spine-small.yaml"
d="$RSW_TMP"
command -v bird >/dev/null || { rsw_fail "bird is not installed (tools/bootstrap installs bird2)"; rsw_finish; }

check "render (bgp) with --check" "$LAB" render "$SCEN" --inventory "$INV" --out "$d/bgp" --check
for sw in leaf0 leaf1 spine0 spine1; do
    check "bgp: $sw/roceswd.yaml passes roceswd --check-config" "$ROCESWD" --check-config "$d/bgp/$sw/roceswd.yaml"
    check "bgp: $sw/bird.conf passes bird -p" bird -p -c "$d/bgp/$sw/bird.conf"
    check "bgp: $sw has host interfaces and no static routes" "$RSW_PYTHON" -c '
import sys; t = open(sys.argv[1]).read(); sys.exit(not ("host_interfaces: true" in t and "routes:" not in t))' "$d/bgp/$sw/roceswd.yaml"
done
check "bgp: leaf0 peers with both spines in AS 65000 over /31s" grep -q 'neighbor 10.0.0.9 as 65000; interface "p2"' "$d/bgp/leaf0/bird.conf"
check "bgp: spine0 peers with leaf1 in its own AS" grep -q 'neighbor 10.0.0.12 as 65101; interface "p1"' "$d/bgp/spine0/bird.conf"
check "bgp: graceful restart with a restart time (leaf0)" grep -q 'graceful restart on; graceful restart time 120;' "$d/bgp/leaf0/bird.conf"
check "bgp: leaf1 uses the inventory's AF_XDP interface" grep -q 'af_xdp: {interface: "enp1s0f0"' "$d/bgp/leaf1/roceswd.yaml"
check "bgp: leaf0 uses the inventory's PCI device" grep -q 'device: "0000:3b:00.0"' "$d/bgp/leaf0/roceswd.yaml"
check "render (static) with --check" "$LAB" render "$SCEN" --inventory "$INV" --out "$d/static" --routing static --check
for sw in leaf0 leaf1 spine0 spine1; do
    check "static: $sw/roceswd.yaml passes roceswd --check-config" "$ROCESWD" --check-config "$d/static/$sw/roceswd.yaml"
done
check "static: leaf0 has the multipath route to host2's subnet over both spines" \
    grep -q 'prefix: "11.0.2.0/24", via: \["10.0.0.9", "10.0.0.11"\]' "$d/static/leaf0/roceswd.yaml"
check "static: the inventory's host MAC is a static neighbour" grep -q '"b8:ce:f6:00:00:10"' "$d/static/leaf0/roceswd.yaml"
sed 's/^  spine1:/  spine9:/' "$INV" > "$d/bad.yaml"
out="$("$LAB" render "$SCEN" --inventory "$d/bad.yaml" --out "$d/bad" 2>&1 || true)"
check "an unknown switch in the inventory is refused with its name" grep -q "bad.yaml: switches.spine9: no such switch" <<<"$out"
sed '/p3: "0000:5e:00.1"/d' "$INV" > "$d/bad2.yaml"
out="$("$LAB" render "$SCEN" --inventory "$d/bad2.yaml" --out "$d/bad2" 2>&1 || true)"
check "a port without a device is refused" grep -q "switches.leaf0.ports: no device for p3" <<<"$out"
rsw_finish
