// QoS configuration loader. Values are read by lib/config's YamlReader, so the rules and the
// message format are those of the switch config ("<source>: <path>: <problem>", unknown fields
// are errors, quoted numbers read as numbers, the first failure stops loading). doc/qos.md
// lists every field.
#include "qos/qos_config.h"

#include "config/yaml_doc.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/counters.h"
#include "common/strings.h"
#include "pfc/headroom.h"

namespace rocesw {

namespace {


bool valid_name(const std::string &s) {
    if (s.empty() || s.size() > 64) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.';
    });
}

template <typename T>
int find_named(const std::vector<T> &v, const std::string &name) {
    for (size_t i = 0; i < v.size(); i++)
        if (v[i].name == name) return int(i);
    return -1;
}


using Entry = Field;

class Loader : YamlReader {
  public:
    explicit Loader(std::string source) : YamlReader(source) { cfg_.source = std::move(source); }

    QosConfig load(const YAML::Node &root) {
        if (!root.IsNull() && !root.IsMap())
            fail("", "expected a map at the top level, got " + describe(root));
        auto tables = entries(root, "", "table");
        static const std::initializer_list<std::string_view> kTables = {
            "DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
            "SCHEDULER",      "WRED_PROFILE",    "BUFFER_POOL",     "BUFFER_PROFILE",
            "PORT_QOS_MAP",   "QUEUE",           "BUFFER_QUEUE",    "BUFFER_PG",
            "PFC_WD",         "ROCESW"};
        for (auto &t : tables)
            if (std::find(kTables.begin(), kTables.end(), t.key) == kTables.end())
                fail("",
                     "unknown table '" + t.key +
                         "' (known: DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, "
                         "TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, SCHEDULER, WRED_PROFILE, "
                         "BUFFER_POOL, BUFFER_PROFILE, PORT_QOS_MAP, QUEUE, BUFFER_QUEUE, "
                         "BUFFER_PG, PFC_WD, ROCESW)");
        // Tables are read in dependency order, whatever their order in the file, so that a
        // reference is checked against a table that is complete.
        auto table = [&](std::string_view name) -> const YAML::Node * {
            for (auto &t : tables)
                if (t.key == name) return &t.value;
            return nullptr;
        };
        if (auto *n = table("ROCESW")) parse_settings(*n);
        for_rows(table("DSCP_TO_TC_MAP"), "DSCP_TO_TC_MAP", [&](const auto &r, const auto &p) {
            cfg_.dscp_to_tc.push_back(parse_map<kNumDscp>(r, p, "DSCP", kNumTc - 1));
        });
        for_rows(table("DOT1P_TO_TC_MAP"), "DOT1P_TO_TC_MAP", [&](const auto &r, const auto &p) {
            cfg_.dot1p_to_tc.push_back(parse_map<kNumDot1p>(r, p, "priority", kNumTc - 1));
        });
        for_rows(table("TC_TO_QUEUE_MAP"), "TC_TO_QUEUE_MAP", [&](const auto &r, const auto &p) {
            cfg_.tc_to_queue.push_back(parse_map<kNumTc>(r, p, "TC", kNumQueues - 1));
        });
        for_rows(table("TC_TO_PRIORITY_GROUP_MAP"), "TC_TO_PRIORITY_GROUP_MAP",
                 [&](const auto &r, const auto &p) {
                     cfg_.tc_to_pg.push_back(parse_map<kNumTc>(r, p, "TC", kNumPg - 1));
                 });
        for_rows(table("SCHEDULER"), "SCHEDULER", [&](const auto &r, const auto &p) {
            cfg_.schedulers.push_back(parse_scheduler(r, p));
        });
        for_rows(table("WRED_PROFILE"), "WRED_PROFILE",
                 [&](const auto &r, const auto &p) { cfg_.wred.push_back(parse_wred(r, p)); });
        for_rows(table("BUFFER_POOL"), "BUFFER_POOL",
                 [&](const auto &r, const auto &p) { cfg_.pools.push_back(parse_pool(r, p)); });
        for_rows(table("BUFFER_PROFILE"), "BUFFER_PROFILE", [&](const auto &r, const auto &p) {
            cfg_.profiles.push_back(parse_profile(r, p));
        });
        for_rows(table("PORT_QOS_MAP"), "PORT_QOS_MAP",
                 [&](const auto &r, const auto &p) { cfg_.port_qos.push_back(parse_port(r, p)); });
        for_rows(table("QUEUE"), "QUEUE", [&](const auto &r, const auto &p) {
            cfg_.queue.push_back(parse_queue(r, p, RowKind::queue, cfg_.queue));
        });
        for_rows(table("BUFFER_QUEUE"), "BUFFER_QUEUE", [&](const auto &r, const auto &p) {
            cfg_.buffer_queue.push_back(parse_queue(r, p, RowKind::buffer_queue, cfg_.buffer_queue));
        });
        for_rows(table("BUFFER_PG"), "BUFFER_PG", [&](const auto &r, const auto &p) {
            cfg_.buffer_pg.push_back(parse_queue(r, p, RowKind::buffer_pg, cfg_.buffer_pg));
        });
        for_rows(table("PFC_WD"), "PFC_WD",
                 [&](const auto &r, const auto &p) { cfg_.pfc_wd.push_back(parse_pfc_wd(r, p)); });
        return std::move(cfg_);
    }

  private:
    static const YAML::Node *find(const Fields &f, std::string_view key) { return f.find(key); }

    // Each row of a table: a named object. Names are checked and unique within the table.
    template <typename Fn>
    void for_rows(const YAML::Node *table, const std::string &name, Fn fn) {
        if (!table) return;
        for (auto &row : entries(*table, name)) fn(row, at(name, row.key));
    }

    void check_name(const std::string &name, const std::string &path) const {
        if (!valid_name(name))
            fail(path, "'" + name + "' is not a valid name (1 to 64 of A-Z a-z 0-9 _ . -)");
    }

    // A reference to a row of `table`: "name" or SONiC's "[TABLE|name]".
    template <typename T>
    int ref(const YAML::Node &n, const std::string &path, std::string_view table,
            const std::vector<T> &rows) const {
        std::string s = string(n, path);
        std::string name = s;
        if (s.size() >= 2 && s.front() == '[' && s.back() == ']') {
            size_t bar = s.find('|');
            if (bar == std::string::npos) fail(path, "'" + s + "' is not a reference [TABLE|name]");
            std::string t = s.substr(1, bar - 1);
            if (t != table)
                fail(path, "'" + s + "' refers to table " + t + ", expected " + std::string(table));
            name = s.substr(bar + 1, s.size() - bar - 2);
        }
        int i = find_named(rows, name);
        if (i < 0) fail(path, "no " + std::string(table) + " named '" + name + "'");
        return i;
    }

    void parse_settings(const YAML::Node &n) {
        const std::string p = "ROCESW";
        auto f = fields(n, p,
                        {"switch_tc", "queue_packets", "handoff_ring_packets",
                         "wire_overhead_bytes", "dwrr_quantum_bytes", "seed", "cut_through"});
        if (auto *v = find(f, "switch_tc"))
            cfg_.switch_tc = uint8_t(integer(*v, at(p, "switch_tc"), 0, kNumTc - 1));
        for (auto key : {"queue_packets", "handoff_ring_packets"}) {
            if (auto *v = find(f, key)) {
                uint32_t x = uint32_t(integer(*v, at(p, key), 64, 65536));
                if (x & (x - 1)) fail(at(p, key), v->Scalar() + " is not a power of two");
                (std::string_view(key) == "queue_packets" ? cfg_.queue_packets
                                                          : cfg_.handoff_ring_packets) = x;
            }
        }
        if (auto *v = find(f, "wire_overhead_bytes"))
            cfg_.wire_overhead_bytes = uint32_t(integer(*v, at(p, "wire_overhead_bytes"), 0, 64));
        if (auto *v = find(f, "dwrr_quantum_bytes"))
            cfg_.dwrr_quantum_bytes = uint32_t(integer(*v, at(p, "dwrr_quantum_bytes"), 64, 65536));
        if (auto *v = find(f, "seed")) cfg_.seed = integer(*v, at(p, "seed"), 0, UINT64_MAX);
        if (auto *v = find(f, "cut_through")) cfg_.cut_through = boolean(*v, at(p, "cut_through"));
    }

    // "key": value for every key 0..N-1, each exactly once.
    template <size_t N>
    QosMap<N> parse_map(const Entry &row, const std::string &p, const char *what,
                        unsigned max_value) {
        check_name(row.key, p);
        QosMap<N> m;
        m.name = row.key;
        std::array<bool, N> seen{};
        for (auto &e : entries(row.value, p)) {
            std::string kp = at(p, e.key);
            auto k = size_t(signed_integer(e.key, kp, 0, int64_t(N - 1)));
            if (seen[k]) fail(kp, std::string(what) + " " + std::to_string(k) + " is mapped twice");
            seen[k] = true;
            m.to[k] = uint8_t(integer(e.value, kp, 0, max_value));
        }
        for (size_t k = 0; k < N; k++)
            if (!seen[k])
                fail(p, std::string(what) + " " + std::to_string(k) + " is not mapped (all " +
                            std::to_string(N) + " values are required)");
        return m;
    }

    QosScheduler parse_scheduler(const Entry &row, const std::string &p) {
        check_name(row.key, p);
        auto f = fields(row.value, p, {"type", "weight"});
        QosScheduler s;
        s.name = row.key;
        s.type = enumeration<SchedType>(
            require(f, p, "type"), at(p, "type"),
            {{"STRICT", SchedType::strict}, {"DWRR", SchedType::dwrr}, {"WRR", SchedType::dwrr}});
        if (s.type == SchedType::dwrr)
            s.weight = uint8_t(integer(require(f, p, "weight"), at(p, "weight"), 1, 255));
        else if (auto *w = find(f, "weight"))
            integer(*w, at(p, "weight"), 1, 255);  // checked, unused: strict queues have no weight
        return s;
    }

    QosWredProfile parse_wred(const Entry &row, const std::string &p) {
        check_name(row.key, p);
        auto f = fields(
            row.value, p,
            {"ecn", "wred_green_enable", "wred_yellow_enable", "wred_red_enable",
             "green_min_threshold", "green_max_threshold", "green_drop_probability",
             "yellow_min_threshold", "yellow_max_threshold", "yellow_drop_probability",
             "red_min_threshold", "red_max_threshold", "red_drop_probability", "ecn_mark_point",
             "drop_min_threshold", "drop_max_threshold", "drop_probability"});
        QosWredProfile w;
        w.name = row.key;
        if (auto *n = find(f, "ecn")) {
            std::string e = string(*n, at(p, "ecn"));
            static const char *const kOn[] = {"ecn_green", "ecn_green_yellow", "ecn_green_red",
                                              "ecn_all"};
            static const char *const kOff[] = {"ecn_none", "ecn_yellow", "ecn_red",
                                               "ecn_yellow_red"};
            if (std::any_of(std::begin(kOn), std::end(kOn), [&](auto *s) { return e == s; }))
                w.ecn = true;
            else if (std::none_of(std::begin(kOff), std::end(kOff),
                                  [&](auto *s) { return e == s; }))
                fail(at(p, "ecn"), "'" + e +
                                       "' is not one of ecn_none, ecn_green, ecn_yellow, "
                                       "ecn_red, ecn_green_yellow, ecn_green_red, ecn_yellow_red, "
                                       "ecn_all");
        }
        bool green_drop = false;
        if (auto *n = find(f, "wred_green_enable"))
            green_drop = boolean(*n, at(p, "wred_green_enable"));
        for (auto key : {"wred_yellow_enable", "wred_red_enable"})
            if (auto *n = find(f, key)) boolean(*n, at(p, key));
        // Every colour's curve is range-checked; only green is used (rocesw has no policer, so
        // every packet is green).
        auto curve = [&](const std::string &prefix, const char *prob_key, bool needed) {
            WredCurve c;
            std::string kmin = prefix + "min_threshold", kmax = prefix + "max_threshold";
            auto *nmin = find(f, kmin), *nmax = find(f, kmax), *nprob = find(f, prob_key);
            if (needed) {
                for (auto [n, k] : {std::pair{nmin, kmin}, std::pair{nmax, kmax},
                                    std::pair{nprob, std::string(prob_key)}})
                    if (!n) fail(at(p, k), "required field missing");
            }
            if (nmin) c.min_bytes = uint32_t(integer(*nmin, at(p, kmin), 0, UINT32_MAX));
            if (nmax) c.max_bytes = uint32_t(integer(*nmax, at(p, kmax), 0, UINT32_MAX));
            if (nprob) c.max_probability_pct = uint8_t(integer(*nprob, at(p, prob_key), 0, 100));
            if (nmin && nmax && c.min_bytes > c.max_bytes)
                fail(at(p, kmin), std::to_string(c.min_bytes) + " is above " + kmax + " " +
                                      std::to_string(c.max_bytes));
            c.enabled = needed;
            return c;
        };
        w.mark = curve("green_", "green_drop_probability", w.ecn || green_drop);
        w.mark.enabled = w.ecn;
        curve("yellow_", "yellow_drop_probability", false);
        curve("red_", "red_drop_probability", false);
        bool any_drop = find(f, "drop_min_threshold") || find(f, "drop_max_threshold") ||
                        find(f, "drop_probability");
        if (any_drop) {
            const char *first = find(f, "drop_min_threshold")   ? "drop_min_threshold"
                                : find(f, "drop_max_threshold") ? "drop_max_threshold"
                                                                : "drop_probability";
            if (!green_drop)
                fail(at(p, first), "a Not-ECT drop curve needs wred_green_enable: true");
            w.drop = curve("drop_", "drop_probability", true);
        } else if (green_drop) {
            w.drop = curve("green_", "green_drop_probability", true);
        }
        if (auto *n = find(f, "ecn_mark_point"))
            w.mark_point = enumeration<MarkPoint>(
                *n, at(p, "ecn_mark_point"),
                {{"dequeue", MarkPoint::dequeue}, {"enqueue", MarkPoint::enqueue}});
        return w;
    }

    QosBufferPool parse_pool(const Entry &row, const std::string &p) {
        check_name(row.key, p);
        auto f = fields(row.value, p, {"size", "type", "mode", "xoff"});
        QosBufferPool b;
        b.name = row.key;
        b.size_bytes = integer(require(f, p, "size"), at(p, "size"), 1, uint64_t(1) << 40);
        if (auto *n = find(f, "type")) {
            std::string t = string(*n, at(p, "type"));
            if (t == "ingress")
                b.ingress = true;
            else if (t != "egress")
                fail(at(p, "type"), "'" + t + "' is not one of ingress, egress");
        }
        if (auto *n = find(f, "mode")) {
            std::string m = string(*n, at(p, "mode"));
            if (m == "static")
                b.dynamic = false;
            else if (m != "dynamic")
                fail(at(p, "mode"), "'" + m + "' is not one of static, dynamic");
        }
        if (auto *n = find(f, "xoff"))
            b.xoff_bytes = integer(*n, at(p, "xoff"), 0, uint64_t(1) << 40);
        return b;
    }

    QosBufferProfile parse_profile(const Entry &row, const std::string &p) {
        check_name(row.key, p);
        auto f = fields(row.value, p,
                        {"pool", "size", "dynamic_th", "static_th", "xon", "xoff", "xon_offset"});
        QosBufferProfile b;
        b.name = row.key;
        b.pool = ref(require(f, p, "pool"), at(p, "pool"), "BUFFER_POOL", cfg_.pools);
        const QosBufferPool &pool = cfg_.pools[size_t(b.pool)];
        if (auto *n = find(f, "size"))
            b.size_bytes = uint32_t(integer(*n, at(p, "size"), 0, UINT32_MAX));
        if (b.size_bytes > pool.size_bytes)
            fail(at(p, "size"), std::to_string(b.size_bytes) + " is above the size " +
                                    std::to_string(pool.size_bytes) + " of pool '" + pool.name +
                                    "'");
        auto *dyn = find(f, "dynamic_th");
        auto *st = find(f, "static_th");
        if (dyn && st) fail(at(p, "static_th"), "give dynamic_th or static_th, not both");
        if (!dyn && !st) fail(p, "one of dynamic_th, static_th is required");
        if (dyn) {
            if (!pool.dynamic)
                fail(at(p, "dynamic_th"),
                     "pool '" + pool.name + "' is static (mode: static), use static_th");
            b.dynamic = true;
            b.dynamic_th = int8_t(signed_integer(*dyn, at(p, "dynamic_th"), -8, 8));
        } else {
            if (pool.dynamic)
                fail(at(p, "static_th"),
                     "pool '" + pool.name + "' is dynamic (mode: dynamic), use dynamic_th");
            b.dynamic = false;
            b.static_th_bytes = integer(*st, at(p, "static_th"), 1, uint64_t(1) << 40);
        }
        for (auto [key, dst] : {std::pair{"xon", &b.xon_bytes}, std::pair{"xoff", &b.xoff_bytes},
                                std::pair{"xon_offset", &b.xon_offset_bytes}})
            if (auto *n = find(f, key)) *dst = uint32_t(integer(*n, at(p, key), 0, UINT32_MAX));
        b.has_xon = find(f, "xon") != nullptr;
        b.has_xon_offset = find(f, "xon_offset") != nullptr;
        return b;
    }

    QosPortEntry parse_port(const Entry &row, const std::string &p) {
        check_name(row.key, p);
        auto f = fields(row.value, p,
                        {"trust", "dscp_to_tc_map", "dot1p_to_tc_map", "tc_to_queue_map",
                         "tc_to_pg_map", "pfc_enable", "default_tc", "shaper", "shaper_burst_bytes",
                         "tx_ring_bytes", "ecn_depth", "pfc_quanta", "pause", "cable_length"});
        QosPortEntry e;
        e.port = row.key;
        if (auto *n = find(f, "dscp_to_tc_map"))
            e.dscp_to_tc = ref(*n, at(p, "dscp_to_tc_map"), "DSCP_TO_TC_MAP", cfg_.dscp_to_tc);
        if (auto *n = find(f, "dot1p_to_tc_map"))
            e.dot1p_to_tc = ref(*n, at(p, "dot1p_to_tc_map"), "DOT1P_TO_TC_MAP", cfg_.dot1p_to_tc);
        if (auto *n = find(f, "tc_to_queue_map"))
            e.tc_to_queue = ref(*n, at(p, "tc_to_queue_map"), "TC_TO_QUEUE_MAP", cfg_.tc_to_queue);
        if (auto *n = find(f, "tc_to_pg_map"))
            e.tc_to_pg = ref(*n, at(p, "tc_to_pg_map"), "TC_TO_PRIORITY_GROUP_MAP", cfg_.tc_to_pg);
        if (auto *n = find(f, "trust")) {
            std::string t = string(*n, at(p, "trust"));
            if (t == "dscp")
                e.trust = Trust::dscp;
            else if (t == "dot1p" || t == "pcp")
                e.trust = Trust::dot1p;
            else
                fail(at(p, "trust"), "'" + t + "' is not one of dscp, dot1p");
        }
        if (e.trust == Trust::dscp && e.dscp_to_tc < 0) fail(p, "trust dscp needs dscp_to_tc_map");
        if (e.trust == Trust::dot1p && e.dot1p_to_tc < 0)
            fail(p, "trust dot1p needs dot1p_to_tc_map");
        if (auto *n = find(f, "default_tc"))
            e.default_tc = uint8_t(integer(*n, at(p, "default_tc"), 0, kNumTc - 1));
        if (auto *n = find(f, "pfc_enable")) e.pfc_enable = tc_list(*n, at(p, "pfc_enable"));
        if (auto *n = find(f, "shaper")) e.shaper = boolean(*n, at(p, "shaper"));
        if (auto *n = find(f, "shaper_burst_bytes"))
            e.shaper_burst_bytes =
                uint32_t(integer(*n, at(p, "shaper_burst_bytes"), 64, uint32_t(1) << 30));
        if (auto *n = find(f, "tx_ring_bytes")) {
            e.tx_ring_bytes = uint32_t(integer(*n, at(p, "tx_ring_bytes"), 0, uint32_t(1) << 30));
            e.tx_ring_unlimited = e.tx_ring_bytes == 0;
        }
        if (auto *n = find(f, "ecn_depth")) {
            e.ecn_depth = enumeration<EcnDepth>(
                *n, at(p, "ecn_depth"),
                {{"queue_and_tx_ring", EcnDepth::queue_and_tx_ring}, {"queue", EcnDepth::queue}});
            e.ecn_depth_set = true;
        }
        if (auto *n = find(f, "pfc_quanta"))
            e.pfc_quanta = uint16_t(integer(*n, at(p, "pfc_quanta"), 1, 0xFFFF));
        if (auto *n = find(f, "pause")) {
            std::string m = string(*n, at(p, "pause"));
            if (m == "honor")
                e.honor_pause = true;
            else if (m != "ignore")
                fail(at(p, "pause"), "'" + m + "' is not one of honor, ignore");
            if (e.honor_pause && e.pfc_enable)
                fail(at(p, "pause"),
                     "802.3x PAUSE and PFC are mutually exclusive on a link: honor needs an "
                     "empty pfc_enable");
        }
        if (auto *n = find(f, "cable_length")) {
            // SONiC's CABLE_LENGTH values look like "40m"; a bare number is metres too.
            if (!n->IsScalar()) fail(at(p, "cable_length"), "expected metres like 40m");
            std::string v = n->Scalar();
            if (!v.empty() && v.back() == 'm') v.pop_back();
            e.cable_length_m = uint32_t(signed_integer(v, at(p, "cable_length"), 0, 100000));
        }
        // A lossless queue must not carry lossy traffic: it would never be dropped either.
        std::array<uint8_t, kNumTc> to_queue{0, 1, 2, 3, 4, 5, 6, 7};
        if (e.tc_to_queue >= 0) to_queue = cfg_.tc_to_queue[size_t(e.tc_to_queue)].to;
        for (unsigned a = 0; a < kNumTc; a++) {
            if (!(e.pfc_enable >> a & 1)) continue;
            for (unsigned b = 0; b < kNumTc; b++)
                if (!(e.pfc_enable >> b & 1) && to_queue[a] == to_queue[b])
                    fail(at(p, "pfc_enable"), "queue " + std::to_string(to_queue[a]) +
                                                  " holds lossless TC " + std::to_string(a) +
                                                  " and lossy TC " + std::to_string(b));
        }
        return e;
    }

    // pfc_enable: "3,4" (SONiC), a single integer, or an empty string.
    uint8_t tc_list(const YAML::Node &n, const std::string &path) const {
        if (!n.IsScalar()) fail(path, "expected a list of TCs like \"3,4\", got " + describe(n));
        uint8_t mask = 0;
        std::string s = n.Scalar();
        if (s.empty()) return 0;
        std::stringstream ss(s);
        std::string item;
        while (std::getline(ss, item, ',')) {
            auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
            item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
            auto tc = unsigned(signed_integer(item, path, 0, kNumTc - 1));
            if (mask >> tc & 1) fail(path, "TC " + std::to_string(tc) + " is listed twice");
            mask = uint8_t(mask | 1u << tc);
        }
        return mask;
    }

    QosPfcWd parse_pfc_wd(const Entry &row, const std::string &p) {
        if (row.key != "default") check_name(row.key, p);
        auto f = fields(row.value, p, {"detection_time", "restoration_time", "action"});
        QosPfcWd w;
        w.port = row.key;
        if (auto *n = find(f, "detection_time"))
            w.detection_ms =
                uint32_t(duration(*n, at(p, "detection_time"), TimeUnit::ms, 1, 60000));
        if (auto *n = find(f, "restoration_time"))
            w.restoration_ms =
                uint32_t(duration(*n, at(p, "restoration_time"), TimeUnit::ms, 1, 60000));
        if (auto *n = find(f, "action")) {
            std::string a = string(*n, at(p, "action"));
            if (a == "forward")
                w.drop = false;
            else if (a != "drop")
                fail(at(p, "action"), "'" + a + "' is not one of drop, forward");
        }
        return w;
    }

    enum class RowKind { queue, buffer_queue, buffer_pg };

    // "<port>[,<port>...]|<q>[-<q>]"
    QosQueueEntry parse_queue(const Entry &row, const std::string &p, RowKind kind,
                              const std::vector<QosQueueEntry> &before) {
        const bool pg = kind == RowKind::buffer_pg;
        const std::string what = pg ? "PG" : "queue";
        QosQueueEntry q;
        q.path = p;
        size_t bar = row.key.find('|');
        if (bar == std::string::npos || row.key.find('|', bar + 1) != std::string::npos)
            fail(p, "'" + row.key + "' is not <port>|<" + what + "> or <port>|<first>-<last>");
        std::stringstream ss(row.key.substr(0, bar));
        std::string port;
        while (std::getline(ss, port, ',')) {
            check_name(port, p);
            if (std::find(q.ports.begin(), q.ports.end(), port) != q.ports.end())
                fail(p, "port '" + port + "' is listed twice");
            q.ports.push_back(port);
        }
        if (q.ports.empty()) fail(p, "'" + row.key + "' names no port");
        std::string range = row.key.substr(bar + 1);
        size_t dash = range.find('-');
        unsigned lo = unsigned(signed_integer(range.substr(0, dash), p, 0, kNumQueues - 1));
        unsigned hi = dash == std::string::npos
                          ? lo
                          : unsigned(signed_integer(range.substr(dash + 1), p, 0, kNumQueues - 1));
        if (lo > hi) fail(p, what + " range " + range + " is empty");
        for (unsigned i = lo; i <= hi; i++) q.queues = uint8_t(q.queues | 1u << i);
        for (auto &b : before)
            for (auto &port_name : q.ports)
                if (std::find(b.ports.begin(), b.ports.end(), port_name) != b.ports.end() &&
                    (b.queues & q.queues)) {
                    unsigned first = unsigned(__builtin_ctz(b.queues & q.queues));
                    fail(p, what + " " + std::to_string(first) + " of " + port_name +
                                " is also set by " + b.path);
                }
        if (kind != RowKind::queue) {
            auto f = fields(row.value, p, {"profile"});
            q.profile =
                ref(require(f, p, "profile"), at(p, "profile"), "BUFFER_PROFILE", cfg_.profiles);
            const QosBufferProfile &prof = cfg_.profiles[size_t(q.profile)];
            const QosBufferPool &pool = cfg_.pools[size_t(prof.pool)];
            if (pool.ingress != pg)
                fail(at(p, "profile"), "profile '" + prof.name + "' uses " +
                                           (pool.ingress ? "ingress" : "egress") + " pool '" +
                                           pool.name + "'; " + (pg ? "BUFFER_PG" : "BUFFER_QUEUE") +
                                           " needs an " + (pg ? "ingress" : "egress") + " pool");
        } else {
            auto f = fields(row.value, p, {"scheduler", "wred_profile"});
            if (auto *n = find(f, "scheduler"))
                q.scheduler = ref(*n, at(p, "scheduler"), "SCHEDULER", cfg_.schedulers);
            if (auto *n = find(f, "wred_profile"))
                q.wred = ref(*n, at(p, "wred_profile"), "WRED_PROFILE", cfg_.wred);
        }
        return q;
    }

    QosConfig cfg_;
};

// The entry of `rows` for port `name`: the named one if any, else the 'default' one.
const QosQueueEntry *queue_entry(const std::vector<QosQueueEntry> &rows, const std::string &name,
                                 unsigned queue) {
    const QosQueueEntry *def = nullptr;
    for (auto &r : rows) {
        if (!(r.queues >> queue & 1)) continue;
        for (auto &p : r.ports) {
            if (p == name) return &r;
            if (p == "default") def = &r;
        }
    }
    return def;
}

const QosPfcWd *pfc_wd_entry(const std::vector<QosPfcWd> &rows, const std::string &name) {
    const QosPfcWd *def = nullptr;
    for (auto &r : rows) {
        if (r.port == name) return &r;
        if (r.port == "default") def = &r;
    }
    return def;
}

// The PFC part of a port's plan: its lossless PGs (BUFFER_PG profile, or an automatic one from
// the headroom calculator), quanta, 802.3x handling and watchdog.
void build_pfc(const QosConfig &cfg, const QosPortEntry &e, const QosPortInfo &port,
               const std::vector<int> &ingress_index, PortQosPlan &pp,
               std::vector<std::string> &warnings) {
    pp.pfc_quanta = e.pfc_quanta;
    pp.honor_pause = e.honor_pause;
    if (const QosPfcWd *w = pfc_wd_entry(cfg.pfc_wd, port.name)) {
        pp.wd.enabled = true;
        pp.wd.detection_ns = uint64_t(w->detection_ms) * 1'000'000;
        pp.wd.restoration_ns = uint64_t(w->restoration_ms) * 1'000'000;
        pp.wd.drop = w->drop;
    }
    HeadroomInput hin;
    hin.speed_bps = pp.rate_bps;
    hin.cable_m = e.cable_length_m;
    hin.mtu = hin.peer_mtu = port.mtu;
    hin.tx_ring_bytes = pp.tx_ring_bytes ? pp.tx_ring_bytes : 1u << 20;
    hin.burst = port.burst;
    const HeadroomResult need = compute_headroom(hin);
    for (unsigned t = 0; t < kNumTc; t++)
        if (pp.cls.pfc_enable >> t & 1) {
            PgPlan &g = pp.pgs[pp.cls.tc_to_pg[t]];
            g.priorities = uint8_t(g.priorities | 1u << t);
        }
    for (unsigned pg = 0; pg < kNumPg; pg++) {
        PgPlan &g = pp.pgs[pg];
        if (!g.priorities) continue;
        g.headroom_needed = need.headroom_bytes;
        const QosQueueEntry *r = queue_entry(cfg.buffer_pg, port.name, pg);
        if (!r) {
            // No profile: pause at one headroom's worth, absorb another.
            g.automatic = true;
            g.static_th_bytes = need.headroom_bytes;
            g.headroom_bytes = need.headroom_bytes;
            g.xon_offset_bytes = need.xon_offset_bytes;
            continue;
        }
        const QosBufferProfile &b = cfg.profiles[size_t(r->profile)];
        g.pool = int8_t(ingress_index[size_t(b.pool)]);
        g.reserved_bytes = b.size_bytes;
        g.dynamic = b.dynamic;
        g.dynamic_th = b.dynamic_th;
        g.static_th_bytes = b.static_th_bytes;
        g.headroom_bytes = b.xoff_bytes;
        g.xon_bytes = b.xon_bytes;
        g.xon_offset_bytes = b.has_xon || b.has_xon_offset ? b.xon_offset_bytes
                                                           : need.xon_offset_bytes;
        if (g.headroom_bytes < need.headroom_bytes)
            warnings.push_back(r->path + ": port " + port.name + " PG " + std::to_string(pg) +
                               ": headroom (BUFFER_PROFILE." + b.name + ".xoff) " +
                               std::to_string(g.headroom_bytes) + " bytes is below the " +
                               std::to_string(need.headroom_bytes) + " the calculator gives for " +
                               std::to_string(port.speed_mbps) + " Mb/s, " +
                               std::to_string(e.cable_length_m) + " m, MTU " +
                               std::to_string(port.mtu) + " (rocectl headroom explains)");
    }
    // ECN belongs below PFC: a lossless queue whose marking starts at or above the XOFF point
    // of the PG feeding it pauses senders before it marks, so PFC does DCQCN's job (and
    // spreads pauses). The XOFF point compared is the highest the PG can have (a dynamic one
    // with its whole pool free); ingress PG bytes and egress queue depth are different
    // counts, so this catches the clear misconfigurations only.
    for (unsigned t = 0; t < kNumTc; t++) {
        if (!(pp.cls.pfc_enable >> t & 1)) continue;
        const unsigned q = pp.cls.tc_to_queue[t], pg = pp.cls.tc_to_pg[t];
        const QueuePlan &qp = pp.queues[q];
        const PgPlan &g = pp.pgs[pg];
        if (!qp.ecn || !qp.mark.enabled) continue;
        uint64_t pool_bytes = 0;
        for (size_t i = 0; i < cfg.pools.size(); i++)
            if (g.dynamic && g.pool >= 0 && ingress_index[i] == g.pool)
                pool_bytes = cfg.pools[i].size_bytes;
        const uint64_t xoff = g.threshold(pool_bytes);
        if (qp.mark.min_bytes >= xoff)
            warnings.push_back("QUEUE: port " + port.name + " queue " + std::to_string(q) +
                               ": ECN marking starts at " + std::to_string(qp.mark.min_bytes) +
                               " bytes (WRED green_min_threshold), at or above the PFC XOFF "
                               "point of PG " +
                               std::to_string(pg) + " (" + std::to_string(xoff) +
                               " bytes): PFC pauses before ECN marks (doc/pfc.md)");
    }
}

}  // namespace

QosConfig load_qos_string(const std::string &yaml, const std::string &source) {
    YAML::Node root = load_yaml_document(yaml, source);
    try {
        return Loader(source).load(root);
    } catch (const YAML::Exception &e) {
        throw ConfigError(source + ": " + e.msg);  // not expected: the loader checks node kinds
    }
}

QosConfig load_qos_file(const std::string &path) {
    return load_qos_string(read_config_file(path), path);
}

QosPlan build_qos_plan(const QosConfig &cfg, std::span<const QosPortInfo> ports) {
    auto fail = [&](const std::string &path, const std::string &problem) {
        throw ConfigError(cfg.source + ": " + path + ": " + problem);
    };
    if (ports.size() > kMaxPorts)
        fail("PORT_QOS_MAP", std::to_string(ports.size()) + " ports, at most " +
                                 std::to_string(kMaxPorts) + " allowed");
    std::vector<std::string> names;
    for (auto &p : ports) names.push_back(p.name);
    auto known = [&](const std::string &n) {
        return n == "default" || std::find(names.begin(), names.end(), n) != names.end();
    };
    for (auto &e : cfg.port_qos)
        if (!known(e.port))
            fail("PORT_QOS_MAP." + e.port,
                 "no port named '" + e.port + "' (ports: " + join(names) + ")");
    for (auto &w : cfg.pfc_wd)
        if (!known(w.port))
            fail("PFC_WD." + w.port,
                 "no port named '" + w.port + "' (ports: " + join(names) + ")");
    for (auto *rows : {&cfg.queue, &cfg.buffer_queue, &cfg.buffer_pg})
        for (auto &r : *rows)
            for (auto &p : r.ports)
                if (!known(p))
                    fail(r.path, "no port named '" + p + "' (ports: " + join(names) + ")");

    QosPlan plan;
    plan.source = cfg.source;
    plan.switch_tc = cfg.switch_tc;
    plan.queue_packets = cfg.queue_packets;
    plan.handoff_ring_packets = cfg.handoff_ring_packets;
    plan.cut_through = cfg.cut_through;
    plan.wire_overhead_bytes = cfg.wire_overhead_bytes;
    plan.dwrr_quantum_bytes = cfg.dwrr_quantum_bytes;
    plan.seed = cfg.seed;
    // Egress pools only, in file order; ingress pools belong to ingress (PFC) accounting.
    std::vector<int> pool_index(cfg.pools.size(), -1);
    for (size_t i = 0; i < cfg.pools.size(); i++) {
        if (cfg.pools[i].ingress) continue;
        pool_index[i] = int(plan.pools.size());
        plan.pools.push_back({cfg.pools[i].name, cfg.pools[i].size_bytes, cfg.pools[i].xoff_bytes,
                              cfg.pools[i].dynamic});
    }
    std::vector<uint64_t> reserved(plan.pools.size(), 0);
    std::vector<int> ingress_index(cfg.pools.size(), -1);
    for (size_t i = 0; i < cfg.pools.size(); i++) {
        if (!cfg.pools[i].ingress) continue;
        ingress_index[i] = int(plan.ingress_pools.size());
        plan.ingress_pools.push_back({cfg.pools[i].name, cfg.pools[i].size_bytes,
                                      cfg.pools[i].xoff_bytes, cfg.pools[i].dynamic});
    }

    for (auto &port : ports) {
        const QosPortEntry *e = nullptr;
        for (auto &x : cfg.port_qos)
            if (x.port == port.name) e = &x;
        if (!e)
            for (auto &x : cfg.port_qos)
                if (x.port == "default") e = &x;
        if (!e)
            fail("PORT_QOS_MAP", "no entry for port '" + port.name + "' and no 'default' entry");
        PortQosPlan pp;
        pp.name = port.name;
        pp.cls.trust = e->trust;
        pp.cls.default_tc = e->default_tc;
        if (e->dscp_to_tc >= 0) pp.cls.dscp_to_tc = cfg.dscp_to_tc[size_t(e->dscp_to_tc)].to;
        if (e->dot1p_to_tc >= 0) pp.cls.dot1p_to_tc = cfg.dot1p_to_tc[size_t(e->dot1p_to_tc)].to;
        if (e->tc_to_queue >= 0) pp.cls.tc_to_queue = cfg.tc_to_queue[size_t(e->tc_to_queue)].to;
        if (e->tc_to_pg >= 0) pp.cls.tc_to_pg = cfg.tc_to_pg[size_t(e->tc_to_pg)].to;
        pp.cls.pfc_enable = e->pfc_enable;
        pp.rate_bps = port.speed_mbps * 1'000'000;
        pp.shaper = e->shaper;
        pp.shaper_burst_bytes =
            e->shaper_burst_bytes ? e->shaper_burst_bytes : default_port_burst_bytes(pp.rate_bps);
        pp.tx_ring_bytes = e->tx_ring_unlimited ? 0
                           : e->tx_ring_bytes   ? e->tx_ring_bytes
                                                : default_port_burst_bytes(pp.rate_bps);
        pp.ecn_depth = e->ecn_depth_set ? e->ecn_depth : port.ecn_depth;
        for (unsigned q = 0; q < kNumQueues; q++) {
            QueuePlan &qp = pp.queues[q];
            for (unsigned tc = 0; tc < kNumTc; tc++)
                if (pp.cls.tc_to_queue[tc] == q && (pp.cls.pfc_enable >> tc & 1))
                    qp.lossless = true;
            if (auto *r = queue_entry(cfg.queue, port.name, q)) {
                if (r->scheduler >= 0) {
                    const QosScheduler &s = cfg.schedulers[size_t(r->scheduler)];
                    qp.sched = s.type;
                    qp.weight = s.weight;
                }
                if (r->wred >= 0) {
                    const QosWredProfile &w = cfg.wred[size_t(r->wred)];
                    qp.ecn = w.ecn;
                    qp.mark_point = w.mark_point;
                    qp.mark = w.mark;
                    qp.drop = w.drop;
                }
            }
            if (auto *r = queue_entry(cfg.buffer_queue, port.name, q)) {
                const QosBufferProfile &b = cfg.profiles[size_t(r->profile)];
                qp.pool = int8_t(pool_index[size_t(b.pool)]);
                qp.reserved_bytes = b.size_bytes;
                qp.dynamic = b.dynamic;
                qp.dynamic_th = b.dynamic_th;
                qp.static_th_bytes = b.static_th_bytes;
                reserved[size_t(qp.pool)] += b.size_bytes;
            }
        }
        const bool marks =
            std::any_of(pp.queues.begin(), pp.queues.end(), [](auto &q) { return q.ecn; });
        if (marks && pp.ecn_depth == EcnDepth::queue && port.ecn_depth != EcnDepth::queue &&
            pp.tx_ring_bytes)
            plan.warnings.push_back(
                "PORT_QOS_MAP." + e->port + ".ecn_depth: queue: port " + port.name +
                "'s TX ring (up to " + std::to_string(pp.tx_ring_bytes) +
                " bytes) is backlog the ECN marker does not see: marks start at a port "
                "backlog of up to Kmin + " +
                std::to_string(pp.tx_ring_bytes) + " bytes");
        build_pfc(cfg, *e, port, ingress_index, pp, plan.warnings);
        plan.ports.push_back(std::move(pp));
    }
    for (size_t i = 0; i < plan.pools.size(); i++)
        if (reserved[i] > plan.pools[i].size_bytes)
            fail("BUFFER_POOL." + plan.pools[i].name,
                 "queues reserve " + std::to_string(reserved[i]) +
                     " bytes in total (BUFFER_PROFILE size of every queue using it), above its "
                     "size " +
                     std::to_string(plan.pools[i].size_bytes));
    return plan;
}

QosConfig default_qos_config() {
    // Kept equal to config/qos/sonic-default.yaml by test/unit/qos_config_test.cc.
    static const char *const kYaml = R"(
DSCP_TO_TC_MAP:
  AZURE: {
    "0": 1, "1": 1, "2": 1, "3": 3, "4": 4, "5": 1, "6": 1, "7": 1,
    "8": 0, "9": 1, "10": 1, "11": 1, "12": 1, "13": 1, "14": 1, "15": 1,
    "16": 1, "17": 1, "18": 1, "19": 1, "20": 1, "21": 1, "22": 1, "23": 1,
    "24": 1, "25": 1, "26": 1, "27": 1, "28": 1, "29": 1, "30": 1, "31": 1,
    "32": 1, "33": 1, "34": 1, "35": 1, "36": 1, "37": 1, "38": 1, "39": 1,
    "40": 1, "41": 1, "42": 1, "43": 1, "44": 1, "45": 1, "46": 5, "47": 1,
    "48": 6, "49": 1, "50": 1, "51": 1, "52": 1, "53": 1, "54": 1, "55": 1,
    "56": 1, "57": 1, "58": 1, "59": 1, "60": 1, "61": 1, "62": 1, "63": 1
  }
DOT1P_TO_TC_MAP:
  AZURE: {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7}
TC_TO_QUEUE_MAP:
  AZURE: {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7}
TC_TO_PRIORITY_GROUP_MAP:
  AZURE: {"0": 0, "1": 0, "2": 0, "3": 3, "4": 4, "5": 0, "6": 0, "7": 7}
SCHEDULER:
  scheduler.0: {type: DWRR, weight: 14}
  scheduler.1: {type: DWRR, weight: 15}
  scheduler.strict: {type: STRICT}
WRED_PROFILE:
  AZURE_LOSSLESS:
    wred_green_enable: true
    ecn: ecn_all
    green_min_threshold: 250000
    green_max_threshold: 2097152
    green_drop_probability: 5
BUFFER_POOL:
  ingress_lossless_pool: {type: ingress, mode: dynamic, size: 8388608, xoff: 2097152}
  egress_lossless_pool: {type: egress, mode: static, size: 4194304}
  egress_lossy_pool: {type: egress, mode: dynamic, size: 4194304}
BUFFER_PROFILE:
  ingress_lossless_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 0, xoff: 1048576, xon_offset: 65536}
  egress_lossless_profile: {pool: egress_lossless_pool, size: 0, static_th: 4194304}
  egress_lossy_profile: {pool: egress_lossy_pool, size: 1518, dynamic_th: 3}
PORT_QOS_MAP:
  default:
    trust: dscp
    dscp_to_tc_map: AZURE
    dot1p_to_tc_map: AZURE
    tc_to_queue_map: AZURE
    tc_to_pg_map: AZURE
    pfc_enable: "3,4"
QUEUE:
  default|0-2: {scheduler: scheduler.0}
  default|3-4: {scheduler: scheduler.1, wred_profile: AZURE_LOSSLESS}
  default|5-6: {scheduler: scheduler.0}
  default|7: {scheduler: scheduler.strict}
BUFFER_PG:
  default|3-4: {profile: ingress_lossless_profile}
BUFFER_QUEUE:
  default|0-2: {profile: egress_lossy_profile}
  default|3-4: {profile: egress_lossless_profile}
  default|5-7: {profile: egress_lossy_profile}
ROCESW:
  switch_tc: 7
)";
    return load_qos_string(kYaml, "<built-in sonic-default>");
}

}  // namespace rocesw
