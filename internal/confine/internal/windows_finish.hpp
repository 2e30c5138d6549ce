// How a Windows host asks a runner process to finish before it ends the run's job.
//
// A runner that has something to undo when the run ends (the AppContainer launcher:
// access-list entries, a temporary directory, a profile) creates, at its start, a
// manual-reset event of this name, with its own process ID. When the host is about to
// end the run — a time limit, a forwarded signal, the run's handle destroyed — it sets
// the event if it exists, waits up to finish_wait_ms for the runner to exit, and only
// then terminates the job. A runner without the event is ended at once, as before.
#pragma once

#include <cstdint>
#include <string>

namespace confine::windows {

// Per session; a container sees only its own namespace of named objects, so a confined
// command cannot open it.
inline std::wstring finish_event_name(std::uint32_t process_id) { return L"Local\\confine.finish." + std::to_wstring(process_id); }

// How long the host waits: long enough to remove a few entries (each write of an access
// list propagates over the folder's tree, README of the appcontainer runner), short
// enough that a time limit stays one.
inline constexpr std::uint32_t finish_wait_ms = 10000;

}  // namespace confine::windows
