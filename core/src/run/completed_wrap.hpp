// run() and spawn()'s way to the wrap of a policy they completed themselves
// (Provider::wrap_completed): the one completion of a run, the proxy's port placed in it
// before the wrap. Internal to libconfine.
#pragma once

#include <confine/provider.hpp>

namespace confine::detail {

struct CompletedWrap {
    static std::expected<WrapResult, Error> wrap(const Provider& provider, const PolicyRequest& request, const Policy& completed,
                                                 std::span<const std::string> argv) {
        return provider.wrap_completed(request, completed, argv);
    }
};

}  // namespace confine::detail
