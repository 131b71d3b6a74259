// The control socket's wire protocol, shared by the server (roceswd) and the client (rocectl).
//
// A Unix stream socket carrying newline-delimited JSON. The client sends one request per line,
//     {"cmd":"ports","args":["p0"]}\n
// and the server answers each request, in order, with one line:
//     {"ok":true,"data":<json>}\n        or        {"ok":false,"error":"<message>"}\n
// "args" is optional and, when present, an array of strings. A client may send several
// requests on one connection. A request line longer than kControlMaxRequestBytes gets an error
// reply and the server closes the connection. This header has no DPDK dependency: rocectl
// includes it.
#pragma once

#include <cstddef>

namespace rocesw {

inline constexpr size_t kControlMaxRequestBytes = 64 * 1024;
// The start of the error a server at its client limit answers a new connection with (then it
// closes it): a passing state, so a client connects again a little later (ControlClient::call).
inline constexpr const char *kControlBusyError = "too many control clients";
// Where sockets live when neither --socket nor ROCESW_SOCKET names one: <dir>/<name>.sock.
inline constexpr const char *kControlSocketDir = "/run/rocesw";
inline constexpr const char *kControlDefaultName = "rocesw";

}  // namespace rocesw
