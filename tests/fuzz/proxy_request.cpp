// Fuzz target: confine-proxy's request reader (proxy/http_proxy.hpp), Beast's parser
// underneath. Properties: never a crash; every input gets a verdict (serve, refuse,
// malformed) with the status that goes with it; a request served names a host and port
// the patterns allow; the header given in two pieces gets the verdict it gets whole.
#include "http_proxy.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

const std::vector<confine::HostPattern>& allow() {
    static const std::vector<confine::HostPattern> patterns = [] {
        std::vector<confine::HostPattern> out;
        for (auto t : {"example.org", "*.example.net", "192.0.2.1:8080", "[2001:db8::1]:8443", "localhost:8080"})
            out.push_back(*confine::parse_host_pattern(t));
        return out;
    }();
    return patterns;
}

void check(const confine::proxy::RequestVerdict& v) {
    using Kind = confine::proxy::RequestVerdict::Kind;
    switch (v.kind) {
        case Kind::serve:
            if (v.status != 0 || v.host.empty() || v.port == 0) std::abort();
            if (!confine::host_allowed(allow(), v.host, v.port)) std::abort();
            if (v.form == confine::proxy::RequestVerdict::Form::absolute && !v.upstream_header.ends_with("\r\n\r\n"))
                std::abort();
            break;
        case Kind::refuse:
            if (v.status != 403 || v.reason.empty()) std::abort();
            break;
        case Kind::malformed:
            if ((v.status != 400 && v.status != 431) || v.reason.empty()) std::abort();
            break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto whole = confine::proxy::judge_request_bytes(bytes, allow());
    check(whole);
    // The same bytes as they may come off a socket: in two pieces.
    auto cut = size == 0 ? 0 : data[0] % size;
    confine::proxy::RequestReader reader;
    if (reader.feed(bytes.substr(0, cut)) == confine::proxy::RequestReader::State::need_more) reader.feed(bytes.substr(cut));
    auto pieces = reader.judge(allow());
    check(pieces);
    if (pieces.kind != whole.kind || pieces.status != whole.status || pieces.host != whole.host ||
        pieces.upstream_header != whole.upstream_header)
        std::abort();
    return 0;
}
