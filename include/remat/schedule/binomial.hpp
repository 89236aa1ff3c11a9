// remat/schedule/binomial.hpp — the numbers of binomial checkpointing (Griewank & Walther 2000).
//
// With s slots (x_0 occupying one of them) and repetition number r, at most beta(s, r) = C(s+r, s)
// steps can be reversed so that no step is run forward more than r times. The minimal number of
// forward steps for T steps is r*T - C(s+r, r-1), with r the smallest integer such that
// C(s+r, s) >= T. All functions take 64-bit step counts and never overflow silently.
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>

namespace remat::binomial {

/// C(n, k), or `cap` when C(n, k) >= cap. Exact below the cap; never overflows.
///
///     remat::binomial::choose_saturated(5, 2, 1000);   // 10
[[nodiscard]] std::uint64_t choose_saturated(std::uint64_t n, std::uint64_t k, std::uint64_t cap) noexcept;

/// beta(s, r) = C(s+r, s): the most steps that `slots` slots reverse with each step run forward at
/// most `repetitions` times; saturates at 2^64-1. Throws remat::argument_error when slots < 1.
///
///     remat::binomial::max_steps(3, 2);   // 10
[[nodiscard]] std::uint64_t max_steps(slot_t slots, std::uint64_t repetitions);

/// The repetition number r: the smallest r >= 0 with C(s+r, s) >= steps. O(log T * min(s, r)).
/// Throws remat::argument_error when steps < 1 or slots < 1.
///
///     remat::binomial::repetition_number(10, 3);   // 2
[[nodiscard]] std::uint64_t repetition_number(step_t steps, slot_t slots);

/// The minimal number of forward steps, r*T - C(s+r, r-1) (T-1 once slots >= T-1).
/// Throws remat::overflow_error when the count does not fit 64 bits (tiny s with huge T).
///
///     remat::binomial::min_forward_steps(10, 3);   // 15
[[nodiscard]] std::uint64_t min_forward_steps(step_t steps, slot_t slots);

} // namespace remat::binomial
