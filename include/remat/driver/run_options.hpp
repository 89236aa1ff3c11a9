// remat/driver/run_options.hpp — the knobs of remat::run, run_online and run_resumed.
#pragma once

#include <cstddef>

namespace remat {

struct run_options {
    /// How many actions ahead the driver looks to tell the store about coming restores (0: none; at
    /// most 31 are used). Only stores that prefetch (tiered stores with asynchronous levels) see them.
    std::size_t lookahead = 8;
    /// Whether the user's calls are timed into the report's forward_seconds, adjoint_seconds,
    /// final_seconds and test_seconds (two reads of the time-stamp counter per call: 10-50 ns each, more
    /// than the rest of the driver's work per action). Off by default: no clock is read per action, those
    /// stay 0 and run_report::user_timed is false; `seconds`, the run's wall time, is measured either way.
    ///
    ///     remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g),
    ///                remat::run_options{.time_user_code = true});   // forward_seconds, adjoint_seconds, ...
    bool time_user_code = false;
};

} // namespace remat
