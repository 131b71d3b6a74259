#include "sim/topology.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace rocesw::sim {

uint32_t Topology::add_node(NodeKind k, std::string name) {
    uint32_t id = node_count();
    if (name.empty()) name = (k == NodeKind::host ? "host" : "switch") + std::to_string(id);
    kind_.push_back(k);
    names_.push_back(std::move(name));
    ports_.emplace_back();
    if (k == NodeKind::host) ++hosts_;
    return id;
}

uint32_t Topology::add_link(uint32_t a, uint32_t b, uint64_t rate_bps, TimePs delay_ps,
                            double error_rate) {
    if (a >= node_count() || b >= node_count() || a == b)
        throw std::invalid_argument("Topology::add_link: bad endpoints");
    if (rate_bps == 0) throw std::invalid_argument("Topology::add_link: rate 0");
    if (ports_[a].size() >= 65535 || ports_[b].size() >= 65535)
        throw std::invalid_argument("Topology::add_link: more than 65535 ports on a node");
    TopoLink l{
        a,        b,         uint16_t(ports_[a].size()), uint16_t(ports_[b].size()), rate_bps,
        delay_ps, error_rate};
    uint32_t idx = link_count();
    links_.push_back(l);
    ports_[a].push_back({idx, b, l.port_b});
    ports_[b].push_back({idx, a, l.port_a});
    return idx;
}

std::vector<uint32_t> Topology::hosts() const {
    std::vector<uint32_t> v;
    for (uint32_t i = 0; i < node_count(); ++i)
        if (is_host(i)) v.push_back(i);
    return v;
}

std::vector<uint32_t> Topology::switches() const {
    std::vector<uint32_t> v;
    for (uint32_t i = 0; i < node_count(); ++i)
        if (is_switch(i)) v.push_back(i);
    return v;
}

uint64_t Topology::host_rate_bps(uint32_t host) const {
    return ports_[host].empty() ? 0 : links_[ports_[host][0].link].rate_bps;
}

std::string format_rate(uint64_t bps) {
    static const char *units[] = {"bps", "Kbps", "Mbps", "Gbps", "Tbps"};
    int u = 0;
    while (u < 4 && bps != 0 && bps % 1000 == 0) {
        bps /= 1000;
        ++u;
    }
    return std::to_string(bps) + units[u];
}

std::string format_delay(TimePs ps) {
    if (ps % kPsPerNs == 0) return std::to_string(ps / kPsPerNs) + "ns";
    return std::to_string(ps) + "ps";
}

std::string Topology::to_hpcc() const {
    std::string out = std::to_string(node_count()) + " " + std::to_string(switch_count()) + " " +
                      std::to_string(link_count()) + "\n";
    bool first = true;
    for (uint32_t s : switches()) {
        if (!first) out += ' ';  // not ("" or " ") + string: GCC 12's bogus -Wrestrict at -O3
        out += std::to_string(s);
        first = false;
    }
    out += "\n";
    for (const auto &l : links_) {
        char err[32];
        std::snprintf(err, sizeof err, "%.6f", l.error_rate);
        out += std::to_string(l.a) + " " + std::to_string(l.b) + " " + format_rate(l.rate_bps) +
               " " + format_delay(l.delay_ps) + " " + err + "\n";
    }
    return out;
}

namespace {

// A decimal "123", "1.5", ".25" as mantissa / 10^frac_digits. Returns false if malformed.
bool parse_decimal(std::string_view s, unsigned __int128 &mant, int &frac_digits) {
    mant = 0;
    frac_digits = 0;
    bool dot = false, digit = false;
    for (char c : s) {
        if (c == '.') {
            if (dot) return false;
            dot = true;
        } else if (c >= '0' && c <= '9') {
            digit = true;
            if (mant > (unsigned __int128)(~uint64_t(0)) * 1000) return false;  // absurdly long
            mant = mant * 10 + unsigned(c - '0');
            if (dot) ++frac_digits;
        } else {
            return false;
        }
    }
    return digit && frac_digits <= 18;
}

unsigned __int128 pow10(int n) {
    unsigned __int128 p = 1;
    while (n-- > 0) p *= 10;
    return p;
}

// Splits "100Gbps" into ("100", "Gbps").
std::pair<std::string_view, std::string_view> split_unit(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    return {s.substr(0, i), s.substr(i)};
}

// value * mult / 10^frac exactly, or throw.
uint64_t exact_scale(unsigned __int128 mant, int frac, uint64_t mult, const char *what) {
    unsigned __int128 num = mant * mult, den = pow10(frac);
    if (num % den != 0) throw std::invalid_argument(std::string("not a whole number of ") + what);
    unsigned __int128 v = num / den;
    if (v > ~uint64_t(0)) throw std::invalid_argument("out of range");
    return uint64_t(v);
}

}  // namespace

uint64_t parse_rate_bps(std::string_view s) {
    auto [num, unit] = split_unit(s);
    unsigned __int128 mant;
    int frac;
    if (!parse_decimal(num, mant, frac)) throw std::invalid_argument("malformed number");
    struct U {
        const char *name;
        uint64_t mult;
    };
    static const U units[] = {
        {"bps", 1},
        {"b/s", 1},
        {"Kbps", 1000},
        {"kbps", 1000},
        {"Kb/s", 1000},
        {"kb/s", 1000},
        {"Mbps", 1000000},
        {"Mb/s", 1000000},
        {"Gbps", 1000000000},
        {"Gb/s", 1000000000},
        {"Tbps", 1000000000000},
        {"Tb/s", 1000000000000},
        {"Bps", 8},
        {"B/s", 8},
        {"KBps", 8000},
        {"KB/s", 8000},
        {"MBps", 8000000},
        {"MB/s", 8000000},
        {"GBps", 8000000000},
        {"GB/s", 8000000000},
    };
    for (const auto &u : units)
        if (unit == u.name) {
            uint64_t v = exact_scale(mant, frac, u.mult, "bit/s");
            if (v == 0) throw std::invalid_argument("rate is zero");
            return v;
        }
    throw std::invalid_argument("unknown unit '" + std::string(unit) + "'");
}

TimePs parse_delay_ps(std::string_view s) {
    auto [num, unit] = split_unit(s);
    unsigned __int128 mant;
    int frac;
    if (!parse_decimal(num, mant, frac)) throw std::invalid_argument("malformed number");
    struct U {
        const char *name;
        uint64_t mult;
    };
    static const U units[] = {{"", kPsPerS},    {"s", kPsPerS},   {"ms", kPsPerMs},
                              {"us", kPsPerUs}, {"ns", kPsPerNs}, {"ps", 1}};
    for (const auto &u : units)
        if (unit == u.name) return exact_scale(mant, frac, u.mult, "picoseconds");
    throw std::invalid_argument("unknown unit '" + std::string(unit) + "'");
}

namespace {

struct Token {
    std::string_view text;
    uint32_t line;
};

std::vector<Token> tokenize(std::string_view text) {
    std::vector<Token> out;
    uint32_t line = 1;
    size_t i = 0;
    while (i < text.size()) {
        char c = text[i];
        if (c == '\n') {
            ++line;
            ++i;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            ++i;
        } else {
            size_t j = i;
            while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\r' &&
                   text[j] != '\n')
                ++j;
            out.push_back({text.substr(i, j - i), line});
            i = j;
        }
    }
    return out;
}

// Reads the fields of HPCC files in order, naming the record's fields in errors.
class Reader {
  public:
    Reader(std::string_view text, const std::string &source)
        : toks_(tokenize(text)), source_(source) {}

    [[noreturn]] void fail(uint32_t line, const std::string &msg) const {
        throw InputError(source_ + ":" + std::to_string(line) + ": " + msg);
    }
    [[noreturn]] void fail_field(const Token &t, int field, const char *name,
                                 const std::string &msg) const {
        fail(t.line, "field " + std::to_string(field) + " (" + name + "): '" + std::string(t.text) +
                         "' " + msg);
    }

    // The next token, or an error saying what was expected where the file ended.
    const Token &next(int field, const char *name, const char *record) {
        if (pos_ >= toks_.size())
            fail(last_line(), std::string("file ends where ") + record + " field " +
                                  std::to_string(field) + " (" + name + ") was expected");
        return toks_[pos_++];
    }

    uint64_t uint_field(int field, const char *name, const char *record, uint64_t max) {
        const Token &t = next(field, name, record);
        uint64_t v = 0;
        if (t.text.empty()) fail_field(t, field, name, "is not a non-negative integer");
        for (char c : t.text) {
            if (c < '0' || c > '9') fail_field(t, field, name, "is not a non-negative integer");
            if (v > (~uint64_t(0) - 9) / 10) fail_field(t, field, name, "is out of range");
            v = v * 10 + uint64_t(c - '0');
        }
        if (v > max) fail_field(t, field, name, "is above the maximum " + std::to_string(max));
        last_ = &t;
        return v;
    }

    const Token &last() const { return *last_; }
    uint32_t last_line() const { return toks_.empty() ? 1 : toks_.back().line; }

  private:
    std::vector<Token> toks_;
    size_t pos_ = 0;
    const Token *last_ = nullptr;
    std::string source_;
};

std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(path + ": cannot open");
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

Topology parse_topology(std::string_view text, const std::string &source) {
    Reader r(text, source);
    const char *hdr = "the header (nodes switches links)";
    uint64_t n_nodes = r.uint_field(1, "nodes", hdr, 1u << 24);
    uint32_t hdr_line = r.last().line;
    uint64_t n_switches = r.uint_field(2, "switches", hdr, n_nodes);
    uint64_t n_links = r.uint_field(3, "links", hdr, 1u << 26);
    if (n_nodes == 0) r.fail(hdr_line, "field 1 (nodes): a topology needs nodes");
    std::vector<NodeKind> kinds(n_nodes, NodeKind::host);
    for (uint64_t i = 0; i < n_switches; ++i) {
        uint64_t id = r.uint_field(int(i + 1), "switch id", "the switch id list", ~uint64_t(0));
        if (id >= n_nodes)
            r.fail_field(r.last(), int(i + 1), "switch id",
                         "is not a node id (0.." + std::to_string(n_nodes - 1) + ")");
        if (kinds[id] == NodeKind::switch_node)
            r.fail_field(r.last(), int(i + 1), "switch id", "is listed twice");
        kinds[id] = NodeKind::switch_node;
    }
    Topology t;
    for (auto k : kinds) t.add_node(k);
    const char *rec = "a link (a b rate delay error_rate)";
    for (uint64_t i = 0; i < n_links; ++i) {
        uint64_t a = r.uint_field(1, "a", rec, ~uint64_t(0));
        uint32_t line = r.last().line;
        if (a >= n_nodes) r.fail_field(r.last(), 1, "a", "is not a node id");
        uint64_t b = r.uint_field(2, "b", rec, ~uint64_t(0));
        if (b >= n_nodes) r.fail_field(r.last(), 2, "b", "is not a node id");
        if (a == b) r.fail_field(r.last(), 2, "b", "equals a: a link joins two nodes");
        const Token &rate = r.next(3, "rate", rec);
        uint64_t bps;
        try {
            bps = parse_rate_bps(rate.text);
        } catch (const std::invalid_argument &e) {
            r.fail_field(rate, 3, "rate",
                         std::string("is not a rate (") + e.what() +
                             "; e.g. 100Gbps, 25Gbps, 10Gbps, 1Gbps)");
        }
        const Token &delay = r.next(4, "delay", rec);
        TimePs dps;
        try {
            dps = parse_delay_ps(delay.text);
        } catch (const std::invalid_argument &e) {
            r.fail_field(
                delay, 4, "delay",
                std::string("is not a delay (") + e.what() + "; e.g. 1000ns, 1us, 0.001ms)");
        }
        const Token &err = r.next(5, "error_rate", rec);
        double er = 0;
        {
            std::string s(err.text);
            char *end = nullptr;
            er = std::strtod(s.c_str(), &end);
            if (s.empty() || *end != '\0' || !(er >= 0 && er <= 1))
                r.fail_field(err, 5, "error_rate", "is not a probability in [0, 1]");
        }
        if (t.ports(uint32_t(a)).size() >= 65535 || t.ports(uint32_t(b)).size() >= 65535)
            r.fail(line, "more than 65535 links on one node");
        t.add_link(uint32_t(a), uint32_t(b), bps, dps, er);
    }
    return t;
}

Topology load_topology(const std::string &path) {
    return parse_topology(read_file(path), path);
}

std::vector<FlowRecord> parse_flows(std::string_view text, const std::string &source,
                                    const Topology &topo) {
    Reader r(text, source);
    uint64_t n = r.uint_field(1, "flow count", "the flow count", 1ull << 32);
    std::vector<FlowRecord> flows;
    flows.reserve(n);
    const char *rec = "a flow (src dst pg dport size start_seconds)";
    for (uint64_t i = 0; i < n; ++i) {
        FlowRecord f;
        f.src = uint32_t(r.uint_field(1, "src", rec, ~uint64_t(0)));
        f.line = r.last().line;
        if (f.src >= topo.node_count() || !topo.is_host(f.src))
            r.fail_field(r.last(), 1, "src", "is not a host of the topology");
        f.dst = uint32_t(r.uint_field(2, "dst", rec, ~uint64_t(0)));
        if (f.dst >= topo.node_count() || !topo.is_host(f.dst))
            r.fail_field(r.last(), 2, "dst", "is not a host of the topology");
        if (f.dst == f.src) r.fail_field(r.last(), 2, "dst", "equals src");
        f.pg = uint8_t(r.uint_field(3, "pg", rec, 7));
        f.dport = uint16_t(r.uint_field(4, "dport", rec, 65535));
        f.size_bytes = r.uint_field(5, "size", rec, ~uint64_t(0));
        if (f.size_bytes == 0) r.fail_field(r.last(), 5, "size", "is zero");
        const Token &st = r.next(6, "start_seconds", rec);
        unsigned __int128 mant;
        int frac;
        if (!parse_decimal(st.text, mant, frac))
            r.fail_field(st, 6, "start_seconds", "is not a non-negative decimal number of seconds");
        // seconds -> ns, rounded half up beyond 9 decimals.
        unsigned __int128 v = mant * 1000000000u;
        unsigned __int128 den = pow10(frac);
        unsigned __int128 q = (v + den / 2) / den;
        if (q > ~uint64_t(0)) r.fail_field(st, 6, "start_seconds", "is out of range");
        f.start_ns = uint64_t(q);
        flows.push_back(f);
    }
    return flows;
}

std::vector<FlowRecord> load_flows(const std::string &path, const Topology &topo) {
    return parse_flows(read_file(path), path, topo);
}

std::string format_flows(const std::vector<FlowRecord> &flows) {
    std::string out = std::to_string(flows.size()) + "\n";
    char buf[128];
    for (const auto &f : flows) {
        std::snprintf(buf, sizeof buf, "%u %u %u %u %" PRIu64 " %" PRIu64 ".%09" PRIu64 "\n", f.src,
                      f.dst, unsigned(f.pg.value_or(3)), unsigned(f.dport), f.size_bytes,
                      f.start_ns / 1000000000u, f.start_ns % 1000000000u);
        out += buf;
    }
    return out;
}

}  // namespace rocesw::sim
