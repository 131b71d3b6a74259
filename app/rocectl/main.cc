// rocectl: asks a running roceswd over its control socket and prints the answer.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "telemetry/control_client.h"

#ifndef ROCESW_VERSION
#define ROCESW_VERSION "unknown"
#endif

namespace {

// Exit codes, stable for scripts.
constexpr int kExitOk = 0;
constexpr int kExitCommandError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoServer = 3;

constexpr const char *kUsage =
    "usage: rocectl [--socket PATH | --name NAME] [--json] show WHAT [--all]\n"
    "       rocectl [--socket PATH | --name NAME] [--json] call CMD [ARGS...]\n"
    "       rocectl --help | --version\n"
    "\n"
    "WHAT: ports | routes | neighbours | drops [--all] | queues [PORT...] | workers | info | help\n"
    "\n"
    "  --socket PATH  control socket of the switch (default: $ROCESW_SOCKET, else\n"
    "                 /run/rocesw/rocesw.sock)\n"
    "  --name NAME    the switch named NAME: /run/rocesw/NAME.sock\n"
    "  --json         print the reply's data as JSON instead of a table\n"
    "  --all          drops: list every counter, zeros included\n"
    "\n"
    "call sends CMD with ARGS as they are; 'rocectl call help' lists the commands.\n"
    "\n"
    "exit status: 0 ok, 1 the switch reported an error, 2 usage error,\n"
    "             3 no switch answered (cannot connect, connection lost, 5 s timeout)\n";

int usage_error(const std::string &msg) {
    std::cerr << "rocectl: " << msg << "\n" << kUsage;
    return kExitUsage;
}

// Takes the value of "--opt VALUE" or "--opt=VALUE" at argv[*i]; false if the option is not opt.
bool option_value(const std::vector<std::string> &argv, size_t *i, const std::string &opt,
                  std::string *value, std::string *err) {
    const std::string &a = argv[*i];
    if (a == opt) {
        if (*i + 1 >= argv.size()) {
            *err = opt + " needs a value";
            return true;
        }
        *value = argv[++*i];
        if (value->empty()) *err = opt + " needs a non-empty value";
        return true;
    }
    if (a.compare(0, opt.size() + 1, opt + "=") == 0) {
        *value = a.substr(opt.size() + 1);
        if (value->empty()) *err = opt + " needs a non-empty value";
        return true;
    }
    return false;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string socket_path, name, err;
    bool json_out = false;
    size_t i = 0;
    // Global options come before the verb.
    for (; i < args.size(); i++) {
        const std::string &a = args[i];
        if (a == "--help" || a == "-h") {
            std::cout << kUsage;
            return kExitOk;
        }
        if (a == "--version" || a == "-V") {
            std::cout << "rocectl " << ROCESW_VERSION << "\n";
            return kExitOk;
        }
        if (a == "--json" || a == "-j") {
            json_out = true;
            continue;
        }
        std::string v;
        if (option_value(args, &i, "--socket", &v, &err)) {
            if (!err.empty()) return usage_error(err);
            socket_path = v;
            continue;
        }
        if (option_value(args, &i, "--name", &v, &err)) {
            if (!err.empty()) return usage_error(err);
            if (v.find('/') != std::string::npos) return usage_error("--name must not contain '/'");
            name = v;
            continue;
        }
        if (!a.empty() && a[0] == '-') return usage_error("unknown option '" + a + "'");
        break;
    }
    if (!socket_path.empty() && !name.empty())
        return usage_error("give --socket or --name, not both");
    if (i >= args.size()) return usage_error("missing command");

    std::string cmd;
    std::vector<std::string> cmd_args;
    const std::string verb = args[i++];
    if (verb == "show") {
        if (i >= args.size()) return usage_error("show: missing what to show");
        cmd = args[i++];
        if (cmd == "neighbors") cmd = "neighbours";
        static const std::vector<std::string> known = {"ports",   "routes", "neighbours", "drops",
                                                       "workers", "info",   "help",       "queues"};
        if (std::find(known.begin(), known.end(), cmd) == known.end())
            return usage_error("show: unknown '" + cmd + "'");
        for (; i < args.size(); i++) {
            if (args[i] == "--json" || args[i] == "-j") {
                json_out = true;
            } else if (args[i] == "--all" && cmd == "drops") {
                cmd_args.push_back("all");
            } else if (cmd == "queues" && args[i][0] != '-') {
                cmd_args.push_back(args[i]);  // port names
            } else {
                return usage_error("show " + cmd + ": unexpected '" + args[i] + "'");
            }
        }
    } else if (verb == "call") {
        if (i >= args.size()) return usage_error("call: missing command");
        cmd = args[i++];
        cmd_args.assign(args.begin() + static_cast<long>(i), args.end());
    } else {
        return usage_error("unknown command '" + verb + "'");
    }

    if (socket_path.empty())
        socket_path =
            name.empty() ? rocesw::default_control_socket() : rocesw::control_socket_for_name(name);

    rocesw::ControlClient client;
    if (!client.connect(socket_path, &err)) {
        std::cerr << "rocectl: " << err << "; is roceswd running?\n";
        return kExitNoServer;
    }
    rocesw::ControlReply reply;
    if (client.request(cmd, cmd_args, &reply, &err) != rocesw::ControlStatus::kOk) {
        std::cerr << "rocectl: " << err << "\n";
        return kExitNoServer;
    }
    if (!reply.ok) {
        std::cerr << "rocectl: " << reply.error << "\n";
        return kExitCommandError;
    }
    if (json_out) {
        std::cout << reply.data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    } else {
        std::cout << rocesw::format_table(cmd, reply.data);
    }
    std::cout.flush();
    return std::cout ? kExitOk : kExitCommandError;
}
