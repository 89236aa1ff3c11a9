// The options that choose a schedule, shared by `remat plan` and `remat draw`.
#pragma once

#include "level_option.hpp"

#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/chain.hpp"
#include "remat/schedule/chain_taped.hpp"
#include "remat/schedule/multilevel_model.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat::cli {

/// The raw option texts, validated by choose_plan() so that every message names its option.
struct plan_request {
    std::string steps;
    std::string slots;
    std::string schedule; ///< empty: revolve, or multilevel with --level
    std::string every;
    std::string budget;
    std::string state_bytes;
    std::vector<std::string> levels; ///< --level texts, fastest first
    std::string step_cost;
    std::string reverse_cost;
    std::string method = "auto";     ///< multilevel: auto, exact or near-optimal
    bool online = false;             ///< simulate the online schedule (T learned only at x_{T-1})
    std::string chain;               ///< a heterogeneous chain's JSON file (with --budget)
    std::string granularity;         ///< chain: bytes per memory unit (default: automatic)
    std::string horizon;             ///< chain: most steps of an outer left part (default: T when it fits)
    bool no_greedy_fallback = false; ///< chain: keep the tables' own plan where the greedy ranking's costs less
    bool non_persistent = false;     ///< chain: chain::options::non_persistent
    bool taped_advances = false;     ///< chain: remat::plan_taped_chain (steps may keep their tapes)
    std::string tape_units;          ///< taped, checkpoint-sequential: a tape's memory in states
    std::string tape_bytes;          ///< the same in bytes (with --state-bytes; rounded up to whole states)
    std::string rerun_units;         ///< taped: what a reverse from a state holds while it re-runs its step
};

/// A validated choice of schedule.
struct plan_choice {
    /// "revolve", "online-revolve", "uniform", "store-all", "multilevel", "taped" or "checkpoint-sequential"
    std::string name;
    std::string description; ///< one line for humans
    any_schedule plan;
    slot_t slots = 0;                         ///< slots available to it
    std::optional<step_t> every;              ///< uniform: the spacing used
    std::optional<std::uint64_t> state_bytes; ///< when planned from a byte budget
    std::optional<std::uint64_t> budget_bytes;
    /// The levels and costs that price the plan: one level of --slots slots with zero costs unless --level.
    cost_model model;
    std::vector<parsed_level> levels; ///< multilevel: the parsed --level texts
    std::string method;               ///< multilevel: "binomial", "exact" or "near-optimal"
    std::string structure; ///< multilevel: "binomial", "exact", "grid", "spine", "nested", "layered" or "stacked"
    step_t period = 0;     ///< multilevel near-optimal: k (spine, nested) or g (grid, layered)
    std::optional<double> lower_bound; ///< multilevel: remat::multilevel_lower_bound of the model
    std::vector<level_t> levels_used;  ///< multilevel: the levels the plan stores on
    std::uint64_t planning_work = 0;   ///< multilevel: remat::multilevel::work() (table iterations)
    bool online = false;               ///< an online schedule: its cost is compared with the offline optimum
    std::optional<remat::chain> chain; ///< --chain: the heterogeneous plan (its own cost report)
    /// --chain --taped-advances: the plan with taped advances and its chain (their own cost report).
    std::optional<taped_chain_plan> taped_chain;
    chain_model chain_costs;
    /// Plans that keep steps' tapes (taped, checkpoint-sequential): `slots` is then their memory in states,
    /// snapshots and tapes together (remat/schedule/taped_revolve.hpp), each tape `tape_units` of them.
    std::optional<slot_t> tape_units;
    slot_t rerun_units = 0;        ///< taped: a reverse's re-run, in states (taped_revolve's rerun_units)
    slot_t peak_units = 0;         ///< taped: most units held at once
    std::uint64_t evaluations = 0; ///< taped: advances plus the re-run of each reverse from a state
};

void add_plan_options(CLI::App& command, plan_request& request);

/// Throws usage_error (exit 2) for bad or inconsistent options.
plan_choice choose_plan(const plan_request& request);

} // namespace remat::cli
