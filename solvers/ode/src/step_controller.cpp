// The PI step-size controller (host arithmetic on the controller's state only).
#include "remat/ode/step_controller.hpp"
#include "remat/error.hpp"
#include "remat/ode/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace remat::ode {

namespace {

std::string number(double v)
{
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

void require(bool ok, const std::string& what, double value, const char* expected)
{
    if (!ok)
        throw argument_error("controller option " + what + " = " + number(value) + " (expected " + expected + ")");
}

} // namespace

pi_controller::pi_controller(controller_options options, int error_order, std::vector<double> stops, double t0)
    : options_(options), stops_(std::move(stops)), t0_(t0)
{
    require(std::isfinite(options_.rtol) && options_.rtol >= 0, "rtol", options_.rtol, "a finite number >= 0");
    require(std::isfinite(options_.atol) && options_.atol >= 0, "atol", options_.atol, "a finite number >= 0");
    require(options_.rtol > 0 || options_.atol > 0, "rtol + atol", options_.rtol + options_.atol, "> 0");
    require(std::isfinite(options_.initial_step) && options_.initial_step >= 0, "initial_step", options_.initial_step,
            "a finite number >= 0");
    require(options_.safety > 0 && options_.safety <= 1, "safety", options_.safety, "in (0, 1]");
    require(options_.min_factor > 0 && options_.min_factor < 1, "min_factor", options_.min_factor, "in (0, 1)");
    require(options_.max_factor > 1 && std::isfinite(options_.max_factor), "max_factor", options_.max_factor,
            "a finite number > 1");
    require(options_.beta >= 0 && options_.beta < 0.2, "beta", options_.beta, "in [0, 0.2)");
    require(options_.max_trials >= 1, "max_trials", static_cast<double>(options_.max_trials), ">= 1");
    if (error_order < 1)
        throw argument_error("error order " + std::to_string(error_order) + " (expected at least 1)");
    if (!std::isfinite(t0))
        throw argument_error("initial time t0 = " + number(t0) + " (expected a finite number)");
    if (stops_.empty())
        throw argument_error("no stop times (expected at least the end time)");
    double previous = t0;
    for (std::size_t i = 0; i < stops_.size(); ++i) {
        if (!(std::isfinite(stops_[i]) && stops_[i] > previous))
            throw argument_error("stop time " + std::to_string(i) + " = " + number(stops_[i]) +
                                 " (expected finite and after " + number(previous) + ")");
        previous = stops_[i];
    }
    exponent_ = 1.0 / (error_order + 1) - 0.75 * options_.beta;
}

controller_state pi_controller::start() const
{
    controller_state s;
    s.t = t0_;
    s.h = options_.initial_step > 0 ? options_.initial_step : (stops_.back() - t0_) / 100;
    return s;
}

trial pi_controller::next_trial(const controller_state& s) const
{
    if (finished(s))
        throw numerical_error("the adaptive solve has already reached its end time " + number(stops_.back()));
    const double stop = stops_[static_cast<std::size_t>(s.next_stop)];
    // Land on the stop when the step would end within 1% of a step before it (no sliver steps).
    if (s.t + 1.01 * s.h >= stop)
        return {stop - s.t, true};
    return {s.h, false};
}

bool pi_controller::decide(controller_state& s, const trial& tr, double err, std::int64_t& rejections_in_row) const
{
    const double inv_safety = 1.0 / options_.safety;
    if (std::isfinite(err) && err <= 1.0) {
        double factor = std::pow(err, exponent_) / std::pow(s.err_prev, options_.beta) * inv_safety;
        factor = std::clamp(factor, 1.0 / options_.max_factor, 1.0 / options_.min_factor);
        double h_next = tr.h / factor;
        if (s.rejected_last)
            h_next = std::min(h_next, tr.h);
        s.t = tr.lands_on_stop ? stops_[static_cast<std::size_t>(s.next_stop)] : s.t + tr.h;
        if (tr.lands_on_stop) {
            ++s.next_stop;
            // A step clipped to a stop says little about the next one: keep the unclipped proposal.
            h_next = std::max(h_next, s.h);
        }
        s.h = h_next;
        s.err_prev = std::max(err, 1e-4);
        s.at_stop = tr.lands_on_stop;
        s.rejected_last = false;
        rejections_in_row = 0;
        return true;
    }
    ++s.rejected;
    ++rejections_in_row;
    const double shrink = std::isfinite(err)
                              ? std::min(1.0 / options_.min_factor, std::pow(err, exponent_) * inv_safety)
                              : 1.0 / options_.min_factor;
    s.h = tr.h / shrink;
    s.rejected_last = true;
    const double ulp = std::abs(s.t) * std::numeric_limits<double>::epsilon();
    if (s.h < 16 * ulp || s.h <= std::numeric_limits<double>::min())
        throw numerical_error("step size underflow at t = " + number(s.t) + ": h = " + number(s.h) +
                              " after a trial of h = " + number(tr.h) + " with error estimate " + number(err));
    if (rejections_in_row >= options_.max_trials)
        throw numerical_error("no acceptable step at t = " + number(s.t) + " after " +
                              std::to_string(rejections_in_row) + " rejected trials (last h = " + number(tr.h) +
                              ", error estimate " + number(err) + ")");
    return false;
}

} // namespace remat::ode
