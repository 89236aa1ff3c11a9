// The options that choose a schedule, shared by `remat plan` and `remat draw`.
#pragma once

#include "remat/schedule/any_schedule.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace remat::cli {

/// The raw option texts, validated by choose_plan() so that every message names its option.
struct plan_request {
    std::string steps;
    std::string slots;
    std::string schedule = "revolve";
    std::string every;
    std::string budget;
    std::string state_bytes;
    bool online = false; ///< simulate the online schedule (T learned only at x_{T-1})
};

/// A validated choice of schedule.
struct plan_choice {
    std::string name;        ///< "revolve", "online-revolve", "uniform" or "store-all"
    std::string description; ///< one line for humans
    any_schedule plan;
    slot_t slots = 0;                         ///< slots available to it
    std::optional<step_t> every;              ///< uniform: the spacing used
    std::optional<std::uint64_t> state_bytes; ///< when planned from a byte budget
    std::optional<std::uint64_t> budget_bytes;
    bool online = false; ///< an online schedule: its cost is compared with the offline optimum
};

/// `--online` costs beyond C(s+2,2) steps come from a replay of the schedule's store decisions (a few ns
/// each); above this many the tool refuses instead of running for minutes.
inline constexpr std::uint64_t online_replay_limit = std::uint64_t{1} << 32;
/// ... and lists the snapshots held when the loop ends (8 bytes each), up to this many.
inline constexpr slot_t online_planned_slots_limit = slot_t{1} << 27;

void add_plan_options(CLI::App& command, plan_request& request);

/// Throws usage_error (exit 2) for bad or inconsistent options.
plan_choice choose_plan(const plan_request& request);

} // namespace remat::cli
