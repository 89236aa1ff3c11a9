#include "plan_report.hpp"

#include "chain_report.hpp"
#include "remat/cli/parse.hpp"
#include "snapshot_bytes.hpp"

#include "remat/schedule/binomial.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

namespace remat::cli {
namespace {

double recompute_ratio(const schedule_cost& c)
{
    const std::uint64_t baseline = store_all_forward_steps(c.steps);
    return baseline == 0 ? 1.0 : static_cast<double>(c.forward_steps) / static_cast<double>(baseline);
}

// How far above the lower bound the plan costs, as a fraction. The bound is 0 only at T = 1 with no reverse cost,
// where the plan costs 0 too: 0 / 0 printed "-nan% above" and JSON null.
double gap_to_lower_bound(const plan_choice& choice, const schedule_cost& c)
{
    return *choice.lower_bound > 0 ? predicted_cost(c, choice.model) / *choice.lower_bound - 1.0 : 0.0;
}

// An online schedule against the offline optimum for the T it found.
double offline_ratio(const schedule_cost& c, std::uint64_t offline)
{
    return offline == 0 ? 1.0 : static_cast<double>(c.forward_steps) / static_cast<double>(offline);
}

// Taped plans price themselves: F per evaluation (a reverse from a state re-runs its step), B per reverse.
double plan_cost(const plan_choice& choice, const schedule_cost& c)
{
    return choice.tape_units ? c.predicted_cost : predicted_cost(c, choice.model);
}

// Refuses a predicted cost past the largest double, before any output: the text said "inf" and the JSON null.
// The schedule itself does not depend on the costs, so --format actions still lists it.
void require_finite_cost(const plan_choice& choice, const schedule_cost& c)
{
    if (!std::isfinite(plan_cost(choice, c)))
        throw usage_error(fmt::format("--step-cost {:g}, --reverse-cost {:g}: the predicted cost of {} forward steps "
                                      "and {} reverse steps passes the largest double, 1.8e308; scale the costs down "
                                      "(the schedule does not change)",
                                      choice.model.step_cost, choice.model.reverse_cost, c.forward_steps,
                                      c.reverse_steps));
}

} // namespace

void add_counts(nlohmann::ordered_json& j, const schedule_cost& c)
{
    j["forward_steps"] = c.forward_steps;
    j["reverse_steps"] = c.reverse_steps;
    j["stores"] = c.stores;
    j["restores"] = c.restores;
    j["peak_slots"] = c.peak_slots;
    j["repetition"] = c.repetition;
}

nlohmann::ordered_json plan_json(const plan_choice& choice)
{
    if (choice.chain || choice.taped_chain)
        return chain_json(choice);
    const schedule_cost c = choice.plan.cost();
    require_finite_cost(choice, c);
    nlohmann::ordered_json j;
    j["schedule"] = choice.name;
    j["steps"] = c.steps;
    j["slots"] = choice.slots;
    if (choice.every)
        j["every"] = *choice.every;
    add_counts(j, c);
    j["store_all_forward_steps"] = store_all_forward_steps(c.steps);
    j["recompute_ratio"] = recompute_ratio(c);
    if (choice.tape_units) {
        j["tape_units"] = *choice.tape_units;
        j["rerun_units"] = choice.rerun_units;
        j["taped_steps"] = c.taped_steps;
        j["peak_tapes"] = c.peak_tapes;
        j["peak_units"] = choice.peak_units;
        if (choice.state_bytes)
            j["peak_units_bytes"] = snapshot_bytes(choice.peak_units, *choice.state_bytes);
        j["evaluations"] = choice.evaluations;
    }
    j["predicted_cost"] = plan_cost(choice, c);
    j["step_cost"] = choice.model.step_cost;
    j["reverse_cost"] = choice.model.reverse_cost;
    if (!choice.method.empty()) {
        j["method"] = choice.method;
        j["structure"] = choice.structure;
    }
    if (choice.period > 0)
        j["period"] = choice.period;
    if (choice.lower_bound) {
        // Every schedule costs at least the bound: the gap says how far from optimal this plan can be.
        j["lower_bound"] = *choice.lower_bound;
        j["gap_to_lower_bound"] = gap_to_lower_bound(choice, c);
        j["levels_used"] = choice.levels_used;
        // The work it took to plan (table iterations; the limit is 2*10^9 whatever T and the levels).
        j["planning_work"] = choice.planning_work;
    }
    if (choice.online) {
        const std::uint64_t offline = binomial::min_forward_steps(c.steps, choice.slots);
        j["offline_forward_steps"] = offline;
        j["ratio_to_offline"] = offline_ratio(c, offline);
        j["learns_end_at"] = "x_{T-1}";
    }
    if (choice.state_bytes) {
        j["state_bytes"] = *choice.state_bytes;
        if (choice.budget_bytes) // a multi-level plan has per-level capacities instead
            j["budget_bytes"] = *choice.budget_bytes;
        j["peak_snapshot_bytes"] = snapshot_bytes(c.peak_slots, *choice.state_bytes);
    }
    nlohmann::ordered_json levels = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < c.levels.size(); ++i) {
        nlohmann::ordered_json level{{"level", i},
                                     {"stores", c.levels[i].stores},
                                     {"restores", c.levels[i].restores},
                                     {"peak_slots", c.levels[i].peak_slots}};
        if (i < choice.levels.size()) { // multilevel: what the level is and what it costs
            const parsed_level& l = choice.levels[i];
            level["name"] = l.spec.name;
            level["slots"] = l.spec.slots == level_spec::unlimited ? nlohmann::ordered_json(nullptr)
                                                                   : nlohmann::ordered_json(l.spec.slots);
            if (l.bytes)
                level["capacity_bytes"] = *l.bytes;
            level["write_cost"] = l.spec.write_cost;
            level["read_cost"] = l.spec.read_cost;
        }
        levels.push_back(level);
    }
    j["levels"] = levels;
    return j;
}

void write_plan_text(std::ostream& out, const plan_choice& choice)
{
    if (choice.chain || choice.taped_chain)
        return write_chain_text(out, choice);
    const schedule_cost c = choice.plan.cost();
    require_finite_cost(choice, c);
    // Before any output: a peak beyond 64 bits of bytes is refused, not half a report.
    const std::uint64_t peak_bytes = choice.state_bytes ? snapshot_bytes(c.peak_slots, *choice.state_bytes) : 0;
    const std::uint64_t baseline = store_all_forward_steps(c.steps);
    out << fmt::format("schedule       {}\n", choice.description);
    out << fmt::format("steps          {}\n", c.steps);
    if (choice.budget_bytes && choice.tape_units)
        out << fmt::format("budget         {} for snapshots and tapes, in states of {}: {} units (a tape {})\n",
                           format_bytes(*choice.budget_bytes), format_bytes(*choice.state_bytes), choice.slots,
                           *choice.tape_units);
    else if (choice.budget_bytes) // with --level, capacities per level instead (below)
        out << fmt::format("budget         {} for snapshots of {}: {} slots\n", format_bytes(*choice.budget_bytes),
                           format_bytes(*choice.state_bytes), choice.slots);
    else if (choice.tape_units)
        out << fmt::format("units          {} (memory in states: snapshots, and tapes of {} units each)\n",
                           choice.slots, *choice.tape_units);
    else if (choice.levels.empty())
        out << fmt::format("slots          {}\n", choice.slots);
    if (choice.every)
        out << fmt::format("every          {} steps\n", *choice.every);
    out << fmt::format("repetition     {} (no step runs forward more than {} time{})\n", c.repetition, c.repetition,
                       c.repetition == 1 ? "" : "s");
    out << fmt::format("forward steps  {} (store-all: {}; {} recomputed, {:.3f}x)\n", c.forward_steps, baseline,
                       c.forward_steps - baseline, recompute_ratio(c));
    if (choice.online) {
        const std::uint64_t offline = binomial::min_forward_steps(c.steps, choice.slots);
        out << fmt::format("offline        {} forward steps if T were known up front (online/offline {:.4f}x)\n",
                           offline, offline_ratio(c, offline));
    }
    out << fmt::format("reverse steps  {}\n", c.reverse_steps);
    out << fmt::format("stores         {}\n", c.stores);
    out << fmt::format("restores       {}\n", c.restores);
    out << fmt::format("peak slots     {}", c.peak_slots);
    if (choice.state_bytes)
        out << fmt::format(" ({} of snapshots)", format_bytes(peak_bytes));
    out << '\n';
    if (choice.tape_units) {
        out << fmt::format("taped steps    {} (their tapes spare the re-run in their reverse; at most {} held)\n",
                           c.taped_steps, c.peak_tapes);
        out << fmt::format(
            "peak units     {} (snapshots + {} x tapes{}, at once){}\n", choice.peak_units, *choice.tape_units,
            choice.rerun_units > 0 ? fmt::format(" + {} while a reverse re-runs its step", choice.rerun_units)
                                   : std::string(),
            choice.state_bytes ? " = " + format_bytes(snapshot_bytes(choice.peak_units, *choice.state_bytes))
                               : std::string());
        out << fmt::format("evaluations    {} (advances, and the re-run of each reverse from a state; at least {})\n",
                           choice.evaluations, c.steps);
    }
    for (std::size_t i = 0; i < choice.levels.size() && i < c.levels.size(); ++i) {
        const level_spec& l = choice.levels[i].spec;
        out << fmt::format("level {}        {} ({} slots, write {:g}, read {:g}): {} stores, {} restores, peak {}\n", i,
                           l.name, l.slots == level_spec::unlimited ? std::string("inf") : std::to_string(l.slots),
                           l.write_cost, l.read_cost, c.levels[i].stores, c.levels[i].restores, c.levels[i].peak_slots);
    }
    out << fmt::format("predicted cost {:.6g} forward-step units (step cost {:g}{}, reverse cost {:g})\n",
                       plan_cost(choice, c), choice.model.step_cost, choice.tape_units ? " an evaluation" : "",
                       choice.model.reverse_cost);
    if (choice.lower_bound)
        out << fmt::format("lower bound    {:.6g} (every schedule costs at least this; this plan is {:.3f}% above)\n",
                           *choice.lower_bound, 100.0 * gap_to_lower_bound(choice, c));
}

void write_actions(std::ostream& out, const any_schedule& plan)
{
    fmt::memory_buffer buffer;
    auto flush = [&] {
        out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        buffer.clear();
    };
    auto it = std::back_inserter(buffer);
    for (const action& a : plan) {
        std::visit(overloaded{
                       [&](const advance& x) {
                           fmt::format_to(it, "advance {} {}{}\n", x.from, x.to, x.taped ? " tape" : "");
                       },
                       [&](const store& x) { fmt::format_to(it, "store {} {} {}\n", x.level, x.slot, x.step); },
                       [&](const restore& x) { fmt::format_to(it, "restore {} {} {}\n", x.level, x.slot, x.step); },
                       [&](const free_slot& x) { fmt::format_to(it, "free {} {}\n", x.level, x.slot); },
                       [&](const reverse& x) { fmt::format_to(it, "reverse {}\n", x.step); },
                   },
                   a);
        if (buffer.size() > (1u << 16))
            flush();
    }
    flush();
}

} // namespace remat::cli
