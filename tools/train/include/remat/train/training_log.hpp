// remat/train/training_log.hpp — what the trainers (examples/neural_ode_spiral, the RNN trainer) show
// while and after they train: progress on a terminal or in a log (tools/report's progress reporter), the loss
// history, and the loss curve as SVG. Internal to this tree (target remat_train, not installed).
//
//     remat::train::training_log log(std::cerr, {.label = "training", .iterations = 300});
//     for (int i = 1; i <= 300; ++i) log.record(i, train_one_step());
//     log.finish();
//     remat::train::write_loss_curve("loss.svg", log.losses(), {.title = "spiral: training loss"});
#pragma once

#include "remat/report/progress.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace remat::train {

struct training_log_options {
    std::string label = "training";
    std::int64_t iterations = 0; ///< expected (> 0)
    report::progress_style style = report::progress_style::automatic;
    bool quiet = false; ///< record only, show nothing
};

/// The loss of each iteration, shown as it comes. argument_error for iterations < 1.
class training_log {
public:
    training_log(std::ostream& out, training_log_options options);

    /// Iteration `iteration` (1, 2, ...) ended with `loss`.
    void record(std::int64_t iteration, double loss);
    /// Training is over: the bar's final state or a last line.
    void finish();

    [[nodiscard]] const std::vector<double>& losses() const noexcept { return losses_; }
    /// Seconds since construction.
    [[nodiscard]] double elapsed_seconds() const;

private:
    training_log_options options_;
    std::vector<double> losses_;
    report::progress progress_;
    double start_;
};

/// A loss that ends this many times above where it started has diverged (Adam at too large a learning rate
/// took the spiral's loss from 1e3 to 1.1e9); one that merely failed to fall has not.
inline constexpr double divergence_factor = 100;

/// Whether training diverged: a loss that is not finite (recorded or final), or a final loss above
/// divergence_factor times the first recorded one. Empty when it did not; else one line saying how (with the
/// numbers), for the trainer to print before it exits 1.
///
///     if (const auto why = remat::train::divergence(log.losses(), final_loss)) { std::cerr << *why; return 1; }
[[nodiscard]] std::optional<std::string> divergence(const std::vector<double>& losses, double final_loss);

struct loss_curve_options {
    std::string title = "training loss";
    std::string subtitle{};
    std::string series = "loss";
};

/// The losses against the iteration (1-based) on a log scale, written with write_file_safely (all or
/// nothing). Non-finite or non-positive losses are refused (argument_error naming the iteration);
/// io_error when the file cannot be written.
void write_loss_curve(const std::filesystem::path& path, const std::vector<double>& losses,
                      const loss_curve_options& options);

} // namespace remat::train
