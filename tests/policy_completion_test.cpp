// One place completes a policy (docs/design.md §3): what a library host leaves unsaid is
// the configuration's [policy] network and tmp, as for confinectl, whose flags are said
// fields; what the host says wins. Judged by the world: where a file written to /tmp
// inside the run lands, what reached a socket outside the sandbox, what the command left.
#include "support.hpp"

#include <confine/execute.hpp>
#include <confine/provider.hpp>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace fs = std::filesystem;
using confine::OutcomeKind;

namespace {

// A library host's provider over the installed built-in plugins, with `text` as its
// configuration; and the same configuration as a file, for confinectl.
struct Host {
    test::Installed confine;
    fs::path config_file = confine.scratch("host.toml");
    std::unique_ptr<confine::Provider> provider;

    explicit Host(const std::string& text) {
        test::write_file(config_file, text);
        auto p = confine::Provider::create(test::config_from(text),
                                           {.platform = "linux", .builtin_plugin_dirs = std::vector<fs::path>{confine.plugin_dir()}});
        REQUIRE(p);
        provider = std::move(*p);
    }
};

std::string chain(const std::string& runner, const std::string& policy) {
    return "[platform.linux]\nchain = [\"" + runner + "\"]\n[policy]\n" + policy + "\n";
}

// A name in the host's /tmp that no other run uses, absent.
fs::path fresh_tmp_name(const std::string& what) {
    const fs::path name = "/tmp/confine-completion-" + what + "-" + std::to_string(::getpid());
    fs::remove(name);
    return name;
}

// The command that writes `file` and reads it back.
std::vector<std::string> writes(const fs::path& file) {
    return {"/bin/sh", "-c", "echo inside > " + file.string() + " && cat " + file.string()};
}

}  // namespace

TEST_CASE("a library host's run asking [policy] tmp = private of a Landlock-only chain fails closed, as confinectl does", "[completion][landlock][e2e][linux-only]") {
    test::require_landlock();
    Host host(chain("landlock", "tmp = \"private\""));
    test::Tree t(false);
    const fs::path marker = t.ws / "ran";
    const std::vector<std::string> argv{"/bin/sh", "-c", "echo ran > " + marker.string()};
    const std::string why = "runner 'landlock' gives the host's /tmp, and the policy asks for a private one ([policy] tmp, --tmp)";

    // confinectl: the one line, 125, and nothing ran.
    std::vector<std::string> args{"run", "--config", host.config_file.string(), "--workspace", t.ws.string(), "--"};
    args.insert(args.end(), argv.begin(), argv.end());
    auto cli = host.confine.run(args);
    CHECK(cli.exit_code == 125);
    CHECK(cli.err == "confinectl: sandbox unavailable: " + why + "\n");
    CHECK_FALSE(fs::exists(marker));

    // A library host that leaves tmp unsaid, as the shipped example does: a request, and
    // a complete Policy of before requests existed, in the foreground and the background.
    const confine::PolicyRequest request{confine::Mode::workspace_write, t.ws};
    const confine::Policy old_policy{confine::Mode::workspace_write, t.ws, {}};
    for (const confine::PolicyRequest& asked : {request, confine::PolicyRequest(old_policy)}) {
        auto ran = confine::run(*host.provider, asked, argv);
        REQUIRE(ran);
        CHECK(ran->kind == OutcomeKind::sandbox_unavailable);
        CHECK(ran->basis == confine::Basis::selection);
        CHECK(ran->evidence == why);
        CHECK(ran->runner == "landlock");
        auto spawned = confine::spawn(*host.provider, asked, argv);
        REQUIRE(spawned);
        const auto& done = spawned->wait();
        CHECK(done.outcome.kind == OutcomeKind::sandbox_unavailable);
        CHECK(done.outcome.evidence == why);
        auto wrapped = host.provider->wrap(asked, argv);
        REQUIRE_FALSE(wrapped);
        CHECK(wrapped.error().code == confine::ErrorCode::sandbox_unavailable);
        CHECK(wrapped.error().message == why);
    }
    CHECK_FALSE(fs::exists(marker));

    // The host's own word wins: it asks for the host's /tmp, which Landlock gives.
    confine::PolicyRequest host_tmp = request;
    host_tmp.tmp = confine::Tmp::host;
    const fs::path name = fresh_tmp_name("landlock-host");
    auto ran = confine::run(*host.provider, host_tmp, writes(name));
    REQUIRE(ran);
    CHECK(ran->kind == OutcomeKind::completed);
    CHECK(ran->tmp == confine::Tmp::host);
    CHECK(test::read_file(name) == "inside\n");
    fs::remove(name);
}

TEST_CASE("[policy] tmp reaches a library host's run under bubblewrap, and the host's own tmp wins over it", "[completion][bwrap][e2e][tmp]") {
    test::require_bwrap();
    test::Tree t(false);
    const confine::PolicyRequest unsaid{confine::Mode::workspace_write, t.ws};
    {
        INFO("[policy] tmp = \"private\", the host saying nothing: the run's own /tmp, gone after it");
        Host host(chain("bwrap", "tmp = \"private\""));
        const fs::path name = fresh_tmp_name("bwrap-private");
        auto spawned = confine::spawn(*host.provider, unsaid, writes(name));
        REQUIRE(spawned);
        const auto& done = spawned->wait();
        INFO(done.stderr_text);
        CHECK(done.outcome.kind == OutcomeKind::completed);
        CHECK(done.stdout_text == "inside\n");
        CHECK(done.outcome.tmp == confine::Tmp::private_);
        CHECK_FALSE(fs::exists(name));
    }
    {
        INFO("[policy] tmp = \"host\", the host saying nothing: the host's /tmp");
        Host host(chain("bwrap", "tmp = \"host\""));
        const fs::path name = fresh_tmp_name("bwrap-host");
        auto ran = confine::run(*host.provider, unsaid, writes(name));
        REQUIRE(ran);
        CHECK(ran->kind == OutcomeKind::completed);
        CHECK(ran->tmp == confine::Tmp::host);
        CHECK(test::read_file(name) == "inside\n");
        fs::remove(name);

        INFO("the host asks for a private /tmp: its word wins");
        confine::PolicyRequest own = unsaid;
        own.tmp = confine::Tmp::private_;
        auto spawned = confine::spawn(*host.provider, own, writes(name));
        REQUIRE(spawned);
        const auto& done = spawned->wait();
        CHECK(done.outcome.kind == OutcomeKind::completed);
        CHECK(done.stdout_text == "inside\n");
        CHECK(done.outcome.tmp == confine::Tmp::private_);
        CHECK_FALSE(fs::exists(name));
    }
}

TEST_CASE("[policy] network reaches a library host's run under bubblewrap, and the host's own network wins over it", "[completion][bwrap][e2e][network]") {
    test::require_bwrap();
    test::Tree t(false);
    // A datagram socket of the host's, by path, outside every writable root: what reaches
    // it came out of the sandbox.
    const fs::path socket_path = t.root / "host.sock";
    const int host_socket = test::bound_unix_socket(socket_path.string(), false, SOCK_DGRAM);
    fs::permissions(socket_path, fs::perms::all);
    auto arrived = [host_socket] {
        std::string what;
        char buffer[256];
        for (ssize_t n; (n = ::recv(host_socket, buffer, sizeof buffer, MSG_DONTWAIT)) > 0;) what += std::string(buffer, static_cast<std::size_t>(n)) + ";";
        return what;
    };
    const std::string tag = std::to_string(::getpid());
    const std::vector<std::string> reach{DGRAM_REACH, "confine-completion-dgram-" + tag, socket_path.string(), "confine-completion-stream-" + tag};
    const confine::PolicyRequest unsaid{confine::Mode::workspace_write, t.ws};

    Host allowing(chain("bwrap", "network = \"allow\""));
    auto ran = confine::spawn(*allowing.provider, unsaid, reach);
    REQUIRE(ran);
    const auto& allowed = ran->wait();
    INFO("[policy] network = \"allow\", the host saying nothing\nstdout: " << allowed.stdout_text << "\nstderr: " << allowed.stderr_text);
    CHECK(allowed.outcome.kind == OutcomeKind::completed);
    CHECK_FALSE(allowed.outcome.network_asked);
    CHECK_THAT(arrived(), Catch::Contains("socket sendmsg;"));

    confine::PolicyRequest own = unsaid;
    own.network = confine::Network::none;
    auto confined = confine::spawn(*allowing.provider, own, reach);
    REQUIRE(confined);
    const auto& refused = confined->wait();
    INFO("the host asks for no network: its word wins\nstdout: " << refused.stdout_text << "\nstderr: " << refused.stderr_text);
    CHECK(refused.outcome.kind == OutcomeKind::completed);
    CHECK(refused.outcome.network_asked);
    CHECK(arrived() == "");
    ::close(host_socket);
}

TEST_CASE("a background run cannot be given a terminal, and a foreground one's is the run's to say", "[completion][execute][linux-only]") {
    test::require_landlock();
    Host host(chain("landlock", ""));
    test::Tree t(false);
    confine::PolicyRequest asked{confine::Mode::workspace_write, t.ws};
    asked.terminal = true;
    auto spawned = confine::spawn(*host.provider, asked, std::vector<std::string>{"true"});
    REQUIRE_FALSE(spawned);
    CHECK(spawned.error().code == confine::ErrorCode::invalid_policy);
    CHECK(spawned.error().message == "a background run has no terminal to give the command (PolicyRequest::terminal)");
    // The completion: the request's word, else the run's.
    CHECK(host.provider->complete(asked, {.terminal = false}).terminal);
    asked.terminal.reset();
    CHECK(host.provider->complete(asked, {.terminal = true}).terminal);
    CHECK_FALSE(host.provider->complete(asked).terminal);
    asked.working_directory.clear();
    CHECK(host.provider->complete(asked, {.working_directory = t.ws}).working_directory == t.ws);
}
