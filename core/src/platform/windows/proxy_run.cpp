// The run's proxy on Windows: none yet. A policy with allow_hosts fails closed here: no
// Windows runner takes the network through a proxy (AppContainer's network is its
// internetClient capability, all or nothing).
#include "proxy_run.hpp"

namespace confine::detail {

struct ProxyRun::Impl {
    ProxyReport result;
};

ProxyRun::ProxyRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProxyRun::~ProxyRun() = default;

std::expected<std::shared_ptr<ProxyRun>, Error> ProxyRun::open(std::vector<std::string>, const std::vector<std::filesystem::path>&, bool) {
    return std::unexpected(Error{ErrorCode::sandbox_unavailable, "the run's proxy: this build has none (allow_hosts needs Linux)"});
}
std::uint16_t ProxyRun::port() const noexcept { return 0; }
std::optional<Error> ProxyRun::judge(const std::vector<std::filesystem::path>&) const {
    return Error{ErrorCode::sandbox_unavailable, "the run's proxy: this build has none"};
}
std::optional<Error> ProxyRun::start(bool) { return Error{ErrorCode::sandbox_unavailable, "the run's proxy: this build has none"}; }
int ProxyRun::sandbox_end() const noexcept { return -1; }
bool ProxyRun::receiving() const noexcept { return false; }
const ProxyReport& ProxyRun::finish() { return impl_->result; }
std::vector<std::string> proxy_environment(std::uint16_t, const std::vector<std::string>&) { return {}; }

}  // namespace confine::detail
