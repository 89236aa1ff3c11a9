// The stacked multi-level plan: its layout and its counts (see multilevel_stacked.hpp).
//
// The counts follow revolve's cursor task by task: a split advances m steps, stores the right part's start
// one depth deeper (when the right part has two steps or more), and restores its own start once after the
// right part; a one-slot task of l steps restores its start l-1 times and advances l(l-1)/2 steps. A task's
// depth is fixed by its slots, so each distinct (length, slots) is counted once; revolve's tree has a few
// thousand of them even at T = 10^15. A task with slots for every step (repetition number 1: l <= s+1) stores
// every state in one chain of splits at m = 1, so it is counted in closed form over the depths it touches:
// without that, thousands of slots make hundreds of thousands of such tasks.
#include "multilevel_stacked.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "revolve_task.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace remat::detail {
namespace {

using task_counts = stacked_memo::counts;
using task_key = stacked_memo::key;

void add_into(task_counts& to, const task_counts& from, std::size_t levels)
{
    to.forward = checked_add(to.forward, from.forward, "a stacked multi-level count");
    for (std::size_t i = 0; i < levels; ++i) {
        to.stores[i] = checked_add(to.stores[i], from.stores[i], "a stacked multi-level count");
        to.restores[i] = checked_add(to.restores[i], from.restores[i], "a stacked multi-level count");
    }
}

/// The depths [from, to] of one level's block among the `used` ones.
struct depth_block {
    std::size_t level;
    slot_t from, to;
};

std::vector<depth_block> depth_blocks(const stacked_layout& layout, slot_t used)
{
    std::vector<depth_block> blocks;
    for (slot_t first = 0; const stacked_layout::block& b : layout.blocks) {
        if (first >= used)
            break;
        blocks.push_back({static_cast<std::size_t>(b.level), first, std::min(first + b.count, used) - 1});
        first += b.count;
    }
    return blocks;
}

/// One count on each depth of [from, last] (empty when from > last), added per level.
void add_on_depths(const std::vector<depth_block>& blocks, std::array<std::uint64_t, max_levels>& to, slot_t from,
                   slot_t last)
{
    for (const depth_block& b : blocks)
        if (const slot_t lo = std::max(from, b.from), hi = std::min(last, b.to); lo <= hi)
            to[b.level] += static_cast<std::uint64_t>(hi - lo + 1);
}

/// The whole plan's counts from its root task's.
schedule_cost schedule_cost_of(step_t steps, slot_t used, const cost_model& model, const stacked_layout& layout,
                               const std::vector<depth_block>& blocks, const task_counts& all)
{
    const std::size_t n = model.levels.size();
    schedule_cost c;
    c.steps = steps;
    c.reverse_steps = static_cast<std::uint64_t>(steps);
    c.forward_steps = all.forward;
    c.repetition = revolve(steps, used).repetition();
    c.levels.resize(n);
    if (steps >= 2) {
        c.levels[static_cast<std::size_t>(layout.level_at(0))].stores = 1; // x_0
        c.peak_slots = used;
        for (const depth_block& b : blocks)
            c.levels[b.level].peak_slots += b.to - b.from + 1;
    }
    for (std::size_t i = 0; i < n; ++i) {
        c.levels[i].stores += all.stores[i];
        c.levels[i].restores = all.restores[i];
        c.stores += c.levels[i].stores;
        c.restores += c.levels[i].restores;
    }
    c.predicted_cost = predicted_cost(c, model);
    return c;
}

} // namespace

stacked_layout stack_levels(const cost_model& model, const std::vector<std::uint64_t>& use)
{
    std::vector<std::size_t> order(model.levels.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Dearest first (the bottom); between equally dear levels the slower (later) one goes lower.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double ca = model.levels[a].write_cost + model.levels[a].read_cost;
        const double cb = model.levels[b].write_cost + model.levels[b].read_cost;
        return ca != cb ? ca > cb : a > b;
    });
    stacked_layout layout;
    for (const std::size_t level : order)
        if (use[level] > 0)
            layout.blocks.push_back({static_cast<level_t>(level), static_cast<slot_t>(use[level])});
    return layout;
}

std::optional<schedule_cost> stacked_cost(step_t steps, const cost_model& model, const stacked_layout& layout,
                                          std::size_t max_tasks, std::size_t* tasks_counted, stacked_memo* shared)
{
    const slot_t used = steps > 1 ? std::min<slot_t>(layout.slots(), steps - 1) : 1;
    if (layout.slots() < used || used < 1)
        return std::nullopt;
    const auto level_at = [&](slot_t task_slots) {
        return static_cast<std::size_t>(layout.level_at(used - task_slots));
    };
    const std::vector<depth_block> blocks = depth_blocks(layout, used);
    const auto add_depths = [&](std::array<std::uint64_t, max_levels>& to, slot_t from, slot_t last) {
        add_on_depths(blocks, to, from, last);
    };
    stacked_memo local;
    auto& memo = (shared != nullptr ? *shared : local).tasks;
    const std::size_t known = memo.size();
    const auto counted = [&] {
        if (tasks_counted != nullptr)
            *tasks_counted += memo.size() - known;
    };
    try {
        std::vector<revolve_task> stack{revolve_root(steps, used)};
        while (!stack.empty()) {
            const revolve_task t = stack.back();
            const task_key key{t.length, t.slots};
            if (memo.contains(key)) {
                stack.pop_back();
                continue;
            }
            task_counts c;
            if (t.length == 1) {
                // reversed where it stands
            } else if (t.r == 1 && t.slots >= 2) {
                // l <= s+1: advance one step, store, recurse on (l-1, s-1) down to two steps; every task of the
                // chain restores its start once. Its starts lie at depths used-s ... used-s+l-2.
                const auto l = static_cast<std::uint64_t>(t.length);
                const slot_t top = used - t.slots;
                c.forward = l - 1;
                add_depths(c.restores, top, top + static_cast<slot_t>(l) - 2);
                add_depths(c.stores, top + 1, top + static_cast<slot_t>(l) - 2);
            } else if (t.slots == 1) {
                const auto l = static_cast<std::uint64_t>(t.length);
                c.forward = checked_mul(l, l - 1, "a stacked multi-level count") / 2;
                c.restores[level_at(1)] = l - 1;
            } else {
                const revolve_split parts = split(t);
                const task_key right{parts.right.length, parts.right.slots};
                const task_key left{parts.left.length, parts.left.slots};
                const auto right_at = memo.find(right);
                const auto left_at = memo.find(left);
                const bool right_ready = right_at != memo.end();
                const bool left_ready = left_at != memo.end();
                if (!right_ready)
                    stack.push_back(parts.right);
                if (!left_ready)
                    stack.push_back(parts.left);
                if (!right_ready || !left_ready) {
                    if (memo.size() - known + stack.size() > max_tasks) {
                        counted();
                        return std::nullopt;
                    }
                    continue;
                }
                c.forward = static_cast<std::uint64_t>(parts.m);
                add_into(c, right_at->second, model.levels.size());
                add_into(c, left_at->second, model.levels.size());
                if (parts.right.start_stored)
                    ++c.stores[level_at(t.slots - 1)];
                ++c.restores[level_at(t.slots)];
            }
            memo.emplace(key, c);
            stack.pop_back();
        }
    } catch (const overflow_error&) {
        counted();
        return std::nullopt;
    }
    counted();
    return schedule_cost_of(steps, used, model, layout, blocks, memo.at(task_key{steps, used}));
}

} // namespace remat::detail
