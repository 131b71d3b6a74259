#!/bin/bash
# rocehost's frames, checked by independent decoders: rocehost runs on a pcap port, answers
# scapy-made RoCEv2 WRITEs (CE-marked, and one with a PSN gap) and sends a WRITE of its own.
# scapy re-computes every ICRC and checks the CNP, ACK, NAK and data fields; tshark must decode
# the same opcodes. Also: the receiver's counters (one gap, one CNP) in summary.json.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${ROCEHOST:=$BUILD_DIR/app/rocehost/rocehost}"
rsw_init

d="$RSW_TMP"
"$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" make "$d/in.pcap"
sed "s#IN.pcap#$d/in.pcap#; s#OUT.pcap#$d/out.pcap#" "$RSW_REPO/config/rocehost/pcap-format.yaml" \
    > "$d/fmt.yaml"
check "rocehost runs on a pcap port" \
    "$ROCEHOST" --config "$d/fmt.yaml" --out "$d/out" --file-prefix "$(rsw_file_prefix)"
check "scapy: CNP, ACK, NAK and WRITE frames with valid ICRC" \
    "$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" check "$d/out.pcap"
ops="$(tshark -r "$d/out.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | tr '\n' ' ')"
check_eq "tshark decodes the opcodes (6 7 8 WRITE, 17 ACK/NAK, 129 CNP)" "$ops" "6 7 8 17 17 129 "
gaps="$("$RSW_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["receiver"]["psn_gaps"])' "$d/out/summary.json")"
check_eq "receiver counts the PSN gap" "$gaps" "1"
cnps="$("$RSW_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["receiver"]["cnps_sent"])' "$d/out/summary.json")"
check_eq "NP sends one CNP for three CE packets within the interval" "$cnps" "1"

# PFC honoring: a PFC frame pauses priority 3 for 0xFFFF quanta (3.4 s at 10 Mb/s, longer than
# the run) and lossy priority 5. Data and ACK/NAK (priority 3) must not leave; the CNP
# (priority 6) must.
"$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" make-paused "$d/in2.pcap"
sed "s#IN.pcap#$d/in2.pcap#; s#OUT.pcap#$d/out2.pcap#; s#line_rate: 10G#line_rate: 10M#" \
    "$RSW_REPO/config/rocehost/pcap-format.yaml" > "$d/paused.yaml"
check "rocehost runs paused" \
    "$ROCEHOST" --config "$d/paused.yaml" --out "$d/out2" --file-prefix "$(rsw_file_prefix)p"
check "nothing but the CNP leaves while priority 3 is paused" \
    "$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" check-paused "$d/out2.pcap"
check_eq "one pause event counted on priority 3" \
    "$("$RSW_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["hosts"][0]["pause_frames"])' "$d/out2/summary.json")" "1"

# The same pause with the ACK class moved to the CNP's (HPCC's hosts: ACKs never paused): the
# ACK and NAK leave too, on DSCP 48.
sed "s#$d/out2.pcap#$d/out2a.pcap#" "$d/paused.yaml" > "$d/paused-ack.yaml"
printf 'traffic: {ack_dscp: 48, ack_priority: 6}\n' >> "$d/paused-ack.yaml"
check "rocehost runs paused with ack_priority 6" \
    "$ROCEHOST" --config "$d/paused-ack.yaml" --out "$d/out2a" --file-prefix "$(rsw_file_prefix)a"
check "the CNP, ACK and NAK leave on DSCP 48 while priority 3 is paused" \
    "$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" check-paused-ack "$d/out2a.pcap"

# IPv6: rocehost answers a scapy-made neighbour solicitation and sends its WRITE over IPv6.
"$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" make-nd "$d/in3.pcap"
sed "s#IN.pcap#$d/in3.pcap#; s#OUT.pcap#$d/out3.pcap#; s#ip: 10.0.1.2/24#ip: 'fd00:1::2/64'#;
     s#gateway: 10.0.1.1#gateway: 'fd00:1::1'#; s#ip: 10.0.9.2#ip: 'fd00:9::2'#" \
    "$RSW_REPO/config/rocehost/pcap-format.yaml" > "$d/v6.yaml"
check "rocehost runs over IPv6" \
    "$ROCEHOST" --config "$d/v6.yaml" --out "$d/out3" --file-prefix "$(rsw_file_prefix)6"
check "scapy: neighbour advertisement and IPv6 WRITE frames" \
    "$RSW_PYTHON" "$RSW_SYSTEM_DIR/rocehost_pcap.py" check-nd "$d/out3.pcap"
rsw_finish
