// The forward-sweep policy of the online schedule: fill, wave (level 1), cut-guided merges (level >= 2).
#include "remat/detail/online_placement.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/error.hpp"
#include "remat/schedule/binomial.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace remat::detail {
namespace {

constexpr step_t never = std::numeric_limits<step_t>::max();

// β(s,2) - 1 as a position: the first decision of level 2 (the wave ends just before it).
std::uint64_t level_two_start(std::uint64_t s) noexcept
{
    return binomial::max_steps(static_cast<slot_t>(s), 2) - 1;
}

// The wave's round k spans [p_k, p_k + k), p_k = s + s(s+1)/2 - k(k+1)/2; x_p (s < p <= β(s,2)-1) lies in
// round `round` at offset `offset`.
struct wave_place {
    std::uint64_t round = 0;
    std::uint64_t offset = 0;
};

wave_place place_in_wave(std::uint64_t s, std::uint64_t p) noexcept
{
    const uint128 total = static_cast<uint128>(s) + static_cast<uint128>(s) * (s + 1) / 2;
    auto round_start = [&](std::uint64_t k) {
        return static_cast<std::uint64_t>(total - static_cast<uint128>(k) * (k + 1) / 2);
    };
    std::uint64_t lo = 1, hi = s; // smallest k with p_k <= p
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (round_start(mid) <= p)
            hi = mid;
        else
            lo = mid + 1;
    }
    return {lo, p - round_start(lo)};
}

// Stores made by the decisions at 0..p-1 (x_p in round k at offset j): the fill's s, one per wave step
// of the rounds s..k+1, and j-1 in round k.
std::uint64_t wave_stores(std::uint64_t s, wave_place w) noexcept
{
    const std::uint64_t k = w.round, j = w.offset;
    const uint128 finished = (static_cast<uint128>(s) * (s - 1) - static_cast<uint128>(k) * (k - 1)) / 2;
    return static_cast<std::uint64_t>(s + finished) + (k >= 2 && j >= 2 ? j - 1 : 0);
}

} // namespace

online_placement::online_placement(slot_t slots) : slots_(slots)
{
    require_positive_slots(slots);
    const auto s = static_cast<std::uint64_t>(slots);
    beta_level_ = add_saturated(s, 1);
    beta_next_ = binomial::max_steps(slots, 2);
    round_ = s;
    round_start_ = s;
}

online_placement online_placement::at_level_two(slot_t slots)
{
    online_placement place(slots);
    const auto s = static_cast<std::uint64_t>(slots);
    step_t position = 0;
    for (std::uint64_t i = 0; i < s; ++i) {
        place.nodes_.push_back(node{position, static_cast<slot_t>(i), -1, -1, 0});
        place.append(static_cast<std::int64_t>(i), position);
        position += static_cast<step_t>(s - i + 1); // the segment with s-i slots is full at level 1
    }
    // The wave's rounds are over: only the last segment, of two steps at the end, is left of them.
    place.round_ = 1;
    place.round_start_ = level_two_start(s) - 1;
    place.stores_ = static_cast<std::uint64_t>(s + static_cast<uint128>(s) * (s - 1) / 2);
    return place;
}

void online_placement::append(std::int64_t index, step_t p)
{
    node& n = nodes_[static_cast<std::size_t>(index)];
    n.position = p;
    n.prev = tail_;
    n.next = -1;
    if (tail_ >= 0)
        nodes_[static_cast<std::size_t>(tail_)].next = index;
    else
        head_ = index;
    tail_ = index;
    ++held_;
}

void online_placement::unlink(std::int64_t index)
{
    node& n = nodes_[static_cast<std::size_t>(index)];
    if (n.prev >= 0)
        nodes_[static_cast<std::size_t>(n.prev)].next = n.next;
    else
        head_ = n.next;
    if (n.next >= 0)
        nodes_[static_cast<std::size_t>(n.next)].prev = n.prev;
    else
        tail_ = n.prev;
    --held_;
}

online_placement::decision online_placement::evict_and_keep(std::int64_t index, step_t p, std::uint64_t fixed_level)
{
    node& n = nodes_[static_cast<std::size_t>(index)];
    decision d{true, true, n.slot, n.position, n.slot};
    unlink(index);
    n.fixed_level = fixed_level;
    append(index, p);
    ++stores_;
    return d;
}

void online_placement::sync_level(step_t p)
{
    const auto s = static_cast<std::uint64_t>(slots_);
    // The decision at p belongs to level L while p <= β(s, L+1) - 2.
    while (beta_next_ != uint64_max && static_cast<std::uint64_t>(p) + 1 >= beta_next_) {
        ++level_;
        beta_level_ = beta_next_;
        beta_next_ = mul_div_saturated(beta_level_, s + level_ + 1, level_ + 1);
        // The level's final cut: F_1 = β(s,L), F_{k+1} = F_k + β(s-k, L), k < s.
        cut_index_ = 1;
        next_cut_ = s >= 2 ? beta_level_ : uint64_max;
        cut_length_ = mul_div_saturated(beta_level_, s, s + level_);
        caps_.clear();
    }
}

online_placement::decision online_placement::decide(step_t p)
{
    const auto s = static_cast<std::uint64_t>(slots_);
    if (held_ < s) { // a free slot: keep every state until the slots are full
        const auto index = static_cast<std::int64_t>(nodes_.size());
        nodes_.push_back(node{p, static_cast<slot_t>(index), -1, -1, 0});
        append(index, p);
        ++stores_;
        return decision{true, false, 0, 0, static_cast<slot_t>(index)};
    }
    if (s == 1)
        return {}; // x_0 is all there is: every segment is reversed from it
    sync_level(p);
    const auto position = static_cast<std::uint64_t>(p);

    if (level_ == 1) {
        // Round k covers [round_start_, round_start_ + k): at its j-th position (j >= 1) the segment with
        // j+1 slots absorbs the one with j slots, which fills it; the victim is the j-th snapshot from
        // the back, i.e. the predecessor of the previous victim.
        while (round_ > 1 && position >= round_start_ + round_) {
            round_start_ += round_;
            --round_;
        }
        const std::uint64_t j = position - round_start_;
        if (round_ < 2 || j == 0)
            return {};
        const std::int64_t victim = j == 1 ? tail_ : cascade_;
        cascade_ = nodes_[static_cast<std::size_t>(victim)].prev;
        return evict_and_keep(victim, p, 0);
    }

    const std::uint64_t block = level_ + 1;
    const bool at_cut = position == next_cut_;
    const node& last = nodes_[static_cast<std::size_t>(tail_)];
    if (!at_cut && position - static_cast<std::uint64_t>(last.position) < block)
        return {};
    const std::uint64_t fixed_level = at_cut ? level_ : 0;
    if (at_cut) {
        ++cut_index_;
        next_cut_ = cut_index_ < s ? add_saturated(next_cut_, cut_length_) : uint64_max;
        cut_length_ = mul_div_saturated(cut_length_, s - cut_index_ + 1, s - cut_index_ + 1 + level_);
    }
    // From the back: give up snapshot X when its predecessor's segment, with σ slots, can absorb X's
    // within β(σ, L); cut points of this level stay.
    if (caps_.empty())
        caps_.push_back(mul_div_saturated(block, level_ + 2, 2)); // β(2, L)
    std::size_t depth = 0;                                        // caps_[depth] = β(depth + 2, L)
    for (std::int64_t x = tail_; x != head_;) {
        const node& n = nodes_[static_cast<std::size_t>(x)];
        const node& before = nodes_[static_cast<std::size_t>(n.prev)];
        const step_t end = n.next >= 0 ? nodes_[static_cast<std::size_t>(n.next)].position : p;
        if (!fixed(n) && static_cast<std::uint64_t>(end - before.position) <= caps_[depth])
            return evict_and_keep(x, p, fixed_level);
        x = n.prev;
        if (++depth == caps_.size()) {
            const std::uint64_t sigma = depth + 2;
            caps_.push_back(mul_div_saturated(caps_.back(), sigma + level_, sigma));
        }
    }
    // No pair fits (not observed for any s and level tested): give up the most recent free snapshot.
    for (std::int64_t x = tail_; x != head_; x = nodes_[static_cast<std::size_t>(x)].prev)
        if (!fixed(nodes_[static_cast<std::size_t>(x)])) {
            ++fallbacks_;
            return evict_and_keep(x, p, fixed_level);
        }
    return {};
}

step_t online_placement::next_decision(step_t p)
{
    const auto s = static_cast<std::uint64_t>(slots_);
    if (held_ < s)
        return p;
    if (s == 1)
        return never;
    sync_level(p);
    const auto position = static_cast<std::uint64_t>(p);
    if (level_ == 1) {
        while (round_ > 1 && position >= round_start_ + round_) {
            round_start_ += round_;
            --round_;
        }
        if (round_ < 2)
            return static_cast<step_t>(std::min<std::uint64_t>(beta_next_ - 1, static_cast<std::uint64_t>(never)));
        return position == round_start_ ? p + 1 : p;
    }
    const std::uint64_t block_end =
        add_saturated(static_cast<std::uint64_t>(nodes_[static_cast<std::size_t>(tail_)].position), level_ + 1);
    std::uint64_t q = std::min({next_cut_, block_end, beta_next_ - 1});
    q = std::max(q, position);
    return q >= static_cast<std::uint64_t>(never) ? never : static_cast<step_t>(q);
}

std::vector<step_t> online_placement::positions() const
{
    std::vector<step_t> out;
    out.reserve(held_);
    for (std::int64_t x = head_; x >= 0; x = nodes_[static_cast<std::size_t>(x)].next)
        out.push_back(nodes_[static_cast<std::size_t>(x)].position);
    return out;
}

online_placement::summary online_placement::summarize(slot_t slots, step_t d)
{
    summary out;
    out.stores = visit_positions(slots, d, [&](step_t position) { out.positions.push_back(position); });
    return out;
}

std::uint64_t online_placement::visit_positions(slot_t slots, step_t d, const std::function<void(step_t)>& each)
{
    require_positive_slots(slots);
    if (d <= 0)
        return 0;
    const auto s = static_cast<std::uint64_t>(slots);
    const auto p = static_cast<std::uint64_t>(d);
    if (p <= s || s == 1) {
        const std::uint64_t kept = std::min(p, s);
        for (std::uint64_t i = 0; i < kept; ++i)
            each(static_cast<step_t>(i));
        return kept;
    }
    if (p <= level_two_start(s)) {
        const wave_place w = place_in_wave(s, p);
        const std::uint64_t k = w.round, j = w.offset;
        // The segments from x_0 on (the one with σ slots comes s-σ-th), each announced by its start.
        step_t position = 0;
        const auto segment = [&](std::uint64_t length) {
            each(position);
            position += static_cast<step_t>(length);
        };
        for (std::uint64_t sigma = s; sigma > k; --sigma)
            segment(sigma + 1);
        for (std::uint64_t sigma = k; sigma >= 2; --sigma)
            segment(j >= 2 && sigma == j ? j + 1 : 1);
        segment(k == 1 || j == 1 ? 1 + j : 1); // the last segment, ending at x_p
        return wave_stores(s, w);
    }
    online_placement place = at_level_two(slots);
    for (step_t q = static_cast<step_t>(level_two_start(s));; ++q) {
        q = place.next_decision(q);
        if (q >= d)
            break;
        (void)place.decide(q);
    }
    for (const step_t position : place.positions())
        each(position);
    return place.stores();
}

online_placement::wave_cut online_placement::wave_counts(slot_t slots, step_t d)
{
    const auto s = static_cast<std::uint64_t>(slots);
    const auto p = static_cast<std::uint64_t>(d);
    if (s < 2 || p <= s || p > level_two_start(s))
        throw argument_error("online_placement::wave_counts: position " + std::to_string(d) +
                             " is not inside the wave of " + std::to_string(slots) + " slots");
    const wave_place w = place_in_wave(s, p);
    // As visit_positions lists them: the s-k full segments σ = s..k+1 (σ+1 steps each), then in round k
    // the one with j slots (j+1 steps, when j >= 2) or the last (2 steps, when j == 1); the rest one step.
    return {s - w.round + (w.offset >= 1 ? 1 : 0), wave_stores(s, w)};
}

step_t online_placement::wave_end(slot_t slots) noexcept
{
    return static_cast<step_t>(
        std::min<std::uint64_t>(level_two_start(static_cast<std::uint64_t>(slots)), static_cast<std::uint64_t>(never)));
}

} // namespace remat::detail
