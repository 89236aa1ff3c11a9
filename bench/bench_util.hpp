// Small helpers shared by the benchmarks: repeated timing and medians.
#pragma once

#include "remat/detail/median.hpp"
#include "remat/schedule/action.hpp"

#include <chrono>
#include <cstdint>
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

using detail::median; // the library's, so that remat calibrate and the benchmarks take one median

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
template <class T>
inline void keep(const T& value)
{
    asm volatile("" : : "g"(&value) : "memory");
}

/// Median nanoseconds per action of a full pass over `plan`'s cursor; `actions` gets the count.
template <class Schedule>
double ns_per_action(const Schedule& plan, int repeats, std::uint64_t& actions)
{
    std::uint64_t checksum = 0;
    const auto runs = time_runs(repeats, [&] {
        actions = 0;
        auto cursor = plan.cursor();
        remat::action a;
        while (cursor.next(a)) {
            ++actions;
            checksum += a.index();
        }
    });
    keep(checksum);
    return median(runs) * 1e9 / static_cast<double>(actions);
}

} // namespace remat::bench
