// A job on a real pseudo-terminal, as a shell with job control runs it: a session leader
// that owns the terminal stands for the shell, and the job is its child in a process group
// of its own, the terminal's foreground group (so that Ctrl-Z can stop it: the kernel
// discards a terminal stop in a group with no parent in its session). The test types into
// the terminal, resizes it and reads its screen, and finds the job's processes in /proc.
#pragma once

#include "support.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace test {

class PtyJob {
public:
    // Starts `argv` (argv[0] a path) with this process's environment. For `for_nobody`, the
    // terminal is handed to that user, as a login would.
    explicit PtyJob(const std::vector<std::string>& argv, bool for_nobody = false);
    // Kills what is left of the job (its process group) and lets the session end.
    ~PtyJob();
    PtyJob(const PtyJob&) = delete;
    PtyJob& operator=(const PtyJob&) = delete;

    // The job's process: the first of argv, and what it executes in turn (confinectl).
    pid_t pid() const { return job_; }
    // Types `keys` (Ctrl-C is "\x03", Ctrl-Z "\x1a"): the terminal turns them into signals.
    void type(std::string_view keys) const;
    // Resizes the terminal, as a terminal window does: the foreground group gets SIGWINCH.
    void resize(unsigned short rows, unsigned short columns) const;
    // Reads the screen until it shows `text` after what the last expect matched; false if
    // it has not within 20 s.
    bool expect(const std::string& text);
    // Waits (reading the screen) for the job to end, 20 s at most: its status, as Result
    // gives it (out: the screen), or nullopt.
    std::optional<Result> wait();
    const std::string& screen() const { return screen_; }
    // The terminal's slave, as this process names it (/dev/pts/N): the job's terminal.
    const std::string& terminal() const { return terminal_; }

private:
    bool read_for(int ms);

    int master_ = -1;
    int status_ = -1;   // the session leader's report: the job's pid, then its wait status
    int release_ = -1;  // closed to let the session leader end
    pid_t leader_ = -1, job_ = -1;
    std::string screen_;
    std::string terminal_;
    std::size_t matched_ = 0;
    std::optional<Result> ended_;
};

}  // namespace test
