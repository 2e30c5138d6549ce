// What the two sides of a proof share (confine/prove.hpp): the canary, which runs
// confined (canary.cpp), and the host, which listens and judges (prove.cpp). POSIX only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace confine::proving {

inline sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

// A unix socket address: by path, or abstract (a leading NUL).
inline socklen_t unix_address(const std::string& name, bool abstract, sockaddr_un& a) {
    a = {};
    a.sun_family = AF_UNIX;
    const std::size_t n = std::min(name.size(), sizeof a.sun_path - 2);
    std::memcpy(a.sun_path + (abstract ? 1 : 0), name.data(), n);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
}

// The state and start time (clock ticks since boot, the 22nd field) in the text of a
// /proc/PID/stat, read after the name's last ')' (a name may hold anything); false when
// the text is not one.
inline bool stat_state_and_start(const char* text, char& state, unsigned long long& start) {
    const char* close = std::strrchr(text, ')');
    return close && close[1] == ' ' &&
           std::sscanf(close + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &state, &start) == 2;
}

}  // namespace confine::proving
