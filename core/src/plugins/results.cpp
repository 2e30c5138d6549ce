#include "plugins/results.hpp"

#include <confine/sdk/wrap_check.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace confine::detail {
namespace {

// Where the wrap result of each ABI minor ends, one entry per minor, oldest first: the
// one place that knows which minor added which field. A field a minor appends must mean
// "absent" when it is zero, since that is how it reads from an older plugin.
constexpr std::size_t wrap_result_layouts[] = {
    CONFINE_WRAP_RESULT_SIZE_1_0,  // argv, enforcement, denial signatures, failure rule
    CONFINE_WRAP_RESULT_SIZE_1_1,  // + attestation (0: NONE) and its exec index
    CONFINE_WRAP_RESULT_SIZE_1_2,  // + in-process apply (NULL: none) and its state
    CONFINE_WRAP_RESULT_SIZE_1_3,  // + status descriptor argument and marker
    CONFINE_WRAP_RESULT_SIZE_1_4,  // 1.4: + status process-ID key (NULL: none)
    CONFINE_WRAP_RESULT_SIZE_1_5,  // 1.5: + the level of each dimension (0: not said) and what is open
    CONFINE_WRAP_RESULT_SIZE_1_6,  // 1.6: + which /tmp the command gets (0: not said)
    CONFINE_WRAP_RESULT_SIZE_1_9,  // 1.7: + the levels of read and protect (0: not said, none)
    CONFINE_WRAP_RESULT_SIZE_1_9,  // 1.8: unchanged (the policy grew: its working directory)
    CONFINE_WRAP_RESULT_SIZE_1_9,  // 1.9: unchanged (the host grew: setting_at_fault)
    CONFINE_WRAP_RESULT_SIZE_1_11,  // 1.10: + the runner's own lifetime level (0: not said, none)
    CONFINE_WRAP_RESULT_SIZE_1_11,  // 1.11: unchanged (the policy grew: the proxy's port)
    CONFINE_WRAP_RESULT_SIZE_1_12,  // 1.12: + the level of the read scope (0: not applied)
    sizeof(confine_wrap_result),    // 1.13: + the command's loopback (0: not said); {loopback-filter-fd}
};
static_assert(std::size(wrap_result_layouts) == CONFINE_ABI_MINOR + 1);

Error bad(std::string what) { return Error{ErrorCode::plugin_bad_result, std::move(what)}; }

// The plugin's result as this host lays it out, copied once: the bytes of the newest
// layout its struct_size covers, and zero for every field that layout lacks. A size
// that ends inside a field copies none of that field: half a pointer is not a pointer.
std::optional<confine_wrap_result> normalize(const confine_wrap_result* result) {
    const std::uint32_t declared = result->struct_size;
    std::size_t covered = 0;
    for (const std::size_t end : wrap_result_layouts)
        if (declared >= end) covered = end;
    if (covered == 0) return std::nullopt;
    confine_wrap_result out{};
    std::memcpy(&out, result, covered);
    return out;
}

std::optional<std::vector<std::string>> read_list(const confine_string_list& list) {
    if (list.count > max_list_items || (list.count && !list.items)) return std::nullopt;
    std::vector<std::string> out;
    out.reserve(list.count);
    for (std::size_t i = 0; i < list.count; ++i) {
        if (!list.items[i]) return std::nullopt;
        out.emplace_back(list.items[i]);
    }
    return out;
}

std::optional<std::vector<std::int32_t>> read_exit_codes(const confine_failure_rule& rule) {
    const std::size_t count = rule.evidence_exit_codes_count;
    if (count > max_list_items || (count && !rule.evidence_exit_codes)) return std::nullopt;
    return std::vector<std::int32_t>(rule.evidence_exit_codes, rule.evidence_exit_codes + count);
}

// Every list of the result, each bounded and without a null item; false if one is not.
bool read_lists(const confine_wrap_result& r, WrapResult& out) {
    auto args = read_list(r.argv);
    auto denial = read_list(r.denial_signatures);
    auto fatal = read_list(r.failure_rule.fatal_signatures);
    auto info = read_list(r.failure_rule.informational_lines);
    auto codes = read_exit_codes(r.failure_rule);
    if (!args || !denial || !fatal || !info || !codes) return false;
    out.argv = std::move(*args);
    out.denial_signatures = std::move(*denial);
    out.failure_rule.fatal_signatures = std::move(*fatal);
    out.failure_rule.informational_lines = std::move(*info);
    out.failure_rule.evidence_exit_codes = std::move(*codes);
    return true;
}

// A string of the plugin's, read no further than one byte past the longest status text
// it may be (a longer one is then refused as too long): a string without its NUL must not
// make the host walk arbitrary memory. Null reads as empty.
std::string bounded(const char* text) {
    std::size_t length = 0;
    while (text && length <= sdk::max_status_text && text[length]) ++length;
    return text ? std::string(text, length) : std::string();
}

// The attestation as the plugin laid it out: its kind, index, marker and key. Whether
// they are well formed is the SDK's check (wrap_result_refusal); an empty key that is
// not null (absent) is the one thing only the C layout can say.
std::optional<Error> read_attestation(const confine_wrap_result& r, Attestation& out) {
    switch (r.attestation) {
    case CONFINE_ATTESTATION_NONE: return std::nullopt;
    case CONFINE_ATTESTATION_EXEC: out = Attestation::exec(r.attestation_exec_index); return std::nullopt;
    case CONFINE_ATTESTATION_STATUS_FD: {
        const char* pid_key = r.attestation_status_pid_key;
        if (pid_key && !*pid_key) return bad("malformed wrap result (status process-ID key)");
        out = Attestation::status_fd(r.attestation_status_argument, bounded(r.attestation_status_marker), bounded(pid_key));
        return std::nullopt;
    }
    default: return bad("malformed wrap result (attestation " + std::to_string(r.attestation) + ")");
    }
}

// What the wrap enforces of each dimension. Not said (a plugin older than ABI 1.5, or a
// level of 0): write as its enforcement, network and processes none.
std::optional<Error> read_dimensions(const confine_wrap_result& r, WrapResult& out) {
    const Level said_write = out.enforcement == Enforcement::full ? Level::full : Level::partial;
    auto level = [](std::int32_t value, Level unsaid) -> std::optional<Level> {
        switch (value) {
        case CONFINE_LEVEL_UNSAID: return unsaid;
        case CONFINE_LEVEL_NONE: return Level::none;
        case CONFINE_LEVEL_PARTIAL: return Level::partial;
        case CONFINE_LEVEL_FULL: return Level::full;
        default: return std::nullopt;
        }
    };
    const auto write = level(r.write_level, said_write), network = level(r.network_level, Level::none),
               processes = level(r.processes_level, Level::none), read = level(r.read_level, Level::none),
               protect = level(r.protect_level, Level::none), lifetime = level(r.lifetime_level, Level::none),
               read_scope = level(r.read_scope_level, Level::none);
    if (!write || !network || !processes || !read || !protect || !lifetime || !read_scope) return bad("malformed wrap result (dimension levels)");
    out.dimensions = {*write, *network, *processes, r.dimensions_open ? r.dimensions_open : "", *read, *protect, *lifetime, Level::none, *read_scope};
    switch (r.tmp) {
    case CONFINE_TMP_UNSAID: out.tmp = Tmp::unsaid; break;
    case CONFINE_TMP_PRIVATE: out.tmp = Tmp::private_; break;
    case CONFINE_TMP_HOST: out.tmp = Tmp::host; break;
    default: return bad("malformed wrap result (tmp " + std::to_string(r.tmp) + ")");
    }
    switch (r.loopback) {
    case CONFINE_LOOPBACK_UNSAID: out.loopback = Loopback::unsaid; break;
    case CONFINE_LOOPBACK_NONE: out.loopback = Loopback::none; break;
    case CONFINE_LOOPBACK_OWN: out.loopback = Loopback::own; break;
    default: return bad("malformed wrap result (loopback " + std::to_string(r.loopback) + ")");
    }
    return std::nullopt;
}

}  // namespace

std::expected<WrapResult, Error> read_wrap_result(const confine_wrap_result* result, std::span<const std::string> argv) {
    if (!result) return std::unexpected(bad("wrap returned no result"));
    const std::optional<confine_wrap_result> r = normalize(result);
    if (!r || r->failure_rule.struct_size < sizeof(confine_failure_rule))
        return std::unexpected(bad("malformed wrap result (struct sizes)"));
    WrapResult out;
    if (!read_lists(*r, out)) return std::unexpected(bad("malformed wrap result (lists)"));
    if (r->enforcement != CONFINE_ENFORCEMENT_FULL && r->enforcement != CONFINE_ENFORCEMENT_PARTIAL)
        return std::unexpected(bad("malformed wrap result (enforcement " + std::to_string(r->enforcement) + ")"));
    out.enforcement = r->enforcement == CONFINE_ENFORCEMENT_PARTIAL ? Enforcement::partial : Enforcement::full;
    if (auto wrong = read_attestation(*r, out.attestation)) return std::unexpected(std::move(*wrong));
    // What a runner can get wrong in any language: the SDK's own check, the one a runner's
    // tests call (sdk::testing::check_wrap_result).
    if (auto refused = sdk::wrap_result_refusal(out, argv, &out.placeholders)) return std::unexpected(bad(std::move(*refused)));
    out.command_index = out.argv.size() - argv.size();
    if (r->in_process_apply) out.in_process = InProcess{r->in_process_apply, r->in_process_state, nullptr};
    if (auto wrong = read_dimensions(*r, out)) return std::unexpected(std::move(*wrong));
    return out;
}

Verdict read_verdict(const confine_verdict* verdict) {
    if (!verdict) return {Verdict::Kind::unusable, "malformed probe result: no verdict"};
    // One layout since ABI 1.0, read in place once its size covers it.
    constexpr std::size_t layout_1_0 = offsetof(confine_verdict, reason) + sizeof(const char*);
    const confine_verdict& v = *verdict;
    if (v.struct_size < layout_1_0 || v.kind < CONFINE_VERDICT_UNUSABLE || v.kind > CONFINE_VERDICT_PARTIAL)
        return {Verdict::Kind::unusable, "malformed probe result"};
    Verdict out;
    out.kind = v.kind == CONFINE_VERDICT_FULL      ? Verdict::Kind::full
               : v.kind == CONFINE_VERDICT_PARTIAL ? Verdict::Kind::partial
                                                   : Verdict::Kind::unusable;
    out.reason = v.reason ? v.reason : "";
    if (out.kind == Verdict::Kind::unusable && out.reason.empty()) out.reason = "unusable (no reason given)";
    return out;
}

}  // namespace confine::detail
