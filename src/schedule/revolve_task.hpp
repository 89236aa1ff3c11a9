// revolve_task.hpp — one node of the binomial schedule and its split (private to src/schedule).
//
// A task reverses steps [start, start+length) from x_start with `slots` slots (x_start's included). Its
// split advances m steps, stores x_{start+m} (when the right part has at least two steps), reverses the
// right part with slots-1 slots, then restores x_start and reverses the left part [start, start+m) with
// the same slots. The stacked multi-level plan counts these tasks per depth; revolve's cursor walks the same
// tree with its own compact parts, and both split by remat/detail/revolve_band.hpp.
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>

namespace remat::detail {

struct revolve_task {
    step_t start = 0;
    step_t length = 0;
    slot_t slots = 0;
    std::uint64_t r = 0;      ///< the repetition number of (length, slots)
    std::uint64_t anchor = 0; ///< beta(slots, r-1), so that the split costs no loop over r
    bool start_stored = false;
};

/// The whole loop of `steps` steps with `slots` slots (slots <= max(1, steps-1)).
[[nodiscard]] revolve_task revolve_root(step_t steps, slot_t slots);

struct revolve_split {
    step_t m = 1; ///< steps advanced before the right part's start
    revolve_task left;
    revolve_task right;
};

/// The split of a task with length >= 2 and slots >= 2: forward-optimal, and among those the fewest stores.
[[nodiscard]] revolve_split split(const revolve_task& t) noexcept;

} // namespace remat::detail
