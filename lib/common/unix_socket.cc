#include "common/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rocesw {

// A listening socket bound to `path` in /proc/net/unix (flag __SO_ACCEPTCON, 0x10000).
static bool listener_in_proc(const std::string &path) {
    std::ifstream f("/proc/net/unix");
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
        std::istringstream ss(line);
        std::string num, ref, proto, flags, type, st, inode, p;
        if (!(ss >> num >> ref >> proto >> flags >> type >> st >> inode >> p)) continue;
        if (p == path && (std::stoul(flags, nullptr, 16) & 0x10000)) return true;
    }
    return false;
}

UnixSocketState probe_unix_socket(const std::string &path, std::string *err, bool connect_probe) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return UnixSocketState::absent;
        *err = "cannot check " + path + ": " + std::strerror(errno);
        return UnixSocketState::unknown;
    }
    if (!S_ISSOCK(st.st_mode)) return UnixSocketState::not_socket;
    if (!connect_probe)
        return listener_in_proc(path) ? UnixSocketState::live : UnixSocketState::stale;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
        *err = "socket path too long: " + path;
        return UnixSocketState::unknown;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    // memif serves SOCK_SEQPACKET, roceswd's control socket SOCK_STREAM: a connect of the
    // wrong type is refused with EPROTOTYPE, which still means somebody is there.
    for (int type : {SOCK_STREAM, SOCK_SEQPACKET}) {
        int probe = ::socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (probe < 0) {
            *err = std::string("socket: ") + std::strerror(errno);
            return UnixSocketState::unknown;
        }
        int rc = ::connect(probe, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr));
        int e = errno;
        ::close(probe);
        if (rc == 0 || e == EAGAIN || e == EINPROGRESS) return UnixSocketState::live;
        if (e == EPROTOTYPE) continue;
        if (e == ECONNREFUSED) return UnixSocketState::stale;
        *err = "cannot check existing socket " + path + ": " + std::strerror(e);
        return UnixSocketState::unknown;
    }
    return UnixSocketState::live;
}

bool claim_unix_socket(const std::string &path, const std::string &what, std::string *err,
                       bool *removed_stale, bool connect_probe) {
    if (removed_stale) *removed_stale = false;
    switch (probe_unix_socket(path, err, connect_probe)) {
        case UnixSocketState::absent:
            return true;
        case UnixSocketState::live:
            *err = what + " is using " + path;
            return false;
        case UnixSocketState::not_socket:
            *err = path + " exists and is not a socket";
            return false;
        case UnixSocketState::unknown:
            return false;
        case UnixSocketState::stale:
            break;
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        *err = "cannot remove stale socket " + path + ": " + std::strerror(errno);
        return false;
    }
    if (removed_stale) *removed_stale = true;
    return true;
}

}  // namespace rocesw
