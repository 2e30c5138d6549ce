// Reading what a plugin returns (core/src/plugins/results.hpp): a wrap result of every
// ABI minor, read through only the bytes its struct_size covers, and each way a result
// or a verdict can be malformed.
#include "plugins/results.hpp"

#include <confine/sdk/plugin.hpp>
#include <confine/sdk/wrap_check.hpp>

#include <catch2/catch.hpp>

#if !defined(_WIN32)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using confine::ErrorCode;
using Kind = confine::Attestation::Kind;

namespace {

// The first `size` bytes of a struct, placed where readable memory ends: on POSIX a
// page that cannot be read follows them (after at most 7 bytes of padding, to keep the
// struct aligned), so a reader that looks past a plugin's struct_size faults; elsewhere
// 0xAB bytes follow them.
class Placed {
public:
    Placed(const void* bytes, std::size_t size) {
#if defined(_WIN32)
        storage_.assign((size + 64) / 8 + 1, 0xABABABABABABABABull);
        start_ = reinterpret_cast<unsigned char*>(storage_.data());
#else
        page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        void* map = ::mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(map != MAP_FAILED);
        map_ = static_cast<unsigned char*>(map);
        REQUIRE(::mprotect(map_ + page_, page_, PROT_NONE) == 0);
        std::memset(map_, 0xAB, page_);
        start_ = map_ + ((page_ - size) & ~std::size_t{7});
#endif
        std::memcpy(start_, bytes, size);
    }
    ~Placed() {
#if !defined(_WIN32)
        ::munmap(map_, 2 * page_);
#endif
    }
    Placed(const Placed&) = delete;
    Placed& operator=(const Placed&) = delete;
    template <class T>
    const T* as() const {
        return reinterpret_cast<const T*>(start_);
    }

private:
    unsigned char* start_ = nullptr;
#if defined(_WIN32)
    std::vector<std::uint64_t> storage_;
#else
    unsigned char* map_ = nullptr;
    std::size_t page_ = 0;
#endif
};

std::int32_t apply_nothing(void*, char*, std::size_t) { return 0; }
int apply_state;

// A well-formed result of the newest layout, for the command "echo x", with every field
// set; a test shortens or spoils it.
struct Sample {
    std::vector<const char*> args{"/usr/bin/runner", "{status}", "--", "echo", "x"};
    const char* denial[1] = {"denied"};
    const char* fatal[1] = {"runner: "};
    const char* info[1] = {"runner: note"};
    std::int32_t codes[2] = {125, 126};
    confine_wrap_result r{};

    Sample() {
        r.struct_size = sizeof r;
        r.argv = {args.data(), args.size()};
        r.enforcement = CONFINE_ENFORCEMENT_PARTIAL;
        r.denial_signatures = {denial, 1};
        r.failure_rule = {sizeof(confine_failure_rule), codes, 2, {fatal, 1}, {info, 1}};
        r.attestation = CONFINE_ATTESTATION_STATUS_FD;
        r.attestation_exec_index = 2;
        r.in_process_apply = &apply_nothing;
        r.in_process_state = &apply_state;
        r.attestation_status_argument = 1;
        r.attestation_status_marker = "done";
        r.attestation_status_pid_key = "child-pid";
    }
    Sample(const Sample&) = delete;
    Sample& operator=(const Sample&) = delete;
};

const std::vector<std::string> command{"echo", "x"};

// The sample read as a plugin with `size` bytes of result (its struct_size) returns it.
std::expected<confine::WrapResult, confine::Error> read_as(const confine_wrap_result& r, std::size_t size,
                                                            std::uint32_t struct_size) {
    confine_wrap_result copy = r;
    copy.struct_size = struct_size;
    Placed placed(&copy, size);
    return confine::detail::read_wrap_result(placed.as<confine_wrap_result>(), command);
}
std::expected<confine::WrapResult, confine::Error> read_sized(const confine_wrap_result& r, std::size_t size) {
    return read_as(r, size, static_cast<std::uint32_t>(size));
}

// The message of the refusal of `r`, read whole.
std::string refusal(const confine_wrap_result& r) {
    auto read = read_sized(r, sizeof r);
    if (read) FAIL("the result was accepted");
    CHECK(read.error().code == ErrorCode::plugin_bad_result);
    return read.error().message;
}

void check_common_fields(const confine::WrapResult& w) {
    CHECK(w.argv == std::vector<std::string>{"/usr/bin/runner", "{status}", "--", "echo", "x"});
    CHECK(w.command_index == 3);
    CHECK(w.enforcement == confine::Enforcement::partial);
    CHECK(w.denial_signatures == std::vector<std::string>{"denied"});
    CHECK(w.failure_rule.evidence_exit_codes == std::vector<std::int32_t>{125, 126});
    CHECK(w.failure_rule.fatal_signatures == std::vector<std::string>{"runner: "});
    CHECK(w.failure_rule.informational_lines == std::vector<std::string>{"runner: note"});
}

}  // namespace

TEST_CASE("a wrap result of every ABI minor is read from the bytes its size covers, and what that minor lacks is absent", "[core][abi]") {
    Sample s;
    SECTION("1.0: no attestation, no in-process apply") {
        auto w = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_0);
        REQUIRE(w);
        check_common_fields(*w);
        CHECK(w->attestation.kind == Kind::none);
        CHECK_FALSE(w->in_process);
    }
    SECTION("1.1: an exec attestation, no in-process apply") {
        s.r.attestation = CONFINE_ATTESTATION_EXEC;
        auto w = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_1);
        REQUIRE(w);
        check_common_fields(*w);
        CHECK(w->attestation.kind == Kind::exec);
        CHECK(w->attestation.exec_index == 2);
        CHECK_FALSE(w->in_process);
    }
    SECTION("1.2: the in-process apply and its state") {
        s.r.attestation = CONFINE_ATTESTATION_EXEC;
        auto w = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_2);
        REQUIRE(w);
        check_common_fields(*w);
        CHECK(w->attestation.kind == Kind::exec);
        CHECK(w->in_process.apply == &apply_nothing);
        CHECK(w->in_process.state == &apply_state);
        CHECK(w->in_process.release == nullptr);
    }
    SECTION("1.3: a status attestation without a process-ID key") {
        auto w = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_3);
        REQUIRE(w);
        check_common_fields(*w);
        CHECK(w->attestation.kind == Kind::status_fd);
        CHECK(w->attestation.status_argument == 1);
        CHECK(w->attestation.status_marker == "done");
        CHECK(w->attestation.status_pid_key.empty());
        CHECK(w->in_process.apply == &apply_nothing);
    }
    SECTION("1.4: the status attestation's process-ID key, and no dimension said") {
        s.r.write_level = CONFINE_LEVEL_FULL;
        s.r.network_level = CONFINE_LEVEL_FULL;
        auto w = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_4);
        REQUIRE(w);
        check_common_fields(*w);
        CHECK(w->attestation.kind == Kind::status_fd);
        CHECK(w->attestation.status_pid_key == "child-pid");
        // Older than 1.5: write as its enforcement, nothing else.
        CHECK(w->dimensions.write == confine::Level::partial);
        CHECK(w->dimensions.network == confine::Level::none);
        CHECK(w->dimensions.processes == confine::Level::none);
    }
    SECTION("1.5: the level of each dimension, and what is open") {
        s.r.write_level = CONFINE_LEVEL_FULL;
        s.r.network_level = CONFINE_LEVEL_PARTIAL;
        s.r.processes_level = CONFINE_LEVEL_NONE;
        s.r.dimensions_open = "network: a gap";
        s.r.tmp = CONFINE_TMP_PRIVATE;  // past a 1.5 result: not read
        auto w = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_5);
        REQUIRE(w);
        CHECK(w->tmp == confine::Tmp::unsaid);
        CHECK(w->dimensions.write == confine::Level::full);
        CHECK(w->dimensions.network == confine::Level::partial);
        CHECK(w->dimensions.processes == confine::Level::none);
        CHECK(w->dimensions.open == "network: a gap");
        s.r.network_level = 7;
        auto bad = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_5);
        REQUIRE_FALSE(bad);
        CHECK(bad.error().message == "malformed wrap result (dimension levels)");
    }
    SECTION("1.6: which /tmp the command gets") {
        for (const auto& [value, tmp] : {std::pair{CONFINE_TMP_UNSAID, confine::Tmp::unsaid}, std::pair{CONFINE_TMP_PRIVATE, confine::Tmp::private_},
                                         std::pair{CONFINE_TMP_HOST, confine::Tmp::host}}) {
            s.r.tmp = value;
            auto w = read_sized(s.r, sizeof(confine_wrap_result));
            REQUIRE(w);
            CHECK(w->tmp == tmp);
        }
        s.r.tmp = 3;
        auto bad = read_sized(s.r, sizeof(confine_wrap_result));
        REQUIRE_FALSE(bad);
        CHECK(bad.error().message == "malformed wrap result (tmp 3)");
    }
    SECTION("1.13: with the network none, whether the command has a loopback of its own") {
        for (const auto& [value, loopback] : {std::pair{CONFINE_LOOPBACK_UNSAID, confine::Loopback::unsaid},
                                              std::pair{CONFINE_LOOPBACK_NONE, confine::Loopback::none}, std::pair{CONFINE_LOOPBACK_OWN, confine::Loopback::own}}) {
            s.r.loopback = value;
            auto w = read_sized(s.r, sizeof(confine_wrap_result));
            REQUIRE(w);
            CHECK(w->loopback == loopback);
            auto older = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_12);  // a 1.12 plugin says nothing of it
            REQUIRE(older);
            CHECK(older->loopback == confine::Loopback::unsaid);
        }
        s.r.loopback = 3;
        auto bad = read_sized(s.r, sizeof(confine_wrap_result));
        REQUIRE_FALSE(bad);
        CHECK(bad.error().message == "malformed wrap result (loopback 3)");
    }
    SECTION("a status attestation from a result too short to hold its fields is refused") {
        for (std::size_t size : {CONFINE_WRAP_RESULT_SIZE_1_1, CONFINE_WRAP_RESULT_SIZE_1_2}) {
            INFO(size);
            auto w = read_sized(s.r, size);
            REQUIRE_FALSE(w);
            CHECK(w.error().code == ErrorCode::plugin_bad_result);
            CHECK(w.error().message == "malformed wrap result (status descriptor argument 0)");
        }
    }
}

TEST_CASE("a wrap result size that ends inside a field reads as the older layout, none of that field", "[core][abi]") {
    Sample s;
    s.r.attestation = CONFINE_ATTESTATION_EXEC;
    // Half of the in-process pointer is within the size: not a pointer to call.
    auto half_pointer = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_1 + 4);
    REQUIRE(half_pointer);
    CHECK(half_pointer->attestation.kind == Kind::exec);
    CHECK_FALSE(half_pointer->in_process);
    // Half of the attestation field: no attestation.
    auto half_field = read_sized(s.r, CONFINE_WRAP_RESULT_SIZE_1_0 + 2);
    REQUIRE(half_field);
    CHECK(half_field->attestation.kind == Kind::none);
}

TEST_CASE("a wrap result larger than this host's is read up to the fields this host knows", "[core][abi]") {
    Sample s;
    struct Larger {
        confine_wrap_result known;
        std::uint64_t unknown[4];
    } larger{};
    larger.known = s.r;
    larger.known.struct_size = sizeof larger;
    Placed placed(&larger, sizeof larger);
    auto w = confine::detail::read_wrap_result(placed.as<confine_wrap_result>(), command);
    REQUIRE(w);
    check_common_fields(*w);
    CHECK(w->attestation.status_pid_key == "child-pid");
}

TEST_CASE("a missing wrap result, or one smaller than ABI 1.0's, is refused", "[core][abi]") {
    auto none = confine::detail::read_wrap_result(nullptr, command);
    REQUIRE_FALSE(none);
    CHECK(none.error().code == ErrorCode::plugin_bad_result);
    CHECK(none.error().message == "wrap returned no result");
    Sample s;
    for (std::uint32_t size : {0u, 4u, static_cast<std::uint32_t>(CONFINE_WRAP_RESULT_SIZE_1_0 - 8)}) {
        INFO(size);
        auto small = read_as(s.r, size < 4 ? 4 : size, size);
        REQUIRE_FALSE(small);
        CHECK(small.error().message == "malformed wrap result (struct sizes)");
    }
    s.r.failure_rule.struct_size = sizeof(confine_failure_rule) - 1;
    CHECK(refusal(s.r) == "malformed wrap result (struct sizes)");
}

TEST_CASE("a wrap result list with a null item, too many items or no items is refused", "[core][abi][security]") {
    const std::size_t too_many = confine::detail::max_list_items + 1;
    Sample s;
    SECTION("argv") {
        s.args[1] = nullptr;
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
        s.r.argv = {nullptr, 3};
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
        s.r.argv = {s.args.data(), too_many};
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
    }
    SECTION("denial signatures") {
        s.denial[0] = nullptr;
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
        s.r.denial_signatures = {s.denial, too_many};
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
    }
    SECTION("the failure rule's lines") {
        s.r.failure_rule.fatal_signatures = {nullptr, 1};
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
        s.r.failure_rule.fatal_signatures = {s.fatal, 1};
        s.info[0] = nullptr;
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
    }
    SECTION("the failure rule's exit codes") {
        s.r.failure_rule.evidence_exit_codes = nullptr;
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
        s.r.failure_rule.evidence_exit_codes = s.codes;
        s.r.failure_rule.evidence_exit_codes_count = too_many;
        CHECK(refusal(s.r) == "malformed wrap result (lists)");
    }
    SECTION("empty lists are lists") {
        s.r.denial_signatures = {nullptr, 0};
        s.r.failure_rule.evidence_exit_codes = nullptr;
        s.r.failure_rule.evidence_exit_codes_count = 0;
        auto w = read_sized(s.r, sizeof s.r);
        REQUIRE(w);
        CHECK(w->denial_signatures.empty());
        CHECK(w->failure_rule.evidence_exit_codes.empty());
    }
}

TEST_CASE("a wrap result's enforcement is full or partial, nothing else", "[core][abi]") {
    Sample s;
    for (std::int32_t bad : {0, 3, -1}) {
        s.r.enforcement = bad;
        CHECK(refusal(s.r) == "malformed wrap result (enforcement " + std::to_string(bad) + ")");
    }
    s.r.enforcement = CONFINE_ENFORCEMENT_FULL;
    auto w = read_sized(s.r, sizeof s.r);
    REQUIRE(w);
    CHECK(w->enforcement == confine::Enforcement::full);
}

TEST_CASE("a wrap result that does not end with -- and the command verbatim is refused", "[core][abi][security]") {
    const std::string expected = "wrap result does not end with \"--\" and the command verbatim";
    Sample s;
    const std::vector<std::vector<const char*>> spoiled{
        {"/usr/bin/runner", "{status}", "--", "x", "echo"},        // reordered
        {"/usr/bin/runner", "{status}", "--", "echo"},             // shortened
        {"/usr/bin/runner", "{status}", "--", "echo", "y"},        // rewritten
        {"/usr/bin/runner", "{status}", "-", "echo", "x"},         // no "--"
        {"/usr/bin/runner", "{status}", "--", "echo", "x", "z"},   // added to
        {"--", "echo", "x"},                                       // no runner before "--"
        {"echo", "x"},
    };
    for (const auto& args : spoiled) {
        INFO(args.size() << " arguments, the last " << args.back());
        s.args = args;
        s.r.argv = {s.args.data(), s.args.size()};
        s.r.attestation = CONFINE_ATTESTATION_NONE;
        CHECK(refusal(s.r) == expected);
    }
}

TEST_CASE("an attestation of an unknown kind, or an exec attestation outside 1..16, is refused", "[core][abi][security]") {
    Sample s;
    for (std::int32_t kind : {3, -1}) {
        s.r.attestation = kind;
        CHECK(refusal(s.r) == "malformed wrap result (attestation " + std::to_string(kind) + ")");
    }
    s.r.attestation = CONFINE_ATTESTATION_EXEC;
    for (std::uint32_t index : {0u, 17u}) {
        s.r.attestation_exec_index = index;
        CHECK(refusal(s.r) == "malformed wrap result (attestation exec index " + std::to_string(index) + ")");
    }
    for (std::uint32_t index : {1u, 16u}) {
        s.r.attestation_exec_index = index;
        auto w = read_sized(s.r, sizeof s.r);
        REQUIRE(w);
        CHECK(w->attestation.exec_index == index);
    }
}

TEST_CASE("a status attestation names one of the runner's own arguments, with a one-line marker and key", "[core][abi][security]") {
    Sample s;  // argv: runner {status} -- echo x
    SECTION("the argument is after the program and before \"--\"") {
        for (std::uint32_t index : {0u, 2u, 3u, 4u, std::numeric_limits<std::uint32_t>::max()}) {
            s.r.attestation_status_argument = index;
            CHECK(refusal(s.r) == "malformed wrap result (status descriptor argument " + std::to_string(index) + ")");
        }
    }
    SECTION("the marker is one non-empty line of at most 256 bytes") {
        const std::string longest(256, 'm'), too_long(257, 'm');
        for (const char* marker : {static_cast<const char*>(nullptr), "", "done\n", "do\nne", too_long.c_str()}) {
            s.r.attestation_status_marker = marker;
            CHECK(refusal(s.r) == "malformed wrap result (status marker)");
        }
        s.r.attestation_status_marker = longest.c_str();
        auto w = read_sized(s.r, sizeof s.r);
        REQUIRE(w);
        CHECK(w->attestation.status_marker == longest);
    }
    SECTION("a process-ID key, when there is one, is one non-empty line of at most 256 bytes") {
        const std::string too_long(257, 'k');
        for (const char* key : {"", "child\npid", too_long.c_str()}) {
            s.r.attestation_status_pid_key = key;
            CHECK(refusal(s.r) == "malformed wrap result (status process-ID key)");
        }
        s.r.attestation_status_pid_key = nullptr;
        auto w = read_sized(s.r, sizeof s.r);
        REQUIRE(w);
        CHECK(w->attestation.status_pid_key.empty());
    }
}

TEST_CASE("a wrap result whose runner arguments hold a malformed placeholder, or one out of its place, is refused", "[core][abi][security][placeholders]") {
    Sample s;  // argv: runner {status} -- echo x, the status descriptor at argument 1
    std::vector<const char*> args{"/usr/bin/runner", "{status}", "--bind-fd", "{dir-fd:srv/ws}", "/srv/ws", "--", "echo", "x"};
    s.r.argv = {args.data(), args.size()};
    CHECK(refusal(s.r) == "malformed wrap result (argument 3: malformed placeholder '{dir-fd:srv/ws}': the directory's path must be absolute)");
    args[3] = "{dir-fd:/srv/ws";
    CHECK(refusal(s.r) == "malformed wrap result (argument 3: malformed placeholder '{dir-fd:/srv/ws': it does not end with '}')");
    args[3] = "{status-fd}";
    CHECK(refusal(s.r) == "malformed wrap result (argument 3 is {status-fd}, but the attestation names argument 1)");
    args[1] = "{network-filter-fd}";
    CHECK(refusal(s.r) == "malformed wrap result (argument 1, where the attestation puts the status descriptor, is a network-filter-fd placeholder)");
    // Well-formed, each where it may stand: read, and listed in argument order.
    args[1] = "{status-fd}";
    args[3] = "{dir-fd:/srv/ws}";
    auto w = read_sized(s.r, sizeof s.r);
    REQUIRE(w);
    const auto found = w->placeholders;
    REQUIRE(found.size() == 2);
    CHECK(found[0].kind == confine::Placeholder::Kind::status_fd);
    CHECK(found[0].argument == 1);
    CHECK(found[1].kind == confine::Placeholder::Kind::dir_fd);
    CHECK(found[1].argument == 3);
    CHECK(found[1].path == "/srv/ws");
    // The command's own arguments are never read as placeholders.
    const std::vector<std::string> odd{"{dir-fd:}", "{status-fd}"};
    std::vector<const char*> with_odd{"/usr/bin/runner", "{status}", "--", "{dir-fd:}", "{status-fd}"};
    s.r.argv = {with_odd.data(), with_odd.size()};
    Placed placed(&s.r, sizeof s.r);
    auto read = confine::detail::read_wrap_result(placed.as<confine_wrap_result>(), odd);
    REQUIRE(read);
    CHECK(read->placeholders.size() == 1);
}

TEST_CASE("a verdict is read when its size covers ABI 1.0's, and a missing or malformed one is unusable, saying so", "[core][abi]") {
    using VKind = confine::Verdict::Kind;
    auto read = [](confine_verdict v, std::size_t size) {
        Placed placed(&v, size);
        return confine::detail::read_verdict(placed.as<confine_verdict>());
    };
    const std::size_t size = sizeof(confine_verdict);
    auto full = read({static_cast<std::uint32_t>(size), CONFINE_VERDICT_FULL, "note"}, size);
    CHECK(full.kind == VKind::full);
    CHECK(full.reason == "note");
    auto partial = read({static_cast<std::uint32_t>(size), CONFINE_VERDICT_PARTIAL, nullptr}, size);
    CHECK(partial.kind == VKind::partial);
    CHECK(partial.reason.empty());
    auto unusable = read({static_cast<std::uint32_t>(size), CONFINE_VERDICT_UNUSABLE, ""}, size);
    CHECK(unusable.kind == VKind::unusable);
    CHECK(unusable.reason == "unusable (no reason given)");

    auto none = confine::detail::read_verdict(nullptr);
    CHECK(none.kind == VKind::unusable);
    CHECK(none.reason == "malformed probe result: no verdict");
    auto small = read({static_cast<std::uint32_t>(size - 8), CONFINE_VERDICT_FULL, nullptr}, size);
    CHECK(small.kind == VKind::unusable);
    CHECK(small.reason == "malformed probe result");
    for (std::int32_t kind : {3, -1}) {
        auto odd = read({static_cast<std::uint32_t>(size), kind, "note"}, size);
        CHECK(odd.kind == VKind::unusable);
        CHECK(odd.reason == "malformed probe result");
    }
}

// The failure rule's exit codes were once called allowed_exit_codes: a plugin written
// with that name sets the same bytes, and the layout of ABI 1.0 is unchanged.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
TEST_CASE("the failure rule's older field names are the evidence exit codes themselves", "[core][abi]") {
    STATIC_REQUIRE(offsetof(confine_failure_rule, allowed_exit_codes) == offsetof(confine_failure_rule, evidence_exit_codes));
    STATIC_REQUIRE(offsetof(confine_failure_rule, allowed_exit_codes_count) == offsetof(confine_failure_rule, evidence_exit_codes_count));
    STATIC_REQUIRE(offsetof(confine_failure_rule, evidence_exit_codes) == sizeof(void*));
    STATIC_REQUIRE(offsetof(confine_failure_rule, fatal_signatures) == offsetof(confine_failure_rule, evidence_exit_codes_count) + sizeof(std::size_t));
    Sample s;
    const std::int32_t older[] = {7, 9};
    s.r.failure_rule.allowed_exit_codes = older;
    s.r.failure_rule.allowed_exit_codes_count = 2;
    auto w = read_sized(s.r, sizeof s.r);
    REQUIRE(w);
    CHECK(w->failure_rule.evidence_exit_codes == std::vector<std::int32_t>{7, 9});
    confine::FailureRule rule;
    rule.allowed_exit_codes().push_back(3);
    CHECK(rule.evidence_exit_codes == std::vector<std::int32_t>{3});
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace {

// An SDK runner's result for the command "make test", as the SDK hands it to the host in C
// and the host reads it: what confine does with a plugin's wrap.
std::expected<confine::WrapResult, confine::Error> through_the_host(const confine::sdk::WrapResult& r) {
    const auto in_c = confine::sdk::detail::wrap_result_to_c(r);
    return confine::detail::read_wrap_result(in_c.get(), std::vector<std::string>{"make", "test"});
}

}  // namespace

TEST_CASE("the host refuses each wrap result the SDK's check refuses, saying the same line, and accepts what it accepts", "[core][abi][sdk]") {
    namespace sdk = confine::sdk;
    const std::vector<std::string> make_test{"make", "test"};
    sdk::WrapResult good;
    good.argv = {"/usr/bin/runner", "--status", "{status-fd}", "--bind", "{dir-fd:/srv/ws}", "/srv/ws", "--", "make", "test"};
    good.attestation = sdk::Attestation::status_fd(2, "\"exit-code\"", "\"child-pid\"");
    std::vector<std::pair<const char*, sdk::WrapResult>> spoiled;
    auto spoil = [&](const char* what, auto change) {
        sdk::WrapResult r = good;
        change(r);
        spoiled.emplace_back(what, std::move(r));
    };
    spoil("the command rewritten", [](sdk::WrapResult& r) { r.argv.back() = "check"; });
    spoil("no \"--\"", [](sdk::WrapResult& r) { r.argv[6] = "-"; });
    spoil("nothing before \"--\"", [](sdk::WrapResult& r) { r.argv = {"--", "make", "test"}; r.attestation = {}; });
    spoil("an exec index of 0", [](sdk::WrapResult& r) { r.argv[2] = "3"; r.attestation = sdk::Attestation::exec(0); });
    spoil("an exec index of 17", [](sdk::WrapResult& r) { r.argv[2] = "3"; r.attestation = sdk::Attestation::exec(17); });
    spoil("the status descriptor at the program", [](sdk::WrapResult& r) { r.attestation.status_argument = 0; });
    spoil("the status descriptor at the \"--\"", [](sdk::WrapResult& r) { r.attestation.status_argument = 6; });
    spoil("an empty marker", [](sdk::WrapResult& r) { r.attestation.status_marker.clear(); });
    spoil("a marker of two lines", [](sdk::WrapResult& r) { r.attestation.status_marker = "a\nb"; });
    spoil("a marker of 257 bytes", [](sdk::WrapResult& r) { r.attestation.status_marker.assign(257, 'm'); });
    spoil("a key of two lines", [](sdk::WrapResult& r) { r.attestation.status_pid_key = "child\npid"; });
    spoil("a key of 257 bytes", [](sdk::WrapResult& r) { r.attestation.status_pid_key.assign(257, 'k'); });
    spoil("a malformed placeholder", [](sdk::WrapResult& r) { r.argv[4] = "{dir-fd:srv/ws}"; });
    spoil("a second {status-fd}", [](sdk::WrapResult& r) { r.argv[4] = "{status-fd}"; });
    spoil("a {status-fd} without its attestation", [](sdk::WrapResult& r) { r.attestation = {}; });
    spoil("another kind where the status descriptor goes", [](sdk::WrapResult& r) { r.argv[2] = "{network-filter-fd}"; });
    spoil("a placeholder as the program", [](sdk::WrapResult& r) { r.argv[0] = "{dir-path:/usr/bin}"; });
    spoil("too many denial signatures", [](sdk::WrapResult& r) { r.denial_signatures.assign(sdk::max_result_list_items + 1, "x"); });
    for (const auto& [what, r] : spoiled) {
        INFO(what);
        const auto said = sdk::wrap_result_refusal(r, make_test);
        REQUIRE(said);
        const auto read = through_the_host(r);
        REQUIRE_FALSE(read);
        CHECK(read.error().code == ErrorCode::plugin_bad_result);
        CHECK(read.error().message == *said);
    }
    CHECK_FALSE(sdk::wrap_result_refusal(good, make_test));
    const auto read = through_the_host(good);
    REQUIRE(read);
    CHECK(read->command_index == 7);
    CHECK(read->attestation.status_pid_key == "\"child-pid\"");
    CHECK(read->placeholders.size() == 2);
}

TEST_CASE("a runner's write level reaches the host as it says it, and one that says no dimensions has its enforcement read as its write", "[core][abi][sdk]") {
    namespace sdk = confine::sdk;
    sdk::WrapResult r;
    r.argv = {"/usr/bin/runner", "--", "make", "test"};
    r.enforcement = sdk::Enforcement::partial;
    SECTION("said: write full, network partial, enforcement partial") {
        r.dimensions.network = sdk::Level::partial;
        r.dimensions.processes = sdk::Level::full;
        r.dimensions.open = "network: a gap";
        const auto w = through_the_host(r);
        REQUIRE(w);
        CHECK(w->enforcement == confine::Enforcement::partial);
        CHECK(w->dimensions.write == confine::Level::full);
        CHECK(w->dimensions.network == confine::Level::partial);
        CHECK(w->dimensions.processes == confine::Level::full);
    }
    SECTION("unsaid: write as the enforcement, nothing else") {
        for (const auto enforcement : {sdk::Enforcement::partial, sdk::Enforcement::full}) {
            r.enforcement = enforcement;
            const auto w = through_the_host(r);
            REQUIRE(w);
            CHECK(w->enforcement == enforcement);
            CHECK(w->dimensions.write == (enforcement == sdk::Enforcement::full ? confine::Level::full : confine::Level::partial));
            CHECK(w->dimensions.network == confine::Level::none);
            CHECK(w->dimensions.processes == confine::Level::none);
            CHECK(w->dimensions.lifetime == confine::Level::none);
            CHECK(w->dimensions.open.empty());
        }
    }
}
