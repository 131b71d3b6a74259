/* The contract between rocesw's XDP program (rocesw_xdp.bpf.c, C for the BPF target) and
 * roceswd (af_xdp.cc, C++ over libbpf): map names, the configuration record roceswd writes
 * after the port starts, and the counter indexes. Plain C so that both compilers read it. */
#ifndef ROCESW_XDP_ABI_H
#define ROCESW_XDP_ABI_H

#include <linux/types.h>

/* Map names as the kernel reports them (at most 15 characters). DPDK's net_af_xdp inserts its
 * sockets into the map named "xsks_map" (drivers/net/af_xdp, load_custom_xdp_prog). */
#define RSW_XDP_PROG_NAME "rsw_xdp"
#define RSW_XDP_XSKS_MAP "xsks_map"
#define RSW_XDP_CFG_MAP "rsw_xdp_cfg"
#define RSW_XDP_STATS_MAP "rsw_xdp_stats"

#define RSW_XDP_MAX_QUEUES 64
#define RSW_XDP_MAX_V4 8
#define RSW_XDP_MAX_V6 8

/* Until roceswd has written the record the mode is 0 and every frame goes to the kernel: a
 * port between program load and configuration never steals the host's traffic. */
enum rsw_xdp_mode {
    RSW_XDP_UNCONFIGURED = 0,
    RSW_XDP_DEDICATED = 1, /* every frame to the switch */
    RSW_XDP_SHARED = 2,    /* only what the switch handles; the rest to the kernel */
};

#define RSW_XDP_F_LLDP 1u /* shared: LLDP to the switch (host interfaces are on) */

struct rsw_xdp_cfg {
    __u32 mode;                  /* enum rsw_xdp_mode */
    __u32 flags;                 /* RSW_XDP_F_* */
    __u8 mac[8];                 /* the port's switch MAC in mac[0..5] */
    __u32 n_v4, n_v6;            /* entries used below */
    __u32 v4[RSW_XDP_MAX_V4];    /* the switch's IPv4 addresses on this port, network order */
    __u8 v6[RSW_XDP_MAX_V6][16]; /* its IPv6 addresses */
};

/* Per-reason packet counters (a per-CPU array indexed by these). */
enum rsw_xdp_reason {
    RSW_XDP_TO_SWITCH_ALL = 0,  /* dedicated mode */
    RSW_XDP_TO_SWITCH_MAC,      /* shared: destination is the port's switch MAC */
    RSW_XDP_TO_SWITCH_ARP,      /* shared: broadcast ARP for a switch address */
    RSW_XDP_TO_SWITCH_ND,       /* shared: neighbour solicitation for a switch address */
    RSW_XDP_TO_SWITCH_MAC_CTRL, /* shared: MAC control 0x8808 (PAUSE/PFC) */
    RSW_XDP_TO_SWITCH_LLDP,     /* shared: LLDP with host interfaces on */
    RSW_XDP_PASS_KERNEL,        /* shared: not the switch's, to the kernel */
    RSW_XDP_PASS_NO_SOCKET,     /* for the switch, but no socket on this queue: to the kernel */
    RSW_XDP_PASS_UNCONFIGURED,  /* before roceswd wrote the configuration */
    RSW_XDP_REASONS
};

#endif
