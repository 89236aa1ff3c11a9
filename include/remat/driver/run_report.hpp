// remat/driver/run_report.hpp — what a run did: steps, snapshots, bytes and where the time went.
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

/// One storage level's share of a run: the level's own counters (remat::level_stats) over the run.
struct level_report {
    std::string name;
    std::uint64_t stores = 0;
    std::uint64_t restores = 0;
    std::uint64_t bytes_written = 0;
    std::uint64_t bytes_read = 0;
    slot_t peak_slots = 0;         ///< most slots of this level held at once during the run
    std::uint64_t peak_bytes = 0;  ///< most snapshot bytes of this level held at once
    double wait_seconds = 0;       ///< time the run waited for this level's transfers
    double overlapped_seconds = 0; ///< this level's transfer time hidden behind compute
};

/// The report of one run of remat::run (or of an executor).
///
///     remat::run_report r = remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g));
///     std::printf("%s", remat::to_string(r).c_str());
struct run_report {
    step_t steps = 0;
    std::uint64_t forward_steps = 0; ///< calls of the forward step (recomputation included)
    std::uint64_t reverse_steps = 0; ///< calls of the adjoint step
    /// Forward steps run to give the terminal callable x_T (step T-1 once more; 0 without one, or when
    /// the loop stopped at x_T itself). Its time is in forward_seconds; it is not in forward_steps.
    std::uint64_t final_forward_steps = 0;
    std::uint64_t final_calls = 0; ///< calls of the terminal callable (0 or 1)
    /// Forward steps run by the taped step (remat::taped_step), each also one of forward_steps; 0 in a
    /// run without tapes. Forward evaluations = forward_steps + reverse_steps - tape_reverses.
    std::uint64_t taped_steps = 0;
    std::uint64_t tape_reverses = 0; ///< reverse steps from a tape (remat::tape_adjoint), of reverse_steps
    std::uint64_t peak_tapes = 0;    ///< most tapes held at once
    std::uint64_t stores = 0;
    std::uint64_t restores = 0;
    std::uint64_t bytes_written = 0;       ///< snapshot bytes copied into the store
    std::uint64_t bytes_read = 0;          ///< snapshot bytes copied out of it
    slot_t peak_slots = 0;                 ///< most slots held at once, all levels
    std::uint64_t peak_snapshot_bytes = 0; ///< most snapshot bytes held at once, all levels
    std::vector<level_report> levels;
    double seconds = 0; ///< wall time of the whole run
    /// Whether the user's calls were timed (run_options::time_user_code, off by default). false: the four
    /// per-callable seconds below are 0, not measured, and remat_seconds() is the whole run.
    bool user_timed = false;
    /// Inside the user's forward steps, with the GPU time of the kernels they queue on the store's user
    /// stream (the driver waits for it when the steps return: docs/driver.md, "Accounting").
    double forward_seconds = 0;
    double adjoint_seconds = 0; ///< inside the user's adjoint step (its kernels' GPU time too)
    double final_seconds = 0;   ///< inside the terminal callable (remat::final_state)
    /// Inside the loop's termination test (remat::run_online, run_online_converged; its kernels' GPU time too).
    double test_seconds = 0;
    double wait_seconds = 0;       ///< waiting for a store's asynchronous transfers (part of remat time)
    double overlapped_seconds = 0; ///< transfer time hidden behind the user's compute

    /// Time in the user's code.
    [[nodiscard]] double user_seconds() const noexcept
    {
        return forward_seconds + adjoint_seconds + final_seconds + test_seconds;
    }
    /// Time in remat: snapshot copies, transfers, the schedule and bookkeeping. (Only the user's calls
    /// are timed, with the time-stamp counter, and only with run_options::time_user_code = true: without
    /// it, user_timed is false and this is the whole run.)
    [[nodiscard]] double remat_seconds() const noexcept { return seconds - user_seconds(); }
};

/// A readable multi-line summary.
[[nodiscard]] std::string to_string(const run_report& report);

} // namespace remat
