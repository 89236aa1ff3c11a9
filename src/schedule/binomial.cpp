// Binomial checkpointing numbers, with saturating and checked arithmetic.
#include "remat/schedule/binomial.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"

#include <algorithm>
#include <string>

namespace remat::binomial {

using detail::uint128;

std::uint64_t choose_saturated(std::uint64_t n, std::uint64_t k, std::uint64_t cap) noexcept
{
    if (k > n)
        return 0;
    k = std::min(k, n - k);
    // c_i = C(n-k+i, i) grows with i, so once it reaches the cap the answer is the cap. Each step
    // multiplies a value <= cap < 2^64 by a factor < 2^64, which fits 128 bits, and divides exactly.
    uint128 c = 1;
    for (std::uint64_t i = 1; i <= k; ++i) {
        c = c * (n - k + i) / i;
        if (c >= cap)
            return cap;
    }
    return static_cast<std::uint64_t>(c);
}

std::uint64_t max_steps(slot_t slots, std::uint64_t repetitions)
{
    detail::require_positive_slots(slots); // a negative count would wrap to about 2^64 slots
    const auto s = static_cast<std::uint64_t>(slots);
    if (repetitions > detail::uint64_max - s)
        return detail::uint64_max;
    return choose_saturated(s + repetitions, s, detail::uint64_max);
}

std::uint64_t repetition_number(step_t steps, slot_t slots)
{
    detail::require_positive_steps(steps);
    detail::require_positive_slots(slots);
    const auto t = static_cast<std::uint64_t>(steps);
    // Slots beyond T-1 change nothing (store-all), and capping them keeps every binomial small.
    const auto s = std::min(static_cast<std::uint64_t>(slots), std::max<std::uint64_t>(t - 1, 1));
    // beta(s, r) is increasing in r and beta(s, T-1) >= T: binary search r in [0, T-1].
    std::uint64_t lo = 0;
    std::uint64_t hi = t - 1;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (choose_saturated(s + mid, std::min(s, mid), t) >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

std::uint64_t min_forward_steps(step_t steps, slot_t slots)
{
    const std::uint64_t r = repetition_number(steps, slots);
    if (r == 0)
        return 0;
    const auto t = static_cast<std::uint64_t>(steps);
    const auto s = std::min(static_cast<std::uint64_t>(slots), t - 1);
    // C(s+r, r-1) = C(s+r-1, s) * (s+r) / (s+1), and C(s+r-1, s) = beta(s, r-1) < T.
    const std::uint64_t beta_r_minus_1 = choose_saturated(s + r - 1, std::min(s, r - 1), detail::uint64_max);
    const uint128 c = static_cast<uint128>(beta_r_minus_1) * (s + r) / (s + 1);
    const uint128 forward = static_cast<uint128>(r) * t - c;
    return detail::narrow_count(forward, "the number of forward steps for " + std::to_string(steps) + " steps and " +
                                             std::to_string(slots) + " slots");
}

} // namespace remat::binomial
