// Metric registry and Prometheus text-format writer (exposition format 0.0.4).
//
// A family is a name, a help text, a type and a collect function that emits the family's
// samples when a scrape asks for them. Families are registered once, before the exporter
// starts (the control thread, at start-up); render() runs on the exporter's thread and calls
// every collect function. A collect function only reads: per-worker counters (sum_port),
// TrafficManager snapshots and other single-writer, tear-free values. It never takes a lock a
// worker takes, so a scrape never blocks the data path.
//
// Adding a family (doc/observability.md, "Adding a metric"):
//
//     metrics.counter("rocesw_pfc_frames_sent_total", "PFC frames sent (XOFF and XON)",
//                     [this](MetricSink &s) {
//                         for (size_t p = 0; p < n_ports; p++)
//                             for (unsigned prio = 0; prio < 8; prio++)
//                                 s.sample({{"port", port_name(p)}, {"priority", prio}},
//                                          pfc_->sent(p, prio));
//                     });
//
// Rules the registry enforces (std::invalid_argument at registration): names match
// [a-zA-Z_:][a-zA-Z0-9_:]*, start with "rocesw_", are unique; counters end in "_total",
// gauges and histograms do not. Label names match [a-zA-Z_][a-zA-Z0-9_]* and do not start with "__".
//
// Output order: families sorted by name, samples in the order their collect function emitted
// them. Label values and help texts are escaped as the format requires (label values: \\ \"
// \n; help: \\ \n).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rocesw {

enum class MetricType { counter, gauge, histogram };

std::string_view metric_type_name(MetricType t);

// Text-format helpers, exposed for tests.
bool valid_metric_name(std::string_view s);
bool valid_label_name(std::string_view s);
std::string escape_label_value(std::string_view s);  // \ -> \\, " -> \", newline -> \n
std::string escape_help(std::string_view s);         // \ -> \\, newline -> \n
std::string format_value(double v);                  // NaN, +Inf, -Inf, shortest round-trip

// One label: name and value. The value is converted from integers for convenience.
struct MetricLabel {
    std::string_view name;
    std::string value;
    MetricLabel(std::string_view n, std::string v) : name(n), value(std::move(v)) {}
    MetricLabel(std::string_view n, std::string_view v) : name(n), value(v) {}
    MetricLabel(std::string_view n, const char *v) : name(n), value(v) {}
    template <typename I>
    requires std::is_integral_v<I> MetricLabel(std::string_view n, I v)
        : name(n), value(std::to_string(v)) {}
};

// Receives the samples of one family during a scrape; writes them in the text format.
class MetricSink {
  public:
    template <typename V>
    requires std::is_arithmetic_v<V>
    void sample(std::initializer_list<MetricLabel> labels, V value) {
        put(labels.begin(), labels.size(), text(value));
    }
    template <typename V>
    requires std::is_arithmetic_v<V>
    void sample(const std::vector<MetricLabel> &labels, V value) {
        put(labels.data(), labels.size(), text(value));
    }
    // A sample of the series `<family name><suffix>`: a histogram's "_bucket" (with an "le"
    // label), "_sum" and "_count".
    template <typename V>
    requires std::is_arithmetic_v<V>
    void sample_suffixed(std::string_view suffix, std::initializer_list<MetricLabel> labels,
                         V value) {
        suffix_ = suffix;
        put(labels.begin(), labels.size(), text(value));
        suffix_ = {};
    }
    // Samples this family has emitted so far in the current scrape.
    size_t count() const { return n_; }

  private:
    friend class MetricRegistry;
    MetricSink(std::string *out, std::string_view name) : out_(out), name_(name) {}
    template <typename V>
    static std::string text(V v) {
        if constexpr (std::is_floating_point_v<V>)
            return format_value(double(v));
        else if constexpr (std::is_same_v<V, bool>)
            return v ? "1" : "0";
        else
            return std::to_string(v);
    }
    void put(const MetricLabel *l, size_t n, const std::string &value);
    std::string *out_;
    std::string_view name_;
    std::string_view suffix_;
    size_t n_ = 0;
};

class MetricRegistry {
  public:
    using Collect = std::function<void(MetricSink &)>;

    // Throw std::invalid_argument when a rule above is broken.
    void counter(const std::string &name, const std::string &help, Collect c);
    void gauge(const std::string &name, const std::string &help, Collect c);
    // Emits its series with MetricSink::sample_suffixed ("_bucket", "_sum", "_count").
    void histogram(const std::string &name, const std::string &help, Collect c);
    void add(const std::string &name, const std::string &help, MetricType type, Collect c);

    // The whole exposition: "# HELP", "# TYPE" and the samples of every family. A family whose
    // collect function throws is skipped after its HELP/TYPE lines and counted in
    // collect_errors(); the rest of the scrape is unaffected.
    std::string render() const;

    // (name, type, help) of every family, sorted by name: for docs and tests.
    struct Info {
        std::string name, help;
        MetricType type;
    };
    std::vector<Info> families() const;
    uint64_t collect_errors() const;

  private:
    struct Family {
        std::string help;
        MetricType type;
        Collect collect;
    };
    mutable std::mutex mu_;  // registration vs. render; workers never take it
    std::map<std::string, Family> families_;
    mutable uint64_t collect_errors_ = 0;
};

}  // namespace rocesw
