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

// x + ceil(T/x): the least n + k of a spacing with k = x, or with n = x segments.
std::uint64_t size_of(std::uint64_t t, std::uint64_t x)
{
    return x + (t + x - 1) / x;
}

// The largest x with x(x+1) <= T: up to there size_of(T, x) does not grow, since T/x - T/(x+1) >= 1.
std::uint64_t monotone_limit(std::uint64_t t)
{
    auto x = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(t)));
    while (x > 0 && x * (x + 1) > t) // x <= 2^32: no overflow
        --x;
    while ((x + 1) * (x + 2) <= t)
        ++x;
    return x;
}

// The least x in [first, end] with size_of(T, x) <= s + 3 (needed for a peak <= s), or end + 1; size_of
// does not grow on [first, end].
std::uint64_t least_fitting(std::uint64_t t, std::uint64_t s, std::uint64_t first, std::uint64_t end)
{
    std::uint64_t lo = first;
    std::uint64_t hi = end + 1;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (size_of(t, mid) <= s + 3)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// u(c - u) in 128 bits (u <= c < 2^64).
detail::uint128 product(std::uint64_t u, std::uint64_t c)
{
    return static_cast<detail::uint128>(u) * (c - u);
}

// The least u >= 1 with u(c - u) >= p, or 0 where none (u(c - u) is concave, largest at c/2).
std::uint64_t least_reaching(std::uint64_t c, detail::uint128 p)
{
    const detail::uint128 half = product(c / 2, c);
    if (half < p)
        return 0;
    // u = (c - sqrt(c^2 - 4p)) / 2 in long double (64-bit mantissa: within a step or two), then exactly.
    const detail::uint128 disc = static_cast<detail::uint128>(c) * c - 4 * p;
    const long double root = std::sqrt(static_cast<long double>(disc));
    const long double estimate = std::ceil((static_cast<long double>(c) - root) / 2);
    std::uint64_t u = estimate < 1 ? 1 : std::min<std::uint64_t>(static_cast<std::uint64_t>(estimate), c / 2);
    while (u > 1 && product(u - 1, c) >= p)
        --u;
    while (product(u, c) < p)
        ++u;
    return u;
}

// Every spacing that can be best among those with n + k = c and a peak <= s, passed to `consider` (as k):
// n(c-n) >= T (then ceil(T/k) <= n) and n(c-n) >= T + c - 2 - s (the last segment's L - 1 <= s - (n-1))
// leave n in [v1, c - v1]; (n-1)(c-n) <= T - 1 (ceil(T/k) >= n) takes out an interval around (c+1)/2,
// between w1 and c + 1 - w1. The least (n-1)(k-1) is at an end of what is left. False where no n reaches.
template <class Consider>
bool consider_sum(std::uint64_t t, std::uint64_t s, std::uint64_t c, Consider&& consider)
{
    const std::uint64_t lift = c - 2 > s ? c - 2 - s : 0;
    const std::uint64_t reach = least_reaching(c, static_cast<detail::uint128>(t) + lift);
    if (reach == 0)
        return false;
    const std::uint64_t v1 = std::max<std::uint64_t>(reach, 2); // n >= 2 and k >= 2
    const std::uint64_t v2 = c - v1;
    auto try_segments = [&](std::uint64_t n) {
        if (n >= v1 && n <= v2)
            consider(c - n);
    };
    try_segments(v1);
    try_segments(v2);
    // The largest w1 below the middle with (w1-1)(c-w1) <= T - 1, where the middle exceeds it.
    auto below = [&](std::uint64_t n) { return static_cast<detail::uint128>(n - 1) * (c - n) <= t - 1; };
    const std::uint64_t middle = (c + 1) / 2;
    if (!below(middle)) {
        const detail::uint128 disc =
            static_cast<detail::uint128>(c - 1) * (c - 1) - 4 * static_cast<detail::uint128>(t - 1);
        const long double estimate =
            std::floor((static_cast<long double>(c) + 1 - std::sqrt(static_cast<long double>(disc))) / 2);
        std::uint64_t w1 = estimate < 1 ? 1 : std::min<std::uint64_t>(static_cast<std::uint64_t>(estimate), middle);
        while (w1 > 1 && !below(w1))
            --w1;
        while (w1 + 1 < middle && below(w1 + 1))
            ++w1;
        try_segments(std::clamp(w1, v1, v2));
        try_segments(std::clamp(c + 1 - w1, v1, v2));
    }
    return true;
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
    // search small spacings directly and, for each small segment count n, its best spacing (the x scans).
    // They run over x = k or x = n with the other one at least ceil(T/x), and need x + ceil(T/x) <= s + 3
    // (the peak is at least n + k - 3); with k >= 2 the extra forward steps (n-1)(k-1) = nk - n - k + 1 are
    // at least T + 1 - (x + ceil(T/x)). x + ceil(T/x) does not grow with x while x(x+1) <= T, so each scan
    // starts at the least x that can fit (a bisection) and stops where that bound passes the best found,
    // instead of running over all sqrt(T) (2^63 steps: 3e9, a minute).
    const auto t = static_cast<std::uint64_t>(steps);
    const auto s = static_cast<std::uint64_t>(slots);
    const auto root = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(t))) + 1;
    const std::uint64_t monotone_end = monotone_limit(t) + 1; // x + ceil(T/x) does not grow up to here
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
    // n segments: peak = (n-1) + max(L-1, k-2) with L = T - (n-1)k. Forward steps grow with k, so the
    // best k for this n is the smallest one with ceil(T/k) = n and L-1 <= s-(n-1).
    auto consider_segments = [&](std::uint64_t n) {
        std::uint64_t k = (t + n - 1) / n;      // smallest k with ceil(T/k) <= n
        const std::uint64_t room = s - (n - 1); // L-1 <= room  <=>  (n-1)k >= T-1-room
        if (t > 1 + room)
            k = std::max(k, (t - 1 - room + n - 2) / (n - 1));
        if ((t + k - 1) / k == n)
            consider(k);
    };
    // The x scans: for x = k (consider) or x = n (consider_segments), from the least x that can fit up to
    // min(last, monotone_end), stopping where 2T - size_of(T, x) passes the best forward steps; past
    // monotone_end (at most a few x up to sqrt(T)+1) every x directly, first.
    struct x_scan {
        std::uint64_t next;
        std::uint64_t end;
    };
    auto start_scan = [&](std::uint64_t first, std::uint64_t last, auto&& try_one) {
        const std::uint64_t end = std::min(last, monotone_end);
        for (std::uint64_t x = std::max(first, end + 1); x <= last; ++x)
            try_one(x);
        return x_scan{least_fitting(t, s, first, end), end};
    };
    auto step_scan = [&](x_scan& scan, auto&& try_one) {
        if (scan.next > scan.end || 2 * t - size_of(t, scan.next) > best.forward_steps) { // 2T < 2^64
            scan.next = scan.end + 1;
            return false;
        }
        try_one(scan.next++);
        return true;
    };
    x_scan spacings = start_scan(1, std::min(root, s + 2), consider);
    x_scan segments = start_scan(2, std::min(root, s + 1), consider_segments);
    // The sum scan: over c = n + k from s + 3 down, the pairs with that sum (consider_sum, O(1) per c),
    // stopping once the bound (n-1)(k-1) >= T + 1 - c passes the best. Near sqrt(T) many x share one
    // x + ceil(T/x), so the x scans are slow close to the fewest slots where this one is fast; far from them
    // the x scans end in a few steps. Each search is exact alone: they run in turn, the first to end decides.
    // (Worst seen, T near 2^63 and slots about 1.03x the fewest: 1e5 steps of each, tens of ms.)
    std::uint64_t sum = s + 3;
    auto step_sums = [&] {
        if (sum < 4 || 2 * t - sum > best.forward_steps) // forward steps >= T - 1 + T + 1 - c
            return false;
        if (!consider_sum(t, s, sum, consider) && sum <= s + 2)
            return false; // no pair reaches T with this sum, nor with any smaller one
        --sum;
        return true;
    };
    for (;;) {
        const bool spacings_left = step_scan(spacings, consider);
        const bool segments_left = step_scan(segments, consider_segments);
        if (!spacings_left && !segments_left)
            break;
        if (!step_sums())
            break;
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
