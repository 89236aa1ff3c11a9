// Bit-for-bit comparison of gradients (tests only): a gradient from any schedule and store must equal the
// store-everything run's exactly. NaN compares equal to the same NaN here, so callers also check that
// their reference is finite.
#pragma once

#include <cstring>
#include <vector>

namespace remat::test {

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace remat::test
