// What a selection takes from the verdict cache: the verdict and the levels its runner's
// wrap of the sample command reported, so that a selection from the cache neither
// probes nor wraps, nor loads a plugin later in the chain; and when none of it is used.
#include "support.hpp"

#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <functional>

namespace fs = std::filesystem;

namespace {

using test::cached_provider;
using test::chain;

// What a selection came to: the runner, the enforcement, and each candidate's verdict.
std::string outcome(const confine::Selection& s) {
    std::string out = s.runner ? *s.runner : "(none)";
    out += s.enforcement ? " " + std::string(confine::to_string(*s.enforcement)) : " (no enforcement)";
    for (const auto& c : s.candidates)
        out += "; " + c.runner + ": " + (c.verdict ? std::string(confine::to_string(c.verdict->kind)) + " " + c.verdict->reason : "(none)");
    if (s.failure) out += "; failure: " + s.failure->message;
    return out;
}

}  // namespace

TEST_CASE("a selection from a cached verdict wraps no sample and comes to what a fresh probe comes to", "[selection][cache][levels]") {
    test::TempDir dir, home;
    test::FakeLog log;
    for (auto n : {"unusable", "usable"}) test::install_fake(dir.path(), n);
    const fs::path cache = home / "verdicts";
    // The runner's levels decide: partial network and processes make the run partial, and a
    // minimum of full for the network skips it with that reason.
    const std::string partial = chain({"unusable", "usable"});
    const std::string strict = partial + "[policy.enforcement]\nnetwork = \"full\"\n";
    for (const std::string& text : {partial, strict}) {
        INFO(text);
        const std::string fresh = outcome(cached_provider(dir, text, cache, std::chrono::seconds(3600), true)->selection());
        const std::size_t probes = log.count("probe usable"), wraps = log.count("wrap usable");
        CHECK(wraps >= 1);
        auto again = cached_provider(dir, text, cache);
        const auto& s = again->selection();
        REQUIRE(s.candidates.size() == 2);
        CHECK(s.candidates[1].from_cache);
        CHECK(outcome(s) == fresh);
        CHECK(log.count("probe usable") == probes);
        CHECK(log.count("wrap usable") == wraps);  // the levels came from the cache
    }
    CHECK(outcome(cached_provider(dir, partial, cache)->selection()) == "usable partial; unusable: unusable fake unusable says no; usable: full ");
    CHECK_THAT(outcome(cached_provider(dir, strict, cache)->selection()),
               Catch::Contains("usable: unusable runner 'usable' enforces network at level partial, below the minimum full"));

    // Another sample (the network allowed, deny_read and protect asked): the verdict still
    // holds, the levels are taken again by a wrap, once.
    const std::string other = "[policy]\nnetwork = \"allow\"\n" + partial;
    const std::size_t probes = log.count("probe usable"), wraps = log.count("wrap usable");
    const std::string fresh = outcome(cached_provider(dir, other, cache)->selection());
    CHECK(log.count("probe usable") == probes);
    CHECK(log.count("wrap usable") == wraps + 1);
    CHECK(outcome(cached_provider(dir, other, cache)->selection()) == fresh);
    CHECK(log.count("wrap usable") == wraps + 1);
}

TEST_CASE("the levels kept with a verdict go with it: a changed plugin file, program, setting or time limit is probed and wrapped again",
          "[selection][cache][levels]") {
    test::TempDir dir, home, bin;
    test::FakeLog log;
    test::install_fake(dir.path(), "unusable");
    test::install_fake(dir.path(), "runner");
    const fs::path probe_program = bin / "probe-tool";
    test::write_file(probe_program, "#!/bin/sh\nexit 0\n", fs::perms(0755));
    const fs::path cache = home / "verdicts";
    const std::string text = chain({"unusable", "runner"}) + "[runner.runner]\ncommand = [\"" + probe_program.string() + "\"]\n";
    auto counts = [&log] { return std::pair{log.count("probe runner"), log.count("wrap runner")}; };
    CHECK(cached_provider(dir, text, cache)->selection().usable());
    CHECK(counts() == std::pair<std::size_t, std::size_t>{1, 1});
    CHECK(cached_provider(dir, text, cache)->selection().usable());
    CHECK(counts() == std::pair<std::size_t, std::size_t>{1, 1});
    // Each of what the verdict is kept by, changed: probed and wrapped afresh, then kept.
    const std::vector<std::pair<std::string, std::function<std::string()>>> changes{
        {"the plugin file", [&] { test::install_fake(dir.path(), "runner"); return text; }},
        {"a program the probe ran", [&] { test::write_file(probe_program, "#!/bin/sh\n# replaced\nexit 0\n", fs::perms(0755)); return text; }},
        {"a setting", [&] { return text + "label = \"changed\"\n"; }},
        {"the probe's time limit", [&] { return "probe_timeout_ms = 999\n" + text; }},
    };
    std::size_t n = 1;
    for (const auto& [what, change] : changes) {
        INFO(what);
        const std::string changed = change();
        CHECK(cached_provider(dir, changed, cache)->selection().usable());
        ++n;
        CHECK(counts() == std::pair<std::size_t, std::size_t>{n, n});
        CHECK(cached_provider(dir, changed, cache)->selection().usable());
        CHECK(counts() == std::pair<std::size_t, std::size_t>{n, n});
    }
}

TEST_CASE("a verdict cache of an older format is a miss, and is written anew", "[selection][cache][levels]") {
    test::TempDir dir, home;
    test::FakeLog log;
    for (auto n : {"unusable", "usable"}) test::install_fake(dir.path(), n);
    const fs::path cache = home / "verdicts";
    const std::string text = chain({"unusable", "usable"});
    cached_provider(dir, text, cache)->selection();
    CHECK(log.count("probe usable") == 1);
    // The same entry as version 2 wrote it: key, kind, time, programs, reason (no levels).
    const std::string current = test::read_file(cache);
    REQUIRE(current.starts_with("confine-verdicts 3\n"));
    std::string entry = current.substr(current.find('\n') + 1);
    std::vector<std::string> fields;
    for (std::size_t start = 0;;) {
        const std::size_t end = entry.find_first_of("\t\n", start);
        if (end == std::string::npos) break;
        fields.push_back(entry.substr(start, end - start));
        start = end + 1;
    }
    REQUIRE(fields.size() == 6);
    CHECK_FALSE(fields[4].empty());  // the levels
    test::write_file(cache, "confine-verdicts 2\n" + fields[0] + "\t" + fields[1] + "\t" + fields[2] + "\t" + fields[3] + "\t" + fields[5] + "\n",
                     fs::perms(0600));
    auto provider = cached_provider(dir, text, cache);
    const auto& s = provider->selection();
    REQUIRE(s.usable());
    CHECK_FALSE(s.candidates[1].from_cache);
    CHECK(log.count("probe usable") == 2);
    CHECK(test::read_file(cache).starts_with("confine-verdicts 3\n"));
    // A version 3 line whose levels are not levels: dropped, never half read.
    test::write_file(cache, "confine-verdicts 3\n" + fields[0] + "\t" + fields[1] + "\t" + fields[2] + "\t" + fields[3] + "\tx\x1fy\x1f" +
                                "9999999999\x1fopen\t" + fields[5] + "\n",
                     fs::perms(0600));
    CHECK_FALSE(cached_provider(dir, text, cache)->selection().candidates[1].from_cache);
    CHECK(log.count("probe usable") == 3);
}

TEST_CASE("a selection from a cached verdict loads no plugin later in the chain, and without one fails closed as before",
          "[selection][cache][levels]") {
    test::TempDir dir, home;
    test::FakeLog log;
    for (auto n : {"unusable", "usable"}) test::install_fake(dir.path(), n);
    // A plugin later in the chain that nobody may trust: writable by others.
    const fs::path broken = test::install_fake(dir.path(), "partial");
    fs::permissions(broken, fs::perms(0777));
    const fs::path cache = home / "verdicts";
    const std::string text = chain({"usable", "partial"});
    for (int launch = 0; launch < 2; ++launch) {
        INFO("launch " << launch);
        auto provider = cached_provider(dir, text, cache);
        const auto& s = provider->selection();
        REQUIRE(s.usable());
        CHECK(*s.runner == "usable");
        CHECK(s.candidates.size() == 1);
        CHECK(s.candidates[0].from_cache == (launch == 1));
        CHECK(provider->loaded_plugins() == std::vector<std::string>{"usable"});
        CHECK(provider->wrap({confine::Mode::read_only, {}, {}}, std::vector<std::string>{"true"}).has_value());
    }
    CHECK(log.count("load partial") == 0);
    CHECK(log.count("probe usable") == 1);
    // Where the selection needs it, the untrusted plugin is refused as it always was.
    auto needed = cached_provider(dir, chain({"unusable", "partial"}), cache);
    const auto& s = needed->selection();
    CHECK_FALSE(s.usable());
    REQUIRE(s.failure);
    CHECK_THAT(s.failure->message, Catch::Contains("refusing plugin") && Catch::Contains("is writable by others"));
    CHECK(log.count("load partial") == 0);
}

#if defined(__linux__)
TEST_CASE("the built-in runners' levels kept in the cache judge a selection as a fresh probe does", "[selection][cache][levels][builtin][linux-only]") {
    test::require_bwrap();
    test::TempDir dir, home;
    test::install_builtin(dir.path(), "bwrap");
    test::install_builtin(dir.path(), "landlock");
    const fs::path cache = home / "verdicts";
    // The default policy (deny_read and protect asked, the network confined), then minimums
    // bubblewrap meets and one it does not (limits are the host's, none asked here).
    const std::string base = std::string(confine::embedded_default_config());
    for (const std::string& text : {base, base + "[policy.enforcement]\nread = \"full\"\nprotect = \"full\"\nlifetime = \"full\"\n"}) {
        INFO(text.substr(base.size()));
        const std::string fresh = outcome(cached_provider(dir, text, cache, std::chrono::seconds(3600), true)->selection());
        auto again = cached_provider(dir, text, cache);
        const auto& s = again->selection();
        REQUIRE_FALSE(s.candidates.empty());
        CHECK(s.candidates.front().from_cache);
        CHECK(outcome(s) == fresh);
        CHECK(again->loaded_plugins() == std::vector<std::string>{"bwrap"});
    }
}
#endif
