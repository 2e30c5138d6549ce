#include "status_descriptor.hpp"

#include <cstring>

namespace confine::detail {

PumpStream status_stream(int fd, std::string& text, CommandLocator* locator) {
    std::function<void()> grew;
    if (locator) grew = [locator, &text] { locator->status_grew(text); };
    return {.fd = fd, .take = keep_head(text, status_text_limit, std::move(grew))};
}

std::optional<pid_t> reported_number(const std::string& text, const std::string& key) {
    const std::size_t at = text.find(key);
    if (at == std::string::npos) return std::nullopt;
    std::size_t i = at + key.size();
    while (i < text.size() && std::strchr(" \t\":=", text[i])) ++i;
    long long number = 0;
    std::size_t digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 10; ++i, ++digits) number = number * 10 + (text[i] - '0');
    if (i == text.size()) return std::nullopt;
    if (digits == 0 || number <= 1 || number > 0x3fffffff) return 0;
    return static_cast<pid_t>(number);
}

}  // namespace confine::detail
