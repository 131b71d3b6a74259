// A NETLINK_ROUTE socket for the control thread (blocking is allowed there, never in workers):
// subscribes to link/address/neighbour/route notifications, requests dumps, and configures
// the switch's host interfaces. Raw sockets, no libmnl.
//
// Request/reply operations (dump, add_address) use a short-lived socket of their own, so
// that waiting for a reply never consumes notifications from the subscribed socket. Only the
// kernel's messages (sender port id 0) are returned.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pkt/addr.h"
#include "ctrl/netlink_msg.h"

namespace rocesw::nl {

class NetlinkSocket {
  public:
    NetlinkSocket() = default;
    ~NetlinkSocket();
    NetlinkSocket(const NetlinkSocket &) = delete;
    NetlinkSocket &operator=(const NetlinkSocket &) = delete;

    // With subscribe: RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
    // RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE, and RTNLGRP_NEXTHOP where the kernel has nexthop
    // objects. rcvbuf_bytes is set with SO_RCVBUFFORCE (needs
    // CAP_NET_ADMIN), else SO_RCVBUF (capped by net.core.rmem_max); 0 keeps the default.
    // Non-blocking. NETLINK_NO_ENOBUFS is not set: overruns are reported by recv().
    bool open(bool subscribe, size_t rcvbuf_bytes, std::string *err);
    int fd() const { return fd_; }
    void close();

    // Sends an RTM_GETLINK / RTM_GETADDR / RTM_GETNEIGH / RTM_GETROUTE / RTM_GETNEXTHOP dump request
    // (NLM_F_DUMP, AF_UNSPEC) on this socket; the replies arrive through recv(), interleaved
    // with notifications, and end with NLMSG_DONE.
    bool request_dump(uint16_t rtm_type, std::string *err);

    // Non-blocking receive of one datagram into the internal buffer (valid until the next
    // call): bytes (> 0); 0 when nothing is waiting (EAGAIN); -1 with *overrun = true on
    // ENOBUFS (notifications were lost: the caller must re-dump); -1 with *err otherwise.
    ssize_t recv(std::span<const uint8_t> *out, bool *overrun, std::string *err);

    // Blocking: dumps one kind (RTM_GET*) on a separate unsubscribed socket and parses it up
    // to NLMSG_DONE, appending to *out. Retries when the kernel flags the dump as interrupted.
    // Malformed messages fail the dump (their text in *err). Needs no privilege.
    bool dump(uint16_t rtm_type, std::vector<Message> *out, std::string *err);

    // RTM_NEWADDR with NLM_F_CREATE | NLM_F_REPLACE (v4: IFA_LOCAL + IFA_ADDRESS; v6:
    // IFA_ADDRESS with IFA_F_NODAD); waits for the ACK. *err is strerror of the kernel's
    // answer plus its extended ACK text, if any. Needs CAP_NET_ADMIN.
    bool add_address(int32_t ifindex, const IfAddr &a, std::string *err);

    // Asks the kernel to resolve neighbour IP on ifindex (ARP/ND), as `ip neigh replace IP dev
    // DEV use` does: RTM_NEWNEIGH with NTF_USE creates the entry if needed and starts the
    // solicitation; the answer arrives later as an ordinary neighbour notification. Waits for
    // the ACK. Needs CAP_NET_ADMIN.
    bool resolve_neighbour(int32_t ifindex, const IpAddr &ip, std::string *err);

  private:
    int fd_ = -1;
    uint32_t seq_ = 0;
    std::vector<uint8_t> buf_;
};

}  // namespace rocesw::nl
