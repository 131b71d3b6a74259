/* rocesw's XDP program for net_af_xdp ports (doc/ports.md). Loaded by DPDK's net_af_xdp PMD
 * through its xdp_prog= argument; the PMD puts its AF_XDP sockets into xsks_map. roceswd then
 * writes rsw_xdp_cfg (mode, the port's MAC and addresses) and reads rsw_xdp_stats.
 *
 *   dedicated: every frame goes to the switch's socket.
 *   shared:    only what the switch handles goes to the socket - frames to the port's switch
 *              MAC, broadcast ARP for a switch address, neighbour solicitations for a switch
 *              address, MAC control (0x8808, PAUSE/PFC), LLDP when host interfaces are on; the
 *              rest (SSH, management, the host's own ARP/ND) passes to the kernel.
 * Nothing is dropped: a frame the program cannot parse passes to the kernel, which decides. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdp_abi.h"

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, RSW_XDP_MAX_QUEUES);
    __type(key, __u32);
    __type(value, __u32);
} xsks_map SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct rsw_xdp_cfg);
} rsw_xdp_cfg SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, RSW_XDP_REASONS);
    __type(key, __u32);
    __type(value, __u64);
} rsw_xdp_stats SEC(".maps");

static __always_inline void count(__u32 reason) {
    __u64 *c = bpf_map_lookup_elem(&rsw_xdp_stats, &reason);
    if (c) *c += 1;
}

static __always_inline int pass(__u32 reason) {
    count(reason);
    return XDP_PASS;
}

static __always_inline int to_switch(struct xdp_md *ctx, __u32 reason) {
    __u32 q = ctx->rx_queue_index;
    if (!bpf_map_lookup_elem(&xsks_map, &q)) return pass(RSW_XDP_PASS_NO_SOCKET);
    count(reason);
    return bpf_redirect_map(&xsks_map, q, XDP_PASS);
}

static __always_inline int mac_eq(const __u8 *a, const __u8 *b) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] &&
           a[5] == b[5];
}

static __always_inline int is_switch_v4(const struct rsw_xdp_cfg *cfg, __u32 a) {
#pragma unroll
    for (int i = 0; i < RSW_XDP_MAX_V4; i++) {
        if (i >= (int)cfg->n_v4) break;
        if (cfg->v4[i] == a) return 1;
    }
    return 0;
}

static __always_inline int is_switch_v6(const struct rsw_xdp_cfg *cfg, const __u8 *a) {
#pragma unroll
    for (int i = 0; i < RSW_XDP_MAX_V6; i++) {
        if (i >= (int)cfg->n_v6) break;
        const __u32 *x = (const __u32 *)cfg->v6[i];
        const __u32 *y = (const __u32 *)a;
        if (x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3]) return 1;
    }
    return 0;
}

SEC("xdp")
int rsw_xdp(struct xdp_md *ctx) {
    void *data = (void *)(long)ctx->data;
    void *end = (void *)(long)ctx->data_end;
    __u32 zero = 0;
    const struct rsw_xdp_cfg *cfg = bpf_map_lookup_elem(&rsw_xdp_cfg, &zero);
    if (!cfg || cfg->mode == RSW_XDP_UNCONFIGURED) return pass(RSW_XDP_PASS_UNCONFIGURED);
    if (cfg->mode == RSW_XDP_DEDICATED) return to_switch(ctx, RSW_XDP_TO_SWITCH_ALL);

    struct ethhdr *eth = data;
    if ((void *)(eth + 1) > end) return pass(RSW_XDP_PASS_KERNEL);
    if (mac_eq(eth->h_dest, cfg->mac)) return to_switch(ctx, RSW_XDP_TO_SWITCH_MAC);
    __u16 proto = bpf_ntohs(eth->h_proto);
    if (proto == 0x8808) return to_switch(ctx, RSW_XDP_TO_SWITCH_MAC_CTRL);
    if (proto == 0x88cc && (cfg->flags & RSW_XDP_F_LLDP))
        return to_switch(ctx, RSW_XDP_TO_SWITCH_LLDP);

    if (proto == ETH_P_ARP) {
        /* Ethernet/IPv4 ARP: 8 bytes of header, sha(6) spa(4) tha(6) tpa(4). */
        __u8 *arp = (__u8 *)(eth + 1);
        if ((void *)(arp + 28) > end) return pass(RSW_XDP_PASS_KERNEL);
        __u32 tpa;
        __builtin_memcpy(&tpa, arp + 24, 4);
        if (is_switch_v4(cfg, tpa)) return to_switch(ctx, RSW_XDP_TO_SWITCH_ARP);
        return pass(RSW_XDP_PASS_KERNEL);
    }
    if (proto == ETH_P_IPV6 && eth->h_dest[0] == 0x33 && eth->h_dest[1] == 0x33) {
        /* A neighbour solicitation right after the IPv6 header: type 135, target at +8. */
        struct ipv6hdr *ip6 = (struct ipv6hdr *)(eth + 1);
        __u8 *icmp = (__u8 *)(ip6 + 1);
        if ((void *)(icmp + 24) > end) return pass(RSW_XDP_PASS_KERNEL);
        if (ip6->nexthdr == IPPROTO_ICMPV6 && icmp[0] == 135 && is_switch_v6(cfg, icmp + 8))
            return to_switch(ctx, RSW_XDP_TO_SWITCH_ND);
    }
    return pass(RSW_XDP_PASS_KERNEL);
}

char _license[] SEC("license") = "Dual BSD/GPL";
