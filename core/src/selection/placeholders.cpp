#include "placeholders.hpp"

#include <confine/sdk/placeholders.hpp>

namespace confine {

std::string_view to_string(Placeholder::Kind kind) noexcept { return sdk::placeholder_name(kind); }

}  // namespace confine
