#include "config/yaml_doc.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rocesw {

namespace {

// Counts documents and keeps nothing.
struct NullHandler : YAML::EventHandler {
    void OnDocumentStart(const YAML::Mark &) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t,
                  const std::string &) override {}
    void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

}  // namespace

YAML::Node load_yaml_document(const std::string &text, const std::string &source) {
    try {
        NullHandler counter;
        std::istringstream in(text);
        YAML::Parser parser(in);
        size_t n_docs = 0;
        while (n_docs < 2 && parser.HandleNextDocument(counter)) n_docs++;
        if (n_docs > 1) throw ConfigError(source + ": expected one YAML document, found 2 or more");
        return n_docs == 1 ? YAML::Load(text) : YAML::Node();
    } catch (const YAML::ParserException &e) {
        if (e.mark.is_null()) throw ConfigError(source + ": " + e.msg);
        throw ConfigError(source + ": line " + std::to_string(e.mark.line + 1) + ", column " +
                          std::to_string(e.mark.column + 1) + ": " + e.msg);
    } catch (const YAML::Exception &e) {
        throw ConfigError(source + ": " + e.msg);
    }
}

std::string describe(const YAML::Node &n) {
    switch (n.Type()) {
        case YAML::NodeType::Scalar:
            return "'" + n.Scalar() + "'";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Map:
            return "a map";
        default:
            return "an empty value";
    }
}

std::string read_config_file(const std::string &path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw ConfigError(path + ": is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path + ": cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad() || text.bad()) throw ConfigError(path + ": cannot read file");
    return text.str();
}

std::optional<uint64_t> parse_decimal_times(std::string_view s, uint64_t unit) {
    std::string_view whole = s.substr(0, s.find('.'));
    std::string_view frac = whole.size() < s.size() ? s.substr(whole.size() + 1) : "";
    auto digits = [](std::string_view d) {
        return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (whole.empty() || whole.size() > 12 || !digits(whole) || frac.size() > 9 || !digits(frac))
        return std::nullopt;
    if (whole.size() < s.size() && frac.empty()) return std::nullopt;  // "10."
    uint64_t w = 0, fr = 0, scale = 1;
    std::from_chars(whole.data(), whole.data() + whole.size(), w);
    if (!frac.empty()) std::from_chars(frac.data(), frac.data() + frac.size(), fr);
    for (size_t i = 0; i < frac.size(); i++) scale *= 10;
    if (fr * unit % scale != 0) return std::nullopt;
    return w * unit + fr * unit / scale;
}

// "<digits>[.<digits>][M|G]", case-insensitive unit, no unit meaning Mb/s. A fraction is allowed
// only where the result is a whole number of Mb/s ("2.5G" yes, "2.5M" no).
std::optional<uint64_t> parse_speed_mbps(const std::string &s) {
    std::string_view v = s;
    uint64_t mult = 1;
    if (!v.empty() && (v.back() == 'G' || v.back() == 'g')) mult = 1000;
    if (!v.empty() && (v.back() == 'G' || v.back() == 'g' || v.back() == 'M' || v.back() == 'm'))
        v.remove_suffix(1);
    return parse_decimal_times(v, mult);
}

namespace {

uint32_t line_of(const YAML::Node &n) {
    return n.Mark().is_null() ? 0 : uint32_t(n.Mark().line + 1);
}

// Where the digits of a signed decimal start (after one optional sign), or npos when `s` is not
// one.
size_t decimal_digits_at(std::string_view s) {
    size_t sign = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (sign == s.size() || s.find_first_not_of("0123456789", sign) != std::string_view::npos)
        return std::string_view::npos;
    return sign;
}

std::string unit_name(TimeUnit u) {
    switch (u) {
        case TimeUnit::ns:
            return "ns";
        case TimeUnit::us:
            return "us";
        case TimeUnit::ms:
            return "ms";
        case TimeUnit::s:
            return "s";
    }
    return "";
}

}  // namespace

void YamlReader::fail_at(uint32_t line, const std::string &path,
                         const std::string &problem) const {
    const std::string field = path.empty() ? "" : path + ": ";
    if (text_file_)
        throw ConfigError(*text_file_, text_line_, path,
                          *text_file_ + ":" + std::to_string(text_line_) + ": " + field + problem);
    const std::string where = line ? source_ + ":" + std::to_string(line) : source_;
    throw ConfigError(source_, line, path, where + ": " + field + problem);
}

void YamlReader::fail(const std::string &path, const std::string &problem) const {
    fail_at(0, path, problem);
}

void YamlReader::fail(const YAML::Node &n, const std::string &path,
                      const std::string &problem) const {
    fail_at(line_of(n), path, problem);
}

Fields YamlReader::entries(const YAML::Node &n, const std::string &path,
                           std::string_view what) const {
    Fields f;
    if (n.IsNull()) return f;
    if (!n.IsMap()) fail(n, path, "expected a map, got " + describe(n));
    for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar())
            fail(it->first, path,
                 "expected a " + std::string(what) + " name, got " + describe(it->first));
        const std::string &key = it->first.Scalar();
        if (f.find(key))
            fail(it->first, path, "duplicate " + std::string(what) + " '" + key + "'");
        f.entries.push_back({key, it->second});
    }
    return f;
}

Fields YamlReader::fields(const YAML::Node &n, const std::string &path,
                          std::initializer_list<std::string_view> allowed) const {
    Fields f = entries(n, path);
    for (auto &e : f)
        if (std::find(allowed.begin(), allowed.end(), e.key) == allowed.end()) {
            for (auto it = n.begin(); it != n.end(); ++it)
                if (it->first.Scalar() == e.key) fail(it->first, path, "unknown field '" + e.key + "'");
            fail(path, "unknown field '" + e.key + "'");
        }
    return f;
}

const YAML::Node &YamlReader::require(const Fields &f, const std::string &path,
                                      std::string_view key) const {
    if (auto *n = f.find(key)) return *n;
    fail(at(path, key), "required field missing");
}

std::vector<YAML::Node> YamlReader::list(const YAML::Node &n, const std::string &path) const {
    std::vector<YAML::Node> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) fail(n, path, "expected a list, got " + describe(n));
    for (auto it = n.begin(); it != n.end(); ++it) out.push_back(*it);
    return out;
}

std::string YamlReader::string(const YAML::Node &n, const std::string &path) const {
    if (!n.IsScalar()) fail(n, path, "expected a string, got " + describe(n));
    return n.Scalar();
}

YamlReader::Decimal YamlReader::decimal_at(std::string_view s, const std::string &path,
                                           uint32_t line) const {
    size_t digits = decimal_digits_at(s);
    if (digits == std::string_view::npos)
        fail_at(line, path, "expected an integer, got '" + std::string(s) + "'");
    Decimal d{s[0] == '-', false, 0};
    auto [end, ec] = std::from_chars(s.data() + digits, s.data() + s.size(), d.magnitude);
    (void)end;
    d.fits = ec == std::errc();
    return d;
}

uint64_t YamlReader::unsigned_at(std::string_view s, const std::string &path, uint64_t lo,
                                 uint64_t hi, uint32_t line) const {
    Decimal d = decimal_at(s, path, line);
    uint64_t v = d.magnitude;
    if (!d.fits || (d.negative && v != 0) || v < lo || v > hi)
        fail_at(line, path,
                std::string(s) + " is out of range " + std::to_string(lo) + ".." +
                    std::to_string(hi));
    return v;
}

int64_t YamlReader::signed_at(std::string_view s, const std::string &path, int64_t lo,
                              int64_t hi, uint32_t line) const {
    Decimal d = decimal_at(s, path, line);
    bool ok = d.fits && d.magnitude <= uint64_t(INT64_MAX);
    int64_t x = d.negative ? -int64_t(d.magnitude) : int64_t(d.magnitude);
    if (!ok || x < lo || x > hi)
        fail_at(line, path,
                std::string(s) + " is out of range " + std::to_string(lo) + ".." +
                    std::to_string(hi));
    return x;
}

uint64_t YamlReader::integer(std::string_view s, const std::string &path, uint64_t lo,
                             uint64_t hi) const {
    return unsigned_at(s, path, lo, hi, 0);
}

int64_t YamlReader::signed_integer(std::string_view s, const std::string &path, int64_t lo,
                                   int64_t hi) const {
    return signed_at(s, path, lo, hi, 0);
}

uint64_t YamlReader::integer(const YAML::Node &n, const std::string &path, uint64_t lo,
                             uint64_t hi) const {
    if (!n.IsScalar()) fail(n, path, "expected an integer, got " + describe(n));
    return unsigned_at(n.Scalar(), path, lo, hi, line_of(n));
}

int64_t YamlReader::signed_integer(const YAML::Node &n, const std::string &path, int64_t lo,
                                   int64_t hi) const {
    if (!n.IsScalar()) fail(n, path, "expected an integer, got " + describe(n));
    return signed_at(n.Scalar(), path, lo, hi, line_of(n));
}

double YamlReader::real(const YAML::Node &n, const std::string &path, double lo,
                        double hi) const {
    const std::string s = string(n, path);
    double v = 0;
    size_t used = 0;
    try {
        v = std::stod(s, &used);
    } catch (...) {
        used = 0;
    }
    if (s.empty() || used != s.size() || !std::isfinite(v) || std::isspace(uint8_t(s[0])))
        fail(n, path, "'" + s + "' is not a number");
    if (v < lo || v > hi)
        fail(n, path, s + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
}

bool YamlReader::boolean(const YAML::Node &n, const std::string &path) const {
    if (n.IsScalar()) {
        const std::string &s = n.Scalar();
        if (s == "true" || s == "True" || s == "TRUE") return true;
        if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    fail(n, path, "expected true or false, got " + describe(n));
}

uint64_t YamlReader::size_bytes(const YAML::Node &n, const std::string &path, uint64_t lo,
                                uint64_t hi) const {
    const std::string s = string(n, path);
    std::string_view v = s;
    uint64_t mult = 1;
    if (!v.empty()) {
        switch (v.back()) {
            case 'K':
            case 'k':
                mult = 1'000;
                break;
            case 'M':
            case 'm':
                mult = 1'000'000;
                break;
            case 'G':
            case 'g':
                mult = 1'000'000'000;
                break;
        }
        if (mult != 1) v.remove_suffix(1);
    }
    auto b = parse_decimal_times(v, mult);
    if (!b) fail(n, path, "'" + s + "' is not a size in bytes (e.g. 4096, 64K, 1M)");
    if (*b < lo || *b > hi)
        fail(n, path, s + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    return *b;
}

uint64_t YamlReader::rate_mbps(const YAML::Node &n, const std::string &path, uint64_t lo,
                               uint64_t hi, std::string_view noun) const {
    const std::string s = string(n, path);
    auto mbps = parse_speed_mbps(s);
    if (!mbps)
        fail(n, path,
             "'" + s + "' is not a " + std::string(noun) +
                 " (e.g. 100G, 2.5G, 25000M, or Mb/s as an integer)");
    if (*mbps < lo || *mbps > hi)
        fail(n, path,
             s + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi) + " Mb/s");
    return *mbps;
}

uint64_t YamlReader::duration(const YAML::Node &n, const std::string &path, TimeUnit unit,
                              uint64_t lo, uint64_t hi) const {
    if (!n.IsScalar()) fail(n, path, "expected a duration, got " + describe(n));
    const std::string &s = n.Scalar();
    size_t letters = s.find_last_not_of("abcdefghijklmnopqrstuvwxyz") + 1;
    std::string_view number = std::string_view(s).substr(0, letters);
    std::string_view suffix = std::string_view(s).substr(letters);
    std::optional<TimeUnit> given;
    for (TimeUnit u : {TimeUnit::ns, TimeUnit::us, TimeUnit::ms, TimeUnit::s})
        if (suffix == unit_name(u)) given = u;
    if (!given || decimal_digits_at(number) == std::string_view::npos)
        return integer(n, path, lo, hi);  // a bare integer, or not a duration at all
    const std::string u = unit_name(unit);
    const std::string range =
        " is out of range " + std::to_string(lo) + u + ".." + std::to_string(hi) + u;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(number.data() + decimal_digits_at(number),
                                     number.data() + number.size(), v);
    (void)end;
    if (ec != std::errc() || (number[0] == '-' && v != 0)) fail(n, path, s + range);
    const uint64_t from = uint64_t(*given), to = uint64_t(unit);
    if (from >= to) {
        const uint64_t factor = from / to;
        if (v > hi / factor) fail(n, path, s + range);
        v *= factor;
    } else {
        const uint64_t divisor = to / from;
        if (v % divisor != 0) fail(n, path, s + " is not a whole number of " + u);
        v /= divisor;
    }
    if (v < lo || v > hi) fail(n, path, s + range);
    return v;
}

}  // namespace rocesw
