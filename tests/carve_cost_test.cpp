// What the deny list costs beyond itself. Landlock grants a directory with everything
// beneath it, so a denied path beneath a read-only root is carved around: each directory
// on the way to it is granted entry by entry and cannot itself be listed. The runner
// names exactly those directories in its `open` text ("cost: ..."); bubblewrap, which
// masks the denied path, costs nothing. Each case runs the real runner and judges what
// the command could list against what the runner said.
#include "support.hpp"
#include "ways.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>

namespace fs = std::filesystem;
using test::name_of;
using test::Way;

namespace {

constexpr std::string_view cost_head = "cost: ";

// The cost part of an `open` text: the directories it names, in its order.
std::vector<std::string> carved_named(const std::string& open) {
    const std::size_t at = open.find(cost_head);
    if (at == std::string::npos) return {};
    const std::size_t list = open.find(": ", at + cost_head.size());
    REQUIRE(list != std::string::npos);
    std::vector<std::string> out;
    std::string rest = open.substr(list + 2, open.find("; ", list) - (list + 2));
    for (std::size_t from = 0; from <= rest.size();) {
        const std::size_t comma = rest.find(", ", from);
        out.push_back(rest.substr(from, comma - from));
        if (comma == std::string::npos) break;
        from = comma + 2;
    }
    return out;
}

// "listed DIR" or "refused DIR" for each of `dirs`, as the command saw them.
std::string listing_script(const std::vector<fs::path>& dirs) {
    std::string script;
    for (const auto& d : dirs) script += "if ls -a '" + d.string() + "' >/dev/null 2>&1; then echo 'listed " + d.string() + "'; else echo 'refused " + d.string() + "'; fi; ";
    return script;
}

void attempt_carve_cost(Way way, bool unprivileged) {
    if (unprivileged) test::require_user_switch();
    test::Sandbox box(way);
    test::Tree tree(false);
    const fs::path root = fs::canonical(tree.root.path()), home = root / "home", denied = home / ".ssh";
    fs::create_directories(denied);
    fs::create_directories(home / "project");
    test::write_file(denied / "id_test", "key\n", fs::perms(0600));
    test::write_file(box.config, test::way_config(way) + "[policy]\ndeny_read = [\"" + denied.string() + "\"]\n");
    if (unprivileged) {
        for (const auto& entry : fs::recursive_directory_iterator(tree.root.path())) REQUIRE(::lchown(entry.path().c_str(), test::nobody, test::nobody) == 0);
        REQUIRE(::chown(tree.root.path().c_str(), test::nobody, test::nobody) == 0);
    }
    // Every directory from / down to the denied one's parent, and two that are granted
    // whole: a sibling beneath the carved home, and the workspace.
    std::vector<fs::path> ancestors;
    for (fs::path up = home;; up = up.parent_path()) {
        ancestors.insert(ancestors.begin(), up);
        if (up == up.root_path()) break;
    }
    std::vector<fs::path> probed = ancestors;
    probed.insert(probed.end(), {home / "project", tree.ws});

    const fs::path report = root / "report.json";
    std::vector<std::string> args{"-v", "run", "--config", box.config.string(), "--workspace", tree.ws.string()};
    if (way == Way::landlock_forked) args.insert(args.end(), {"--report", report.string()});
    args.insert(args.end(), {"--", "/bin/sh", "-c", listing_script(probed) + "cat '" + (denied / "id_test").string() + "' 2>/dev/null || echo unread"});
    std::vector<std::string> prefix = test::as_user(unprivileged);
    prefix.insert(prefix.end(), {"/usr/bin/env", "-u", "SSH_AUTH_SOCK"});  // the caller's agent socket would be denied too
    auto r = box.confine.run(args, {}, prefix);
    INFO(name_of(way) << (unprivileged ? ", as nobody" : ", as root") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::EndsWith("unread\n"));

    const std::string open_line = "confinectl: left open by ";
    const std::size_t at = r.err.find(open_line);
    const std::string open = at == std::string::npos ? std::string() : r.err.substr(at, r.err.find('\n', at) - at);
    std::vector<std::string> expected;
    if (test::is_landlock(way))
        for (const auto& a : ancestors) expected.push_back(a.string());
    std::sort(expected.begin(), expected.end());
    CHECK(carved_named(open) == expected);
    // What the runner named is what the command could not list, and nothing else.
    for (const auto& d : probed) {
        const bool carved = std::find(expected.begin(), expected.end(), d.string()) != expected.end();
        CHECK_THAT(r.out, Catch::Contains((carved ? "refused " : "listed ") + d.string() + "\n"));
    }
    if (way == Way::landlock_forked) {
        const auto json = nlohmann::json::parse(test::read_file(report));
        CHECK(carved_named(json["dimensions"]["open"].get<std::string>()) == expected);
        CHECK(json["dimensions"]["read"] == "full");  // a cost, not a gap
    }
}

}  // namespace

#define CARVE_COST_CASES(WAY, TAG, TAGS)                                                                                               \
    TEST_CASE("the runner names each directory the deny list keeps from being listed, and no other, through " TAG,                   \
              "[e2e][secrets][carve]" TAGS) {                                                                                        \
        attempt_carve_cost(WAY, false);                                                                                              \
        attempt_carve_cost(WAY, true);                                                                                               \
    }

CARVE_COST_CASES(Way::bwrap, "the bwrap plugin", "[linux-only]")
CARVE_COST_CASES(Way::landlock_launcher, "landlock-run", "[linux-only]")
CARVE_COST_CASES(Way::landlock_forked, "landlock in a forked child", "[linux-only]")
CARVE_COST_CASES(Way::landlock_in_place, "landlock in place", "[linux-only]")
