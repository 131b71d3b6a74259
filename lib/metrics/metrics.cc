#include "metrics/metrics.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace rocesw {

std::string_view metric_type_name(MetricType t) {
    return t == MetricType::counter ? "counter" : t == MetricType::gauge ? "gauge" : "histogram";
}

namespace {
bool name_char(char c, bool first, bool colon) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
    if (colon && c == ':') return true;
    return !first && c >= '0' && c <= '9';
}
bool valid_ident(std::string_view s, bool colon) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); i++)
        if (!name_char(s[i], i == 0, colon)) return false;
    return true;
}
}  // namespace

bool valid_metric_name(std::string_view s) {
    return valid_ident(s, true);
}

bool valid_label_name(std::string_view s) {
    return valid_ident(s, false) && s.substr(0, 2) != "__";
}

std::string escape_label_value(std::string_view s) {
    std::string r;
    r.reserve(s.size());
    for (char c : s) {
        if (c == '\\')
            r += "\\\\";
        else if (c == '"')
            r += "\\\"";
        else if (c == '\n')
            r += "\\n";
        else
            r += c;
    }
    return r;
}

std::string escape_help(std::string_view s) {
    std::string r;
    r.reserve(s.size());
    for (char c : s) {
        if (c == '\\')
            r += "\\\\";
        else if (c == '\n')
            r += "\\n";
        else
            r += c;
    }
    return r;
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    if (ec != std::errc()) return "NaN";
    return std::string(buf, end);
}

void MetricSink::put(const MetricLabel *l, size_t n, const std::string &value) {
    std::string &o = *out_;
    o += name_;
    o += suffix_;
    if (n) {
        o += '{';
        for (size_t i = 0; i < n; i++) {
            if (!valid_label_name(l[i].name))
                throw std::invalid_argument("metric " + std::string(name_) + ": bad label name '" +
                                            std::string(l[i].name) + "'");
            if (i) o += ',';
            o += l[i].name;
            o += "=\"";
            o += escape_label_value(l[i].value);
            o += '"';
        }
        o += '}';
    }
    o += ' ';
    o += value;
    o += '\n';
    n_++;
}

void MetricRegistry::counter(const std::string &name, const std::string &help, Collect c) {
    add(name, help, MetricType::counter, std::move(c));
}

void MetricRegistry::gauge(const std::string &name, const std::string &help, Collect c) {
    add(name, help, MetricType::gauge, std::move(c));
}

void MetricRegistry::histogram(const std::string &name, const std::string &help, Collect c) {
    add(name, help, MetricType::histogram, std::move(c));
}

void MetricRegistry::add(const std::string &name, const std::string &help, MetricType type,
                         Collect c) {
    if (!valid_metric_name(name)) throw std::invalid_argument("bad metric name '" + name + "'");
    if (name.rfind("rocesw_", 0) != 0)
        throw std::invalid_argument("metric '" + name + "' does not start with rocesw_");
    const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    if (type == MetricType::counter && !total)
        throw std::invalid_argument("counter '" + name + "' does not end in _total");
    if (type == MetricType::gauge && total)
        throw std::invalid_argument("gauge '" + name + "' ends in _total");
    if (type == MetricType::histogram && total)
        throw std::invalid_argument("histogram '" + name + "' ends in _total");
    if (!c) throw std::invalid_argument("metric '" + name + "' has no collect function");
    std::lock_guard lk(mu_);
    if (families_.count(name))
        throw std::invalid_argument("metric '" + name + "' registered twice");
    families_.emplace(name, Family{help, type, std::move(c)});
}

std::string MetricRegistry::render() const {
    std::lock_guard lk(mu_);
    std::string out;
    out.reserve(16384);
    for (const auto &[name, f] : families_) {
        out += "# HELP ";
        out += name;
        out += ' ';
        out += escape_help(f.help);
        out += "\n# TYPE ";
        out += name;
        out += ' ';
        out += metric_type_name(f.type);
        out += '\n';
        const size_t mark = out.size();
        MetricSink sink(&out, name);
        try {
            f.collect(sink);
        } catch (const std::exception &) {
            out.resize(mark);  // no half-written family
            collect_errors_++;
        }
    }
    return out;
}

std::vector<MetricRegistry::Info> MetricRegistry::families() const {
    std::lock_guard lk(mu_);
    std::vector<Info> r;
    for (const auto &[name, f] : families_) r.push_back(Info{name, f.help, f.type});
    return r;
}

uint64_t MetricRegistry::collect_errors() const {
    std::lock_guard lk(mu_);
    return collect_errors_;
}

}  // namespace rocesw
