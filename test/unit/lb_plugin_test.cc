// The load-balancing plugin loader (lb/plugin.h) and the config's `lb.plugins`: what loads, what
// is refused and how it says so. The plugins: lib/lb/plugins' two_choices and the broken ones of
// lb_plugin_kinds.cc, built beside this test (ROCESW_LB_TEST_PLUGINS).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "lb/plugin.h"
#include "lb/policy.h"

namespace rocesw {
namespace {

std::string kind(const std::string &k) {
    return std::string(ROCESW_LB_TEST_PLUGINS) + "/lb_test_" + k + ".so";
}

// load_lb_plugin's message for `path`, "" when it loads.
std::string error_of(const std::string &path) {
    try {
        load_lb_plugin(path);
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "";
}

TEST(LbPlugin, TheExampleRegistersItsPolicyOnceAndTheSwitchCanBuildIt) {
    const size_t before = lb_policy_count();
    const auto names = load_lb_plugin(ROCESW_TWO_CHOICES_PLUGIN);
    ASSERT_EQ(names, std::vector<std::string>{"two_choices"});
    EXPECT_EQ(lb_policy_count(), before + 1);
    const int id = lb_policy_id("two_choices");
    ASSERT_GE(id, 4);
    EXPECT_EQ(lb_policy_name(uint8_t(id)), "two_choices");
    auto p = make_lb_policy(uint8_t(id), 0);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->granularity(), LbGranularity::flowlet);
    // The same file again, also by another path to it: nothing more registered.
    EXPECT_EQ(load_lb_plugin(ROCESW_TWO_CHOICES_PLUGIN), names);
    const std::string dir = std::string(ROCESW_TWO_CHOICES_PLUGIN);
    const std::string other = dir.substr(0, dir.rfind('/')) + "/./" + dir.substr(dir.rfind('/') + 1);
    EXPECT_EQ(load_lb_plugin(other), names);
    EXPECT_EQ(lb_policy_count(), before + 1);
}

TEST(LbPlugin, APluginMayRegisterSeveralPolicies) {
    EXPECT_EQ(load_lb_plugin(kind("two_policies")),
              (std::vector<std::string>{"test_first", "test_second"}));
    EXPECT_GE(lb_policy_id("test_first"), 4);
    EXPECT_EQ(lb_policy_id("test_second"), lb_policy_id("test_first") + 1);
}

TEST(LbPlugin, EachRefusalSaysWhichFileAndWhy) {
    const std::string missing = std::string(ROCESW_LB_TEST_PLUGINS) + "/no_such_plugin.so";
    EXPECT_EQ(error_of(missing), missing + ": No such file or directory");
    // Not a shared object at all.
    const std::string text = testing::TempDir() + "/lb_plugin_text.so";
    std::ofstream(text) << "not an ELF file\n";
    EXPECT_EQ(error_of(text).rfind(text + ": cannot load: ", 0), 0u) << error_of(text);
    std::filesystem::remove(text);
    EXPECT_EQ(error_of(kind("not_a_plugin")),
              kind("not_a_plugin") +
                  ": not a rocesw load-balancing plugin (no rocesw_lb_plugin_abi; plugins are "
                  "built with ROCESW_LB_PLUGIN, lb/plugin.h)");
    EXPECT_EQ(error_of(kind("no_init")),
              kind("no_init") +
                  ": not a rocesw load-balancing plugin (no rocesw_lb_plugin_init; plugins are "
                  "built with ROCESW_LB_PLUGIN, lb/plugin.h)");
    // Another layout: refused before any of its code runs (its init would throw).
    const LbPluginAbi mine = lb_plugin_abi();
    const std::string msg = error_of(kind("other_abi"));
    EXPECT_EQ(msg.rfind(kind("other_abi") + ": built for another rocesw (interface v999, " +
                            "PathRequest " + std::to_string(mine.path_request + 8) + " B, ",
                        0),
              0u)
        << msg;
    EXPECT_NE(msg.find("; this one: interface v" + std::to_string(kLbPluginVersion) +
                       ", PathRequest " + std::to_string(mine.path_request) + " B, "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("): rebuild it in this tree"), std::string::npos) << msg;
    EXPECT_EQ(error_of(kind("name_taken")),
              kind("name_taken") + ": its init failed: load-balancing policy 'flowlet' exists");
    EXPECT_EQ(error_of(kind("registers_nothing")), kind("registers_nothing") + ": registers no policy");
    EXPECT_EQ(error_of(kind("init_throws")),
              kind("init_throws") + ": its init failed: no licence for this policy");
    EXPECT_EQ(lb_policy_id("flowlet"), int(LbPolicyId::flowlet));  // the built-in untouched
}

const std::string kPorts =
    "ports:\n"
    "  - {name: p0, device: net_null0, mac: '02:00:00:00:01:01', ipv4: [10.0.1.1/24]}\n"
    "  - {name: p1, device: net_null1, mac: '02:00:00:00:02:01', ipv4: [10.0.2.1/24]}\n";

std::string config_error(const std::string &text, bool load_plugins) {
    try {
        Config c = load_config_string(text, "sw.yaml");
        if (load_plugins) load_lb_plugins(c);
        check_lb_policy_names(c);
    } catch (const ConfigError &e) {
        return e.what();
    }
    return "";
}

TEST(LbPlugin, AConfigLoadsItsPluginsBeforeItsPolicyNamesAreChecked) {
    const std::string text = kPorts + "lb:\n  plugins: ['" + std::string(ROCESW_TWO_CHOICES_PLUGIN) +
                             "']\n  default_policy: two_choices\n";
    Config c = load_config_string(text, "sw.yaml");
    ASSERT_EQ(c.lb.plugins.size(), 1u);
    EXPECT_EQ(c.lb.plugins[0].name, ROCESW_TWO_CHOICES_PLUGIN);
    EXPECT_EQ(c.lb.plugins[0].where, "sw.yaml:5: lb.plugins[0]");
    EXPECT_EQ(config_error(text, true), "");
    // A relative path is the config file's directory's.
    const std::string dir = testing::TempDir() + "/lb_plugin_cfg";
    std::filesystem::create_directories(dir + "/p");
    std::ofstream(dir + "/p/x.so") << "";
    std::ofstream(dir + "/sw.yaml") << kPorts + "lb:\n  plugins: [p/x.so]\n";
    Config rel = load_config_file(dir + "/sw.yaml");
    ASSERT_EQ(rel.lb.plugins.size(), 1u);
    EXPECT_EQ(rel.lb.plugins[0].name, std::filesystem::path(dir + "/p/x.so").lexically_normal());
    std::filesystem::remove_all(dir);
}

// A bare name is the plugin of that name built with the running program (here this test, two
// levels below the build directory as every program is); a path is relative to the file's.
TEST(LbPlugin, ABareNameIsThePluginBuiltWithTheProgram) {
    EXPECT_EQ(std::filesystem::canonical(lb_plugin_file("two_choices", "/x")),
              std::filesystem::canonical(ROCESW_TWO_CHOICES_PLUGIN));
    EXPECT_EQ(lb_plugin_file("p/two_choices.so", "/x/y"), "/x/y/p/two_choices.so");
    EXPECT_EQ(lb_plugin_file("two_choices.so", "/x/y"), "/x/y/two_choices.so");
    EXPECT_EQ(lb_plugin_file("/a/b.so", "/x/y"), "/a/b.so");
    Config c = load_config_string(kPorts + "lb:\n  plugins: [two_choices]\n", "sw.yaml");
    ASSERT_EQ(c.lb.plugins.size(), 1u);
    EXPECT_EQ(std::filesystem::canonical(c.lb.plugins[0].name),
              std::filesystem::canonical(ROCESW_TWO_CHOICES_PLUGIN));
    const std::string err = config_error(kPorts + "lb:\n  plugins: [nope]\n", false);
    EXPECT_EQ(err.rfind("sw.yaml:5: lb.plugins[0]: ", 0), 0u) << err;
    EXPECT_NE(err.find("/lib/lb/plugins/rocesw_lb_nope.so: no such file"), std::string::npos) << err;
}

TEST(LbPlugin, AConfigsBadPluginEntriesAreConfigErrors) {
    EXPECT_EQ(config_error(kPorts + "lb:\n  plugins: [nope.so]\n", false),
              "sw.yaml:5: lb.plugins[0]: nope.so: no such file");
    EXPECT_EQ(config_error(kPorts + "lb:\n  plugins: ['" + std::string(ROCESW_LB_TEST_PLUGINS) +
                               "']\n", false),
              "sw.yaml:5: lb.plugins[0]: " + std::string(ROCESW_LB_TEST_PLUGINS) +
                  ": not a regular file");
    EXPECT_EQ(config_error(kPorts + "lb:\n  plugins: nope.so\n", false).rfind(
                  "sw.yaml:5: lb.plugins: expected a list", 0),
              0u);
    // A file that exists but does not load: the loader's reason, at the entry's line.
    EXPECT_EQ(config_error(kPorts + "lb:\n  default_policy: hash\n  plugins:\n    - '" +
                               kind("registers_nothing") + "'\n", true),
              "sw.yaml:7: lb.plugins[0]: " + kind("registers_nothing") + ": registers no policy");
}

}  // namespace
}  // namespace rocesw
