// A pseudo-terminal of the run's own (RunOptions::own_terminal, docs/design.md §7): made
// before the wrap, its slave handed to the command as its standard descriptors and
// controlling terminal, its master relayed to this process's terminal, which is in raw
// mode meanwhile. Internal to libconfine.
//
//   auto terminal = OwnTerminal::open();      // nullopt: none could be made; pipes as ever
//   spec.terminal = terminal->slave();         // the child's (spawn.cpp)
//   terminal->start_relay();                   // raw mode, keyboard to the command
//   pump.read(terminal->output());             // the command's output to ours
//   terminal->finish();                        // drained, stopped, settings given back
#pragma once

#include "fd.hpp"
#include "output_pump.hpp"

#include <memory>
#include <optional>
#include <thread>

namespace confine::detail {

// Whether this process can stand for a command at its terminal: stdin and stdout are
// terminals, and this process is in the terminal's foreground (a background job that
// took the terminal's settings would be stopped by it).
bool at_own_terminal();

// Where this process's terminal is in raw mode for a run's own terminal and `fd` is that
// terminal: writes `bytes` there with each line feed as a carriage return and a line feed,
// as the terminal would have (what a rule reads of a runner's stderr, copied on, keeps
// its lines); true then, else false and nothing written.
bool write_to_raw_terminal(int fd, std::string_view bytes);

class OwnTerminal {
public:
    // A new pseudo-terminal whose slave has this process's terminal settings and window
    // size; nullopt (logged) when the system gives none.
    static std::optional<OwnTerminal> open();
    OwnTerminal(OwnTerminal&&) noexcept;
    OwnTerminal& operator=(OwnTerminal&&) noexcept;
    ~OwnTerminal();  // finish()

    int slave() const { return slave_.get(); }
    // The slave's path (/dev/pts/N), as this process's devpts names it.
    const std::string& slave_path() const { return path_; }
    // Once the child has its copies: this process lets go of the slave, so that the
    // master says EIO once the command's last descriptor of it is closed.
    void close_slave() { slave_ = Fd(); }
    // Puts this process's terminal in raw mode and starts copying its input to the
    // command's terminal (a thread of its own, so that a command that reads nothing
    // never holds up its output).
    void start_relay();
    // The command's output as the pump reads it: copied to this process's stdout.
    PumpStream output();
    // What the command wrote before it ended and is not read yet, copied; the input
    // thread stopped; this process's terminal settings given back. Idempotent.
    void finish();

private:
    OwnTerminal() = default;
    Fd master_, slave_, stop_read_, stop_write_;
    std::string path_;
    std::thread input_;
    bool relaying_ = false;
};

}  // namespace confine::detail
