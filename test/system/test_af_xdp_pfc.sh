#!/bin/bash
# System test: PFC over AF_XDP ports (issue 19) - test_pfc.sh's checks with the switch's ports
# on veth pairs driven through net_af_xdp and rocesw's XDP program (dedicated mode):
#   generation: PFC XOFF/XON frames roceswd sends out of an AF_XDP port, captured on the peer
#     veth in h1's namespace and decoded by tshark (802.1Qbb opcode, class-enable vector exactly
#     priority 3, quanta 0xFFFF then 0);
#   honoring: PFC from h2 (scapy-built) crosses veth and the XDP program into roceswd, pauses
#     priority 3's queue on p1 for its quanta (DSCP 0 passes meanwhile), an XON ends it early;
#     rocectl's pause counters agree.
# Skips (exit 77) without root or without the kernel's AF_XDP sockets.
RSW_PFC_PORTS=af_xdp exec bash "$(dirname "$0")/test_pfc.sh" "$@"
