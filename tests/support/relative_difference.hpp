// How far a gradient is from a reference (tests only): the largest component difference over the
// reference's largest component, so that components near zero do not dominate.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace remat::test {

inline double max_relative_difference(const std::vector<double>& value, const std::vector<double>& reference)
{
    double diff = 0;
    double scale = 0;
    for (std::size_t i = 0; i < value.size(); ++i) {
        diff = std::max(diff, std::abs(value[i] - reference[i]));
        scale = std::max(scale, std::abs(reference[i]));
    }
    return diff / scale;
}

} // namespace remat::test
