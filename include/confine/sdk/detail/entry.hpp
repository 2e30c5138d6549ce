// How CONFINE_RUNNER_PLUGIN (confine/sdk/plugin.hpp) meets the C ABI (confine/sdk/abi.h):
// the entry points a plugin exports, and the marshalling of each call's arguments and
// results between the C structs and the SDK's types. Included by plugin.hpp; not the
// plugin author's API: what is declared here may change in any release.
//
// A struct from the host is read once, by its size, as the host reads a plugin's wrap
// result: the bytes of the newest layout its struct_size covers are copied over the
// defaults, so that a field an older host does not know reads as that host meant it.
#pragma once

#include <confine/sdk/abi.h>
#include <confine/sdk/plugin.hpp>
#include <confine/sdk/vocabulary.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <expected>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace confine::sdk::detail {

inline char* dup_string(const std::string& s) noexcept {
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p) std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

inline void set_error(char** out_error, const std::string& message) noexcept {
    if (out_error) *out_error = dup_string(message);
}

// Keeps the strings a C view points into. The C struct is the base, so the free
// function recovers the owner with a static_cast.
class StringListHolder {
public:
    void assign(const std::vector<std::string>& values) {
        strings_ = values;
        pointers_.clear();
        for (const auto& s : strings_) pointers_.push_back(s.c_str());
    }
    confine_string_list view() const { return {pointers_.data(), pointers_.size()}; }

private:
    std::vector<std::string> strings_;
    std::vector<const char*> pointers_;
};

struct OwnedVerdict : confine_verdict {
    std::string reason_text;
};

struct OwnedWrapResult : confine_wrap_result {
    StringListHolder argv_holder, denial_holder, fatal_holder, info_holder;
    std::vector<std::int32_t> exit_codes;
    InProcess in_process;
    std::string status_marker, status_pid_key, dimensions_open;
    OwnedWrapResult() = default;
    OwnedWrapResult(const OwnedWrapResult&) = delete;
    OwnedWrapResult& operator=(const OwnedWrapResult&) = delete;
    ~OwnedWrapResult() {
        if (in_process.release) in_process.release(in_process.state);
    }
};

inline Settings settings_from(const confine_runner_config* config) {
    std::vector<Setting> items;
    for (std::size_t i = 0; config && i < config->settings_count; ++i) {
        const confine_setting& c = config->settings[i];
        Setting s;
        s.key = c.key ? c.key : "";
        s.kind = c.kind;
        if (c.string_value) s.string_value = c.string_value;
        s.integer_value = c.integer_value;
        s.boolean_value = c.boolean_value != 0;
        for (std::size_t j = 0; j < c.array_value.count; ++j)
            s.array_value.emplace_back(c.array_value.items[j] ? c.array_value.items[j] : "");
        items.push_back(std::move(s));
    }
    return Settings(std::move(items));
}

// Where the policy of each ABI minor ends, one entry per minor, oldest first: the one
// place that knows which minor added which field of a host's policy.
inline constexpr std::size_t policy_layouts[] = {
    CONFINE_POLICY_SIZE_1_0,  // 1.0: mode, workspace, writable roots
    CONFINE_POLICY_SIZE_1_0,  // 1.1
    CONFINE_POLICY_SIZE_1_0,  // 1.2
    CONFINE_POLICY_SIZE_1_0,  // 1.3
    CONFINE_POLICY_SIZE_1_0,  // 1.4
    CONFINE_POLICY_SIZE_1_5,  // 1.5: + network
    CONFINE_POLICY_SIZE_1_6,  // 1.6: + tmp, terminal
    CONFINE_POLICY_SIZE_1_7,  // 1.7: + deny_read, protect
    CONFINE_POLICY_SIZE_1_8,  // 1.8: + working_directory
    CONFINE_POLICY_SIZE_1_8,  // 1.9: unchanged
    CONFINE_POLICY_SIZE_1_8,  // 1.10: unchanged
    CONFINE_POLICY_SIZE_1_11,  // 1.11: + proxy_port
    sizeof(confine_policy),    // 1.12: + read_scope
    sizeof(confine_policy),    // 1.13: unchanged
};
static_assert(std::size(policy_layouts) == CONFINE_ABI_MINOR + 1);

// What a policy field means where the host's layout lacks it: what a host that did not
// know the field asked for. Older than 1.5: no network confined; 1.6: neither kind of
// /tmp, no terminal; 1.7: nothing denied or protected; 1.8: no working directory said.
inline confine_policy policy_defaults() noexcept {
    confine_policy p{};
    p.struct_size = sizeof p;
    p.mode = CONFINE_MODE_READ_ONLY;
    p.network = CONFINE_NETWORK_ALLOW;
    p.tmp = CONFINE_TMP_UNSAID;
    p.terminal = 0;
    p.deny_read = {nullptr, 0};
    p.protect = {nullptr, 0};
    p.working_directory = nullptr;
    p.proxy_port = 0;
    p.read_scope = {nullptr, 0};
    return p;
}

// The host's policy as this SDK lays it out, copied once: the bytes of the newest layout
// its struct_size covers over policy_defaults(). A size that ends inside a field copies
// none of that field. nullopt: smaller than the oldest layout.
inline std::optional<confine_policy> normalize_policy(const confine_policy& given) noexcept {
    std::size_t covered = 0;
    for (const std::size_t end : policy_layouts)
        if (given.struct_size >= end) covered = end;
    if (covered == 0) return std::nullopt;
    confine_policy out = policy_defaults();
    std::memcpy(&out, &given, covered);
    out.struct_size = sizeof out;
    return out;
}

// The paths of a C list; nullopt for a list that names a null item.
inline std::optional<std::vector<std::filesystem::path>> paths_from(const confine_string_list& list) {
    std::vector<std::filesystem::path> out;
    if (list.count && !list.items) return std::nullopt;
    for (std::size_t i = 0; i < list.count; ++i) {
        if (!list.items[i]) return std::nullopt;
        out.emplace_back(list.items[i]);
    }
    return out;
}

// The Policy a runner's wrap() receives for the host's `given`, of any ABI 1.x layout;
// nullopt for one too short to be a policy, or with a null path in a list.
inline std::optional<Policy> policy_from(const confine_policy& given) {
    const std::optional<confine_policy> c = normalize_policy(given);
    if (!c) return std::nullopt;
    Policy p;
    p.mode = c->mode == CONFINE_MODE_WORKSPACE_WRITE ? Mode::workspace_write : Mode::read_only;
    if (c->workspace) p.workspace = c->workspace;
    // An unknown network value is read as none: the strictest, never an open network.
    p.network = c->network == CONFINE_NETWORK_ALLOW ? Network::allow : c->network == CONFINE_NETWORK_PROXY ? Network::proxy : Network::none;
    if (p.network == Network::proxy) {
        if (c->proxy_port == 0 || c->proxy_port > 65535) return std::nullopt;
        p.proxy_port = static_cast<std::uint16_t>(c->proxy_port);
    }
    p.tmp = c->tmp == CONFINE_TMP_PRIVATE ? Tmp::private_ : c->tmp == CONFINE_TMP_HOST ? Tmp::host : Tmp::unsaid;
    p.terminal = c->terminal != 0;
    p.own_terminal = c->terminal == 2;
    auto writable = paths_from(c->writable), deny_read = paths_from(c->deny_read), protect = paths_from(c->protect),
         read_scope = paths_from(c->read_scope);
    if (!writable || !deny_read || !protect || !read_scope) return std::nullopt;
    p.read_scope = std::move(*read_scope);
    p.writable = std::move(*writable);
    p.deny_read = std::move(*deny_read);
    p.protect = std::move(*protect);
    if (c->working_directory) p.working_directory = c->working_directory;
    return p;
}

inline std::int32_t level_to_c(Level l) noexcept {
    return l == Level::full ? CONFINE_LEVEL_FULL : l == Level::partial ? CONFINE_LEVEL_PARTIAL : CONFINE_LEVEL_NONE;
}

inline std::int32_t tmp_to_c(Tmp t) noexcept {
    return t == Tmp::private_ ? CONFINE_TMP_PRIVATE : t == Tmp::host ? CONFINE_TMP_HOST : CONFINE_TMP_UNSAID;
}

// Whether a runner left its dimensions as constructed: it says nothing of them.
inline bool says_no_dimensions(const Dimensions& d) noexcept {
    const Dimensions unsaid;
    return d.write == unsaid.write && d.network == unsaid.network && d.processes == unsaid.processes && d.read == unsaid.read &&
           d.protect == unsaid.protect && d.lifetime == unsaid.lifetime && d.limits == unsaid.limits && d.open.empty();
}

// The attestation and the dimensions of `r` into `owned` (which keeps their strings).
inline void attestation_and_dimensions_to_c(const WrapResult& r, OwnedWrapResult& owned) {
    confine_wrap_result& c = owned;
    switch (r.attestation.kind) {
    case Attestation::Kind::none: c.attestation = CONFINE_ATTESTATION_NONE; break;
    case Attestation::Kind::exec: c.attestation = CONFINE_ATTESTATION_EXEC; break;
    case Attestation::Kind::status_fd: c.attestation = CONFINE_ATTESTATION_STATUS_FD; break;
    }
    c.attestation_exec_index = r.attestation.exec_index;
    owned.status_marker = r.attestation.status_marker;
    c.attestation_status_argument = r.attestation.status_argument;
    c.attestation_status_marker = owned.status_marker.c_str();
    owned.status_pid_key = r.attestation.status_pid_key;
    c.attestation_status_pid_key = owned.status_pid_key.empty() ? nullptr : owned.status_pid_key.c_str();
    // A runner that says nothing of its dimensions (leaves them as constructed) says
    // nothing in C either: the host then reads its enforcement as its write level, as it
    // reads a plugin older than ABI 1.5. What a runner says is passed on as it is.
    if (says_no_dimensions(r.dimensions)) return;
    c.write_level = level_to_c(r.dimensions.write);
    c.network_level = level_to_c(r.dimensions.network);
    c.processes_level = level_to_c(r.dimensions.processes);
    c.read_level = level_to_c(r.dimensions.read);
    c.protect_level = level_to_c(r.dimensions.protect);
    c.lifetime_level = level_to_c(r.dimensions.lifetime);
    c.read_scope_level = r.dimensions.read_scope == Level::none ? CONFINE_LEVEL_UNSAID : level_to_c(r.dimensions.read_scope);
    owned.dimensions_open = r.dimensions.open;
    c.dimensions_open = owned.dimensions_open.c_str();
}

// A runner's WrapResult as the C result the host reads (this ABI's layout), owning all
// it points to; freed by Entry::free_wrap_result.
inline std::unique_ptr<OwnedWrapResult> wrap_result_to_c(const WrapResult& r) {
    auto owned = std::make_unique<OwnedWrapResult>();
    confine_wrap_result& c = *owned;
    c = confine_wrap_result{};
    c.struct_size = sizeof(confine_wrap_result);
    owned->argv_holder.assign(r.argv);
    owned->denial_holder.assign(r.denial_signatures);
    owned->fatal_holder.assign(r.failure_rule.fatal_signatures);
    owned->info_holder.assign(r.failure_rule.informational_lines);
    owned->exit_codes = r.failure_rule.evidence_exit_codes;
    c.argv = owned->argv_holder.view();
    c.enforcement = r.enforcement == Enforcement::partial ? CONFINE_ENFORCEMENT_PARTIAL : CONFINE_ENFORCEMENT_FULL;
    c.denial_signatures = owned->denial_holder.view();
    c.failure_rule.struct_size = sizeof(confine_failure_rule);
    c.failure_rule.evidence_exit_codes = owned->exit_codes.data();
    c.failure_rule.evidence_exit_codes_count = owned->exit_codes.size();
    c.failure_rule.fatal_signatures = owned->fatal_holder.view();
    c.failure_rule.informational_lines = owned->info_holder.view();
    attestation_and_dimensions_to_c(r, *owned);
    c.tmp = tmp_to_c(r.tmp);
    c.loopback = r.loopback == Loopback::own ? CONFINE_LOOPBACK_OWN : r.loopback == Loopback::none ? CONFINE_LOOPBACK_NONE : CONFINE_LOOPBACK_UNSAID;
    owned->in_process = r.in_process;
    c.in_process_apply = r.in_process.apply;
    c.in_process_state = r.in_process.state;
    return owned;
}

template <class F>
confine_status guarded(char** out_error, F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        set_error(out_error, "out of memory");
        return CONFINE_E_NO_MEMORY;
    } catch (const std::exception& e) {
        set_error(out_error, std::string("runner plugin threw an exception: ") + e.what());
        return CONFINE_E_INTERNAL;
    } catch (...) {
        set_error(out_error, "runner plugin threw an unknown exception");
        return CONFINE_E_INTERNAL;
    }
}

// The entry points of a plugin whose runner is R (confine_plugin_descriptor's).
template <class R>
struct Entry {
    static confine_status create(const confine_host* host, const confine_runner_config* config,
                                 void** out_instance, char** out_error) noexcept {
        return guarded(out_error, [&]() -> confine_status {
            if (!out_instance) return CONFINE_E_INVALID_ARGUMENT;
            RunnerConfig rc;
            rc.runner_name = config && config->runner_name ? config->runner_name : "";
            rc.plugin_dir = config && config->plugin_dir ? config->plugin_dir : "";
            rc.settings = settings_from(config);
            auto made = R::create(Host(host), rc);
            if (!made) {
                if (!made.error().setting.empty()) Host(host).name_setting(made.error().setting);
                set_error(out_error, made.error().message);
                return made.error().code;
            }
            *out_instance = made->release();
            return CONFINE_OK;
        });
    }
    static void destroy(void* instance) noexcept {
        try {
            delete static_cast<Runner*>(instance);
        } catch (...) {
        }
    }
    static confine_status probe(void* instance, std::uint32_t timeout_ms, confine_verdict** out,
                                char** out_error) noexcept {
        return guarded(out_error, [&]() -> confine_status {
            if (!instance || !out) return CONFINE_E_INVALID_ARGUMENT;
            Verdict v = static_cast<Runner*>(instance)->probe(timeout_ms);
            auto owned = std::make_unique<OwnedVerdict>();
            owned->reason_text = std::move(v.reason);
            owned->struct_size = sizeof(confine_verdict);
            owned->kind = v.kind == Verdict::Kind::full      ? CONFINE_VERDICT_FULL
                          : v.kind == Verdict::Kind::partial ? CONFINE_VERDICT_PARTIAL
                                                             : CONFINE_VERDICT_UNUSABLE;
            owned->reason = owned->reason_text.c_str();
            *out = owned.release();
            return CONFINE_OK;
        });
    }
    static confine_status wrap(void* instance, const confine_policy* policy, const char* const* argv,
                               std::size_t argc, confine_wrap_result** out, char** out_error) noexcept {
        return guarded(out_error, [&]() -> confine_status {
            if (!instance || !policy || !out || (argc && !argv)) return CONFINE_E_INVALID_ARGUMENT;
            const std::optional<Policy> p = policy_from(*policy);
            if (!p) {
                set_error(out_error, "the host's policy is malformed (struct_size " + std::to_string(policy->struct_size) +
                                         ", or a null path in a list)");
                return CONFINE_E_INVALID_ARGUMENT;
            }
            // A runner that does not say it reaches the network through the host's proxy
            // never sees that policy: it would read it as one of the two it knows.
            if (p->network == Network::proxy && !static_cast<Runner*>(instance)->handles_proxy()) {
                set_error(out_error, "this runner cannot confine the network to the run's proxy (allow_hosts)");
                return CONFINE_E_UNSUPPORTED;
            }
            std::vector<std::string> args;
            for (std::size_t i = 0; i < argc; ++i) args.emplace_back(argv[i]);
            auto result = static_cast<Runner*>(instance)->wrap(*p, args);
            if (!result) {
                set_error(out_error, result.error().message);
                return result.error().code;
            }
            *out = wrap_result_to_c(*result).release();
            return CONFINE_OK;
        });
    }
    static void free_verdict(confine_verdict* v) noexcept { delete static_cast<OwnedVerdict*>(v); }
    static void free_wrap_result(confine_wrap_result* r) noexcept {
        delete static_cast<OwnedWrapResult*>(r);
    }
    static void free_string(char* s) noexcept { std::free(s); }
};

template <class R>
constexpr confine_plugin_descriptor make_descriptor(const char* name, const char* version,
                                                    const char* summary) {
    return confine_plugin_descriptor{
        sizeof(confine_plugin_descriptor), name,          version,
        summary,                           &Entry<R>::create, &Entry<R>::destroy,
        &Entry<R>::probe,                  &Entry<R>::wrap,   &Entry<R>::free_verdict,
        &Entry<R>::free_wrap_result,       &Entry<R>::free_string,
    };
}

}  // namespace confine::sdk::detail
