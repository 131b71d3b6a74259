#!/bin/bash
# Two rocehost processes back to back over memif: the sender resolves the receiver by ARP and
# completes four 1 MB RDMA WRITEs; the receiver reports every message delivered, zero PSN gaps
# and zero ICRC errors. Then the same over IPv6, resolved by neighbour discovery.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${ROCEHOST:=$BUILD_DIR/app/rocehost/rocehost}"
rsw_init

d="$RSW_TMP"
json() { "$RSW_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
for fam in v4 v6; do
    for f in sender receiver; do
        sed "s#/tmp/rocehost-direct.sock#$d/$fam.sock#" "$RSW_REPO/config/rocehost/direct-$f.yaml" |
            if [ "$fam" = v6 ]; then
                sed "s#ip: 10.0.1.2/24#ip: 'fd00:1::2/64'#; s#ip: 10.0.1.3/24#ip: 'fd00:1::3/64'#;
                     s#ip: 10.0.1.3\$#ip: 'fd00:1::3'#"
            else cat; fi > "$d/$fam-$f.yaml"
    done
    rsw_bg "$ROCEHOST" --config "$d/$fam-receiver.yaml" --out "$d/$fam-rx" --duration-ms 60000 \
        --file-prefix "$(rsw_file_prefix)r$fam" >"$d/$fam-rx.log" 2>&1
    rx_pid="$RSW_LAST_PID"
    for _ in $(seq 50); do [ -S "$d/$fam.sock" ] && break; sleep 0.1; done
    check "$fam: sender completes its flows" timeout 60 "$ROCEHOST" --config "$d/$fam-sender.yaml" \
        --out "$d/$fam-tx" --file-prefix "$(rsw_file_prefix)t$fam"
    rsw_kill "$rx_pid" 10
    cat "$d/$fam-tx/flows.csv" "$d/$fam-rx/receivers.csv" >&2 || true
    check_eq "$fam: all 4 flows completed" "$(json "$d/$fam-tx/summary.json" 'd["flows_completed"]')" "4"
    check_eq "$fam: receiver: 4 messages" "$(json "$d/$fam-rx/summary.json" 'd["receiver"]["messages"]')" "4"
    check_eq "$fam: receiver: zero PSN gaps" "$(json "$d/$fam-rx/summary.json" 'd["receiver"]["psn_gaps"]')" "0"
    check_eq "$fam: receiver: zero ICRC errors" "$(json "$d/$fam-rx/summary.json" 'd["hosts"][0]["rx_bad_icrc"]')" "0"
    check_eq "$fam: sender resolved h2 by ARP/ND (one solicitation answered)" \
        "$(awk -F, 'NR==2 {print $17}' "$d/$fam-rx/hosts.csv")" "1"
    check_eq "$fam: the receiver saw the sender's address family" \
        "$(awk -F, 'NR==2 {print ($2 ~ /:/) ? "v6" : "v4"}' "$d/$fam-rx/receivers.csv")" "$fam"
done
rsw_finish
