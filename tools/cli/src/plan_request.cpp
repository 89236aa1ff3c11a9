#include "plan_request.hpp"

#include "chain_file.hpp"
#include "remat/cli/parse.hpp"

#include "remat/error.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/chain_greedy.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/taped_uniform.hpp"
#include "remat/schedule/uniform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <variant>

namespace remat::cli {
namespace {

std::uint64_t saturated_add(std::uint64_t a, std::uint64_t b)
{
    std::uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

} // namespace

void add_plan_options(CLI::App& command, plan_request& request)
{
    command.add_option("--steps,-T", request.steps,
                       "number of steps T of the loop (1 to 2^63-1; 1e6 form allowed); required unless --chain");
    command.add_option("--slots,-s", request.slots, "snapshot slots, x_0's included");
    command.add_option("--schedule", request.schedule,
                       "revolve (binomial, optimal; the default), uniform, store-all, multilevel (the default with "
                       "--level), taped (states and steps' tapes, optimal; needs --tape-units or --tape-bytes; "
                       "--slots is then memory in states), or checkpoint-sequential (PyTorch's: uniform segments "
                       "re-run keeping their tapes)");
    command.add_option("--every", request.every,
                       "uniform, checkpoint-sequential: steps between checkpoints (default: best that fits)");
    command.add_option("--tape-units", request.tape_units,
                       "taped, checkpoint-sequential: the memory of one step's tape (its input state included), in "
                       "states");
    command.add_option("--tape-bytes", request.tape_bytes,
                       "taped, checkpoint-sequential: the same in bytes, e.g. 1.5MiB (with --state-bytes; rounded "
                       "up to whole states)");
    command.add_option("--rerun-units", request.rerun_units,
                       "taped: what a reverse from a state holds while it re-runs its step, in states (0 to the "
                       "tape's units; default 0, revolve's convention; PyTorch holds the step's graph, a tape)");
    command.add_option("--budget", request.budget, "snapshot memory budget, e.g. 2GiB (instead of --slots)");
    command.add_option("--state-bytes", request.state_bytes,
                       "bytes of one snapshot, e.g. 64MiB (with --budget, or with byte-sized --level)");
    command
        .add_option("--level", request.levels,
                    "a storage level NAME:SLOTS[:WRITE:READ], repeated fastest first: SLOTS an integer, inf, or "
                    "bytes such as 16GiB (needs --state-bytes); WRITE and READ the cost of one store and one "
                    "restore in forward steps (default 0). Example: --level host:4 --level disk:inf:5:5")
        ->expected(1)
        ->take_all();
    command.add_option("--step-cost", request.step_cost, "cost of one forward step (default 1)");
    command.add_option("--reverse-cost", request.reverse_cost,
                       "cost of one adjoint step (default 0; adds T times it to the predicted cost, never changes "
                       "the schedule; taped plans: the back-propagation through a tape, a reverse from a state "
                       "re-running its step at --step-cost first)");
    command.add_option("--method", request.method, "multilevel: auto, exact (dynamic program) or near-optimal (any T)")
        ->capture_default_str();
    command.add_option("--chain", request.chain,
                       "a chain whose steps differ: a JSON file of per-step forward and adjoint costs and state "
                       "sizes (docs/heterogeneous.md); plans the time-optimal schedule within --budget");
    command.add_option("--granularity", request.granularity,
                       "--chain: bytes per memory unit of the dynamic program, e.g. 1MiB (default: the sizes' "
                       "greatest common divisor, exact, when the budget, or store-all's bytes if fewer, is at most "
                       "4096 of them; else that many bytes over as many units as a table of horizon min(T, 8) allows, "
                       "clamped to 256..4096 (a chain planned in blocks: the whole budget, and more units), less an "
                       "eighth kept for the rounding's slack)");
    command.add_option("--horizon", request.horizon,
                       "--chain: most steps of a left part of the outermost checkpoints (default: T when the table "
                       "fits; less is faster and may cost more)");
    command.add_flag("--no-greedy-fallback", request.no_greedy_fallback,
                     "--chain: the dynamic program's own plan even where it is near-optimal (blocks, a short horizon) "
                     "and the greedy memory/compute ranking's plan costs less (docs/heterogeneous.md)");
    command.add_flag("--non-persistent", request.non_persistent,
                     "--chain: also allow a checkpoint to be freed at its last restore and its step reversed from "
                     "the enclosing one, where that costs less (small exact chains; docs/heterogeneous.md)");
    command.add_flag("--taped-advances", request.taped_advances,
                     "--chain: a step may also be advanced keeping its tape (tape_bytes, else its input and "
                     "adjoint_bytes, held until "
                     "its reverse, which then needs no re-run; docs/heterogeneous.md, \"Taped advances\")");
    command.add_flag("--online", request.online,
                     "the online schedule, for a loop that learns only at x_{T-1} that step T-1 is its last");
}

namespace {

plan_choice choose_multilevel(const plan_request& request, plan_choice choice, step_t steps)
{
    if (!request.slots.empty() || !request.budget.empty())
        throw usage_error("--level describes the storage: give it instead of --slots or --budget");
    if (!request.every.empty())
        throw usage_error("--every applies to --schedule uniform only");
    if (!request.state_bytes.empty())
        choice.state_bytes = parse_bytes("--state-bytes", request.state_bytes);
    if (choice.state_bytes && *choice.state_bytes == 0)
        throw usage_error("--state-bytes: expected at least 1 byte, got \"" + request.state_bytes + "\"");
    choice.levels = parse_levels(request.levels, choice.state_bytes);
    choice.model.levels.clear();
    std::uint64_t slots = 0;
    for (const parsed_level& l : choice.levels) {
        choice.model.levels.push_back(l.spec);
        slots = saturated_add(slots, static_cast<std::uint64_t>(std::min(l.spec.slots, steps))); // >= 1
    }
    choice.slots = static_cast<slot_t>(std::min<std::uint64_t>(slots, static_cast<std::uint64_t>(steps)));
    multilevel::options options;
    if (request.method == "exact")
        options.how = multilevel::method::exact;
    else if (request.method == "near-optimal")
        options.how = multilevel::method::near_optimal;
    else if (request.method != "auto")
        throw usage_error("--method: expected auto, exact or near-optimal, got \"" + request.method + "\"");
    try {
        const multilevel plan(steps, choice.model, options);
        choice.plan = plan;
        choice.period = plan.period();
        choice.lower_bound = multilevel_lower_bound(steps, choice.model);
        choice.levels_used = plan.levels_used();
        choice.planning_work = plan.work();
        static constexpr const char* structures[] = {"binomial", "exact",   "grid",   "spine",
                                                     "nested",   "layered", "stacked"};
        choice.structure = structures[static_cast<int>(plan.structure_used())];
        const std::string& slow = choice.model.levels.back().name;
        switch (plan.structure_used()) {
        case multilevel::structure::binomial:
            choice.method = "binomial";
            choice.description = "multi-level: one free level, binomial checkpointing (revolve)";
            break;
        case multilevel::structure::exact:
            choice.method = "exact";
            choice.description = "multi-level, exact (dynamic program over levels, free slots and split points)";
            break;
        case multilevel::structure::grid:
            choice.method = "near-optimal";
            choice.description = fmt::format("multi-level, near-optimal (the exact program over super-steps of {} "
                                             "steps, exact within each)",
                                             plan.period());
            break;
        case multilevel::structure::spine:
            choice.method = "near-optimal";
            choice.description = fmt::format("multi-level, near-optimal (a checkpoint on {} every {} steps, exact "
                                             "schedules of up to {} steps between)",
                                             slow, plan.period(), plan.horizon());
            break;
        case multilevel::structure::nested:
            choice.method = "near-optimal";
            choice.description = fmt::format("multi-level, near-optimal (revolve on {} over segments of {} steps, "
                                             "exact schedules within)",
                                             slow, plan.period());
            break;
        case multilevel::structure::layered:
            choice.method = "near-optimal";
            choice.description =
                fmt::format("multi-level, near-optimal (the exact program over {} alone{}, exact schedules of up to "
                            "{} steps between its checkpoints)",
                            choice.model.levels[static_cast<std::size_t>(plan.outer_level())].name,
                            plan.period() > 1 ? fmt::format(" on a grid of {} steps", plan.period()) : std::string(),
                            plan.horizon());
            break;
        case multilevel::structure::stacked:
            choice.method = "near-optimal";
            choice.description = fmt::format("multi-level, near-optimal (revolve over {} slots of all levels, the "
                                             "dearest at the bottom of its stack)",
                                             plan.cost().peak_slots);
            break;
        }
        if (choice.levels_used.size() < choice.model.levels.size()) {
            std::string names;
            for (const level_t l : choice.levels_used)
                names += (names.empty() ? "" : ", ") + choice.model.levels[static_cast<std::size_t>(l)].name;
            choice.description += fmt::format(", on {} only (cheaper than any plan over all the levels found)", names);
        }
    } catch (const argument_error& e) {
        throw usage_error(std::string("--level: ") + e.what());
    }
    return choice;
}

// --chain --taped-advances: remat::plan_taped_chain's plan, its actions listed.
plan_choice choose_taped_chain(const plan_request& request, plan_choice choice, std::uint64_t budget,
                               std::uint64_t granularity)
{
    if (!request.horizon.empty() || request.no_greedy_fallback || request.non_persistent)
        throw usage_error("--taped-advances plans the exact optimum: --horizon, --no-greedy-fallback and "
                          "--non-persistent do not apply");
    chain_model model = read_chain_file(request.chain);
    taped_chain_plan plan = plan_taped_chain(model, budget, granularity);
    schedule_cost c;
    c.steps = model.size();
    c.reverse_steps = static_cast<std::uint64_t>(model.size());
    c.stores = plan.stores;
    c.restores = plan.restores;
    c.peak_slots = plan.peak_slots;
    c.repetition = plan.repetition;
    c.forward_steps = plan.forward_steps;
    c.taped_steps = plan.taped_steps;
    c.levels = {level_cost{c.stores, c.restores, c.peak_slots}};
    c.predicted_cost = plan.cost;
    choice.name = "chain";
    choice.description = "heterogeneous chain with taped advances, optimal (dynamic program over split points, "
                         "tapes and memory)";
    auto actions = std::make_shared<const std::vector<action>>(plan.actions);
    choice.plan = listed_plan(model.size(), actions, c, plan.peak_bytes);
    choice.budget_bytes = budget;
    choice.slots = c.peak_slots;
    choice.taped_chain = std::move(plan);
    choice.chain_costs = std::move(model);
    return choice;
}

plan_choice choose_chain(const plan_request& request, plan_choice choice)
{
    if (!request.steps.empty() || !request.slots.empty() || !request.state_bytes.empty() || !request.every.empty() ||
        !request.levels.empty() || !request.schedule.empty() || request.online || !request.step_cost.empty() ||
        !request.reverse_cost.empty() || request.method != "auto")
        throw usage_error("--chain takes the steps, costs and sizes from its file: give it with --budget (and "
                          "optionally --granularity, --horizon, --no-greedy-fallback, --non-persistent, "
                          "--taped-advances) only");
    if (request.budget.empty())
        throw usage_error("--chain needs --budget (the memory for snapshots, the running step and its adjoint)");
    const std::uint64_t budget = *parse_bytes("--budget", request.budget);
    chain::options options;
    if (!request.granularity.empty()) {
        options.granularity = *parse_bytes("--granularity", request.granularity);
        if (options.granularity == 0)
            throw usage_error("--granularity: expected at least 1 byte, got \"" + request.granularity + "\"");
    }
    if (!request.horizon.empty())
        options.horizon = parse_count("--horizon", request.horizon, 1);
    options.greedy_fallback = !request.no_greedy_fallback;
    options.non_persistent = request.non_persistent;
    if (request.taped_advances)
        return choose_taped_chain(request, std::move(choice), budget, options.granularity);
    const chain plan(read_chain_file(request.chain), budget, options);
    choice.name = "chain";
    choice.description = plan.exact() ? "heterogeneous chain, optimal (dynamic program over split points and memory)"
                                      : fmt::format("heterogeneous chain, near-optimal (left parts of the outermost "
                                                    "checkpoints limited to {} steps)",
                                                    plan.horizon());
    choice.plan = plan;
    choice.budget_bytes = budget;
    choice.slots = plan.cost().peak_slots;
    choice.chain = plan;
    return choice;
}

bool keeps_tapes(const std::string& name)
{
    return name == "taped" || name == "checkpoint-sequential";
}

// A tape's memory in states, from --tape-units or from --tape-bytes over --state-bytes (rounded up: a plan
// for the larger tape fits the smaller one).
slot_t tape_units_of(const plan_request& request, const std::optional<std::uint64_t>& state_bytes,
                     const std::string& name)
{
    if (request.tape_units.empty() == request.tape_bytes.empty())
        throw usage_error("--schedule " + name +
                          " needs --tape-units (a tape's memory in states) or --tape-bytes "
                          "(with --state-bytes), one of them");
    if (!request.tape_units.empty())
        return parse_count("--tape-units", request.tape_units, 1);
    if (!state_bytes)
        throw usage_error("--tape-bytes needs --state-bytes (and --budget): the plan counts memory in states");
    const std::uint64_t bytes = *parse_bytes("--tape-bytes", request.tape_bytes);
    if (bytes == 0)
        throw usage_error("--tape-bytes: expected at least 1 byte, got \"" + request.tape_bytes + "\"");
    return remat::tape_units_for(bytes, *state_bytes);
}

// --schedule taped (remat::taped_revolve) or checkpoint-sequential (remat::taped_uniform) in choice.slots
// units of memory (states), priced with F = --step-cost and B = --reverse-cost.
plan_choice choose_taped(const plan_request& request, plan_choice choice, step_t steps)
{
    const slot_t tape_units = tape_units_of(request, choice.state_bytes, choice.name);
    const double f = choice.model.step_cost;
    const double b = choice.model.reverse_cost;
    const auto take = [&](const auto& plan, std::string description) {
        choice.plan = plan;
        choice.peak_units = plan.peak_units();
        choice.evaluations = plan.evaluations();
        choice.description = std::move(description);
    };
    try {
        if (choice.name == "taped") {
            if (!request.every.empty())
                throw usage_error("--every applies to --schedule uniform and checkpoint-sequential only");
            if (choice.slots == 0)
                throw usage_error("taped needs --slots (memory in states: snapshots and tapes) or --budget with "
                                  "--state-bytes");
            if (!request.rerun_units.empty())
                choice.rerun_units = parse_count("--rerun-units", request.rerun_units, 0);
            take(taped_revolve(steps, choice.slots, tape_units, f, b, taped_revolve::default_work_limit,
                               choice.rerun_units),
                 "taped (states and steps' tapes in one memory, optimal: the fewest evaluations)");
        } else if (!request.every.empty()) {
            const step_t every = parse_count("--every", request.every, 1);
            const taped_uniform plan(steps, every, tape_units, f, b);
            if (choice.slots == 0)
                choice.slots = plan.peak_units();
            else if (plan.peak_units() > choice.slots)
                throw usage_error(fmt::format("--every {} needs {} units for {} steps with tapes of {} units, but "
                                              "only {} are available",
                                              every, plan.peak_units(), steps, tape_units, choice.slots));
            choice.every = plan.every();
            take(plan, "checkpoint-sequential (PyTorch's: uniform segments re-run keeping their tapes)");
        } else {
            if (choice.slots == 0)
                throw usage_error("checkpoint-sequential needs --every, --slots, or --budget with --state-bytes");
            const taped_uniform plan = taped_uniform::fit(steps, choice.slots, tape_units, f, b);
            choice.every = plan.every();
            take(plan, "checkpoint-sequential (PyTorch's: uniform segments re-run keeping their tapes)");
        }
    } catch (const argument_error& e) {
        throw usage_error(e.what());
    } catch (const capacity_error& e) {
        throw usage_error(e.what());
    }
    choice.tape_units = tape_units;
    choice.model.levels[0].slots = std::max<slot_t>(choice.slots, 1);
    return choice;
}

} // namespace

plan_choice choose_plan(const plan_request& request)
{
    constexpr auto slot_max = std::numeric_limits<slot_t>::max();
    const std::string name = !request.schedule.empty() ? request.schedule
                             : request.levels.empty()  ? std::string("revolve")
                                                       : std::string("multilevel");
    plan_choice choice{.name = name,
                       .description = {},
                       .plan = revolve(1, 1),
                       .slots = 0,
                       .every = {},
                       .state_bytes = {},
                       .budget_bytes = {},
                       .model = cost_model::single_level(1),
                       .levels = {},
                       .method = {},
                       .structure = {},
                       .period = 0,
                       .lower_bound = {},
                       .levels_used = {},
                       .online = false,
                       .chain = {},
                       .taped_chain = {},
                       .chain_costs = {},
                       .tape_units = {},
                       .peak_units = 0,
                       .evaluations = 0};
    if (!request.chain.empty())
        return choose_chain(request, std::move(choice));
    if (!request.granularity.empty() || !request.horizon.empty() || request.no_greedy_fallback ||
        request.non_persistent || request.taped_advances)
        throw usage_error("--granularity, --horizon, --no-greedy-fallback, --non-persistent and --taped-advances apply "
                          "to --chain only");
    if (request.steps.empty())
        throw usage_error("--steps is required (or --chain FILE)");
    const step_t steps = parse_count("--steps", request.steps, 1);
    if (!request.step_cost.empty())
        choice.model.step_cost = parse_cost("--step-cost", request.step_cost, true);
    if (!request.reverse_cost.empty())
        choice.model.reverse_cost = parse_cost("--reverse-cost", request.reverse_cost, false);
    if (request.online && !request.levels.empty())
        throw usage_error("--online plans one level: give --slots (or --budget with --state-bytes), not --level");
    if (!keeps_tapes(name) && (!request.tape_units.empty() || !request.tape_bytes.empty()))
        throw usage_error("--tape-units and --tape-bytes apply to --schedule taped and checkpoint-sequential only");
    if (name != "taped" && !request.rerun_units.empty())
        throw usage_error("--rerun-units applies to --schedule taped only");
    if (name == "multilevel") {
        if (request.levels.empty())
            throw usage_error("--schedule multilevel needs --level (e.g. --level host:4 --level disk:inf:5:5)");
        return choose_multilevel(request, std::move(choice), steps);
    }
    if (!request.levels.empty())
        throw usage_error("--level applies to --schedule multilevel only, got --schedule " + name);
    if (request.method != "auto")
        throw usage_error("--method applies to --schedule multilevel only");

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

    if (keeps_tapes(name) && !request.online)
        return choose_taped(request, std::move(choice), steps);
    if (request.online) {
        if (name != "revolve")
            throw usage_error("--online applies to --schedule revolve only, got \"" + name + "\"");
        if (choice.slots == 0)
            throw usage_error("--online needs --slots (or --budget with --state-bytes)");
        if (!request.every.empty())
            throw usage_error("--every applies to --schedule uniform only");
        const online_revolve plan(choice.slots);
        if (plan.cost_work(steps) > online_revolve::cost_work_limit) { // what online_revolve::cost would refuse
            const std::uint64_t decisions = plan.replay_decisions(steps);
            if (decisions > online_revolve::cost_work_limit)
                throw usage_error(fmt::format("--online --steps {} --slots {}: the cost needs a replay of about {} "
                                              "store decisions, more than the {} this tool replays; use more slots "
                                              "or fewer steps",
                                              steps, choice.slots, decisions, online_revolve::cost_work_limit));
            throw usage_error(fmt::format("--online --slots {}: past C(s+2,2) steps planning lists the {} snapshots "
                                          "held when the loop ends, {} units of work each, more than the {} this "
                                          "tool does; use fewer slots",
                                          choice.slots, choice.slots, online_revolve::work_per_slot,
                                          online_revolve::cost_work_limit));
        }
        choice.plan = plan.replay(steps);
        choice.name = "online-revolve";
        choice.description = "online revolve (T learned at x_{T-1}; exact offline optimum up to C(s+2,2) steps)";
        choice.online = true;
    } else if (name == "revolve") {
        if (choice.slots == 0)
            throw usage_error("revolve needs --slots (or --budget with --state-bytes)");
        if (!request.every.empty())
            throw usage_error("--every applies to --schedule uniform only");
        choice.plan = revolve(steps, choice.slots);
        choice.description = "revolve (binomial checkpointing, Griewank & Walther 2000)";
    } else if (name == "uniform") {
        if (!request.every.empty()) {
            const step_t every = parse_count("--every", request.every, 1);
            const uniform plan(steps, every);
            const slot_t needed = plan.cost().peak_slots;
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
    } else if (name == "store-all") {
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
        throw usage_error("--schedule: expected revolve, uniform, store-all, multilevel, taped or "
                          "checkpoint-sequential, got \"" +
                          name + "\"");
    }
    choice.model.levels[0].slots = std::max<slot_t>(choice.slots, 1);
    return choice;
}

} // namespace remat::cli
