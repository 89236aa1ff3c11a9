// The structures a multi-level plan is chosen from (multilevel_choose.cpp, docs/multilevel.md): each is a function
// that makes one plan, or null where it does not apply, from the same base plan (the loop and its levels); and what
// they share: the tables' free-slot limits (multilevel_limits.cpp) and a plan's counts (multilevel_counts.cpp).
#pragma once

#include "multilevel_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace remat::detail {

using plan_ptr = std::shared_ptr<multilevel_plan>;

// ---- limits (multilevel_limits.cpp)

/// Whether the slowest level holds a snapshot of every step (unlimited, or at least T - 1 slots).
bool slow_level_unlimited(const cost_model& model, step_t steps);
/// Free-slot limits of a table over segments of up to `horizon` steps: a level that holds horizon-1 snapshots is as
/// good as unlimited there.
std::vector<std::uint64_t> table_limits(const cost_model& model, step_t horizon);
/// `limits` with the slowest level unlimited.
std::vector<std::uint64_t> relaxed_limits(std::vector<std::uint64_t> limits);
/// The limits of a spine (slowest level unlimited) or nested (the segment start's own slot there) table.
std::vector<std::uint64_t> periodic_limits(const cost_model& model, step_t horizon, bool spine);
/// Whether a table of `n` levels with these limits over `horizon` steps fits the work limit and max_entries.
bool affordable(std::size_t n, const std::vector<std::uint64_t>& limits, step_t horizon, std::uint64_t work_limit,
                std::uint64_t max_entries);
/// The largest horizon K <= T whose spine or nested table fits the limits (work grows with K).
step_t fitting_horizon(const cost_model& model, step_t steps, bool spine, std::uint64_t work_limit,
                       std::uint64_t max_entries);

// ---- counts (multilevel_counts.cpp)

/// The counts of a plan over all of its model's levels, combined from its tables' (stacked: its own).
schedule_cost combined_counts(const multilevel_plan& plan);
/// Whether the plan's peak on the slowest level (and the spine's slot indices there) fits that level.
bool fits_slow_level(const multilevel_plan& plan);
/// The counts of any plan: a plan over some of the levels has its counts moved to this model's levels.
schedule_cost plan_cost(const multilevel_plan& plan);

// ---- the structures

/// A plan for `base`'s loop and model, with nothing chosen yet.
plan_ptr fresh_plan(const multilevel_plan& base);
/// exact: one table over the whole loop (multilevel_periodic.cpp).
plan_ptr plan_exact(const multilevel_plan& base, const std::vector<std::uint64_t>& limits, std::uint64_t max_entries);
/// grid: super-steps of g steps (multilevel_periodic.cpp).
plan_ptr plan_grid(const multilevel_plan& base, const std::vector<std::uint64_t>& limits, step_t g,
                   std::uint64_t work_limit, std::uint64_t max_entries, bool forced);
/// spine (`spine`) or nested: periodic segments whose starts the slowest level keeps (multilevel_periodic.cpp).
plan_ptr plan_outer(const multilevel_plan& base, step_t horizon, std::uint64_t max_entries, bool spine);
/// layered on level `outer` (multilevel_layered.cpp).
plan_ptr plan_layered(const multilevel_plan& base, level_t outer, const multilevel::options& opts);
/// The most revolve tasks the stacked structure counts per plan when nothing else fits the work limit.
constexpr std::size_t stacked_max_tasks = 300'000;
/// stacked: revolve over the cheapest k slots of all levels (multilevel_stacked_plan.cpp); `least_tasks` overrides
/// the work limit's share.
plan_ptr plan_stacked(const multilevel_plan& base, std::size_t least_tasks = 0);

/// Exact when the table fits (first with the slowest level relaxed to unlimited: when that optimum fits the real
/// capacity it is the optimum); else the cheapest near-optimal structure that fits (multilevel_choose.cpp).
/// `opts.near_optimal_work_limit` is this plan's own share of the work; automatic builds the exact table when it
/// takes at most `exact_limit` iterations. `stacked`: the stacked plan, when already made.
plan_ptr choose_structure(const multilevel_plan& base, const multilevel::options& opts, std::uint64_t exact_limit,
                          plan_ptr stacked);

} // namespace remat::detail
