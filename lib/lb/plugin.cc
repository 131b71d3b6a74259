#include "lb/plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "config/config_error.h"

namespace rocesw {

namespace {

std::string abi_text(const LbPluginAbi &a) {
    return "interface v" + std::to_string(a.version) + ", PathRequest " +
           std::to_string(a.path_request) + " B, LbView " + std::to_string(a.lb_view) +
           " B, EcmpGroup " + std::to_string(a.ecmp_group) + " B, LbMember " +
           std::to_string(a.lb_member) + " B, LbSettings " + std::to_string(a.lb_settings) +
           " B, " + std::to_string(a.max_ports) + " ports";
}

struct Loaded {
    std::mutex mu;
    std::map<std::string, std::vector<std::string>> by_file;  // canonical path -> its policies
};

Loaded &loaded() {
    static Loaded l;
    return l;
}

struct Adding {
    std::vector<std::string> names;
    std::string error;  // the last add() refused
};

bool add_policy(void *self, const std::string &name, LbPolicyFactory factory, std::string *err) {
    try {
        register_lb_policy(name, std::move(factory));
    } catch (const std::exception &e) {
        static_cast<Adding *>(self)->error = e.what();
        if (err) *err = e.what();
        return false;
    }
    static_cast<Adding *>(self)->names.push_back(name);
    return true;
}

}  // namespace

std::vector<std::string> load_lb_plugin(const std::string &path) {
    std::error_code ec;
    const std::filesystem::path canon = std::filesystem::canonical(path, ec);
    if (ec) throw std::runtime_error(path + ": " + ec.message());
    Loaded &l = loaded();
    std::lock_guard lk(l.mu);
    if (auto it = l.by_file.find(canon.string()); it != l.by_file.end()) return it->second;

    void *h = dlopen(canon.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        throw std::runtime_error(path + ": cannot load: " + (e ? e : "unknown error"));
    }
    // From here on the object stays loaded: a failed plugin's process exits (config error), and
    // a policy's code must outlive every worker that holds an instance.
    const auto *abi = static_cast<const LbPluginAbi *>(dlsym(h, "rocesw_lb_plugin_abi"));
    auto *init =
        reinterpret_cast<bool (*)(LbPluginContext *)>(dlsym(h, "rocesw_lb_plugin_init"));
    if (!abi || !init)
        throw std::runtime_error(path + ": not a rocesw load-balancing plugin (no " +
                                 (abi ? "rocesw_lb_plugin_init" : "rocesw_lb_plugin_abi") +
                                 "; plugins are built with ROCESW_LB_PLUGIN, lb/plugin.h)");
    if (!(*abi == lb_plugin_abi()))
        throw std::runtime_error(path + ": built for another rocesw (" + abi_text(*abi) +
                                 "; this one: " + abi_text(lb_plugin_abi()) +
                                 "): rebuild it in this tree");
    Adding adding;
    LbPluginContext ctx(add_policy, &adding);
    bool ok = false;
    std::string why;
    try {
        ok = init(&ctx);
    } catch (const std::exception &e) {
        why = e.what();
    }
    if (!ok && why.empty()) why = adding.error;
    if (!ok)
        throw std::runtime_error(path + ": its init failed" + (why.empty() ? "" : ": " + why) +
                                 (adding.names.empty() ? "" : " (after registering some policies)"));
    if (adding.names.empty()) throw std::runtime_error(path + ": registers no policy");
    l.by_file.emplace(canon.string(), adding.names);
    return adding.names;
}

void load_lb_plugins(const Config &cfg) {
    for (const NameRef &p : cfg.lb.plugins) {
        try {
            load_lb_plugin(p.name);
        } catch (const std::runtime_error &e) {
            throw ConfigError(p.where + ": " + e.what());
        }
    }
}

}  // namespace rocesw
