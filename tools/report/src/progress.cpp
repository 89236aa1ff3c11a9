#include "remat/report/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace remat::report {
namespace {

constexpr double bar_redraw_seconds = 0.1;
constexpr double min_line_seconds = 1.0;
constexpr int bar_cells = 24;

double steady_seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

bool is_terminal(const std::ostream& out)
{
    int fd = -1;
    if (out.rdbuf() == std::cout.rdbuf())
        fd = STDOUT_FILENO;
    else if (out.rdbuf() == std::cerr.rdbuf() || out.rdbuf() == std::clog.rdbuf())
        fd = STDERR_FILENO;
    if (fd < 0 || ::isatty(fd) != 1)
        return false;
    const char* term = std::getenv("TERM");
    return term != nullptr && *term != '\0' && std::strcmp(term, "dumb") != 0;
}

std::string format_duration(double seconds)
{
    if (!(seconds >= 0) || !std::isfinite(seconds))
        return "?";
    if (seconds < 1)
        return fmt::format("{}ms", static_cast<long>(seconds * 1000));
    const auto s = static_cast<long>(std::llround(seconds));
    if (s < 60)
        return fmt::format("{}s", s);
    if (s < 3600)
        return fmt::format("{}m{:02}s", s / 60, s % 60);
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

progress::progress(std::ostream& out, progress_options options)
    : out_(out), options_(std::move(options)),
      bar_(options_.style == progress_style::bar || (options_.style == progress_style::automatic && is_terminal(out))),
      start_(now()), last_output_(start_)
{
}

progress::~progress()
{
    if (bar_ && printed_ && !finished_) {
        try {
            out_ << '\n' << std::flush;
        } catch (...) { // NOLINT(bugprone-empty-catch): a destructor must not throw
        }
    }
}

double progress::now() const
{
    return options_.clock ? options_.clock() : steady_seconds();
}

std::string progress::ending() const
{
    // work that ended short of its total (a time limit, an early stop) must not read as complete
    return options_.total > 0 && done_ < options_.total ? "stopped, " : "done, ";
}

std::string progress::status(bool finished) const
{
    const double elapsed = now() - start_;
    std::string text;
    if (options_.total > 0) {
        const double fraction = std::min(1.0, static_cast<double>(done_) / static_cast<double>(options_.total));
        text = fmt::format("{}/{} ({}%)", done_, options_.total, static_cast<int>(fraction * 100));
    } else {
        text = options_.unit.empty() ? fmt::format("{}", done_) : fmt::format("{} {}", done_, options_.unit);
    }
    if (value_ && !options_.value_name.empty())
        text += fmt::format(", {} {:.4g}", options_.value_name, *value_);
    text += fmt::format(", {} {}", finished ? "took" : "elapsed", format_duration(elapsed));
    if (!finished && options_.total > 0 && done_ > 0 && done_ < options_.total)
        text += fmt::format(", ETA {}", format_duration(elapsed * static_cast<double>(options_.total - done_) /
                                                        static_cast<double>(done_)));
    return text;
}

void progress::update(std::uint64_t done, std::optional<double> value)
{
    if (finished_)
        return;
    done_ = std::max(done_, done);
    if (value)
        value_ = value;
    const double t = now();
    if (bar_) {
        if (!printed_ || t - last_output_ >= bar_redraw_seconds) {
            last_output_ = t;
            draw_bar(false);
        }
        return;
    }
    // Lines: at each further tenth of the total (at most one a second), and at least every line_interval.
    bool due = t - last_output_ >= options_.line_interval;
    if (options_.total > 0 && done_ * 10 >= next_tenth_ * options_.total) {
        next_tenth_ = done_ * 10 / options_.total + 1;
        due = due || t - last_output_ >= min_line_seconds;
    }
    if (due) {
        last_output_ = t;
        print_line(false);
    }
}

void progress::finish(std::optional<double> value)
{
    if (finished_)
        return;
    if (value)
        value_ = value;
    if (bar_)
        draw_bar(true);
    else
        print_line(true);
    finished_ = true;
}

void progress::draw_bar(bool finished)
{
    std::string line = "\r" + (options_.label.empty() ? std::string() : options_.label + " ");
    if (options_.total > 0) {
        const double fraction = std::min(1.0, static_cast<double>(done_) / static_cast<double>(options_.total));
        const auto full = static_cast<int>(fraction * bar_cells);
        line += "[" + std::string(static_cast<std::size_t>(full), '#');
        for (int i = full; i < bar_cells; ++i)
            line += "·";
        line += "] ";
    }
    line += status(finished);
    line += "\x1b[K"; // erase what a longer previous line left
    if (finished)
        line += '\n';
    out_ << line << std::flush;
    printed_ = !finished;
}

void progress::print_line(bool finished)
{
    out_ << (options_.label.empty() ? std::string() : options_.label + ": ") << (finished ? ending() : "")
         << status(finished) << '\n'
         << std::flush;
}

} // namespace remat::report
