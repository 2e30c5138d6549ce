// Run records: what `[report] records` and `journal` ask (confine.toml(5), docs/operators.md)
// — one JSON line per run that confinectl was asked to start, refused runs too, appended to
// DIRECTORY/USER.jsonl and sent to the systemd journal.
#pragma once

#include <confine/config.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <vector>

namespace confinectl {

// What a record says of the run besides its outcome.
struct RecordContext {
    std::chrono::system_clock::time_point began = std::chrono::system_clock::now();
    std::chrono::steady_clock::time_point began_steady = std::chrono::steady_clock::now();
    std::vector<std::string> command;
    std::string workspace;  // empty in read-only mode, or when the flags were refused
};

class Records {
public:
    // Ready before the run: the user's file in `records.directory` opened for appending
    // (made 0600 where missing; refused when it is a link or another user's), so that a
    // run whose record cannot be kept does not start. Nothing when neither is asked.
    static std::expected<Records, std::string> open(const confine::RunRecords& records);
    Records() = default;
    Records(Records&& other) noexcept;
    Records& operator=(Records&& other) noexcept;
    Records(const Records&) = delete;
    Records& operator=(const Records&) = delete;
    ~Records();

    bool wanted() const { return fd_ >= 0 || journal_; }

    // Writes the record: `body` (the run report, or {"error": ...}) with the context, the
    // configuration in force (`config`, when it loaded) and `exit_status`. A record that
    // cannot be written is said on stderr.
    void write(const RecordContext& context, const confine::Config* config, nlohmann::json body, int exit_status) const;

private:
    int fd_ = -1;
    bool journal_ = false;
    std::string file_;
};

// The record as written: `body` with schema_version, time, duration_ms, user, host,
// version, command, working_directory, workspace, configuration (files with their
// content hashes, managed files) and policy (`config --json`'s settings), exit_status.
nlohmann::json record_json(const RecordContext& context, const confine::Config* config, nlohmann::json body, int exit_status);

// Sends `record` to the journal through libsystemd (loaded when first needed), with
// MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=confinectl and CONFINE_OUTCOME, CONFINE_EXIT_STATUS,
// CONFINE_RUNNER, CONFINE_USER, CONFINE_WORKSPACE, CONFINE_RECORD (the JSON line). Why
// not, or nullopt.
std::optional<std::string> send_to_journal(const nlohmann::json& record);

}  // namespace confinectl
