// MetricRegistry and the Prometheus text writer: escaping, ordering, types, naming rules.
#include <gtest/gtest.h>

#include <stdexcept>

#include "metrics/metrics.h"

namespace rocesw {
namespace {

TEST(PromText, EscapesLabelValuesAsTheFormatRequires) {
    EXPECT_EQ(escape_label_value("plain"), "plain");
    EXPECT_EQ(escape_label_value("a\\b"), "a\\\\b");
    EXPECT_EQ(escape_label_value("say \"hi\""), "say \\\"hi\\\"");
    EXPECT_EQ(escape_label_value("two\nlines"), "two\\nlines");
}

TEST(PromText, EscapesHelpButNotQuotes) {
    EXPECT_EQ(escape_help("a \"b\" \\ c\nd"), "a \"b\" \\\\ c\\nd");
}

TEST(PromText, FormatsSpecialFloatValues) {
    EXPECT_EQ(format_value(1.5), "1.5");
    EXPECT_EQ(format_value(0.0), "0");
    EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
    EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(PromText, ValidatesNames) {
    EXPECT_TRUE(valid_metric_name("rocesw_port_rx_packets_total"));
    EXPECT_TRUE(valid_metric_name("a:b_c"));
    EXPECT_FALSE(valid_metric_name("1abc"));
    EXPECT_FALSE(valid_metric_name("a-b"));
    EXPECT_FALSE(valid_metric_name(""));
    EXPECT_TRUE(valid_label_name("port"));
    EXPECT_FALSE(valid_label_name("__name__"));
    EXPECT_FALSE(valid_label_name("a:b"));
}

TEST(MetricRegistry, WritesHelpTypeAndSamplesSortedByFamily) {
    MetricRegistry r;
    r.gauge("rocesw_queue_depth_bytes", "Bytes queued", [](MetricSink &s) {
        s.sample({{"port", "p1"}, {"queue", 3}}, uint64_t(4096));
        s.sample({{"port", "p0"}, {"queue", 0}}, 0);
    });
    r.counter("rocesw_drops_total", "Packets dropped\nby reason", [](MetricSink &s) {
        s.sample({{"port", "p\"0"}, {"reason", "no_route"}}, uint64_t(18446744073709551615ull));
    });
    r.gauge("rocesw_uptime_seconds", "Seconds since start",
            [](MetricSink &s) { s.sample({}, 2.5); });
    EXPECT_EQ(r.render(),
              "# HELP rocesw_drops_total Packets dropped\\nby reason\n"
              "# TYPE rocesw_drops_total counter\n"
              "rocesw_drops_total{port=\"p\\\"0\",reason=\"no_route\"} 18446744073709551615\n"
              "# HELP rocesw_queue_depth_bytes Bytes queued\n"
              "# TYPE rocesw_queue_depth_bytes gauge\n"
              "rocesw_queue_depth_bytes{port=\"p1\",queue=\"3\"} 4096\n"
              "rocesw_queue_depth_bytes{port=\"p0\",queue=\"0\"} 0\n"
              "# HELP rocesw_uptime_seconds Seconds since start\n"
              "# TYPE rocesw_uptime_seconds gauge\n"
              "rocesw_uptime_seconds 2.5\n");
}

TEST(MetricRegistry, EnforcesNamingRules) {
    MetricRegistry r;
    auto none = [](MetricSink &) {};
    EXPECT_THROW(r.counter("rocesw_frames", "no _total", none), std::invalid_argument);
    EXPECT_THROW(r.gauge("rocesw_frames_total", "gauge with _total", none), std::invalid_argument);
    EXPECT_THROW(r.counter("other_frames_total", "wrong prefix", none), std::invalid_argument);
    EXPECT_THROW(r.counter("rocesw_bad-name_total", "bad char", none), std::invalid_argument);
    EXPECT_THROW(r.counter("rocesw_x_total", "no collect", nullptr), std::invalid_argument);
    r.counter("rocesw_x_total", "ok", none);
    EXPECT_THROW(r.counter("rocesw_x_total", "again", none), std::invalid_argument);
    ASSERT_EQ(r.families().size(), 1u);
    EXPECT_EQ(r.families()[0].type, MetricType::counter);
}

TEST(MetricRegistry, HistogramWritesSuffixedSeries) {
    MetricRegistry r;
    EXPECT_THROW(r.histogram("rocesw_h_total", "histogram with _total", [](MetricSink &) {}),
                 std::invalid_argument);
    r.histogram("rocesw_latency_seconds", "Latency", [](MetricSink &s) {
        s.sample_suffixed("_bucket", {{"tc", 3}, {"le", "1e-06"}}, 2);
        s.sample_suffixed("_bucket", {{"tc", 3}, {"le", "+Inf"}}, 5);
        s.sample_suffixed("_sum", {{"tc", 3}}, 2.5e-5);
        s.sample_suffixed("_count", {{"tc", 3}}, 5);
    });
    EXPECT_EQ(r.render(),
              "# HELP rocesw_latency_seconds Latency\n"
              "# TYPE rocesw_latency_seconds histogram\n"
              "rocesw_latency_seconds_bucket{tc=\"3\",le=\"1e-06\"} 2\n"
              "rocesw_latency_seconds_bucket{tc=\"3\",le=\"+Inf\"} 5\n"
              "rocesw_latency_seconds_sum{tc=\"3\"} 2.5e-05\n"
              "rocesw_latency_seconds_count{tc=\"3\"} 5\n");
}

TEST(MetricRegistry, FamilyThatThrowsKeepsHeaderAndSkipsItsSamples) {
    MetricRegistry r;
    r.counter("rocesw_a_total", "a", [](MetricSink &s) {
        s.sample({{"port", "p0"}}, 1);
        throw std::runtime_error("boom");
    });
    r.counter("rocesw_b_total", "b", [](MetricSink &s) { s.sample({}, 7); });
    std::string out = r.render();
    EXPECT_EQ(out.find("rocesw_a_total{"), std::string::npos);
    EXPECT_NE(out.find("# TYPE rocesw_a_total counter\n"), std::string::npos);
    EXPECT_NE(out.find("rocesw_b_total 7\n"), std::string::npos);
    EXPECT_EQ(r.collect_errors(), 1u);
}

TEST(MetricRegistry, RejectsBadLabelNameAtScrape) {
    MetricRegistry r;
    r.gauge("rocesw_g", "g", [](MetricSink &s) { s.sample({{"__bad", "x"}}, 1); });
    EXPECT_EQ(r.render(), "# HELP rocesw_g g\n# TYPE rocesw_g gauge\n");
    EXPECT_EQ(r.collect_errors(), 1u);
}

}  // namespace
}  // namespace rocesw
