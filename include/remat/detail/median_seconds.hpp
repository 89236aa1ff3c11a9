// remat/detail/median_seconds.hpp — the median wall time of repeated runs, for measurements that should not
// be thrown off by one slow run (remat::profile, remat-stress's cost estimates).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace remat::detail {

/// The median time of run(i) over `repeats` runs (>= 1); prepare(i) runs before each, untimed.
///
///     double s = remat::detail::median_seconds(5, [&](int) { x = x0; }, [&](int) { step(x); });
template <class Prepare, class Run>
double median_seconds(int repeats, Prepare&& prepare, Run&& run)
{
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        prepare(i);
        const auto start = std::chrono::steady_clock::now();
        run(i);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
    return times[static_cast<std::size_t>(repeats / 2)];
}

/// The same with nothing to prepare.
///
///     double s = remat::detail::median_seconds(5, [&](int) { step(x); });
template <class Run>
double median_seconds(int repeats, Run&& run)
{
    return median_seconds(repeats, [](int) {}, run);
}

} // namespace remat::detail
