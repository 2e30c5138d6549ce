// A built-in runner whose mechanism has not been written yet. It loads, accepts its
// documented settings, and answers plainly: its probe is unusable ("not implemented
// yet") and it refuses to wrap, so selection fails closed. It never pretends to confine.
#pragma once

#include <confine/plugin_sdk.hpp>

#include <array>
#include <string_view>

namespace confine::builtin {

// Traits: `static constexpr std::array<std::string_view, N> settings` (the keys of
// `[runner.<name>]` this runner will accept, each a string).
template <class Traits>
class PendingRunner final : public sdk::Runner {
public:
    static std::expected<std::unique_ptr<sdk::Runner>, sdk::Error> create(sdk::Host, const sdk::RunnerConfig& config) {
        if (auto bad = config.settings.reject_unknown(std::span<const std::string_view>(Traits::settings)))
            return std::unexpected(*bad);
        for (std::string_view key : Traits::settings)
            if (auto value = config.settings.string_or(key, {}); !value) return std::unexpected(value.error());
        return std::make_unique<PendingRunner>();
    }
    sdk::Verdict probe(std::uint32_t) override { return sdk::Verdict::unusable("not implemented yet"); }
    std::expected<sdk::WrapResult, sdk::Error> wrap(const sdk::Policy&, std::span<const std::string>) override {
        return std::unexpected(sdk::unsupported("not implemented yet"));
    }
};

}  // namespace confine::builtin
