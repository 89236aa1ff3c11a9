// remat/detail/median.hpp — the median of measured values, for figures that one slow run should not throw
// off: remat calibrate's timings and the benchmarks' (remat/detail/median_seconds.hpp times the runs too).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace remat::detail {

/// The median of `values` (not empty): the middle value, or the mean of the middle two for an even count.
///
///     remat::detail::median({3.0, 1.0, 2.0, 10.0}); // 2.5
inline double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace remat::detail
