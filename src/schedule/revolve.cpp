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
// Every binomial is derived from the cached anchor beta(s, r-1) < l by one exact multiply-divide, and
// the children's repetition numbers differ from r by at most 2, so no loop over r is ever needed.
#include "remat/schedule/revolve.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/schedule/binomial.hpp"

#include <algorithm>

namespace remat {

using detail::mul_div_exact;

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
    const std::uint64_t r = t.r;
    const std::uint64_t beta_s_r1 = t.anchor; // beta(s, r-1) < l
    std::uint64_t m = 1;
    revolve_task left{t.start, 1, t.slots, 0, 0, t.start_stored};
    revolve_task right{t.start + 1, t.length - 1, t.slots - 1, 0, 0, l - 1 >= 2};
    if (r == 1) {
        // l <= s+1: store everything. The right part of l-1 steps has r = 1 unless it is one step.
        right.r = l - 1 > 1 ? 1 : 0;
        right.anchor = right.r; // beta(s-1, 0) = 1
    } else {
        const std::uint64_t beta_s_r2 = mul_div_exact(beta_s_r1, r - 1, s + r - 1);   // beta(s, r-2)
        const std::uint64_t beta_s1_r1 = mul_div_exact(beta_s_r1, s, s + r - 1);      // beta(s-1, r-1)
        const std::uint64_t beta_s2_r1 = mul_div_exact(beta_s1_r1, s - 1, s + r - 2); // beta(s-2, r-1)
        // beta(s-1, r) may exceed 64 bits; only l - beta(s-1, r) matters, and only when positive.
        const std::uint64_t beta_s1_r = detail::mul_div_saturated(beta_s1_r1, s - 1 + r, r);
        std::uint64_t lo = std::max<std::uint64_t>(1, beta_s_r2);
        if (beta_s1_r < l)
            lo = std::max(lo, l - beta_s1_r);
        const std::uint64_t hi = std::min(beta_s_r1, l - beta_s1_r1);
        const std::uint64_t plateau = beta_s1_r1 + beta_s2_r1;
        m = l > plateau ? std::clamp(l - plateau, lo, hi) : lo;

        left.length = static_cast<step_t>(m);
        if (m > beta_s_r2) {
            left.r = r - 1;
            left.anchor = beta_s_r2;
        } else {
            left.r = r - 2;
            left.anchor = mul_div_exact(beta_s_r2, r - 2, s + r - 2); // beta(s, r-3)
        }
        right.start = t.start + static_cast<step_t>(m);
        right.length = static_cast<step_t>(l - m);
        right.start_stored = l - m >= 2;
        if (l - m > beta_s1_r1) {
            right.r = r;
            right.anchor = beta_s1_r1;
        } else {
            right.r = r - 1;
            right.anchor = mul_div_exact(beta_s1_r1, r - 1, s + r - 2); // beta(s-1, r-2)
        }
    }
    return {static_cast<step_t>(m), left, right};
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
    c.pending_.reserve(static_cast<std::size_t>(std::min<slot_t>(used_slots_, 4096)));
    c.current_ = detail::revolve_root(steps_, used_slots_);
    if (c.current_.start_stored)
        c.queue_.push(store{0, 0, 0});
    c.done_ = false;
    return c;
}

void revolve::cursor_type::refill()
{
    task& t = current_;
    if (t.length == 1) {
        queue_.push(reverse{t.start});
        if (t.start_stored)
            queue_.push(free_slot{0, slot_of(t.slots)});
        if (pending_.empty()) {
            done_ = true;
            return;
        }
        t = pending_.back();
        pending_.pop_back();
        queue_.push(restore{0, slot_of(t.slots), t.start});
        return;
    }
    if (t.slots == 1) {
        // One slot, holding x_start: run to the last step, reverse it, come back.
        const step_t last = t.start + t.length - 1;
        queue_.push(advance{t.start, last});
        queue_.push(reverse{last});
        queue_.push(restore{0, slot_of(1), t.start});
        --t.length;
        return;
    }

    const detail::revolve_split parts = detail::split(t);
    const step_t m = parts.m;
    const task left = parts.left;
    const task right = parts.right;
    queue_.push(advance{t.start, t.start + m});
    if (right.start_stored)
        queue_.push(store{0, slot_of(right.slots), right.start});
    pending_.push_back(left);
    t = right;
}

} // namespace remat
