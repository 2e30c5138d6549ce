// The ways a command is confined on Linux, end to end, for the suites that try each:
// the bwrap plugin; an operator's asserted runner_command of real bubblewrap; Landlock
// through its launcher, applied in a forked child, and applied by confinectl to itself
// before it execs the command in place.
#pragma once

#include "support.hpp"

#include <string>
#include <vector>

namespace test {

enum class Way { bwrap, runner_command, landlock_launcher, landlock_forked, landlock_in_place };

inline std::string name_of(Way w) {
    switch (w) {
    case Way::bwrap: return "the bwrap plugin";
    case Way::runner_command: return "an asserted runner_command of bubblewrap";
    case Way::landlock_launcher: return "landlock through landlock-run";
    case Way::landlock_forked: return "landlock applied in a forked child";
    case Way::landlock_in_place: return "landlock applied in place";
    }
    return "?";
}

inline bool is_landlock(Way w) { return w != Way::bwrap && w != Way::runner_command; }

// Skips (see skip_test) unless `w` can confine here.
inline void require_way(Way w) {
    if (is_landlock(w)) test::require_landlock();
    else test::require_bwrap();
}

// The configuration that selects way `w`, with `enforcement` (lines of a
// [policy.enforcement] table, or none). The forked and the in-place Landlock ways differ
// by how confinectl is run (in place without --report) and by the lifetime the
// configuration accepts: in place nothing is left to end what the command starts, which
// only `lifetime = "best-effort"` lets confinectl do.
inline std::string way_config(Way w, const std::string& enforcement = {}) {
    std::string text;
    switch (w) {
    case Way::bwrap: text = "[platform.linux]\nchain = [\"bwrap\"]\n"; break;
    case Way::runner_command: text = "[platform.linux]\nrunner_command = [\"/usr/bin/bwrap\"]\nrunner_failure_signatures = [\"bwrap: \"]\n"; break;
    case Way::landlock_launcher: text = "[platform.linux]\nchain = [\"landlock\"]\n[runner.landlock]\nin_process = false\n"; break;
    case Way::landlock_forked:
    case Way::landlock_in_place: text = "[platform.linux]\nchain = [\"landlock\"]\n"; break;
    }
    const std::string lifetime = w == Way::landlock_in_place && enforcement.find("lifetime") == std::string::npos ? "lifetime = \"best-effort\"\n" : "";
    if (!lifetime.empty() || !enforcement.empty()) text += "[policy.enforcement]\n" + lifetime + enforcement;
    return text;
}

// confinectl configured for one way, in a private installed tree.
struct Sandbox {
    test::Installed confine;
    fs::path config = confine.scratch("escape.toml");
    Way way;

    explicit Sandbox(Way w) : way(w) {
        require_way(w);
        test::write_file(config, way_config(w));
    }

    // confinectl's argv for running `command` in `tree`'s workspace (or read-only).
    std::vector<std::string> args(const Tree& tree, const std::vector<std::string>& command, bool read_only = false) const {
        std::vector<std::string> a{"run", "--config", config.string()};
        if (read_only) a.insert(a.end(), {"--mode", "read-only"});
        else a.insert(a.end(), {"--workspace", tree.ws.string()});
        // A report to write afterwards keeps confinectl in front: the forked path.
        if (way == Way::landlock_forked) a.insert(a.end(), {"--report", (tree.root / "report.json").string()});
        a.push_back("--");
        a.insert(a.end(), command.begin(), command.end());
        return a;
    }

    test::Result sh(const Tree& tree, const std::string& script, bool unprivileged, bool read_only = false) const {
        return confine.run(args(tree, {"/bin/sh", "-c", script}, read_only), {}, as_user(unprivileged));
    }
};

}  // namespace test
