// Uniform checkpointing. Segment j covers steps [jk, jk+L_j) with L_j = k except the last one; its
// state x_{jk+i} lives in slot j+i, so a segment's states reuse the slots of the checkpoints already
// freed behind it. With n segments and L the last one's length:
//   forward steps = T-1 + (n-1)(k-1)      stores = (n-1) + (L-1) + (n-1)*max(k-2, 0)
//   restores = T-1                        peak   = (n-1) + max(L-1, k-2, 0)   (T-1 when n = 1)
#include "remat/schedule/uniform.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace remat {
namespace {

struct uniform_counts {
    std::uint64_t forward_steps;
    std::uint64_t stores;
    slot_t peak_slots;
};

uniform_counts counts_for(step_t steps, step_t every)
{
    const auto t = static_cast<std::uint64_t>(steps);
    const auto k = static_cast<std::uint64_t>(std::min(every, steps));
    const std::uint64_t n = (t + k - 1) / k;
    const std::uint64_t last = t - (n - 1) * k;
    const std::uint64_t extra = k >= 2 ? k - 2 : 0;
    uniform_counts c{};
    c.forward_steps = t - 1 + (n - 1) * (k - 1); // (n-1)(k-1) < T: no overflow
    c.stores = (n - 1) + (last - 1) + (n - 1) * extra;
    c.peak_slots = static_cast<slot_t>(n == 1 ? t - 1 : (n - 1) + std::max(last - 1, extra)); // < T
    return c;
}

} // namespace

uniform::uniform(step_t steps, step_t every) : steps_(steps), every_(every)
{
    detail::require_positive_steps(steps);
    if (every < 1)
        throw argument_error("the checkpoint spacing (every) must be at least 1, got " + std::to_string(every));
    every_ = std::min(every, steps);
}

slot_t uniform::min_slots(step_t steps)
{
    detail::require_positive_steps(steps);
    // The peak is at least n + k - 3 with n*k >= T, so only spacings near sqrt(T) can be minimal.
    const auto root = static_cast<step_t>(std::sqrt(static_cast<long double>(steps)));
    slot_t best = std::numeric_limits<slot_t>::max();
    for (step_t k = std::max<step_t>(1, root - 2); k <= std::min(steps, root + 2); ++k)
        best = std::min(best, counts_for(steps, k).peak_slots);
    return best;
}

uniform uniform::fit(step_t steps, slot_t slots)
{
    detail::require_positive_steps(steps);
    detail::require_positive_slots(slots);
    if (steps - 1 <= slots)
        return uniform(steps, 1);
    // Every (n, k) pair has k <= sqrt(T)+1 or n <= sqrt(T)+1, and the peak is at least n-1 and k-2:
    // enumerate small spacings directly and, for each small segment count n, its best spacing.
    const auto t = static_cast<std::uint64_t>(steps);
    const auto s = static_cast<std::uint64_t>(slots);
    const auto root = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(t))) + 1;
    step_t best_k = 0;
    uniform_counts best{detail::uint64_max, detail::uint64_max, 0};
    auto consider = [&](std::uint64_t k) {
        const uniform_counts c = counts_for(steps, static_cast<step_t>(k));
        if (c.peak_slots <= slots && (c.forward_steps < best.forward_steps ||
                                      (c.forward_steps == best.forward_steps && c.stores < best.stores))) {
            best = c;
            best_k = static_cast<step_t>(k);
        }
    };
    for (std::uint64_t k = 1; k <= std::min(root, s + 2); ++k)
        consider(k);
    // n segments: peak = (n-1) + max(L-1, k-2) with L = T - (n-1)k. Forward steps grow with k, so the
    // best k for this n is the smallest one with ceil(T/k) = n and L-1 <= s-(n-1).
    for (std::uint64_t n = 2; n <= std::min(root, s + 1); ++n) {
        std::uint64_t k = (t + n - 1) / n;      // smallest k with ceil(T/k) <= n
        const std::uint64_t room = s - (n - 1); // L-1 <= room  <=>  (n-1)k >= T-1-room
        if (t > 1 + room)
            k = std::max(k, (t - 1 - room + n - 2) / (n - 1));
        if ((t + k - 1) / k == n)
            consider(k);
    }
    if (best_k == 0)
        throw capacity_error("no uniform spacing fits " + std::to_string(slots) + " slots for " +
                             std::to_string(steps) + " steps; it needs at least " + std::to_string(min_slots(steps)) +
                             " slots");
    return uniform(steps, best_k);
}

schedule_cost uniform::cost() const
{
    const uniform_counts u = counts_for(steps_, every_);
    schedule_cost c;
    c.steps = steps_;
    c.forward_steps = u.forward_steps;
    c.reverse_steps = static_cast<std::uint64_t>(steps_);
    c.stores = u.stores;
    c.restores = static_cast<std::uint64_t>(steps_ - 1);
    c.peak_slots = u.peak_slots;
    c.repetition = (every_ >= 2 && every_ < steps_) ? 2 : (steps_ >= 2 ? 1 : 0);
    finish_single_level(c);
    return c;
}

uniform::cursor_type uniform::cursor() const
{
    cursor_type c;
    c.steps_ = steps_;
    c.every_ = every_;
    c.segments_ = (steps_ + every_ - 1) / every_;
    c.phase_ = c.segments_ > 1 ? cursor_type::phase::checkpoints : cursor_type::phase::segment_forward;
    c.segment_ = c.segments_ > 1 ? 0 : c.segments_ - 1;
    return c;
}

void uniform::cursor_type::refill()
{
    const step_t base = segment_ * every_;
    const step_t length = segment_ == segments_ - 1 ? steps_ - base : every_;
    switch (phase_) {
    case phase::checkpoints:
        queue_.push(store{0, segment_, base});
        queue_.push(advance{base, base + every_});
        if (++segment_ == segments_ - 1) {
            phase_ = phase::segment_forward;
            offset_ = 0;
        }
        return;
    case phase::segment_forward:
        if (!started_) {
            started_ = true;
            if (!first_)
                queue_.push(restore{0, segment_, base});
        }
        if (offset_ < length - 1) {
            if (offset_ > 0 || first_)
                queue_.push(store{0, segment_ + offset_, base + offset_});
            queue_.push(advance{base + offset_, base + offset_ + 1});
            ++offset_;
            return;
        }
        // At x_{base+L-1}: reverse it where it stands. It is stored only as the checkpoint of an
        // earlier segment of one step.
        queue_.push(reverse{base + length - 1});
        if (length == 1 && !first_)
            queue_.push(free_slot{0, segment_});
        offset_ = length - 2;
        phase_ = phase::segment_reverse;
        break;
    case phase::segment_reverse:
        if (offset_ >= 0) {
            queue_.push(restore{0, segment_ + offset_, base + offset_});
            queue_.push(reverse{base + offset_});
            queue_.push(free_slot{0, segment_ + offset_});
            --offset_;
            return;
        }
        break;
    case phase::done:
        return;
    }
    if (phase_ == phase::segment_reverse && offset_ < 0) {
        if (segment_ == 0) {
            phase_ = phase::done;
        } else {
            --segment_;
            first_ = false;
            started_ = false;
            offset_ = 0;
            phase_ = phase::segment_forward;
        }
    }
}

store_all::store_all(step_t steps, slot_t slots) : plan_(steps, 1)
{
    detail::require_positive_slots(slots);
    if (steps - 1 > slots)
        throw capacity_error("store-all needs T-1 = " + std::to_string(steps - 1) + " slots for " +
                             std::to_string(steps) + " steps, got " + std::to_string(slots));
}

} // namespace remat
