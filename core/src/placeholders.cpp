#include "placeholders.hpp"

#include <confine/sdk/placeholders.hpp>

namespace confine {

std::vector<Placeholder> placeholders(const WrapResult& wrapped) {
    auto found = detail::runner_placeholders(wrapped.argv, wrapped.command_index, wrapped.attestation);
    std::vector<Placeholder> out;
    if (found)
        for (auto& p : *found) out.push_back({p.kind, p.argument, std::move(p.path)});
    return out;
}

std::string_view to_string(Placeholder::Kind kind) noexcept { return sdk::placeholder_name(kind); }

}  // namespace confine
