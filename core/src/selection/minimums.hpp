// What a wrap must meet before anything runs, and how the host reports it: the
// configuration's minimums per dimension ([policy.enforcement], docs/design.md §12), the
// explicit asks of a call, and the wrap as reported (the network asked, enforcement the
// weakest dimension asked, the paths its denial hints may name). Internal to libconfine.
#pragma once

#include <confine/config.hpp>
#include <confine/error.hpp>
#include <confine/policy.hpp>
#include <confine/wrap_result.hpp>

#include <expected>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace confine::detail {

std::string_view name_of(Minimum m);
// Whether `level` meets `minimum`.
bool meets(Level level, Minimum minimum);

// The deny_read and protect entries of a call that are explicit asks (docs/design.md
// §12): every entry of the call's policy (--deny-read, --protect, a host's Policy), and
// each entry a configuration file writes; not the embedded default's, nor the ssh agent's
// socket that deny_read adds. Each with where it was said, for the line that refuses it.
struct ExplicitAsk {
    std::filesystem::path entry;
    std::string said;  // "file:line:column: policy.deny_read", or the call's
};
struct ExplicitAsks {
    std::vector<ExplicitAsk> read, protect;
};

ExplicitAsks explicit_asks(const PolicyRequest& policy, const Config& config);

// `open` without its part about `dimension`.
std::string without_about(const std::string& open, std::string_view dimension);

// The wrap as the host reports it: whether the network was asked, and `enforcement` the
// weakest of the dimensions asked; the paths its denial hints may name.
WrapResult reported(WrapResult wrapped, const Policy& policy);

// The wrap, if each dimension the policy asks is enforced at least at the level the
// configuration requires (docs/design.md §12): otherwise nothing runs. The network is
// asked only when it is to be confined.
std::expected<WrapResult, Error> meets_minimums(WrapResult wrapped, const Policy& policy, const Config& config);

}  // namespace confine::detail
