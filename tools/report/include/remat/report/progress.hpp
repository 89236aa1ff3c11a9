// remat/report/progress.hpp — progress of long work: a bar on a terminal, plain lines in logs.
//
// On a terminal (automatic detection: the stream is std::cout, std::cerr or std::clog, its file
// descriptor is a tty, and TERM is not "dumb") one line is redrawn in place, at most ten times a second:
//
//     training [##########··············] 420/1000 (42%), loss 0.0125, elapsed 12s, ETA 17s
//
// Anywhere else (a pipe, a CI log, a file) it prints whole lines, one each time another tenth of the
// work is done (but at most one a second) and one at least every `line_interval` seconds while it runs,
// plus one at the end:
//
//     training: 420/1000 (42%), loss 0.0125, elapsed 12s, ETA 17s
//     training: done, 1000/1000 (100%), loss 0.0031, took 29s
//
// Work that finishes short of its total (a time limit, an early stop) says so with the count it reached:
//
//     training: stopped, 420/1000 (42%), loss 0.0125, took 12s
//
// Part of remat_report (internal, not installed).
//
//     remat::report::progress bar(std::cerr, {.label = "training", .total = 1000, .value_name = "loss"});
//     for (int i = 1; i <= 1000; ++i) bar.update(i, train_one_step());
//     bar.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace remat::report {

enum class progress_style {
    automatic, ///< bar on a terminal, lines otherwise
    bar,
    lines,
};

struct progress_options {
    std::string label{};      ///< what runs: "training", "tradeoff"
    std::uint64_t total = 0;  ///< units of work expected; 0 when unknown (no bar, no percentage, no ETA)
    std::string value_name{}; ///< what update()'s value is ("loss"); empty: values are not shown
    std::string unit{};       ///< appended to counts when the total is unknown ("steps"); may be empty
    progress_style style = progress_style::automatic;
    double line_interval = 30;       ///< lines: seconds between lines at the latest
    std::function<double()> clock{}; ///< seconds from any origin; empty: std::chrono::steady_clock (tests inject one)
};

/// Whether `out` writes to a terminal that can redraw a line (see the file comment).
[[nodiscard]] bool is_terminal(const std::ostream& out);

/// "850ms", "12s", "3m05s", "2h03m".
[[nodiscard]] std::string format_duration(double seconds);

/// Progress of one piece of work. Cheap to call on every iteration: it reads the clock and returns
/// unless something is due. Not thread-safe.
class progress {
public:
    progress(std::ostream& out, progress_options options);
    /// Ends an unfinished bar's line, so that what is printed next starts on a line of its own.
    ~progress();
    progress(const progress&) = delete;
    progress& operator=(const progress&) = delete;

    /// `done` units of work are complete (not decreasing); `value` is the latest value to show.
    void update(std::uint64_t done, std::optional<double> value = std::nullopt);
    /// The work has ended: the bar at its final state and a newline, or a last line with the total time
    /// ("done", or "stopped" with the count reached when that is short of the total). Later calls do nothing.
    void finish(std::optional<double> value = std::nullopt);

    /// Whether this reporter draws a bar (true) or prints lines (false).
    [[nodiscard]] bool draws_bar() const noexcept { return bar_; }

private:
    [[nodiscard]] double now() const;
    [[nodiscard]] std::string ending() const;
    [[nodiscard]] std::string status(bool finished) const;
    void draw_bar(bool finished);
    void print_line(bool finished);

    std::ostream& out_;
    progress_options options_;
    bool bar_;
    double start_;
    double last_output_;
    std::uint64_t done_ = 0;
    std::optional<double> value_;
    std::uint64_t next_tenth_ = 1; // lines: the next tenth of the total that prints a line
    bool printed_ = false;         // bar: something is on the current line
    bool finished_ = false;
};

} // namespace remat::report
