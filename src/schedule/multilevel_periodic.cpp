// The structures over one multi-level table or grid of tables: exact (the whole loop), grid (super-steps of g
// steps), and spine and nested (periodic segments whose starts the slowest level keeps; see multilevel_choose.cpp).
#include "multilevel_structures.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

} // namespace

plan_ptr fresh_plan(const multilevel_plan& base)
{
    auto p = std::make_shared<multilevel_plan>();
    p->steps = base.steps;
    p->model = base.model;
    return p;
}

plan_ptr plan_exact(const multilevel_plan& base, const std::vector<std::uint64_t>& limits, std::uint64_t max_entries)
{
    plan_ptr plan = fresh_plan(base);
    plan->used = multilevel::method::exact;
    plan->shape = multilevel_shape::exact;
    plan->table = std::make_shared<const multilevel_table>(plan->model, limits, plan->steps, max_entries);
    plan->top_row = plan->table->full_row();
    plan->tail = plan->steps;
    detail::multilevel_counts_cache cache;
    plan->tail_run = plan->table->placed_counts(plan->steps, plan->top_row, cache);
    return plan;
}

// The grid of g steps per super-step: a fine table (g steps) and two coarse tables (N = ceil(T/g)
// super-steps). Null when it does not fit the work limit (unless `forced`) or has a single super-step.
plan_ptr plan_grid(const multilevel_plan& base, const std::vector<std::uint64_t>& limits, step_t g,
                   std::uint64_t work_limit, std::uint64_t max_entries, bool forced)
{
    const step_t steps = base.steps;
    const std::size_t n = base.model.levels.size();
    if (g < 2 || g >= steps)
        return nullptr;
    const step_t segments = steps / g + (steps % g != 0 ? 1 : 0); // ceil(T/g): steps + g - 1 overflowed near 2^63
    if (segments < 2)
        return nullptr;
    if (!forced && (!affordable(n, limits, g, work_limit / 2, max_entries) ||
                    !affordable(n, limits, segments, work_limit / 2, max_entries / 2)))
        return nullptr;
    plan_ptr plan = fresh_plan(base);
    plan->used = multilevel::method::near_optimal;
    plan->shape = multilevel_shape::grid;
    plan->period = g;
    plan->segments = segments;
    const step_t last = steps - (segments - 1) * g;
    const auto fine = std::make_shared<const multilevel_table>(plan->model, limits, g, max_entries);
    const auto interior = std::make_shared<const multilevel_table>(plan->model, limits, segments, max_entries,
                                                                   detail::multilevel_grid{fine.get(), g, g, nullptr});
    plan->table = std::make_shared<const multilevel_table>(
        plan->model, limits, segments, max_entries, detail::multilevel_grid{fine.get(), g, last, interior.get()});
    plan->parts = {fine, interior};
    plan->top_row = plan->table->full_row();
    plan->tail = segments;
    // Too few slots for any schedule on this grid (a segment of several super-steps with none free).
    if (!std::isfinite(plan->table->placed_cost(segments, plan->top_row)))
        return nullptr;
    detail::multilevel_counts_cache cache;
    plan->tail_run = plan->table->placed_counts(segments, plan->top_row, cache);
    return plan;
}

// `spine`: the slowest level as if unlimited (the caller checks that the plan fits a finite one).
plan_ptr plan_outer(const multilevel_plan& base, step_t horizon, std::uint64_t max_entries, bool spine)
{
    plan_ptr result = fresh_plan(base);
    multilevel_plan& plan = *result;
    const cost_model& model = plan.model;
    const step_t steps = plan.steps;
    const auto slow = static_cast<level_t>(model.levels.size() - 1);
    plan.used = multilevel::method::near_optimal;
    plan.slow = slow;
    plan.table =
        std::make_shared<const multilevel_table>(model, periodic_limits(model, horizon, spine), horizon, max_entries);
    const multilevel_table& table = *plan.table;
    plan.run_row = spine ? table.full_row() : table.taken(table.full_row(), slow);
    plan.top_row = plan.run_row;

    const level_spec& outer = model.levels.back();
    const double u = model.step_cost;
    double best = infinity;
    for (step_t k = 1; k <= horizon; ++k) {
        // N-1 full segments and a last one of tail = T - (N-1)k steps, 1 <= tail <= K.
        const step_t first = (steps - horizon + k - 1) / k;
        const step_t last = (steps - 1) / k;
        const double held = table.value(k, plan.run_row, slow);
        const double placed = table.placed_cost(k, plan.top_row);
        for (step_t full = std::max<step_t>(first, 1); full <= last; ++full) {
            const step_t tail = steps - full * k;
            const double tail_cost = table.placed_cost(tail, plan.top_row);
            const auto nf = static_cast<double>(full);
            double cost = infinity;
            schedule_cost counts;
            if (spine) {
                cost =
                    u * nf * static_cast<double>(k) + (outer.write_cost + outer.read_cost) * nf + nf * held + tail_cost;
            } else {
                try {
                    counts = revolve(full + 1, std::min(outer.slots, full)).cost();
                } catch (const overflow_error&) {
                    continue; // this many segments cannot even be counted
                }
                const auto stored = static_cast<double>(counts.stores);
                const double unstored = nf - stored;
                if (unstored > 0 && placed == infinity)
                    continue;
                cost = u * static_cast<double>(k) * static_cast<double>(counts.forward_steps) +
                       outer.write_cost * stored + outer.read_cost * static_cast<double>(counts.restores) +
                       stored * held + (unstored > 0 ? unstored * placed : 0.0) + tail_cost;
            }
            if (cost < best) {
                best = cost;
                plan.period = k;
                plan.segments = full + 1;
                plan.tail = tail;
                plan.outer = counts;
            }
        }
    }
    if (best == infinity)
        throw overflow_error("no multi-level plan for " + std::to_string(steps) +
                             " steps has counts within 64 bits; give the slowest level more slots");
    plan.shape = spine ? multilevel_shape::spine : multilevel_shape::nested;
    if (!spine)
        plan.outer_slots = std::min(outer.slots, plan.segments - 1);
    detail::multilevel_counts_cache cache;
    plan.stored_run = table.counts(plan.period, plan.run_row, slow, cache);
    plan.placed_run = table.placed_counts(plan.period, plan.top_row, cache);
    plan.tail_run = table.placed_counts(plan.tail, plan.top_row, cache);
    return result;
}

} // namespace remat::detail
