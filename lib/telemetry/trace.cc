#include "telemetry/trace.h"

#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstring>

namespace rocesw {

TraceWriter::TraceWriter(std::vector<std::string> ports, size_t n_workers)
    : ports_(std::move(ports)) {
    for (size_t w = 0; w < n_workers; w++) rings_.push_back(std::make_unique<TraceRing>());
}

TraceWriter::~TraceWriter() {
    close();
}

bool TraceWriter::open(const std::string &path, std::string *err) {
    close();
    f_ = std::fopen(path.c_str(), "w");
    if (!f_) {
        *err = "cannot create trace file " + path + ": " + std::strerror(errno);
        return false;
    }
    path_ = path;
    error_.clear();
    std::fputs("time_ns,event,port,id,value\n", f_);
    return true;
}

void TraceWriter::fail(int err) {
    error_ = "writing " + path_ + ": " + std::strerror(err);
    std::fclose(f_);  // may fail again: the file is given up either way
    f_ = nullptr;
}

void TraceWriter::close() {
    if (!f_) return;
    drain();
    std::fclose(f_);
    f_ = nullptr;
}

void TraceWriter::write(const TraceEvent &e) {
    if (!f_) return;
    std::string_view kind = trace_kind_name(e.kind);
    const std::string port = e.port < ports_.size() ? ports_[e.port] : std::to_string(e.port);
    if (std::fprintf(f_, "%" PRIu64 ",%.*s,%s,%u,%" PRIu64 "\n", e.time_ns, int(kind.size()),
                     kind.data(), port.c_str(), unsigned(e.id), e.value) < 0) {
        fail(errno);
        return;
    }
    written_++;
}

size_t TraceWriter::drain() {
    size_t n = 0;
    for (auto &r : rings_) n += r->consume([&](const TraceEvent &e) { write(e); });
    return n;
}

void TraceWriter::flush() {
    if (f_ && std::fflush(f_) != 0) fail(errno);
}

uint64_t TraceWriter::lost() const {
    uint64_t s = 0;
    for (const auto &r : rings_) s += r->lost();
    return s;
}

}  // namespace rocesw
