// confinectl: the command-line front end of libconfine. Everything it does goes
// through the library's public API.
//
// Exit status: 0 on success, 125 for confinectl's own failures (usage, configuration,
// a sandbox that is unavailable), like env, timeout and chroot.
#include <confine/config.hpp>
#include <confine/log.hpp>
#include <confine/plugins.hpp>
#include <confine/provider.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

namespace {

constexpr int exit_failure = 125;
constexpr int schema_version = 1;
using nlohmann::json;

// confinectl's own diagnostics: one line, prefixed, on stderr.
int fail(const std::string& message) {
    std::string line = message;
    for (char& c : line)
        if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(stderr, "confinectl: %s\n", line.c_str());
    return exit_failure;
}

std::optional<confine::Config> load(const std::string& explicit_path, int& status) {
    confine::ConfigLookup lookup;
    if (!explicit_path.empty()) lookup.explicit_path = explicit_path;
    auto config = confine::load_config(lookup);
    if (!config) {
        status = fail(config.error().message);
        return std::nullopt;
    }
    return std::move(*config);
}

json verdict_json(const confine::Candidate& c) {
    json j{{"runner", c.runner}, {"probed", c.probed}, {"plugin", c.plugin_file.empty() ? json(nullptr) : json(c.plugin_file.string())}};
    if (c.verdict) {
        j["verdict"] = std::string(confine::to_string(c.verdict->kind));
        j["reason"] = c.verdict->reason;
    } else {
        j["verdict"] = nullptr;
        j["reason"] = "selected without probing";
    }
    return j;
}

int cmd_probe(const std::string& config_path, bool as_json) {
    int status = 0;
    auto config = load(config_path, status);
    if (!config) return status;
    const std::string source = config->source;
    auto provider = confine::Provider::create(std::move(*config));
    if (!provider) return fail(provider.error().message);
    const confine::Selection s = (*provider)->diagnose();

    if (as_json) {
        json j{{"schema_version", schema_version},
               {"platform", s.platform},
               {"config", source},
               {"chain", s.chain},
               {"asserted", s.asserted},
               {"usable", s.usable()}};
        if (s.asserted) j["runner_command"] = s.runner_command;
        j["runners"] = json::array();
        for (const auto& c : s.candidates) j["runners"].push_back(verdict_json(c));
        j["selected"] = s.runner ? json(*s.runner) : json(nullptr);
        j["enforcement"] = s.enforcement ? json(std::string(confine::to_string(*s.enforcement))) : json(nullptr);
        j["error"] = s.failure ? json{{"code", confine::error_code_name(s.failure->code)}, {"message", s.failure->message}} : json(nullptr);
        std::cout << j.dump(2) << '\n';
    } else {
        std::cout << "platform: " << s.platform << '\n' << "config: " << source << '\n';
        if (s.asserted) {
            std::cout << "runner_command:";
            for (const auto& a : s.runner_command) std::cout << ' ' << a;
            std::cout << " (asserted by the operator, not probed)\n";
        } else {
            std::cout << "chain:";
            for (const auto& r : s.chain) std::cout << ' ' << r;
            std::cout << (s.chain.empty() ? " (none)\n" : "\n");
        }
        for (const auto& c : s.candidates) {
            std::cout << "  " << c.runner << ": ";
            if (c.verdict) std::cout << confine::to_string(c.verdict->kind);
            else std::cout << "selected without probing";
            if (c.verdict && !c.verdict->reason.empty()) std::cout << ": " << c.verdict->reason;
            if (!c.plugin_file.empty()) std::cout << " [" << c.plugin_file.string() << ']';
            std::cout << '\n';
        }
        if (s.runner) {
            std::cout << "selected: " << *s.runner;
            if (s.enforcement) std::cout << " (enforcement " << confine::to_string(*s.enforcement) << ')';
            std::cout << '\n';
        } else {
            std::cout << "selected: none\n";
        }
    }
    std::cout.flush();
    if (!s.usable()) return fail("sandbox unavailable: " + s.failure->message);
    return 0;
}

int cmd_plugins(const std::string& config_path, bool as_json) {
    int status = 0;
    auto config = load(config_path, status);
    if (!config) return status;
    auto provider = confine::Provider::create(std::move(*config));
    if (!provider) return fail(provider.error().message);
    const auto& dirs = (*provider)->plugin_dirs();
    const auto entries = confine::PluginSearch(dirs).scan();
    std::size_t refused = 0;
    json list = json::array();
    for (const auto& e : entries) {
        json j{{"file", e.file.string()}, {"runner", e.runner_name}};
        if (e.loaded) {
            j["status"] = "ok";
            j["version"] = e.loaded->version;
            j["abi"] = std::to_string(e.loaded->abi_major) + "." + std::to_string(e.loaded->abi_minor);
            j["summary"] = e.loaded->summary;
            if (!as_json)
                std::cout << e.runner_name << "  " << e.loaded->version << "  ABI " << j["abi"].get<std::string>() << "  "
                          << e.file.string() << "  " << e.loaded->summary << '\n';
        } else {
            ++refused;
            j["status"] = "refused";
            j["error"] = {{"code", confine::error_code_name(e.loaded.error().code)}, {"message", e.loaded.error().message}};
            if (!as_json)
                std::cout << e.runner_name << "  REFUSED  " << confine::error_code_name(e.loaded.error().code) << ": "
                          << e.loaded.error().message << '\n';
        }
        list.push_back(std::move(j));
    }
    if (as_json) {
        json dir_list = json::array();
        for (const auto& d : dirs) dir_list.push_back(d.string());
        std::cout << json{{"schema_version", schema_version}, {"plugin_dirs", dir_list}, {"plugins", list}}.dump(2) << '\n';
    } else if (entries.empty()) {
        std::cout << "no plugins found\n";
    }
    if (!as_json) {
        std::cout << "searched:";
        for (const auto& d : dirs) std::cout << ' ' << d.string();
        std::cout << '\n';
    }
    std::cout.flush();
    if (refused) return fail(std::to_string(refused) + " plugin file(s) refused");
    return 0;
}

int cmd_check_config(const std::string& file) {
    std::expected<confine::Config, confine::Error> config =
        file.empty() ? confine::load_config() : confine::load_config_file(file);
    if (!config) return fail(config.error().message);
    const std::string source = config->source;
    const auto runners = config->runners;
    auto provider = confine::Provider::create(std::move(*config));
    if (!provider) return fail(provider.error().message);
    // Runner settings are judged by their own plugins, where this machine has them.
    confine::PluginSearch search((*provider)->plugin_dirs());
    for (const auto& [name, table] : runners) {
        auto located = search.locate(name);
        if (!located) {
            if (located.error().code != confine::ErrorCode::plugin_not_found) return fail(located.error().message);
            std::cout << "note: " << confine::to_string(table.where) << ": runner." << name
                      << ": no plugin here to check its settings against\n";
            continue;
        }
        auto plugin = confine::load_plugin(*located, name);
        if (!plugin) return fail(plugin.error().message);
        auto runner = (*plugin)->create_runner(&table);
        if (!runner) return fail(runner.error().message);
    }
    std::cout << source << ": valid\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    confine::set_log_program_name("confinectl");
    CLI::App app{"Runs commands confined by the platform's sandbox, failing closed.", "confinectl"};
    app.set_version_flag("--version", CONFINE_VERSION);
    app.require_subcommand(1);
    bool verbose = false;
    app.add_flag("-v,--verbose", verbose, "Log what confine does, to stderr");

    std::string config_path;
    bool json_output = false;
    auto* probe = app.add_subcommand("probe", "Show the platform's runner chain, each probed runner's verdict, and the selection");
    probe->add_option("--config", config_path, "Configuration file")->type_name("FILE");
    probe->add_flag("--json", json_output, "Machine-readable output");
    auto* plugins = app.add_subcommand("plugins", "List the plugins found, where, their ABI, and why any was refused");
    plugins->add_option("--config", config_path, "Configuration file")->type_name("FILE");
    plugins->add_flag("--json", json_output, "Machine-readable output");
    std::string check_file;
    auto* check = app.add_subcommand("check-config", "Validate a configuration file (default: the one confine would use)");
    check->add_option("FILE", check_file, "Configuration file")->type_name("FILE");

    // Name an unknown command plainly (CLI11 would only say that one is required).
    auto known = [&](const std::string& name) {
        return !app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == name; }).empty();
    };
    if (argc > 1 && argv[1][0] != '-' && !known(argv[1]))
        return fail(std::string("unknown command '") + argv[1] + "' (see confinectl --help)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        return fail(std::string(e.what()) + " (see confinectl --help)");
    }
    confine::set_log_level(verbose ? confine::LogLevel::debug : confine::LogLevel::warn);
    try {
        if (probe->parsed()) return cmd_probe(config_path, json_output);
        if (plugins->parsed()) return cmd_plugins(config_path, json_output);
        if (check->parsed()) return cmd_check_config(check_file);
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
    return fail("no command given (see confinectl --help)");
}
