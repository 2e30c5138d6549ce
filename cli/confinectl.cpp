// confinectl: the command-line front end of libconfine. Everything it does goes
// through the library's public API.
//
// Exit status: 0 on success, 125 for confinectl's own failures (usage, configuration,
// a sandbox that is unavailable), like env, timeout and chroot.
#include <confine/config.hpp>
#include <confine/execute.hpp>
#include <confine/log.hpp>
#include <confine/plugins.hpp>
#include <confine/provider.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// Verdicts are kept per user between invocations; `probe` always asks afresh.
confine::ProviderOptions provider_options(bool refresh_verdicts) {
    confine::ProviderOptions options;
    if (auto file = confine::default_verdict_cache_file())
        options.verdict_cache = confine::VerdictCacheOptions{*file, std::chrono::seconds(3600), refresh_verdicts};
    return options;
}

// The configuration in effect (--config, CONFINE_CONFIG, the system file, the default)
// and a provider over it; on failure, one line said and null returned.
std::unique_ptr<confine::Provider> open_provider(const std::string& explicit_path, confine::ProviderOptions options = {}) {
    confine::ConfigLookup lookup;
    if (!explicit_path.empty()) lookup.explicit_path = explicit_path;
    auto config = confine::load_config(lookup);
    if (!config) {
        fail(config.error().message);
        return nullptr;
    }
    auto provider = confine::Provider::create(std::move(*config), std::move(options));
    if (!provider) {
        fail(provider.error().message);
        return nullptr;
    }
    return std::move(*provider);
}

json verdict_json(const confine::Candidate& c) {
    json j{{"runner", c.runner}, {"probed", c.probed}, {"cached", c.from_cache},
           {"plugin", c.plugin_file.empty() ? json(nullptr) : json(c.plugin_file.string())}};
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
    auto provider = open_provider(config_path, provider_options(true));
    if (!provider) return exit_failure;
    const std::string source = provider->config().source;
    const confine::Selection s = provider->diagnose();

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
    auto provider = open_provider(config_path);
    if (!provider) return exit_failure;
    const auto& dirs = provider->plugin_dirs();
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


// The policy flags shared by `run` and `wrap`.
struct PolicyFlags {
    std::string mode = "workspace-write";
    std::string workspace;
    std::vector<std::string> writable;

    void add_to(CLI::App* cmd) {
        cmd->add_option("--mode", mode, "read-only or workspace-write (default)")
            ->check(CLI::IsMember({"read-only", "workspace-write"}));
        cmd->add_option("--workspace", workspace, "Writable workspace directory (default: the current directory)")->type_name("DIR");
        cmd->add_option("--writable", writable, "An extra writable directory (repeatable)")->type_name("PATH");
    }

    // The policy, or a one-line reason why the flags make none.
    std::expected<confine::Policy, std::string> policy() const {
        namespace fs = std::filesystem;
        confine::Policy p;
        p.mode = mode == "read-only" ? confine::Mode::read_only : confine::Mode::workspace_write;
        std::error_code ec;
        if (p.mode == confine::Mode::read_only) {
            if (!workspace.empty()) return std::unexpected(std::string("--workspace needs --mode workspace-write"));
        } else {
            p.workspace = workspace.empty() ? fs::current_path(ec) : fs::absolute(workspace, ec);
            if (ec) return std::unexpected("cannot resolve the workspace: " + ec.message());
            p.workspace = p.workspace.lexically_normal();
        }
        for (const auto& w : writable) {
            fs::path abs = fs::absolute(w, ec).lexically_normal();
            if (ec) return std::unexpected("cannot resolve --writable " + w + ": " + ec.message());
            p.writable.push_back(abs);
        }
        return p;
    }
};

std::atomic<int> g_child_pid{0};

// Signals sent to confinectl by another process reach the command too. Those the
// terminal sends already reach it (it shares confinectl's process group).
void forward_signal(int sig, siginfo_t* info, void*) {
    const int pid = g_child_pid.load();
    if (pid > 0 && info && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) ::kill(pid, sig);
}

void install_forwarding() {
    struct sigaction sa {};
    sa.sa_sigaction = &forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) ::sigaction(sig, &sa, nullptr);
}

// Ends confinectl by the signal that ended the command.
[[noreturn]] void die_by(int sig) {
    struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the command's core, if any, is its own; not ours
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    std::_Exit(128 + sig);
}

json outcome_json(const confine::Outcome& o) {
    json j{{"schema_version", schema_version},
           {"outcome", std::string(confine::to_string(o.kind))},
           {"exit_code", o.exit_code ? json(*o.exit_code) : json(nullptr)},
           {"signal", o.signal ? json(*o.signal) : json(nullptr)},
           {"timed_out", o.timed_out},
           {"runner", o.runner.empty() ? json(nullptr) : json(o.runner)},
           {"enforcement", o.enforcement ? json(std::string(confine::to_string(*o.enforcement))) : json(nullptr)},
           {"basis", std::string(confine::to_string(o.basis))},
           {"evidence", o.evidence.empty() ? json(nullptr) : json{{"line", o.evidence}, {"rule", o.matched_rule.empty() ? json(nullptr) : json(o.matched_rule)}}},
           {"denial_hint", o.denial_hint ? json(*o.denial_hint) : json(nullptr)}};
    return j;
}

// Writes the report beside its final name and renames it into place: a reader never
// sees half a report.
std::optional<std::string> write_report_file(const std::string& path, const std::string& text) {
    namespace fs = std::filesystem;
    fs::path target(path);
    std::string temp = (target.parent_path().empty() ? fs::path(".") : target.parent_path()).string() + "/." +
                       target.filename().string() + ".XXXXXX";
    int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) return std::string(std::strerror(errno));
    bool ok = true;
    for (std::size_t off = 0; ok && off < text.size();) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) off += static_cast<std::size_t>(n);
    }
    int saved = errno;
    ok = ::close(fd) == 0 && ok;
    if (ok && ::rename(temp.c_str(), path.c_str()) == 0) return std::nullopt;
    saved = errno ? errno : saved;
    ::unlink(temp.c_str());
    return std::string(std::strerror(saved));
}

std::optional<std::string> write_report_fd(int fd, const std::string& text) {
    for (std::size_t off = 0; off < text.size();) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return std::string(std::strerror(errno));
        off += static_cast<std::size_t>(n);
    }
    return std::nullopt;
}

int cmd_run(const std::string& config_path, const PolicyFlags& flags, const std::vector<std::string>& command,
            const std::string& report_file, std::optional<int> report_fd) {
    if (command.empty()) return fail("run: no command given (confinectl run [options] -- command [args...])");
    auto policy = flags.policy();
    if (!policy) return fail(policy.error());
    if (report_fd) {
        // The command must never inherit the report's descriptor.
        int flags_fd = ::fcntl(*report_fd, F_GETFD);
        if (*report_fd < 0 || flags_fd < 0) return fail("--report-fd " + std::to_string(*report_fd) + " is not an open file descriptor");
        if (*report_fd <= 2) return fail("--report-fd must not be standard input, output or error");
        ::fcntl(*report_fd, F_SETFD, flags_fd | FD_CLOEXEC);
    }
    if (!report_file.empty()) {
        std::filesystem::path dir = std::filesystem::path(report_file).parent_path();
        if (dir.empty()) dir = ".";
        if (::access(dir.c_str(), W_OK) != 0) return fail("--report " + report_file + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
    }
    auto provider = open_provider(config_path, provider_options(false));
    if (!provider) return exit_failure;

    install_forwarding();
    confine::RunOptions options;
    options.on_started = [](int pid) { g_child_pid = pid; };
    // Without a report to write afterwards, nothing needs to stay behind the command:
    // a runner that confines in-process turns confinectl into the command itself.
    options.exec_in_place = report_file.empty() && !report_fd;
    auto outcome = confine::run(*provider, *policy, command, options);
    g_child_pid = 0;
    if (!outcome) {
        // Like env and timeout: 127 for a command that is not there, 126 for one that cannot run.
        const auto code = outcome.error().code;
        fail(outcome.error().message);
        return code == confine::ErrorCode::command_not_found ? 127 : code == confine::ErrorCode::command_not_executable ? 126 : exit_failure;
    }

    const std::string report = outcome_json(*outcome).dump() + "\n";
    std::optional<std::string> report_error;
    if (!report_file.empty()) report_error = write_report_file(report_file, report);
    if (report_fd) report_error = write_report_fd(*report_fd, report);
    if (report_error) std::fprintf(stderr, "confinectl: cannot write the report: %s\n", report_error->c_str());

    if (outcome->kind == confine::OutcomeKind::sandbox_unavailable) return fail("sandbox unavailable: " + outcome->evidence);
    if (outcome->signal) die_by(*outcome->signal);
    return outcome->exit_code.value_or(exit_failure);
}

int cmd_wrap(const std::string& config_path, const PolicyFlags& flags, const std::vector<std::string>& command) {
    if (command.empty()) return fail("wrap: no command given (confinectl wrap --json [options] -- command [args...])");
    auto policy = flags.policy();
    if (!policy) return fail(policy.error());
    auto provider = open_provider(config_path, provider_options(false));
    if (!provider) return exit_failure;
    auto wrapped = provider->wrap(*policy, command);
    if (!wrapped) {
        if (wrapped.error().code == confine::ErrorCode::sandbox_unavailable) return fail("sandbox unavailable: " + wrapped.error().message);
        return fail(wrapped.error().message);
    }
    const auto& w = *wrapped;
    json attestation{{"kind", w.attestation.kind == confine::Attestation::Kind::exec ? "exec" : "none"}};
    if (w.attestation.kind == confine::Attestation::Kind::exec) attestation["exec_index"] = w.attestation.exec_index;
    json j{{"schema_version", schema_version},
           {"runner", w.runner},
           {"argv", w.argv},
           {"enforcement", std::string(confine::to_string(w.enforcement))},
           {"denial_signatures", w.denial_signatures},
           {"failure_rule",
            {{"allowed_exit_codes", w.failure_rule.allowed_exit_codes},
             {"fatal_signatures", w.failure_rule.fatal_signatures},
             {"informational_lines", w.failure_rule.informational_lines}}},
           {"attestation", attestation}};
    std::cout << j.dump(2) << '\n';
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

    PolicyFlags wrap_policy;
    std::vector<std::string> wrap_command;
    auto* wrap = app.add_subcommand("wrap", "Print, as JSON, how a command would be wrapped, for hosts that spawn it themselves");
    wrap->add_option("--config", config_path, "Configuration file")->type_name("FILE");
    wrap->add_flag("--json", json_output, "JSON output (the only format)");
    wrap_policy.add_to(wrap);
    wrap->add_option("command", wrap_command, "The command and its arguments, after --");

    PolicyFlags run_policy;
    std::vector<std::string> run_command;
    std::string report_file;
    std::optional<int> report_fd;
    auto* run = app.add_subcommand("run", "Run a command confined: confinectl run [options] -- command [args...]");
    run->add_option("--config", config_path, "Configuration file")->type_name("FILE");
    run_policy.add_to(run);
    auto* report_file_opt = run->add_option("--report", report_file, "Write a JSON report of the outcome to FILE")->type_name("FILE");
    run->add_option("--report-fd", report_fd, "Write the JSON report to descriptor N (not inherited by the command)")
        ->type_name("N")
        ->excludes(report_file_opt);
    run->add_option("command", run_command, "The command and its arguments, after --");

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
        if (run->parsed()) return cmd_run(config_path, run_policy, run_command, report_file, report_fd);
        if (wrap->parsed()) return cmd_wrap(config_path, wrap_policy, wrap_command);
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
    return fail("no command given (see confinectl --help)");
}
