// The usage example at the top of confine/sdk/plugin.hpp, built as a plugin: from its
// #include on, this file and that comment are the same text (tests/sdk_testing_test.cpp
// holds them to it).
#include <confine/sdk/plugin.hpp>
namespace sdk = confine::sdk;

class MyRunner final : public sdk::Runner {
public:
  MyRunner(sdk::Host host, std::vector<std::string> prefix) : host_(host), prefix_(std::move(prefix)) {}
  // Each reader's error names its key: confine reports it at that key's file:line:column.
  static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error>
  create(sdk::Host host, const sdk::RunnerConfig& config) {
    if (auto bad = config.settings.reject_unknown({"program", "options"})) return std::unexpected(*bad);
    auto program = config.settings.absolute_path_or("program", "/usr/bin/x");
    if (!program) return std::unexpected(program.error());
    auto options = config.settings.strings_or("options", {});
    if (!options) return std::unexpected(options.error());
    std::vector<std::string> prefix{*program};
    prefix.insert(prefix.end(), options->begin(), options->end());
    return std::make_unique<MyRunner>(host, std::move(prefix));
  }
  sdk::Verdict probe(std::uint32_t timeout_ms) override {
    std::vector<std::string> argv = prefix_;
    argv.insert(argv.end(), {"--", "true"});
    return sdk::verdict_of(host_.run_probe(argv, timeout_ms), "x");
  }
  std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy& policy,
                                                 std::span<const std::string> argv) override {
    if (policy.mode != sdk::Mode::read_only) return std::unexpected(sdk::unsupported("read-only only"));
    sdk::WrapResult r;
    r.argv = prefix_;
    r.argv.push_back("--");
    r.argv.insert(r.argv.end(), argv.begin(), argv.end());
    return r;
  }
private:
  sdk::Host host_;
  std::vector<std::string> prefix_;
};
CONFINE_RUNNER_PLUGIN(MyRunner, "my", "1.0.0", "wraps commands in my mechanism")
