// The stacked multi-level plan (internal): revolve over the slots of several levels at once, with the
// dearest level at the bottom of revolve's stack of snapshots.
//
// revolve keeps its snapshots as a stack: the task holding s slots has its start at depth used - s, so
// depth 0 holds x_0 for the whole run and the deepest slots are written and read most often. Putting the
// levels whose stores and restores cost most at the bottom makes their few uses the only price paid for
// their slots, while the forward steps are those of binomial checkpointing over all the slots together (the
// least possible with that many snapshots). On long loops it comes within a fraction of a per cent of the
// lower bound that ignores the transfer costs.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

namespace remat::detail {

/// Where revolve's slot depths live, as one block of consecutive depths per level, bottom (x_0's depth 0)
/// first: depth d is slot d - (the block's first depth) of the block's level. Blocks rather than one entry per
/// depth: a level may offer billions of slots, and a plan must not cost memory or time per slot.
struct stacked_layout {
    struct block {
        level_t level = 0;
        slot_t count = 0; ///< >= 1
    };
    std::vector<block> blocks;
    [[nodiscard]] slot_t slots() const noexcept
    {
        slot_t all = 0;
        for (const block& b : blocks)
            all += b.count;
        return all;
    }
    /// The level of depth d (0 <= d < slots()).
    [[nodiscard]] level_t level_at(slot_t depth) const noexcept { return locate(depth).level; }
    /// The slot of depth d on its level.
    [[nodiscard]] slot_t slot_at(slot_t depth) const noexcept { return locate(depth).count; }

private:
    // The block of `depth` with the depth's offset in it as its count (at most max_levels blocks).
    [[nodiscard]] block locate(slot_t depth) const noexcept
    {
        for (const block& b : blocks) {
            if (depth < b.count)
                return {b.level, depth};
            depth -= b.count;
        }
        return {blocks.empty() ? level_t{0} : blocks.back().level, depth};
    }
};

/// The layout of `use[L]` slots of each level L, the dearest (write + read) at the bottom.
[[nodiscard]] stacked_layout stack_levels(const cost_model& model, const std::vector<std::uint64_t>& use);

/// The counts of revolve's tasks already counted, by (length, slots). A task's counts depend on the level of
/// each slot count below its own (the task with s slots keeps its start at depth used - s), so they can be
/// shared by layouts that put every slot count 1..s on the same level: those that take k slots cheapest level
/// first, for every k whose dearest level is the same one.
struct stacked_memo {
    struct key {
        step_t length;
        slot_t slots;
        friend bool operator==(const key&, const key&) = default;
    };
    struct key_hash {
        std::size_t operator()(const key& k) const noexcept
        {
            return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(k.length) * 0x9E3779B97F4A7C15ull ^
                                              static_cast<std::uint64_t>(k.slots));
        }
    };
    struct counts {
        std::uint64_t forward = 0;
        std::array<std::uint64_t, max_levels> stores{};
        std::array<std::uint64_t, max_levels> restores{};
    };
    std::unordered_map<key, counts, key_hash> tasks;
};

/// The counts of revolve(steps, layout.slots()) with each depth on its level, and their predicted cost.
/// Counted over revolve's distinct (length, slots) tasks; std::nullopt when more than `max_tasks` new ones are
/// needed or a count exceeds 64 bits. Adds the tasks it counted to `*tasks_counted` (when not null); reuses and
/// extends `*shared` (see stacked_memo) when given.
[[nodiscard]] std::optional<schedule_cost> stacked_cost(step_t steps, const cost_model& model,
                                                        const stacked_layout& layout, std::size_t max_tasks,
                                                        std::size_t* tasks_counted = nullptr,
                                                        stacked_memo* shared = nullptr);

} // namespace remat::detail
