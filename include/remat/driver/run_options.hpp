// remat/driver/run_options.hpp — the knobs of remat::run, run_online and run_resumed.
#pragma once

#include <cstddef>

namespace remat {

struct run_options {
    /// How many actions ahead the driver looks to tell the store about coming restores (0: none; at
    /// most 31 are used). Only stores that prefetch (tiered stores with asynchronous levels) see them.
    std::size_t lookahead = 8;
    /// Whether the user's calls are timed into the report's forward_seconds, adjoint_seconds,
    /// final_seconds and test_seconds (two reads of the time-stamp counter per call). false: no clock is
    /// read per action and those stay 0; `seconds`, the run's wall time, is measured either way.
    bool time_user_code = true;
};

} // namespace remat
