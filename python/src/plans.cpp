// Plans made in C++ for Python: each factory returns (Schedule, report), the report a dict with the fields
// and names of `remat plan --format json` (tools/cli/src/plan_report.cpp, chain_report.cpp), which remat/_plans.py
// turns into a remat.Plan. A Schedule hands out its actions in batches (python/src/bindings.hpp).
#include "bindings.hpp"

#include "remat/error.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/binomial.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/chain.hpp"
#include "remat/schedule/chain_taped.hpp"
#include "remat/schedule/chain_taped_least.hpp"
#include "remat/schedule/chain_taped_price.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace remat::python {
namespace {

// make(), run without the GIL: the planners touch no Python object, and a long plan (seconds at 1,000 blocks or a
// multilevel table) leaves the process's other threads to run.
template <class Make>
auto unlocked(Make make)
{
    nb::gil_scoped_release released;
    return make();
}

// One pass over a schedule's actions, a batch per call of __next__.
class action_batches {
public:
    action_batches(const any_schedule& plan, std::size_t size)
        : cursor_(plan.cursor()), size_(std::max<std::size_t>(size, 1))
    {
    }
    nb::list next()
    {
        nb::list batch = take_batch(cursor_, size_);
        if (batch.size() == 0)
            throw nb::stop_iteration();
        return batch;
    }

private:
    any_schedule::cursor_type cursor_;
    std::size_t size_;
};

std::uint64_t bytes_of(slot_t slots, std::uint64_t state_bytes)
{
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(slots), state_bytes, &bytes))
        throw overflow_error("peak snapshot bytes: " + std::to_string(slots) + " snapshots of " +
                             std::to_string(state_bytes) + " bytes exceed 2^64-1");
    return bytes;
}

double ratio(std::uint64_t a, std::uint64_t b)
{
    return b == 0 ? 1.0 : static_cast<double>(a) / static_cast<double>(b);
}

void add_counts(nb::dict& r, const schedule_cost& c)
{
    r["forward_steps"] = c.forward_steps;
    r["reverse_steps"] = c.reverse_steps;
    r["stores"] = c.stores;
    r["restores"] = c.restores;
    r["peak_slots"] = c.peak_slots;
    r["repetition"] = c.repetition;
}

nb::list level_counts(const schedule_cost& c)
{
    nb::list levels;
    for (std::size_t i = 0; i < c.levels.size(); ++i) {
        nb::dict l;
        l["level"] = i;
        l["stores"] = c.levels[i].stores;
        l["restores"] = c.levels[i].restores;
        l["peak_slots"] = c.levels[i].peak_slots;
        levels.append(l);
    }
    return levels;
}

// The report of a single-level schedule priced with one level of `slots` free slots, as the tool prices it.
nb::dict single_level_report(const char* name, const any_schedule& plan, slot_t slots, double step_cost,
                             double reverse_cost, std::optional<step_t> every)
{
    const schedule_cost c = plan.cost();
    cost_model model = cost_model::single_level(std::max<slot_t>(slots, 1));
    model.step_cost = step_cost;
    model.reverse_cost = reverse_cost;
    validate(model);
    nb::dict r;
    r["schedule"] = name;
    r["steps"] = c.steps;
    r["slots"] = slots;
    if (every)
        r["every"] = *every;
    add_counts(r, c);
    r["store_all_forward_steps"] = store_all_forward_steps(c.steps);
    r["recompute_ratio"] = ratio(c.forward_steps, store_all_forward_steps(c.steps));
    r["predicted_cost"] = predicted_cost(c, model);
    r["step_cost"] = step_cost;
    r["reverse_cost"] = reverse_cost;
    r["levels"] = level_counts(c);
    return r;
}

using plan_result = std::tuple<any_schedule, nb::dict>;

// remat plan --schedule taped --slots UNITS --tape-units U: remat::taped_revolve, reported as the tool reports it.
plan_result make_taped_revolve(step_t steps, slot_t units, slot_t tape_units, double step_cost, double reverse_cost,
                               slot_t rerun_units, std::uint64_t work_limit)
{
    const taped_revolve taped(steps, units, tape_units, step_cost, reverse_cost, work_limit, rerun_units);
    any_schedule plan = taped;
    const schedule_cost c = taped.cost();
    nb::dict r;
    r["schedule"] = "taped";
    r["steps"] = c.steps;
    r["slots"] = units;
    add_counts(r, c);
    r["store_all_forward_steps"] = store_all_forward_steps(c.steps);
    r["recompute_ratio"] = ratio(c.forward_steps, store_all_forward_steps(c.steps));
    r["tape_units"] = tape_units;
    r["rerun_units"] = rerun_units;
    r["taped_steps"] = c.taped_steps;
    r["peak_tapes"] = c.peak_tapes;
    r["peak_units"] = taped.peak_units();
    r["evaluations"] = taped.evaluations();
    r["predicted_cost"] = c.predicted_cost;
    r["step_cost"] = step_cost;
    r["reverse_cost"] = reverse_cost;
    r["levels"] = level_counts(c);
    return {plan, r};
}

plan_result make_revolve(step_t steps, slot_t slots, bool online, double step_cost, double reverse_cost)
{
    if (!online) {
        any_schedule plan = revolve(steps, slots);
        return {plan, single_level_report("revolve", plan, slots, step_cost, reverse_cost, std::nullopt)};
    }
    any_schedule plan = online_revolve(slots).replay(steps);
    nb::dict r = single_level_report("online-revolve", plan, slots, step_cost, reverse_cost, std::nullopt);
    // The report's count, not a second plan.cost(): past level one that replays the forward sweep again.
    const auto forward = nb::cast<std::uint64_t>(r["forward_steps"]);
    const std::uint64_t offline = binomial::min_forward_steps(steps, slots);
    r["offline_forward_steps"] = offline;
    r["ratio_to_offline"] = ratio(forward, offline);
    r["learns_end_at"] = "x_{T-1}"; // as the tool reports it: the loop learns it has T steps at x_{T-1}
    return {plan, r};
}

plan_result make_uniform(step_t steps, std::optional<step_t> every, std::optional<slot_t> slots, double step_cost,
                         double reverse_cost)
{
    if (!every && !slots)
        throw argument_error("uniform needs every= (steps between checkpoints) or slots= (the best spacing that fits)");
    if (every) {
        const uniform plan(steps, *every);
        const slot_t needed = plan.cost().peak_slots;
        if (slots && needed > *slots)
            throw capacity_error("every=" + std::to_string(*every) + " needs " + std::to_string(needed) +
                                 " slots for " + std::to_string(steps) + " steps, but only " + std::to_string(*slots) +
                                 " are available");
        const slot_t given = slots ? *slots : std::max<slot_t>(needed, 1);
        return {plan, single_level_report("uniform", plan, given, step_cost, reverse_cost, *every)};
    }
    const uniform plan = uniform::fit(steps, *slots);
    return {plan, single_level_report("uniform", plan, *slots, step_cost, reverse_cost, plan.every())};
}

plan_result make_store_all(step_t steps, std::optional<slot_t> slots, double step_cost, double reverse_cost)
{
    const slot_t given = slots ? *slots : std::max<step_t>(steps - 1, 1);
    any_schedule plan = store_all(steps, given);
    return {plan, single_level_report("store-all", plan, given, step_cost, reverse_cost, std::nullopt)};
}

plan_result make_for_budget(step_t steps, std::uint64_t budget_bytes, std::uint64_t state_bytes, double step_cost,
                            double reverse_cost)
{
    const memory_plan p = plan_for_budget(steps, budget_bytes, state_bytes);
    any_schedule plan = revolve(steps, p.slots);
    nb::dict r = single_level_report("revolve", plan, p.slots, step_cost, reverse_cost, std::nullopt);
    r["state_bytes"] = state_bytes;
    r["budget_bytes"] = budget_bytes;
    r["peak_snapshot_bytes"] = bytes_of(p.cost.peak_slots, state_bytes);
    return {plan, r};
}

// (name, slots or None for unlimited, write cost, read cost), fastest first.
using level_tuple = std::tuple<std::string, std::optional<slot_t>, double, double>;

plan_result make_multilevel(step_t steps, const std::vector<level_tuple>& levels, double step_cost, double reverse_cost,
                            const std::string& method)
{
    cost_model model;
    model.step_cost = step_cost;
    model.reverse_cost = reverse_cost;
    for (const auto& [name, slots, write, read] : levels)
        model.levels.push_back(level_spec{name, slots ? *slots : level_spec::unlimited, write, read});
    multilevel::options options;
    if (method == "exact")
        options.how = multilevel::method::exact;
    else if (method == "near-optimal")
        options.how = multilevel::method::near_optimal;
    else if (method != "auto")
        throw argument_error("method: expected auto, exact or near-optimal, got \"" + method + "\"");
    const multilevel plan = unlocked([&] { return multilevel(steps, model, options); });
    const schedule_cost c = plan.cost();
    std::uint64_t slot_sum = 0;
    for (const level_spec& l : model.levels) {
        const auto add = static_cast<std::uint64_t>(std::min(l.slots, steps));
        slot_sum = slot_sum > UINT64_MAX - add ? UINT64_MAX : slot_sum + add;
    }
    static constexpr const char* structures[] = {"binomial", "exact", "grid", "spine", "nested", "layered", "stacked"};
    const std::string structure = structures[static_cast<int>(plan.structure_used())];
    const std::string used = plan.structure_used() == multilevel::structure::binomial ? "binomial"
                             : plan.structure_used() == multilevel::structure::exact  ? "exact"
                                                                                      : "near-optimal";
    const double lower = multilevel_lower_bound(steps, model);
    nb::dict r;
    r["schedule"] = "multilevel";
    r["steps"] = c.steps;
    r["slots"] = std::min<std::uint64_t>(slot_sum, static_cast<std::uint64_t>(steps));
    add_counts(r, c);
    r["store_all_forward_steps"] = store_all_forward_steps(c.steps);
    r["recompute_ratio"] = ratio(c.forward_steps, store_all_forward_steps(c.steps));
    r["predicted_cost"] = predicted_cost(c, model);
    r["step_cost"] = step_cost;
    r["reverse_cost"] = reverse_cost;
    r["method"] = used;
    r["structure"] = structure;
    if (plan.period() > 0)
        r["period"] = plan.period();
    r["lower_bound"] = lower;
    r["gap_to_lower_bound"] = predicted_cost(c, model) / lower - 1.0;
    r["levels_used"] = plan.levels_used();
    r["planning_work"] = plan.work();
    nb::list per_level = level_counts(c);
    for (std::size_t i = 0; i < per_level.size() && i < model.levels.size(); ++i) {
        nb::dict l = nb::cast<nb::dict>(per_level[i]);
        const level_spec& spec = model.levels[i];
        l["name"] = spec.name;
        l["slots"] = spec.slots == level_spec::unlimited ? nb::none() : nb::cast(spec.slots);
        l["write_cost"] = spec.write_cost;
        l["read_cost"] = spec.read_cost;
    }
    r["levels"] = per_level;
    return {any_schedule(plan), r};
}

// (forward, adjoint, state_bytes, adjoint_bytes, tape_bytes) per step (remat._plans._chain_step makes them).
using chain_step_tuple = std::tuple<double, double, std::uint64_t, std::uint64_t, std::uint64_t>;

plan_result make_chain(const std::vector<chain_step_tuple>& steps, std::uint64_t final_state_bytes,
                       std::uint64_t budget_bytes, std::uint64_t granularity, step_t horizon, bool greedy_fallback)
{
    chain_model model;
    for (const auto& [f, b, m, a, t] : steps)
        model.steps.push_back(chain_step{f, b, m, a, t});
    model.final_state_bytes = final_state_bytes;
    chain::options options;
    options.granularity = granularity;
    options.horizon = horizon;
    options.greedy_fallback = greedy_fallback;
    const chain plan = unlocked([&] { return chain(model, budget_bytes, options); });
    const schedule_cost c = plan.cost();
    const double all = model.store_all_cost();
    nb::dict r;
    r["schedule"] = "chain";
    r["steps"] = c.steps;
    r["budget_bytes"] = plan.budget_bytes();
    r["peak_bytes"] = plan.peak_bytes();
    r["predicted_cost"] = c.predicted_cost;
    r["store_all_cost"] = all;
    r["store_all_bytes"] = model.store_all_bytes();
    r["overhead"] = c.predicted_cost / all;
    r["least_budget_bytes"] = plan.least_budget_bytes();
    r["granularity_bytes"] = plan.granularity();
    r["memory_units"] = plan.units();
    r["planned_units"] = plan.planned_units();
    r["lossless"] = plan.lossless();
    r["discretisation_gap_bytes"] = plan.discretisation_gap_bytes();
    r["horizon"] = plan.horizon();
    r["block_steps"] = plan.block_steps();
    r["exact"] = plan.exact();
    r["method"] = std::string(plan.method());
    add_counts(r, c);
    r["levels"] = level_counts(c);
    return {any_schedule(plan), r};
}

// The chain of the step tuples (as remat._plans._chain_step makes them).
chain_model taped_model(const std::vector<chain_step_tuple>& steps, std::uint64_t final_state_bytes)
{
    chain_model model;
    for (const auto& [f, b, m, a, t] : steps)
        model.steps.push_back(chain_step{f, b, m, a, t});
    model.final_state_bytes = final_state_bytes;
    return model;
}

// A taped chain plan as Python takes it: (its actions as a list, its report: the fields of `remat plan --chain FILE
// --taped-advances --format json`, tools/cli/src/chain_report.cpp, and all_taped_bytes).
std::tuple<nb::list, nb::dict> taped_result(const chain_model& model, const taped_chain_plan& plan,
                                            std::uint64_t budget_bytes, const char* method, bool exact)
{
    nb::list actions;
    for (const action& a : plan.actions)
        actions.append(to_python(a));
    nb::dict r;
    r["schedule"] = "chain";
    r["steps"] = model.size();
    r["budget_bytes"] = budget_bytes;
    r["peak_bytes"] = plan.peak_bytes;
    r["predicted_cost"] = plan.cost;
    r["store_all_cost"] = model.store_all_cost();
    r["store_all_bytes"] = model.store_all_bytes();
    r["all_taped_bytes"] = all_taped_bytes(model);
    r["overhead"] = plan.cost / model.store_all_cost();
    r["least_budget_bytes"] = plan.least_budget_bytes;
    r["granularity_bytes"] = plan.granularity;
    r["exact"] = exact;
    r["method"] = method;
    r["forward_steps"] = plan.forward_steps;
    r["reverse_steps"] = model.size();
    r["stores"] = plan.stores;
    r["restores"] = plan.restores;
    r["peak_slots"] = plan.peak_slots;
    r["repetition"] = plan.repetition;
    r["taped_steps"] = plan.taped_steps;
    return {actions, r};
}

constexpr const char* taped_method = "dynamic program, taped advances"; // as the tool names it

// remat::plan_taped_chain.
std::tuple<nb::list, nb::dict> make_taped_chain(const std::vector<chain_step_tuple>& steps,
                                                std::uint64_t final_state_bytes, std::uint64_t budget_bytes,
                                                std::uint64_t granularity)
{
    const chain_model model = taped_model(steps, final_state_bytes);
    const taped_chain_plan plan = unlocked([&] { return plan_taped_chain(model, budget_bytes, granularity); });
    return taped_result(model, plan, budget_bytes, taped_method, true);
}

// remat::plan_taped_chain_least: its budget is the least itself. A plan of the least peak, not the cheapest there.
std::tuple<nb::list, nb::dict> make_taped_chain_least(const std::vector<chain_step_tuple>& steps,
                                                      std::uint64_t final_state_bytes)
{
    const chain_model model = taped_model(steps, final_state_bytes);
    const taped_chain_plan plan = unlocked([&] { return plan_taped_chain_least(model); });
    return taped_result(model, plan, plan.least_budget_bytes, "least peak, taped advances", false);
}

// A remat action from the Python value object `h` (remat.Advance, ...), the i-th of a list.
action action_of(nb::handle h, std::size_t i)
{
    advance v;
    store s;
    restore r;
    free_slot f;
    reverse k;
    if (nb::try_cast(h, v))
        return v;
    if (nb::try_cast(h, s))
        return s;
    if (nb::try_cast(h, r))
        return r;
    if (nb::try_cast(h, f))
        return f;
    if (nb::try_cast(h, k))
        return k;
    throw argument_error("price_taped_chain: action " + std::to_string(i) + " is a " + nb::type_name(h.type()).c_str() +
                         ", not a remat action (remat.Advance, Store, Restore, Free or Reverse)");
}

std::vector<action> action_list(nb::iterable actions)
{
    std::vector<action> list;
    for (nb::handle h : actions)
        list.push_back(action_of(h, list.size()));
    return list;
}

// remat::price_taped_chain: (peak bytes, cost, forward steps, taped steps) of a list of actions.
std::tuple<std::uint64_t, double, std::uint64_t, std::uint64_t>
price_taped(const std::vector<chain_step_tuple>& steps, std::uint64_t final_state_bytes, nb::iterable actions)
{
    const taped_chain_price p = price_taped_chain(taped_model(steps, final_state_bytes), action_list(actions));
    return {p.peak_bytes, p.cost, p.forward_steps, p.taped_steps};
}

// A list of actions as a plan of chain_taped's (its report priced by remat::price_taped_chain): another planner's
// plan of the same chain, found at `granularity`, the exact optimum where it fits the budget.
std::tuple<nb::list, nb::dict> priced_taped_chain(const std::vector<chain_step_tuple>& steps,
                                                  std::uint64_t final_state_bytes, nb::iterable actions,
                                                  std::uint64_t budget_bytes, std::uint64_t granularity)
{
    const chain_model model = taped_model(steps, final_state_bytes);
    taped_chain_plan plan;
    plan.actions = action_list(actions);
    plan.granularity = granularity;
    set_price(model, plan);
    return taped_result(model, plan, budget_bytes, taped_method, plan.peak_bytes <= budget_bytes);
}

} // namespace

void bind_plans(nb::module_& m)
{
    nb::class_<any_schedule>(m, "Schedule", "A plan's schedule: its actions, made in C++ on demand")
        .def_prop_ro("steps", &any_schedule::steps)
        .def(
            "batches", [](const any_schedule& s, std::size_t size) { return action_batches(s, size); },
            nb::arg("size") = 4096, "A new pass over the actions, as lists of up to `size` actions");
    nb::class_<action_batches>(m, "ActionBatches")
        .def("__iter__", [](nb::handle self) { return self; })
        .def("__next__", &action_batches::next);

    m.def("revolve", &make_revolve, nb::arg("steps"), nb::arg("slots"), nb::arg("online"), nb::arg("step_cost"),
          nb::arg("reverse_cost"));
    m.def("taped_revolve", &make_taped_revolve, nb::arg("steps"), nb::arg("units"), nb::arg("tape_units"),
          nb::arg("step_cost"), nb::arg("reverse_cost"), nb::arg("rerun_units") = 0,
          nb::arg("work_limit") = taped_revolve::default_work_limit);
    m.def("uniform", &make_uniform, nb::arg("steps"), nb::arg("every").none(), nb::arg("slots").none(),
          nb::arg("step_cost"), nb::arg("reverse_cost"));
    m.def("store_all", &make_store_all, nb::arg("steps"), nb::arg("slots").none(), nb::arg("step_cost"),
          nb::arg("reverse_cost"));
    m.def("plan_for_budget", &make_for_budget, nb::arg("steps"), nb::arg("budget_bytes"), nb::arg("state_bytes"),
          nb::arg("step_cost"), nb::arg("reverse_cost"));
    m.def("multilevel", &make_multilevel, nb::arg("steps"), nb::arg("levels"), nb::arg("step_cost"),
          nb::arg("reverse_cost"), nb::arg("method"));
    m.def("chain", &make_chain, nb::arg("steps"), nb::arg("final_state_bytes"), nb::arg("budget_bytes"),
          nb::arg("granularity"), nb::arg("horizon"), nb::arg("greedy_fallback"));
    m.def("chain_taped", &make_taped_chain, nb::arg("steps"), nb::arg("final_state_bytes"), nb::arg("budget_bytes"),
          nb::arg("granularity"));
    m.def(
        "chain_taped_least", &make_taped_chain_least, nb::arg("steps"), nb::arg("final_state_bytes"),
        "(actions, report) of the least peak of a taped chain in true bytes and a plan at it "
        "(remat::plan_taped_chain_least): the least budget chain_taped plans at a granularity of 1 byte, without "
        "its table; the report's fields as chain_taped's, budget_bytes, peak_bytes and least_budget_bytes that least");
    m.def("chain_taped_priced", &priced_taped_chain, nb::arg("steps"), nb::arg("final_state_bytes"), nb::arg("actions"),
          nb::arg("budget_bytes"), nb::arg("granularity"),
          "(actions, report) of a plan of chain_taped's model given as its actions, priced by "
          "remat::price_taped_chain (least_budget_bytes 0: not known); exact where its peak fits the budget");
    m.def("price_taped_chain", &price_taped, nb::arg("steps"), nb::arg("final_state_bytes"), nb::arg("actions"),
          "(peak bytes, cost, forward steps, taped steps) of a taped chain plan's actions under the chain model "
          "(remat::price_taped_chain); remat.ArgumentError naming the first action that breaks its rules");
    m.def("uniform_min_slots", &uniform::min_slots, nb::arg("steps"),
          "The fewest slots any uniform spacing needs for `steps` steps");
    m.def("min_forward_steps", &binomial::min_forward_steps, nb::arg("steps"), nb::arg("slots"),
          "Revolve's optimum: the fewest forward steps with `slots` slots");
    m.def(
        "online_cost_work", [](step_t steps, slot_t slots) { return online_revolve(slots).cost_work(steps); },
        nb::arg("steps"), nb::arg("slots"),
        "The units of work online revolve's count for `steps` steps takes (remat::online_revolve::cost_work)");
    m.attr("online_cost_work_limit") = online_revolve::cost_work_limit;
    m.attr("taped_revolve_work_limit") = taped_revolve::default_work_limit;
}

} // namespace remat::python
