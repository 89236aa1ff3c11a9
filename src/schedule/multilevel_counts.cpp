// The counts of a multi-level plan, combined from its tables' counts of its segments in closed form.
#include "multilevel_structures.hpp"

#include "remat/detail/checked_math.hpp"

#include <algorithm>

namespace remat::detail {
namespace {

// n * c, n * c + ..., checked: counts of long loops may leave 64 bits.
struct counter {
    std::uint64_t value = 0;
    void add(std::uint64_t times, std::uint64_t each)
    {
        value =
            detail::checked_add(value, detail::checked_mul(times, each, "a multi-level count"), "a multi-level count");
    }
};

} // namespace

schedule_cost combined_counts(const multilevel_plan& plan)
{
    if (plan.shape == multilevel_shape::stacked)
        return plan.outer;
    const std::size_t n = plan.model.levels.size();
    const auto slow = static_cast<std::size_t>(plan.slow);
    const bool outer_level = plan.shape == multilevel_shape::spine || plan.shape == multilevel_shape::nested;
    schedule_cost c;
    c.steps = plan.steps;
    c.reverse_steps = static_cast<std::uint64_t>(plan.steps);
    c.levels.resize(n);
    // Every kind of table run: how often, its counts, the outer slots held on the slowest level while it
    // runs, and how often the outer walk advances over each of its steps.
    struct run_kind {
        std::uint64_t times;
        const multilevel_counts* counts;
        slot_t outer_held;
        std::uint64_t outer_advances;
    };
    std::vector<run_kind> runs;
    counter forward;
    std::vector<counter> stores(n), restores(n);
    if (!outer_level) {
        runs.push_back({1, &plan.tail_run, 0, 0});
    } else if (plan.shape == multilevel_shape::spine) {
        const slot_t held = plan.segments - 1;
        const auto full = static_cast<std::uint64_t>(held);
        forward.add(full, static_cast<std::uint64_t>(plan.period));
        stores[slow].add(full, 1);
        restores[slow].add(full, 1);
        // Segment j runs while x_0..x_{jk} are held (its own start included in its counts): j = N-2 is
        // the fullest. The last segment runs while all N-1 are held.
        runs.push_back({full, &plan.stored_run, held - 1, 1});
        runs.push_back({1, &plan.tail_run, held, 0});
    } else {
        const schedule_cost& o = plan.outer;
        const auto full = static_cast<std::uint64_t>(plan.segments - 1);
        forward.add(o.forward_steps, static_cast<std::uint64_t>(plan.period));
        stores[slow].add(o.stores, 1);
        restores[slow].add(o.restores, 1);
        // Revolve reverses some stored and (when it has any) some unstored segment while all its slots
        // are held, never with more (checked in multilevel_schedule_test). Stored segments are advanced
        // most often; unstored ones at most that often, so their repetition is a bound.
        const slot_t held = o.peak_slots;
        if (o.stores > 0)
            runs.push_back({o.stores, &plan.stored_run, held - 1, o.repetition});
        if (full > o.stores)
            runs.push_back({full - o.stores, &plan.placed_run, held, o.repetition});
        runs.push_back({1, &plan.tail_run, held, 0});
    }
    for (const run_kind& r : runs) {
        const multilevel_counts& k = *r.counts;
        forward.add(r.times, k.forward_steps);
        c.repetition = std::max(c.repetition, r.outer_advances + k.repetition);
        c.peak_slots = std::max(c.peak_slots, r.outer_held + k.peak_slots);
        for (std::size_t i = 0; i < n; ++i) {
            stores[i].add(r.times, k.stores[i]);
            restores[i].add(r.times, k.restores[i]);
            const slot_t outer = outer_level && i == slow ? r.outer_held : 0;
            c.levels[i].peak_slots = std::max(c.levels[i].peak_slots, outer + k.peak[i]);
        }
    }
    c.forward_steps = forward.value;
    counter all_stores, all_restores;
    for (std::size_t i = 0; i < n; ++i) {
        c.levels[i].stores = stores[i].value;
        c.levels[i].restores = restores[i].value;
        all_stores.add(1, stores[i].value);
        all_restores.add(1, restores[i].value);
    }
    c.stores = all_stores.value;
    c.restores = all_restores.value;
    c.predicted_cost = predicted_cost(c, plan.model);
    return c;
}

namespace {

// Slots of the slowest level that a plan needs: its peak, and for the spine also the highest slot index
// (the outer checkpoints keep indices 0..N-2; a segment's own snapshots there come after them).
slot_t slow_slots_needed(const multilevel_plan& plan)
{
    const std::size_t slow = plan.model.levels.size() - 1;
    slot_t needed = combined_counts(plan).levels[slow].peak_slots;
    if (plan.shape == multilevel_shape::spine)
        needed = std::max(needed, (plan.segments - 1) + std::max(plan.stored_run.peak[slow], plan.tail_run.peak[slow]));
    return needed;
}

} // namespace

bool fits_slow_level(const multilevel_plan& plan)
{
    return slow_slots_needed(plan) <= plan.model.levels.back().slots; // >= 1
}

// The counts of any plan: a plan over some of the levels has its counts moved to this model's levels.
schedule_cost plan_cost(const multilevel_plan& plan)
{
    if (plan.sub) {
        schedule_cost inner = plan_cost(*plan.sub);
        schedule_cost c = inner;
        c.levels.assign(plan.model.levels.size(), {});
        for (std::size_t j = 0; j < inner.levels.size(); ++j)
            c.levels[static_cast<std::size_t>(plan.sub_levels[j])] = inner.levels[j];
        c.predicted_cost = predicted_cost(c, plan.model);
        return c;
    }
    if (plan.shape == multilevel_shape::binomial) {
        schedule_cost c = binomial_schedule(plan).cost();
        c.predicted_cost = predicted_cost(c, plan.model);
        return c;
    }
    return combined_counts(plan);
}

} // namespace remat::detail
