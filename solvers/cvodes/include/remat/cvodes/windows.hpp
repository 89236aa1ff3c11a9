// remat/cvodes/windows.hpp — the horizon [t0, tf] cut into windows, the steps remat checkpoints.
#pragma once

#include "remat/types.hpp"

#include <span>
#include <vector>

namespace remat::cvodes {

/// Strictly increasing, finite window boundaries t_0 < t_1 < ... < t_W: window k runs from t_k to t_{k+1},
/// and its start state is what remat's schedule stores. Every backward problem must start at a boundary
/// (`including` adds the starts).
///
///     auto w = remat::cvodes::windows::uniform(0.0, 100.0, 50).including(std::vector{42.5});   // 51 windows
///     remat::cvodes::windows v({0.0, 0.4, 4.0, 40.0, 400.0});                                  // 4 windows
class windows {
public:
    /// Throws remat::argument_error naming the first boundary that is not finite or not above the one before,
    /// or fewer than two boundaries.
    explicit windows(std::vector<double> boundaries);
    /// `count` windows of equal length over [t0, tf] (tf exactly the last boundary); tf > t0, count >= 1.
    [[nodiscard]] static windows uniform(double t0, double tf, step_t count);
    /// These windows with the given times (inside [t0, tf]) added as boundaries where they are not already.
    [[nodiscard]] windows including(std::span<const double> times) const;

    [[nodiscard]] step_t count() const noexcept { return static_cast<step_t>(boundaries_.size()) - 1; }
    [[nodiscard]] double start(step_t k) const { return boundaries_.at(static_cast<std::size_t>(k)); }
    [[nodiscard]] double end(step_t k) const { return boundaries_.at(static_cast<std::size_t>(k) + 1); }
    [[nodiscard]] double t0() const noexcept { return boundaries_.front(); }
    [[nodiscard]] double tf() const noexcept { return boundaries_.back(); }
    [[nodiscard]] bool is_boundary(double t) const noexcept;
    [[nodiscard]] std::span<const double> boundaries() const noexcept { return boundaries_; }

private:
    std::vector<double> boundaries_;
};

} // namespace remat::cvodes
