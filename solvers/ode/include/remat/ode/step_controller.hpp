// remat/ode/step_controller.hpp — step-size control for adaptive Runge–Kutta solvers: a PI controller
// (Gustafsson 1991; Hairer & Wanner, Solving ODEs II, IV.2) whose whole memory is a small trivially
// copyable struct that travels with the state in every snapshot, so a recomputation from a snapshot
// takes exactly the steps of the first sweep, rejected trials included.
//
// With err the scaled RMS error estimate of a trial of size h (err <= 1 accepts), q = error_order + 1:
//     accepted:  h_next = h / clamp(err^(1/q - 0.75 beta) / err_prev^beta / safety, 1/max_factor, 1/min_factor),
//                err_prev = max(err, 1e-4); no growth right after a rejection;
//     rejected:  h <- h / min(1/min_factor, err^(1/q - 0.75 beta) / safety).
// Steps are clipped to land exactly on each stop time (observation times, and the end).
#pragma once

#include <cstdint>
#include <vector>

namespace remat::ode {

/// Tolerances and controller constants.
///
///     remat::ode::controller_options o{.rtol = 1e-6, .atol = 1e-8, .initial_step = 0.01};
struct controller_options {
    double rtol = 1e-6;
    double atol = 1e-8;
    double initial_step = 0; // 0: (last stop - t0) / 100
    double safety = 0.9;
    double min_factor = 0.2;       // the most a step shrinks at once
    double max_factor = 10.0;      // the most it grows
    double beta = 0.04;            // the PI controller's memory (0: an I controller)
    std::int64_t max_trials = 100; // rejected trials in a row before giving up
};

/// The controller's part of an adaptive solver's state (a snapshot copies it with the state).
struct controller_state {
    double t = 0;               // t_k
    double h = 0;               // the next trial's size
    double err_prev = 1e-4;     // the last accepted error (PI memory)
    std::int64_t next_stop = 0; // index of the next stop time not yet reached
    std::int64_t rejected = 0;  // rejected trials so far (statistics; never read by the controller)
    bool at_stop = false;       // step k-1 landed on a stop time: t_k is one (false at t0)
    bool rejected_last = false; // the trial before the accepted one was rejected
};

/// One trial of a step: its size, and whether it lands on the next stop time.
struct trial {
    double h = 0;
    bool lands_on_stop = false;
};

/// The PI controller of an adaptive solver over the stop times `stops` (increasing, all after t0; the
/// last is the end). Throws remat::argument_error for bad options or stops, naming the value.
///
///     remat::ode::pi_controller c(opts, 4, {0.025, 0.05, ..., 25.0}, 0.0);
///     remat::ode::controller_state s = c.start();
class pi_controller {
public:
    pi_controller(controller_options options, int error_order, std::vector<double> stops, double t0);

    /// The state at t0.
    [[nodiscard]] controller_state start() const;
    /// Whether the solve has reached the last stop.
    [[nodiscard]] bool finished(const controller_state& s) const noexcept
    {
        return s.next_stop >= static_cast<std::int64_t>(stops_.size());
    }
    /// The next trial from s (clipped to the next stop). remat::ode::numerical_error when s is finished.
    [[nodiscard]] trial next_trial(const controller_state& s) const;
    /// Decides on a trial with scaled error `err` (NaN or infinite counts as a rejection); updates s. On
    /// acceptance t advances to the stop exactly when the trial lands on it. Throws numerical_error when
    /// the step size underflows (h < 16 ulp(t)) or after max_trials rejections in a row, naming t, h and err.
    [[nodiscard]] bool decide(controller_state& s, const trial& tr, double err, std::int64_t& rejections_in_row) const;

    [[nodiscard]] const controller_options& options() const noexcept { return options_; }
    [[nodiscard]] const std::vector<double>& stops() const noexcept { return stops_; }

private:
    controller_options options_;
    double exponent_; // 1/q - 0.75 beta
    std::vector<double> stops_;
    double t0_;
};

} // namespace remat::ode
