#include "plan_request.hpp"

#include "parse.hpp"

#include "remat/error.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <fmt/format.h>

#include <limits>

namespace remat::cli {

void add_plan_options(CLI::App& command, plan_request& request)
{
    command.add_option("--steps,-T", request.steps, "number of steps T of the loop (1 to 2^63-1; 1e6 form allowed)")
        ->required();
    command.add_option("--slots,-s", request.slots, "snapshot slots, x_0's included");
    command.add_option("--schedule", request.schedule, "revolve (binomial, optimal), uniform, or store-all")
        ->capture_default_str();
    command.add_option("--every", request.every, "uniform: steps between checkpoints (default: best that fits)");
    command.add_option("--budget", request.budget, "snapshot memory budget, e.g. 2GiB (instead of --slots)");
    command.add_option("--state-bytes", request.state_bytes, "bytes of one snapshot, e.g. 64MiB (with --budget)");
    command.add_flag("--online", request.online,
                     "the online schedule, for a loop that learns only at x_{T-1} that step T-1 is its last");
}

plan_choice choose_plan(const plan_request& request)
{
    constexpr auto slot_max = std::numeric_limits<slot_t>::max();
    plan_choice choice{.name = request.schedule,
                       .description = {},
                       .plan = revolve(1, 1),
                       .slots = 0,
                       .every = {},
                       .state_bytes = {},
                       .budget_bytes = {}};
    const step_t steps = parse_count("--steps", request.steps, 1);

    if (!request.budget.empty() || !request.state_bytes.empty()) {
        if (request.budget.empty() || request.state_bytes.empty())
            throw usage_error("--budget and --state-bytes go together: give both, or --slots");
        if (!request.slots.empty())
            throw usage_error("give either --slots or --budget with --state-bytes, not both");
        choice.budget_bytes = parse_bytes("--budget", request.budget);
        choice.state_bytes = parse_bytes("--state-bytes", request.state_bytes);
        if (*choice.state_bytes == 0)
            throw usage_error("--state-bytes: expected at least 1 byte, got \"" + request.state_bytes + "\"");
        const std::uint64_t fitting = *choice.budget_bytes / *choice.state_bytes;
        if (fitting == 0)
            throw usage_error(
                fmt::format("--budget {} holds no snapshot of --state-bytes {}; at least one slot is needed",
                            request.budget, request.state_bytes));
        choice.slots = static_cast<slot_t>(std::min<std::uint64_t>(fitting, slot_max));
    } else if (!request.slots.empty()) {
        choice.slots = parse_count("--slots", request.slots, 1);
    }

    if (request.online) {
        if (request.schedule != "revolve")
            throw usage_error("--online applies to --schedule revolve only, got \"" + request.schedule + "\"");
        if (choice.slots == 0)
            throw usage_error("--online needs --slots (or --budget with --state-bytes)");
        if (!request.every.empty())
            throw usage_error("--every applies to --schedule uniform only");
        const online_revolve plan(choice.slots);
        if (choice.slots > online_planned_slots_limit && steps - 1 > choice.slots)
            throw usage_error(fmt::format("--online --slots {}: planning lists the {} snapshots held when the loop "
                                          "ends, more than the {} this tool lists; use fewer slots",
                                          choice.slots, choice.slots, online_planned_slots_limit));
        const std::uint64_t decisions = plan.replay_decisions(steps);
        if (decisions > online_replay_limit)
            throw usage_error(fmt::format("--online --steps {} --slots {}: the cost needs a replay of about {} store "
                                          "decisions, more than the {} this tool replays; use more slots or "
                                          "fewer steps",
                                          steps, choice.slots, decisions, online_replay_limit));
        choice.plan = plan.replay(steps);
        choice.name = "online-revolve";
        choice.description = "online revolve (T learned at x_{T-1}; exact offline optimum up to C(s+2,2) steps)";
        choice.online = true;
    } else if (request.schedule == "revolve") {
        if (choice.slots == 0)
            throw usage_error("revolve needs --slots (or --budget with --state-bytes)");
        if (!request.every.empty())
            throw usage_error("--every applies to --schedule uniform only");
        choice.plan = revolve(steps, choice.slots);
        choice.description = "revolve (binomial checkpointing, Griewank & Walther 2000)";
    } else if (request.schedule == "uniform") {
        if (!request.every.empty()) {
            const step_t every = parse_count("--every", request.every, 1);
            const uniform plan(steps, every);
            const auto needed = static_cast<slot_t>(plan.cost().peak_slots);
            if (choice.slots == 0)
                choice.slots = std::max<slot_t>(needed, 1);
            else if (needed > choice.slots)
                throw usage_error(fmt::format("--every {} needs {} slots for {} steps, but only {} are available",
                                              every, needed, steps, choice.slots));
            choice.plan = plan;
            choice.every = every;
        } else {
            if (choice.slots == 0)
                throw usage_error("uniform needs --every, --slots, or --budget with --state-bytes");
            try {
                const uniform plan = uniform::fit(steps, choice.slots);
                choice.every = plan.every();
                choice.plan = plan;
            } catch (const capacity_error& e) {
                throw usage_error(e.what());
            }
        }
        choice.description = "uniform (a snapshot every k steps, as CVODES and PyTorch do)";
    } else if (request.schedule == "store-all") {
        if (!request.every.empty())
            throw usage_error("--every applies to --schedule uniform only");
        if (choice.slots == 0)
            choice.slots = std::max<step_t>(steps - 1, 1);
        try {
            choice.plan = store_all(steps, choice.slots);
        } catch (const capacity_error& e) {
            throw usage_error(e.what());
        }
        choice.description = "store-all (every state kept, no recomputation)";
    } else {
        throw usage_error("--schedule: expected revolve, uniform or store-all, got \"" + request.schedule + "\"");
    }
    return choice;
}

} // namespace remat::cli
