#include "ctrl/netlink_socket.h"

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <linux/neighbour.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace rocesw::nl {

namespace {

// Large enough for any datagram the kernel sends: dumps fill at most 32 KiB (or a page when
// that is larger), notifications are one message each.
constexpr size_t kRecvBuf = 64 * 1024;
// How long a blocking request waits for the kernel before giving up.
constexpr int kReplyTimeoutMs = 5000;

std::string errno_text(const char *what, int e = errno) {
    return std::string(what) + ": " + std::strerror(e);
}

void set_err(std::string *err, std::string s) {
    if (err) *err = std::move(s);
}

// A request: nlmsghdr + fixed header + attributes, 4-byte aligned.
struct Request {
    std::vector<uint8_t> b;

    Request(uint16_t type, uint16_t flags, uint32_t seq) {
        b.resize(sizeof(nlmsghdr));
        nlmsghdr h{};
        h.nlmsg_type = type;
        h.nlmsg_flags = flags;
        h.nlmsg_seq = seq;
        std::memcpy(b.data(), &h, sizeof(h));
    }
    void put(const void *p, size_t n) {
        const size_t at = b.size();
        b.resize(at + NLMSG_ALIGN(n));
        std::memcpy(b.data() + at, p, n);
    }
    void attr(uint16_t type, const void *p, size_t n) {
        rtattr a{};
        a.rta_len = uint16_t(RTA_LENGTH(n));
        a.rta_type = type;
        const size_t at = b.size();
        b.resize(at + RTA_SPACE(n));
        std::memcpy(b.data() + at, &a, sizeof(a));
        std::memcpy(b.data() + at + RTA_LENGTH(0), p, n);
    }
    std::span<const uint8_t> finish() {
        const uint32_t len = uint32_t(b.size());
        std::memcpy(b.data() + offsetof(nlmsghdr, nlmsg_len), &len, sizeof(len));
        return b;
    }
};

bool send_to_kernel(int fd, std::span<const uint8_t> msg, std::string *err) {
    sockaddr_nl to{};
    to.nl_family = AF_NETLINK;
    for (;;) {
        const ssize_t n = ::sendto(fd, msg.data(), msg.size(), 0,
                                   reinterpret_cast<const sockaddr *>(&to), sizeof(to));
        if (n == ssize_t(msg.size())) return true;
        if (n < 0 && errno == EINTR) continue;
        set_err(err, n < 0 ? errno_text("netlink sendto") : "netlink sendto: short write");
        return false;
    }
}

bool fill_dump_request(Request &r, uint16_t rtm_type, std::string *err) {
    // Each dump takes its own fixed header (the kernel checks it under strict checking); all
    // zero means AF_UNSPEC and no filter.
    switch (rtm_type) {
        case RTM_GETLINK: {
            ifinfomsg m{};
            r.put(&m, sizeof(m));
            return true;
        }
        case RTM_GETADDR: {
            ifaddrmsg m{};
            r.put(&m, sizeof(m));
            return true;
        }
        case RTM_GETNEIGH: {
            ndmsg m{};
            r.put(&m, sizeof(m));
            return true;
        }
        case RTM_GETROUTE: {
            rtmsg m{};
            r.put(&m, sizeof(m));
            return true;
        }
        case RTM_GETNEXTHOP: {
            nhmsg m{};
            r.put(&m, sizeof(m));
            return true;
        }
    }
    set_err(err, "netlink: cannot dump message type " + std::to_string(rtm_type));
    return false;
}

// Receives one datagram from the kernel into buf, waiting up to kReplyTimeoutMs. Returns its
// length, or -1 with *err.
ssize_t recv_reply(int fd, std::vector<uint8_t> &buf, std::string *err) {
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        const int pr = ::poll(&p, 1, kReplyTimeoutMs);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) {
            set_err(err, errno_text("netlink poll"));
            return -1;
        }
        if (pr == 0) {
            set_err(err, "netlink: no reply from the kernel within " +
                             std::to_string(kReplyTimeoutMs) + " ms");
            return -1;
        }
        sockaddr_nl from{};
        iovec iov{buf.data(), buf.size()};
        msghdr mh{};
        mh.msg_name = &from;
        mh.msg_namelen = sizeof(from);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        const ssize_t n = ::recvmsg(fd, &mh, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) {
            set_err(err, errno_text("netlink recvmsg"));
            return -1;
        }
        if (mh.msg_flags & MSG_TRUNC) {
            set_err(err, "netlink: datagram larger than the " + std::to_string(buf.size()) +
                             "-byte buffer");
            return -1;
        }
        if (from.nl_pid != 0) continue;  // not from the kernel
        return n;
    }
}

// A socket for one request/reply exchange, closed when it goes out of scope.
struct TempSocket {
    int fd = -1;
    ~TempSocket() {
        if (fd >= 0) ::close(fd);
    }
    bool open(std::string *err) {
        fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0) {
            set_err(err, errno_text("netlink socket"));
            return false;
        }
        // Best effort: error text from the kernel, and ACKs without the echoed request.
        const int one = 1;
        ::setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
        ::setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
        sockaddr_nl a{};
        a.nl_family = AF_NETLINK;
        if (::bind(fd, reinterpret_cast<const sockaddr *>(&a), sizeof(a)) < 0) {
            set_err(err, errno_text("netlink bind"));
            return false;
        }
        return true;
    }
};

uint32_t fresh_seq() {
    return uint32_t(::time(nullptr));
}

// Sends a request with NLM_F_ACK on fd and waits for its ACK (NLMSG_ERROR with our sequence
// number): true on error 0; otherwise *err = WHAT: strerror plus the kernel's extended text.
bool request_ack(int fd, Request &r, uint32_t seq, const char *type, const std::string &what,
                 std::string *err) {
    if (!send_to_kernel(fd, r.finish(), err)) return false;
    std::vector<uint8_t> buf(kRecvBuf);
    for (;;) {
        const ssize_t n = recv_reply(fd, buf, err);
        if (n < 0) return false;
        // Only the ACK (NLMSG_ERROR) for our sequence number matters.
        size_t off = 0;
        while (size_t(n) - off >= sizeof(nlmsghdr)) {
            nlmsghdr h;
            std::memcpy(&h, buf.data() + off, sizeof(h));
            if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > size_t(n) - off) break;
            if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_seq == seq) {
                ParseResult p = parse(std::span<const uint8_t>(buf.data() + off, h.nlmsg_len));
                if (!p.errors.empty()) {
                    set_err(err, std::string("netlink ") + type + ": " + p.errors.front());
                    return false;
                }
                if (p.error == 0) return true;
                set_err(err, what + ": " + std::strerror(-p.error) +
                                 (p.error_msg.empty() ? "" : " (" + p.error_msg + ")"));
                return false;
            }
            off += NLMSG_ALIGN(h.nlmsg_len);
        }
    }
}

}  // namespace

NetlinkSocket::~NetlinkSocket() {
    close();
}

void NetlinkSocket::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

bool NetlinkSocket::open(bool subscribe, size_t rcvbuf_bytes, std::string *err) {
    close();
    fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd_ < 0) {
        set_err(err, errno_text("netlink socket"));
        return false;
    }
    if (rcvbuf_bytes > 0) {
        const int sz = rcvbuf_bytes > size_t(INT32_MAX / 2) ? INT32_MAX / 2 : int(rcvbuf_bytes);
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0 &&
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)) < 0) {
            set_err(err, errno_text("netlink SO_RCVBUF"));
            close();
            return false;
        }
    }
    sockaddr_nl a{};
    a.nl_family = AF_NETLINK;
    if (subscribe)
        a.nl_groups = RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
                      RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (::bind(fd_, reinterpret_cast<const sockaddr *>(&a), sizeof(a)) < 0) {
        set_err(err, errno_text("netlink bind"));
        close();
        return false;
    }
    // Kernel nexthop objects: group 32, beyond nl_groups' bits. A kernel without them (before
    // 5.3) refuses the group; routes then never name an object either.
    if (subscribe) {
        const int grp = RTNLGRP_NEXTHOP;
        (void)::setsockopt(fd_, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp));
    }
    buf_.resize(kRecvBuf);
    seq_ = fresh_seq();
    return true;
}

bool NetlinkSocket::request_dump(uint16_t rtm_type, std::string *err) {
    if (fd_ < 0) {
        set_err(err, "netlink: socket not open");
        return false;
    }
    Request r(rtm_type, NLM_F_REQUEST | NLM_F_DUMP, ++seq_);
    if (!fill_dump_request(r, rtm_type, err)) return false;
    return send_to_kernel(fd_, r.finish(), err);
}

ssize_t NetlinkSocket::recv(std::span<const uint8_t> *out, bool *overrun, std::string *err) {
    if (overrun) *overrun = false;
    if (fd_ < 0) {
        set_err(err, "netlink: socket not open");
        return -1;
    }
    for (;;) {
        sockaddr_nl from{};
        iovec iov{buf_.data(), buf_.size()};
        msghdr mh{};
        mh.msg_name = &from;
        mh.msg_namelen = sizeof(from);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        const ssize_t n = ::recvmsg(fd_, &mh, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            if (errno == ENOBUFS) {
                if (overrun) *overrun = true;
                set_err(err, "netlink: receive buffer overrun, notifications lost");
                return -1;
            }
            set_err(err, errno_text("netlink recvmsg"));
            return -1;
        }
        if (mh.msg_flags & MSG_TRUNC) {
            set_err(err, "netlink: datagram larger than the " + std::to_string(buf_.size()) +
                             "-byte buffer");
            return -1;
        }
        if (from.nl_pid != 0 || n == 0) continue;  // only the kernel speaks to us
        if (out) *out = std::span<const uint8_t>(buf_.data(), size_t(n));
        return n;
    }
}

bool NetlinkSocket::dump(uint16_t rtm_type, std::vector<Message> *out, std::string *err) {
    // The kernel flags a dump NLM_F_DUMP_INTR when the table changed while it was being
    // written; a few retries are enough unless something churns continuously.
    for (int attempt = 0; attempt < 5; attempt++) {
        TempSocket s;
        if (!s.open(err)) return false;
        const uint32_t seq = fresh_seq() + uint32_t(attempt);
        Request r(rtm_type, NLM_F_REQUEST | NLM_F_DUMP, seq);
        if (!fill_dump_request(r, rtm_type, err)) return false;
        if (!send_to_kernel(s.fd, r.finish(), err)) return false;
        std::vector<uint8_t> buf(kRecvBuf);
        std::vector<Message> got;
        bool interrupted = false;
        for (;;) {
            const ssize_t n = recv_reply(s.fd, buf, err);
            if (n < 0) return false;
            ParseResult p = parse(std::span<const uint8_t>(buf.data(), size_t(n)));
            if (!p.errors.empty()) {
                set_err(err, "netlink dump: " + p.errors.front());
                return false;
            }
            if (p.error != 0) {
                set_err(err, "netlink dump: " + std::string(std::strerror(-p.error)) +
                                 (p.error_msg.empty() ? "" : " (" + p.error_msg + ")"));
                return false;
            }
            interrupted |= p.dump_interrupted;
            for (auto &m : p.msgs) got.push_back(std::move(m));
            if (p.done) break;
        }
        if (!interrupted) {
            for (auto &m : got) out->push_back(std::move(m));
            return true;
        }
    }
    set_err(err, "netlink dump: interrupted 5 times in a row (tables changing constantly)");
    return false;
}

bool NetlinkSocket::add_address(int32_t ifindex, const IfAddr &a, std::string *err) {
    TempSocket s;
    if (!s.open(err)) return false;
    const uint32_t seq = fresh_seq();
    Request r(RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, seq);
    ifaddrmsg m{};
    m.ifa_family = a.addr.is_v6 ? AF_INET6 : AF_INET;
    m.ifa_prefixlen = a.len;
    m.ifa_index = uint32_t(ifindex);
    m.ifa_scope = RT_SCOPE_UNIVERSE;
    if (a.addr.is_v6) {
        m.ifa_flags = IFA_F_NODAD;  // the switch owns the subnet; no need to wait for DAD
        r.put(&m, sizeof(m));
        r.attr(IFA_ADDRESS, a.addr.v6.data(), 16);
    } else {
        r.put(&m, sizeof(m));
        const uint8_t v4[4] = {uint8_t(a.addr.v4 >> 24), uint8_t(a.addr.v4 >> 16),
                               uint8_t(a.addr.v4 >> 8), uint8_t(a.addr.v4)};
        r.attr(IFA_LOCAL, v4, 4);
        r.attr(IFA_ADDRESS, v4, 4);
    }
    return request_ack(s.fd, r, seq, "RTM_NEWADDR", "RTM_NEWADDR " + a.str() + " on ifindex " +
                                                         std::to_string(ifindex), err);
}

bool NetlinkSocket::resolve_neighbour(int32_t ifindex, const IpAddr &ip, std::string *err) {
    TempSocket s;
    if (!s.open(err)) return false;
    const uint32_t seq = fresh_seq();
    Request r(RTM_NEWNEIGH, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, seq);
    ndmsg m{};
    m.ndm_family = ip.is_v6 ? AF_INET6 : AF_INET;
    m.ndm_ifindex = ifindex;
    m.ndm_state = NUD_PERMANENT;  // ignored with NTF_USE (iproute2 sends the same)
    m.ndm_flags = NTF_USE;
    r.put(&m, sizeof(m));
    if (ip.is_v6) {
        r.attr(NDA_DST, ip.v6.data(), 16);
    } else {
        const uint8_t v4[4] = {uint8_t(ip.v4 >> 24), uint8_t(ip.v4 >> 16), uint8_t(ip.v4 >> 8),
                               uint8_t(ip.v4)};
        r.attr(NDA_DST, v4, 4);
    }
    return request_ack(s.fd, r, seq, "RTM_NEWNEIGH",
                       "RTM_NEWNEIGH (use) " + ip.str() + " on ifindex " + std::to_string(ifindex),
                       err);
}

}  // namespace rocesw::nl
