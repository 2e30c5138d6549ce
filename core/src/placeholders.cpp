#include "placeholders.hpp"

#include <confine/sdk/placeholders.hpp>

#include <algorithm>

namespace confine {
namespace detail {

std::expected<std::vector<Placeholder>, std::string> runner_placeholders(std::span<const std::string> argv, std::size_t command_index,
                                                                         const Attestation& attestation) {
    const bool status = attestation.kind == Attestation::Kind::status_fd;
    const std::size_t end = std::min(command_index == 0 ? 0 : command_index - 1, argv.size());
    std::vector<Placeholder> out;
    for (std::size_t i = 0; i < end; ++i) {
        auto parsed = sdk::parse_placeholder(argv[i]);
        const std::string where = "argument " + std::to_string(i);
        if (!parsed) return std::unexpected(where + ": " + parsed.error());
        if (status && i == attestation.status_argument) {
            if (*parsed && (*parsed)->kind != Placeholder::Kind::status_fd)
                return std::unexpected(where + ", where the attestation puts the status descriptor, is a " +
                                       std::string(sdk::placeholder_name((*parsed)->kind)) + " placeholder");
            out.push_back({Placeholder::Kind::status_fd, i, {}});
            continue;
        }
        if (!*parsed) continue;
        if (i == 0) return std::unexpected(where + ", the runner's program, is a placeholder");
        if ((*parsed)->kind == Placeholder::Kind::status_fd)
            return std::unexpected(where + " is {status-fd}, but the attestation names " +
                                   (status ? "argument " + std::to_string(attestation.status_argument) : std::string("no status descriptor")));
        out.push_back({(*parsed)->kind, i, std::move((*parsed)->path)});
    }
    return out;
}

}  // namespace detail

std::vector<Placeholder> placeholders(const WrapResult& wrapped) {
    auto found = detail::runner_placeholders(wrapped.argv, wrapped.command_index, wrapped.attestation);
    return found ? std::move(*found) : std::vector<Placeholder>{};
}

std::string_view to_string(Placeholder::Kind kind) noexcept { return sdk::placeholder_name(kind); }

}  // namespace confine
