// The network through the run's proxy as runners are asked for it: bubblewrap's profile
// and its loopback program, Landlock's one port rule and launcher flag, the runners that
// cannot give it (an SDK runner that does not say it can, a plugin older than ABI 1.11),
// and the wrap that has no run to hold the proxy.
#include "support.hpp"

#include <confine/plugins.hpp>
#include <confine/provider.hpp>
#include <confine/sdk/bwrap_profile.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

namespace fs = std::filesystem;
namespace sdk = confine::sdk;

namespace {

sdk::Policy proxied(std::uint16_t port = 3128) {
    sdk::Policy p{sdk::Mode::read_only, {}, {}};
    p.network = sdk::Network::proxy;
    p.proxy_port = port;
    p.allow_hosts = {"example.org"};
    return p;
}

bool holds(const std::vector<std::string>& argv, std::initializer_list<std::string> run) {
    return std::search(argv.begin(), argv.end(), run.begin(), run.end()) != argv.end();
}

}  // namespace

TEST_CASE("bubblewrap's profile through the proxy: its own network namespace, the proxy program, and the loopback program in front",
          "[proxy][bwrap]") {
    const std::vector<std::string> prefix{"/usr/bin/bwrap"};
    const auto profile = sdk::bwrap_profile(prefix, proxied(4242));
    CHECK(holds(profile, {"--unshare-net", "--seccomp", sdk::network_filter_fd_placeholder()}));
    const auto front = sdk::bwrap_proxy_arguments("/lib/confine/plugins/confine-loopback", proxied(4242));
    CHECK(front == std::vector<std::string>{"/lib/confine/plugins/confine-loopback", "--port", "4242", "--fd", sdk::proxy_fd_placeholder()});
    auto argv = profile;
    argv.insert(argv.end(), front.begin(), front.end());
    CHECK(sdk::bwrap_dimensions(proxied(), argv).network == sdk::Level::full);
    // Without the listener handed over, the command would reach nothing, and nothing is claimed.
    CHECK(sdk::bwrap_dimensions(proxied(), profile).network == sdk::Level::none);
    sdk::Policy none = proxied();
    none.network = sdk::Network::none;
    CHECK(sdk::bwrap_proxy_arguments("/x", none).empty());
}

TEST_CASE("the bwrap runner puts confine-loopback in front of the command through the proxy", "[proxy][bwrap][linux-only]") {
    test::TempDir dir;
    auto runner = test::builtin_runner(dir.path(), "bwrap");
    const std::vector<std::string> argv{"/bin/true"};
    auto wrapped = runner->wrap(proxied(5000), argv);
    REQUIRE(wrapped);
    CHECK(holds(wrapped->argv, {(dir.path() / "confine-loopback").string(), "--port", "5000", "--fd", sdk::proxy_fd_placeholder(), "--", "/bin/true"}));
    CHECK(wrapped->dimensions.network == sdk::Level::full);
}

TEST_CASE("Landlock through the proxy grants one TCP port and says what that leaves open", "[proxy][landlock][linux-only]") {
    test::require_landlock();
    if (test::landlock_abi() < 4) test::skip_test("this kernel's Landlock has no TCP rules");
    test::TempDir dir;
    auto runner = test::builtin_runner(dir.path(), "landlock");
    const std::vector<std::string> argv{"/bin/true"};
    auto wrapped = runner->wrap(proxied(5001), argv);
    REQUIRE(wrapped);
    CHECK(holds(wrapped->argv, {"--proxy-port", "5001"}));
    CHECK(std::find(wrapped->argv.begin(), wrapped->argv.end(), "--no-network") == wrapped->argv.end());
    CHECK(wrapped->dimensions.network == sdk::Level::partial);
    CHECK_THAT(confine::open_about(wrapped->dimensions.open, "network"), Catch::Contains("every address"));
}

TEST_CASE("landlock-run and confine-loopback refuse a bad port, and --proxy-port or --loopback with another network option", "[proxy][landlock][linux-only]") {
    const fs::path launcher = fs::path(BUILTIN_PLUGIN_DIR) / "landlock-run", loopback = fs::path(BUILTIN_PLUGIN_DIR) / "confine-loopback";
    for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
             {"--proxy-port", "0"}, {"--proxy-port", "65536"}, {"--proxy-port", "x"}, {"--no-network", "--proxy-port", "80"}, {"--proxy-port", "80", "--proxy-port", "81"},
             {"--loopback", "--no-network"}, {"--no-network", "--loopback"}, {"--loopback", "--proxy-port", "80"}}) {
        std::vector<std::string> argv{launcher.string()};
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.insert(argv.end(), {"--", "/bin/true"});
        auto r = test::run(argv);
        INFO(r.err);
        CHECK(r.exit_code == 125);
        CHECK_THAT(r.err, Catch::StartsWith("landlock-run: usage error"));
    }
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--port", "0", "--fd", "3", "--", "/bin/true"}, {"--port", "80", "--", "/bin/true"}, {"--port", "80", "--fd", "999", "--", "/bin/true"}, {"--port", "80", "--fd", "3"}}) {
        std::vector<std::string> argv{loopback.string()};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = test::run(argv);
        INFO(r.err);
        CHECK(r.exit_code == 125);
        CHECK_THAT(r.err, Catch::StartsWith("confine-loopback: "));
    }
}

TEST_CASE("a runner that does not take the proxy, and a plugin older than ABI 1.11, are never given it", "[proxy]") {
    test::TempDir dir;
    const std::vector<std::string> argv{"/bin/true"};
    auto seatbelt = test::builtin_runner(dir.path(), "seatbelt");
    auto refused = seatbelt->wrap(proxied(), argv);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("cannot confine the network to the run's proxy"));
    auto old = confine::load_plugin(test::install_fake(dir.path(), "abi-1-3"), "abi-1-3");
    REQUIRE(old);
    auto created = (*old)->create_runner(nullptr);
    REQUIRE(created);
    auto older = (*created)->wrap(proxied(), argv);
    REQUIRE_FALSE(older);
    CHECK(older.error().code == confine::ErrorCode::sandbox_unavailable);
    CHECK_THAT(older.error().message, Catch::Contains("ABI 1.11 can"));
}

TEST_CASE("a wrap alone cannot take the network through the proxy, and hosts with another network are refused", "[proxy]") {
    test::TempDir dir;
    test::install_fake(dir.path(), "usable");
    auto provider = confine::Provider::create(test::config_from("[platform.linux]\nchain = [\"usable\"]\n"),
                                              {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{dir.path()}});
    REQUIRE(provider);
    confine::PolicyRequest request(confine::Mode::read_only, {});
    request.allow_hosts = {"example.org"};
    const std::vector<std::string> argv{"/bin/true"};
    auto wrapped = (*provider)->wrap(request, argv);
    REQUIRE_FALSE(wrapped);
    CHECK(wrapped.error().code == confine::ErrorCode::invalid_policy);
    CHECK_THAT(wrapped.error().message, Catch::Contains("needs a run"));
    request.network = confine::Network::allow;
    auto both = (*provider)->wrap(request, argv);
    REQUIRE_FALSE(both);
    CHECK(both.error().code == confine::ErrorCode::invalid_policy);
    CHECK_THAT(both.error().message, Catch::Contains("one or the other"));
}
