// remat/detail/online_placement.hpp — where the online schedule keeps snapshots during the forward sweep.
//
// The forward half of remat::online_revolve (see docs/online.md for the derivation). With s slots, the
// snapshots held when the loop stops at T cut [0, T-1) into segments; segment i (counted from x_0) is
// reversed with s-i slots, so it costs F(l, s-i) forward steps, F being the offline binomial optimum.
// The offline optimum for T is (T-1) + the cheapest such cut, and a cut is optimal exactly when every
// segment with σ slots has length in [β(σ,L-1), β(σ,L)], L = r(T)-1 ("level-filled"). The policy:
//  - fill:  x_0 .. x_{s-1} are kept while slots are free;
//  - wave (T <= β(s,2), level 1): rounds k = s..2; in round k the segment with k slots absorbs its
//    neighbour exactly when that makes it full, one eviction per step. Every cut is level-filled, so the
//    schedule equals the offline optimum (checked against brute force);
//  - level L >= 2: a snapshot is kept every L+1 steps and at the cut points F_1 < ... < F_{s-1} of the
//    level's final (offline-optimal) cut, which stay until the level ends; to keep one, the most recent
//    snapshot is given up whose removal merges two segments within their level-L length β(σ,L).
//    Every level then ends exactly on its offline-optimal cut (checked), and inside a level the cut is
//    level-filled up to a few steps (measured: bench/online_ratio).
// Snapshots are kept in a doubly linked chain in position order; a decision costs O(1) except for the
// backward scan over non-mergeable pairs, about 2 nodes on average (measured).
#pragma once

#include "remat/schedule/action.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace remat::detail {

/// Forward-sweep decisions of the online schedule with `slots` slots.
///
///     remat::detail::online_placement place(3);
///     for (remat::step_t p = 0; p < 10; ++p) {
///         auto d = place.decide(p);   // x_p is current and step p is not the last
///         if (d.store) { /* free d.evicted_slot when d.evicts, then store x_p in d.slot */ }
///     }
class online_placement {
public:
    /// One kept snapshot, linked in position order.
    struct node {
        step_t position = 0;
        slot_t slot = 0;
        std::int64_t prev = -1;
        std::int64_t next = -1;
        std::uint64_t fixed_level = 0; ///< kept as a cut point of this level (0: not a cut point)
    };

    /// What to do with x_p.
    struct decision {
        bool store = false;  ///< keep x_p
        bool evicts = false; ///< give up the snapshot in evicted_slot first
        slot_t evicted_slot = 0;
        step_t evicted_step = 0;
        slot_t slot = 0; ///< where x_p goes
    };

    /// Throws remat::argument_error when slots < 1.
    explicit online_placement(slot_t slots);

    /// The state at the start of level 2: the offline-optimal cut for T = β(s,2) held, x_p current
    /// with p = β(s,2)-1 and no decision taken there yet. Replays of long loops start here instead of
    /// stepping through the wave, whose cuts are known in closed form.
    [[nodiscard]] static online_placement at_level_two(slot_t slots);

    /// x_p is current and step p is not the last. Positions must increase; skipping positions is allowed
    /// only up to next_decision().
    decision decide(step_t p);

    /// The first position q >= p at which decide() may keep a snapshot (or where the level changes).
    [[nodiscard]] step_t next_decision(step_t p);

    [[nodiscard]] slot_t slots() const noexcept { return slots_; }
    /// Number of snapshots held.
    [[nodiscard]] std::size_t size() const noexcept { return held_; }
    [[nodiscard]] std::int64_t head() const noexcept { return head_; }
    [[nodiscard]] std::int64_t tail() const noexcept { return tail_; }
    [[nodiscard]] const node& at(std::int64_t i) const noexcept { return nodes_[static_cast<std::size_t>(i)]; }
    /// Snapshot positions in increasing order.
    [[nodiscard]] std::vector<step_t> positions() const;
    /// Store decisions taken so far.
    [[nodiscard]] std::uint64_t stores() const noexcept { return stores_; }
    /// Decisions that found no mergeable pair at level >= 2 (never observed; kept as a safety net).
    [[nodiscard]] std::uint64_t fallbacks() const noexcept { return fallbacks_; }

    /// The snapshot positions held at x_d (before the decision there) and the stores made by the decisions
    /// at 0..d-1, without taking them: closed form while d <= β(s,2)-1, a replay of the level >= 2
    /// decisions after that (one per kept snapshot, the steps in between skipped).
    struct summary {
        std::vector<step_t> positions;
        std::uint64_t stores = 0;
    };
    [[nodiscard]] static summary summarize(slot_t slots, step_t d);
    /// The same, one position at a time in increasing order (`each(position)`), returning the stores: in the
    /// closed-form range nothing per snapshot is kept, so millions of slots cost no memory.
    static std::uint64_t visit_positions(slot_t slots, step_t d, const std::function<void(step_t)>& each);

    /// The cut held at x_d during the wave (slots >= 2, slots < d <= β(s,2)-1), in counts, in O(log s):
    /// its s segments cover [0, d); `long_segments` of them have two steps or more (each with at least one
    /// slot per step: reversed by one sweep that stores every state); `stores` as in summary.
    struct wave_cut {
        std::uint64_t long_segments = 0;
        std::uint64_t stores = 0;
    };
    [[nodiscard]] static wave_cut wave_counts(slot_t slots, step_t d);
    /// The last position whose cut wave_counts() describes: β(s,2)-1, where level two begins.
    [[nodiscard]] static step_t wave_end(slot_t slots) noexcept;

private:
    void sync_level(step_t p);
    void append(std::int64_t index, step_t p);
    void unlink(std::int64_t index);
    [[nodiscard]] bool fixed(const node& n) const noexcept { return n.fixed_level == level_; }
    decision evict_and_keep(std::int64_t index, step_t p, std::uint64_t fixed_level);

    slot_t slots_;
    std::vector<node> nodes_;
    std::int64_t head_ = -1;
    std::int64_t tail_ = -1;
    std::size_t held_ = 0;
    std::uint64_t stores_ = 0;
    std::uint64_t fallbacks_ = 0;

    // Level of the decisions: L for p in [β(s,L)-1, β(s,L+1)-2]; all binomials saturate at 2^64-1.
    std::uint64_t level_ = 1;
    std::uint64_t beta_level_ = 0; // β(s, L)
    std::uint64_t beta_next_ = 0;  // β(s, L+1): the level changes at p = β(s, L+1) - 1

    // The wave (level 1): round k spans positions [round_start_, round_start_ + k).
    std::uint64_t round_ = 0;
    std::uint64_t round_start_ = 0;
    std::int64_t cascade_ = -1; // the snapshot the next wave step gives up

    // Level >= 2: the next cut point F_k of the level's optimal cut, and β(s-k, L) to find F_{k+1}.
    std::uint64_t next_cut_ = 0;
    std::uint64_t cut_index_ = 0;
    std::uint64_t cut_length_ = 0;
    // β(σ, L) for σ = 2, 3, ... as far as decide()'s backward scan has reached at this level, instead of a
    // 64-bit division per node scanned (5-12% of a replay's time, measured).
    std::vector<std::uint64_t> caps_;
};

} // namespace remat::detail
