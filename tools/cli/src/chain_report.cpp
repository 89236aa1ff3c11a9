#include "chain_report.hpp"

#include "plan_report.hpp"
#include "remat/cli/parse.hpp"

#include <fmt/format.h>

#include <ostream>
#include <string_view>

namespace remat::cli {
namespace {

nlohmann::ordered_json taped_chain_json(const plan_choice& choice)
{
    const taped_chain_plan& plan = *choice.taped_chain;
    const schedule_cost c = choice.plan.cost();
    const chain_model& m = choice.chain_costs;
    nlohmann::ordered_json j;
    j["schedule"] = "chain";
    j["steps"] = c.steps;
    j["budget_bytes"] = *choice.budget_bytes;
    j["peak_bytes"] = plan.peak_bytes;
    j["predicted_cost"] = plan.cost;
    j["store_all_cost"] = m.store_all_cost();
    j["store_all_bytes"] = m.store_all_bytes();
    j["all_taped_bytes"] = all_taped_bytes(m);
    const double all = m.store_all_cost();
    j["overhead"] = all > 0 ? plan.cost / all : 1.0; // as the text says: 0 / 0 was null
    j["least_budget_bytes"] = plan.least_budget_bytes;
    j["granularity_bytes"] = plan.granularity;
    j["exact"] = true;
    j["method"] = "dynamic program, taped advances";
    add_counts(j, c);
    j["taped_steps"] = plan.taped_steps;
    return j;
}

void write_taped_chain_text(std::ostream& out, const plan_choice& choice)
{
    const taped_chain_plan& plan = *choice.taped_chain;
    const schedule_cost c = choice.plan.cost();
    const chain_model& m = choice.chain_costs;
    const double all = m.store_all_cost();
    out << fmt::format("schedule       {}\n", choice.description);
    out << fmt::format("steps          {}\n", c.steps);
    out << fmt::format("budget         {} (every tape needs {}; at these units at least {})\n",
                       format_bytes(*choice.budget_bytes), format_bytes(all_taped_bytes(m)),
                       format_bytes(plan.least_budget_bytes));
    out << fmt::format("peak memory    {} (snapshots + tapes + the current state + a running step's extra)\n",
                       format_bytes(plan.peak_bytes));
    out << fmt::format("predicted cost {:.6g} (store-all of states: {:.6g}; {:.3f}x)\n", plan.cost, all,
                       all > 0 ? plan.cost / all : 1.0);
    out << fmt::format("granularity    {} per unit\n", format_bytes(plan.granularity));
    out << fmt::format("forward steps  {} ({} taped; repetition {})\n", c.forward_steps, plan.taped_steps,
                       c.repetition);
    out << fmt::format("stores         {}\n", c.stores);
    out << fmt::format("restores       {}\n", c.restores);
    out << fmt::format("peak slots     {}\n", c.peak_slots);
}

} // namespace

nlohmann::ordered_json chain_json(const plan_choice& choice)
{
    if (choice.taped_chain)
        return taped_chain_json(choice);
    const chain& plan = *choice.chain;
    const schedule_cost c = plan.cost();
    const chain_model& m = plan.model();
    nlohmann::ordered_json j;
    j["schedule"] = "chain";
    j["steps"] = c.steps;
    j["budget_bytes"] = plan.budget_bytes();
    j["peak_bytes"] = plan.peak_bytes();
    j["predicted_cost"] = c.predicted_cost;
    j["store_all_cost"] = m.store_all_cost();
    j["store_all_bytes"] = m.store_all_bytes();
    const double all = m.store_all_cost();
    j["overhead"] = all > 0 ? c.predicted_cost / all : 1.0; // as the text says: 0 / 0 was null
    j["least_budget_bytes"] = plan.least_budget_bytes();
    j["granularity_bytes"] = plan.granularity();
    j["memory_units"] = plan.units();
    j["planned_units"] = plan.planned_units();
    j["lossless"] = plan.lossless();
    j["discretisation_gap_bytes"] = plan.discretisation_gap_bytes();
    j["horizon"] = plan.horizon();
    j["block_steps"] = plan.block_steps();
    j["exact"] = plan.exact();
    j["method"] = plan.method();
    add_counts(j, c);
    return j;
}

void write_chain_text(std::ostream& out, const plan_choice& choice)
{
    if (choice.taped_chain)
        return write_taped_chain_text(out, choice);
    const chain& plan = *choice.chain;
    const schedule_cost c = plan.cost();
    const chain_model& m = plan.model();
    const double all = m.store_all_cost();
    out << fmt::format("schedule       {}\n", choice.description);
    out << fmt::format("steps          {}\n", c.steps);
    // The least budget is the chain's own only where nothing is rounded or cut short; else it is this table's.
    out << fmt::format("budget         {} (store-all needs {}; {} at least {})\n", format_bytes(plan.budget_bytes()),
                       format_bytes(m.store_all_bytes()),
                       plan.lossless() && plan.exact() ? "this chain" : "at these units and horizon",
                       format_bytes(plan.least_budget_bytes()));
    out << fmt::format("peak memory    {} (snapshots + the current state + a running adjoint's extra)\n",
                       format_bytes(plan.peak_bytes()));
    out << fmt::format("predicted cost {:.6g} (store-all: {:.6g}; {:.3f}x)\n", c.predicted_cost, all,
                       all > 0 ? c.predicted_cost / all : 1.0);
    out << fmt::format("granularity    {} per unit, {} units{}\n", format_bytes(plan.granularity()), plan.units(),
                       plan.lossless() ? " (divides every size: no discretisation loss)"
                                       : fmt::format(" (at most the optimum for {} less)",
                                                     format_bytes(plan.discretisation_gap_bytes())));
    if (plan.planned_units() > plan.units())
        out << fmt::format("               planned for {} units: the rounding's slack, the peak still fits\n",
                           plan.planned_units());
    if (plan.block_steps() > 1)
        out << fmt::format("blocks         of {} steps (a chain this long is planned in blocks; each block kept or "
                           "re-run inside its adjoint)\n",
                           plan.block_steps());
    if (!plan.exact() && plan.block_steps() == 1)
        out << fmt::format("horizon        {} steps (near-optimal: the table for T = {} does not fit)\n",
                           plan.horizon(), c.steps);
    if (std::string_view(plan.method()) != "dynamic program")
        out << fmt::format("method         {} (it costs less than the near-optimal plan)\n", plan.method());
    out << fmt::format("forward steps  {} (repetition {})\n", c.forward_steps, c.repetition);
    out << fmt::format("stores         {}\n", c.stores);
    out << fmt::format("restores       {}\n", c.restores);
    out << fmt::format("peak slots     {}\n", c.peak_slots);
}

} // namespace remat::cli
