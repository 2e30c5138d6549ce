// A provider whose only runner is the fake Landlock-shaped plugin (tests/fake_plugins)
// wrapping commands in the fake landlock-run launcher, or an operator's runner_command
// naming that launcher; with a workspace of its own. For the executor's tests.
#pragma once

#include "support.hpp"

#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace test {

// A provider whose only runner wraps commands in the fake landlock-run launcher:
// through a plugin shaped like the Landlock runner (with or without exec
// attestation), or as an operator's runner_command.
class Rig {
public:
    enum class Kind { plugin, plugin_attested, runner_command, plugin_showing_workdir };

    explicit Rig(Kind kind, const std::string& launcher = FAKE_LAUNCHER, int exec_index = 2) {
        install_fake(plugins_.path(), "usable");
        std::string text;
        if (kind == Kind::runner_command) {
            text = "[platform.linux]\nrunner_command = [\"" + launcher + "\"]\nrunner_failure_signatures = [\"landlock-run: landlock is not enforced\"]\n";
        } else {
            text = "[platform.linux]\nchain = [\"usable\"]\n[runner.usable]\nlauncher = \"" + launcher + "\"\nattest = " +
                   (kind == Kind::plugin_attested ? "true" : "false") + "\nexec_index = " + std::to_string(exec_index) + "\n" +
                   (kind == Kind::plugin_showing_workdir ? "show_workdir = true\n" : "");
        }
        auto p = confine::Provider::create(config_from(text), {.platform = "linux", .builtin_plugin_dirs = std::vector<std::filesystem::path>{plugins_.path()}});
        REQUIRE(p);
        provider_ = std::move(*p);
    }
    const confine::Provider& provider() const { return *provider_; }
    confine::PolicyRequest policy() const { return {confine::Mode::workspace_write, workspace_.path()}; }
    const std::filesystem::path& workspace() const { return workspace_.path(); }

private:
    TempDir plugins_, workspace_;
    std::unique_ptr<confine::Provider> provider_;
};

}  // namespace test
