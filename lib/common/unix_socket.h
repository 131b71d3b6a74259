// What lies at a Unix stream socket path, for programs that serve one (roceswd's control socket,
// memif server sockets): a live server, a stale file left by a process that died, or nothing.
// A socket file outlives its server. Two ways to tell a live one from a stale one:
//  - connect (`connect_probe`): accepted or refused; the server sees one connection that closes
//    at once, which roceswd's control server takes in its stride;
//  - look for a listener bound to the path in /proc/net/unix (this network namespace only),
//    which the server never sees. Used for DPDK's memif server: in DPDK 22.11 a client that
//    connects and leaves at once makes it panic (sendmsg EPIPE, then an epoll_ctl on a closed
//    fd).
#pragma once

#include <string>

namespace rocesw {

enum class UnixSocketState {
    absent,      // nothing at the path
    live,        // something accepts connections on it
    stale,       // a socket file nobody serves (connection refused)
    not_socket,  // a file that is not a socket
    unknown,     // could not tell; *err says why
};

UnixSocketState probe_unix_socket(const std::string &path, std::string *err,
                                  bool connect_probe = true);

// Removes a stale socket file so that a new server can bind the path. True when the path is
// free afterwards; false with *err when something serves it, it is not a socket, or it cannot
// be removed. `what` names the user in messages ("another roceswd is using <path>").
bool claim_unix_socket(const std::string &path, const std::string &what, std::string *err,
                       bool *removed_stale = nullptr, bool connect_probe = true);

}  // namespace rocesw
