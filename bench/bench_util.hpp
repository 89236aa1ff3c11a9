// Small helpers shared by the benchmarks: repeated timing and medians.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace remat::bench {

/// Runs `body` `repeats` times and returns each run's wall time in seconds.
template <class Body>
std::vector<double> time_runs(int repeats, Body&& body)
{
    std::vector<double> seconds;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        body();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return seconds;
}

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
template <class T>
inline void keep(const T& value)
{
    asm volatile("" : : "g"(&value) : "memory");
}

} // namespace remat::bench
