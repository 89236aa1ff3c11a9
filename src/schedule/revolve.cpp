// The binomial schedule as an explicit task stack.
//
// A task (start, l, s) reverses l steps from x_start, stored, with s slots. It advances m steps,
// stores x_{start+m} (unless only one step is left to its right), reverses the right part with s-1
// slots and then the left part [start, start+m) with s slots. The split m is chosen in O(1):
//  - forward-optimal splits form Griewank's interval
//        max(beta(s,r-2), l-beta(s-1,r)) <= m <= min(beta(s,r-1), l-beta(s-1,r-1));
//  - among them, the fewest stores come from the longest right part whose store count is still on its
//    plateau: l - m = beta(s-1,r-1) + beta(s-2,r-1), clamped into the interval. (The store count of a
//    band r rises only over its last beta(s-2, r) lengths; checked against a brute-force dynamic
//    program in tests/schedule/revolve_test.cpp.)
// The children's repetition numbers differ from r by at most 2, and each part carries the three binomials
// its split starts from, which its children get by Pascal's rule (remat/detail/revolve_band.hpp): a split
// costs one 64-bit division and no loop over r. The cursor (remat/schedule/revolve.hpp) runs the rule inline;
// detail::split gives the same splits to the stacked multi-level plan, which counts the tree per depth.
#include "remat/schedule/revolve.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/schedule/binomial.hpp"
#include "revolve_task.hpp"

#include <algorithm>

namespace remat {

using detail::mul_div_exact;
using detail::revolve_band_of;

namespace detail {

revolve_task revolve_root(step_t steps, slot_t slots)
{
    revolve_task t;
    t.start = 0;
    t.length = steps;
    t.slots = slots;
    t.r = binomial::repetition_number(steps, slots);
    t.anchor = t.r > 0 ? binomial::max_steps(slots, t.r - 1) : 0;
    t.start_stored = steps >= 2;
    return t;
}

revolve_split split(const revolve_task& t) noexcept
{
    const auto l = static_cast<std::uint64_t>(t.length);
    const auto s = static_cast<std::uint64_t>(t.slots);
    revolve_band left_band;
    revolve_band right_band;
    const auto m =
        static_cast<step_t>(detail::split_revolve_band(l, s, revolve_band_of(s, t.r, t.anchor), left_band, right_band));
    const revolve_task left{t.start, m, t.slots, left_band.r, left_band.p, t.start_stored};
    const revolve_task right{t.start + m, t.length - m, t.slots - 1, right_band.r, right_band.p, t.length - m >= 2};
    return {m, left, right};
}

} // namespace detail

revolve::revolve(step_t steps, slot_t slots) : steps_(steps), slots_(slots), used_slots_(0), repetition_(0)
{
    detail::require_positive_steps(steps);
    detail::require_positive_slots(slots);
    used_slots_ = steps > 1 ? std::min<slot_t>(slots, steps - 1) : 1;
    repetition_ = binomial::repetition_number(steps, used_slots_);
}

schedule_cost revolve::cost() const
{
    schedule_cost c;
    c.steps = steps_;
    c.reverse_steps = static_cast<std::uint64_t>(steps_);
    c.repetition = repetition_;
    c.forward_steps = binomial::min_forward_steps(steps_, used_slots_);
    c.restores = static_cast<std::uint64_t>(steps_ - 1);
    if (steps_ >= 2) {
        // stores = beta(s-1,r-1) + max(0, T - beta(s,r-1) - beta(s-1,r-1)); both terms are < T.
        const auto s = static_cast<std::uint64_t>(used_slots_);
        const std::uint64_t r = repetition_;
        const auto t = static_cast<std::uint64_t>(steps_);
        const std::uint64_t beta_s = binomial::max_steps(used_slots_, r - 1);
        const std::uint64_t beta_s1 = mul_div_exact(beta_s, s, s + r - 1);
        c.stores = beta_s1 + (t > beta_s + beta_s1 ? t - beta_s - beta_s1 : 0);
        c.peak_slots = used_slots_;
    }
    finish_single_level(c);
    return c;
}

revolve::cursor_type revolve::cursor() const
{
    cursor_type c;
    c.used_slots_ = used_slots_;
    c.pending_.resize(static_cast<std::size_t>(std::min<slot_t>(used_slots_, 64))); // grows by doubling
    c.task_.start = 0;
    c.task_.length = steps_;
    if (repetition_ > 0)
        c.task_.band = revolve_band_of(static_cast<std::uint64_t>(used_slots_), repetition_,
                                       binomial::max_steps(used_slots_, repetition_ - 1));
    c.start_stored_ = steps_ >= 2;
    c.phase_ = c.start_stored_ ? cursor_type::phase::store_start : cursor_type::phase::run;
    return c;
}

void revolve::cursor_type::grow_pending()
{
    pending_.resize(pending_.size() * 2);
}

} // namespace remat
