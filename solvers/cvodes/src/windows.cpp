// Window boundaries: validated once, so every window has a positive length.
#include "remat/cvodes/windows.hpp"

#include "handles.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace remat::cvodes {

windows::windows(std::vector<double> boundaries) : boundaries_(std::move(boundaries))
{
    if (boundaries_.size() < 2)
        throw argument_error("remat::cvodes::windows: " + std::to_string(boundaries_.size()) +
                             " boundaries; at least two (t0 and tf) are needed");
    for (std::size_t i = 0; i < boundaries_.size(); ++i) {
        if (!std::isfinite(boundaries_[i]))
            throw argument_error("remat::cvodes::windows: boundary " + std::to_string(i) + " = " +
                                 detail::format(boundaries_[i]) + " is not finite");
        if (i > 0 && !(boundaries_[i] > boundaries_[i - 1]))
            throw argument_error("remat::cvodes::windows: boundary " + std::to_string(i) + " = " +
                                 detail::format(boundaries_[i]) + " is not after boundary " + std::to_string(i - 1) +
                                 " = " + detail::format(boundaries_[i - 1]) +
                                 (i == boundaries_.size() - 1 ? " (tf before t0?)" : ""));
    }
}

windows windows::uniform(double t0, double tf, step_t count)
{
    if (count < 1)
        throw argument_error("remat::cvodes::windows::uniform: " + std::to_string(count) + " windows; at least one");
    if (!(std::isfinite(t0) && std::isfinite(tf) && tf > t0))
        throw argument_error("remat::cvodes::windows::uniform: tf = " + detail::format(tf) +
                             " is not a finite time after t0 = " + detail::format(t0));
    std::vector<double> b(static_cast<std::size_t>(count) + 1);
    for (step_t k = 0; k < count; ++k)
        b[static_cast<std::size_t>(k)] = t0 + (tf - t0) * static_cast<double>(k) / static_cast<double>(count);
    b.back() = tf;
    return windows(std::move(b));
}

windows windows::including(std::span<const double> times) const
{
    std::vector<double> b = boundaries_;
    for (const double t : times) {
        if (!(t >= t0() && t <= tf()))
            throw argument_error("remat::cvodes::windows::including: t = " + detail::format(t) + " is outside [" +
                                 detail::format(t0()) + ", " + detail::format(tf()) + "]");
        b.push_back(t);
    }
    std::ranges::sort(b);
    b.erase(std::unique(b.begin(), b.end()), b.end());
    return windows(std::move(b));
}

bool windows::is_boundary(double t) const noexcept
{
    return std::ranges::binary_search(boundaries_, t);
}

} // namespace remat::cvodes
