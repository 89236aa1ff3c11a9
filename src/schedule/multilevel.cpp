// remat::multilevel: the plan for a store of levels is the cheapest of its own structures (multilevel_choose.cpp)
// and the plans of its subsets of levels, each made as that subset alone would be (docs/multilevel.md).
#include "multilevel_plan.hpp"
#include "multilevel_structures.hpp"

#include "remat/detail/validate.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>

namespace remat {

using detail::choose_structure;
using detail::fresh_plan;
using detail::multilevel_plan;
using detail::multilevel_shape;
using detail::multilevel_table;
using detail::plan_cost;
using detail::plan_ptr;

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

bool binomial_optimal(const cost_model& model)
{
    return model.levels.size() == 1 && model.levels[0].write_cost == 0;
}

// The model without level `drop`, and which of `base`'s levels it keeps.
multilevel_plan without_level(const multilevel_plan& base, std::size_t drop, std::vector<level_t>& kept)
{
    multilevel_plan fewer;
    fewer.steps = base.steps;
    fewer.model.step_cost = base.model.step_cost;
    fewer.model.reverse_cost = base.model.reverse_cost;
    kept.clear();
    for (std::size_t i = 0; i < base.model.levels.size(); ++i)
        if (i != drop) {
            fewer.model.levels.push_back(base.model.levels[i]);
            kept.push_back(static_cast<level_t>(i));
        }
    return fewer;
}

// The part of the work limit that a model of `n` levels spends on its own structures (the exact table included),
// the same whether it is planned alone or as a subset of a larger store, so that its plan is the same both ways.
// A store of up to four levels plans every subset of its levels with that subset's part: the parts of a
// four-level store and of all its subsets add up to 1/16 + 4/10 + 6/12 + 4/128 < 1 of the limit, whatever is
// skipped. Two and three levels get the most (they are the common stores, and a four-level store's six pairs and
// four triples are what its worst case spends); five levels and more plan no subsets and spend half the limit.
std::uint64_t own_part(std::uint64_t limit, std::size_t n)
{
    switch (n) {
    case 1:
        return limit / 128;
    case 2:
        return limit / 12;
    case 3:
        return limit / 10;
    case 4:
        return limit / 16;
    default:
        return limit / 2;
    }
}

// A plan for `base` that runs `inner` (a plan over `base`'s levels `kept`); a plan that itself runs a subset
// passes its own through.
plan_ptr run_on_levels(const multilevel_plan& base, const plan_ptr& inner, const std::vector<level_t>& kept)
{
    plan_ptr outer = fresh_plan(base);
    outer->sub = inner->sub ? inner->sub : inner;
    for (const level_t j : inner->sub ? inner->sub_levels : std::vector<level_t>{})
        outer->sub_levels.push_back(kept[static_cast<std::size_t>(j)]);
    if (!inner->sub)
        outer->sub_levels = kept;
    outer->shape = outer->sub->shape;
    return outer;
}

// A level that some other level makes useless: that one holds every snapshot a loop of `steps` can keep (T-1,
// as many as all the levels together ever hold) and costs no more to write or to read. Moving every snapshot of
// the useless level there keeps any schedule legal and costs no more, so the optimum over the other levels is the
// optimum over all (of two equal levels, the later is the useless one). n when there is none.
std::size_t dominated_level(const multilevel_plan& base)
{
    const auto& levels = base.model.levels;
    const auto holds_all = [&](const level_spec& l) {
        return l.slots == level_spec::unlimited || l.slots >= std::max<step_t>(base.steps - 1, 1);
    };
    for (std::size_t keep = 0; keep < levels.size(); ++keep) {
        if (!holds_all(levels[keep]))
            continue;
        for (std::size_t drop = 0; drop < levels.size(); ++drop) {
            const level_spec& a = levels[keep];
            const level_spec& b = levels[drop];
            const bool same = a.write_cost == b.write_cost && a.read_cost == b.read_cost && holds_all(b);
            if (drop != keep && b.write_cost >= a.write_cost && b.read_cost >= a.read_cost && (!same || drop > keep))
                return drop;
        }
    }
    return levels.size();
}

plan_ptr plan_levels(const multilevel_plan& base, const multilevel::options& opts,
                     std::unordered_map<std::uint32_t, plan_ptr>& memo, std::uint32_t levels,
                     const std::vector<level_t>& original);

// The plan over `base` without its level `drop`, run over `base`'s levels (memoised like every subset).
plan_ptr plan_without(const multilevel_plan& base, std::size_t drop, const multilevel::options& opts,
                      std::unordered_map<std::uint32_t, plan_ptr>& memo, std::uint32_t levels,
                      const std::vector<level_t>& original, plan_ptr& inner)
{
    std::vector<level_t> kept;
    const multilevel_plan fewer = without_level(base, drop, kept);
    std::vector<level_t> kept_original;
    for (const level_t k : kept)
        kept_original.push_back(original[static_cast<std::size_t>(k)]);
    inner = plan_levels(fewer, opts, memo, levels & ~(std::uint32_t{1} << original[drop]), kept_original);
    return run_on_levels(base, inner, kept);
}

// `plan`, or the plan of a subset that drops one level when that is cheaper: the most promising (lowest bound)
// first, since the sooner the cost in hand falls, the more of the others its bound skips. A null `plan` (none of
// the store's own structures could be made) gives the cheapest subset's, or null.
plan_ptr cheapest_with_subsets(plan_ptr plan, const multilevel_plan& base, const multilevel::options& opts,
                               std::unordered_map<std::uint32_t, plan_ptr>& memo, std::uint32_t levels,
                               const std::vector<level_t>& original)
{
    const std::size_t n = base.model.levels.size();
    double cost = plan ? plan_cost(*plan).predicted_cost : infinity;
    struct candidate {
        std::size_t drop;
        double bound;
    };
    std::vector<candidate> order;
    for (std::size_t drop = 0; drop < n; ++drop) {
        std::vector<level_t> kept;
        order.push_back({drop, multilevel_lower_bound(base.steps, without_level(base, drop, kept).model)});
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const candidate& a, const candidate& b) { return a.bound < b.bound; });
    for (const candidate& c : order) {
        if (c.bound >= cost)
            continue; // no plan over these levels can be cheaper
        plan_ptr inner;
        plan_ptr outer;
        double inner_cost = infinity;
        try {
            outer = plan_without(base, c.drop, opts, memo, levels, original, inner);
            inner_cost = plan_cost(*inner).predicted_cost;
        } catch (const overflow_error&) {
            continue; // no plan over these levels can be counted
        } catch (const capacity_error&) {
            continue; // none fits this subset's part of the limit
        }
        if (inner_cost >= cost)
            continue;
        plan = outer;
        plan->used = multilevel::method::near_optimal; // even when exact over its own levels
        cost = inner_cost;
    }
    return plan;
}

// The plan for `base`: the cheapest of its own structures and the plans of its subsets of levels (those are plans
// for the whole store too), each made as that subset alone would be made with the same options (own_part), so a
// store's plan is never dearer than the plan of any of its subsets, for up to four levels: adding a level never
// makes the predicted cost worse. A subset whose lower bound already reaches the cost in hand cannot be cheaper
// and is skipped, which leaves the minimum unchanged. Plans are kept per subset (`levels`: the bits of the
// caller's levels that `base` has, `original`: which they are).
plan_ptr plan_levels(const multilevel_plan& base, const multilevel::options& opts,
                     std::unordered_map<std::uint32_t, plan_ptr>& memo, std::uint32_t levels,
                     const std::vector<level_t>& original)
{
    using method = multilevel::method;
    if (const auto it = memo.find(levels); it != memo.end())
        return it->second;
    const std::size_t n = base.model.levels.size();
    plan_ptr plan;
    if (const std::size_t drop = dominated_level(base); drop < n && opts.only == multilevel::structure::binomial) {
        // Exactly as good without that level (an exact plan over the others stays exact for all of them), and a
        // store with a level of T-1 or more slots beside dearer ones plans as fast as the store without them.
        plan_ptr inner;
        plan = plan_without(base, drop, opts, memo, levels, original, inner);
        plan->used = inner->used;
    } else if ((opts.how == method::automatic || opts.how == method::binomial) && binomial_optimal(base.model)) {
        // Restores are T-1 in every schedule and stores are free: the fewest forward steps win.
        plan = fresh_plan(base);
        plan->used = method::binomial;
        plan->shape = multilevel_shape::binomial;
    } else {
        // One structure asked for alone gets the limit for each of its tables (no cap), as does method::exact.
        const bool capped = opts.how != method::exact && opts.only == multilevel::structure::binomial;
        const std::uint64_t own = capped ? own_part(opts.near_optimal_work_limit, n) : opts.near_optimal_work_limit;
        const std::uint64_t exact_limit =
            opts.how == method::automatic ? std::min(opts.exact_work_limit, own) : opts.exact_work_limit;
        // Up to four levels (at most 15 subsets); beyond, the hundreds of subsets would cost more than the plan.
        const bool subsets = capped && n <= 4 && n >= 2;
        std::exception_ptr refused; // none of the store's own structures: a subset's plan may still be made
        try {
            multilevel::options mine = opts;
            mine.near_optimal_work_limit = own;
            const detail::work_cap cap(capped ? own : ~std::uint64_t{0}); // its own, whatever the caller's cap
            plan = choose_structure(base, mine, exact_limit, nullptr);
        } catch (const overflow_error&) { // every structure's counts pass 64 bits (a host of 4 beside an unlimited
            if (!subsets)                 // disk from T = 8e18, where the disk alone plans)
                throw;
            refused = std::current_exception();
        } catch (const capacity_error&) {
            if (!subsets)
                throw;
            refused = std::current_exception();
        }
        const bool optimal = plan && (plan->used == method::exact || plan->used == method::binomial);
        if (!optimal && subsets)
            plan = cheapest_with_subsets(plan, base, opts, memo, levels, original);
        if (!plan)
            std::rethrow_exception(refused);
    }
    memo.emplace(levels, plan);
    return plan;
}

// A level with more slots than the loop can fill (a loop of T steps never holds more than T-1 snapshots) is
// planned as one with T-1: no structure's work or memory then grows with a slot count beyond what T needs.
cost_model clamped(cost_model model, step_t steps)
{
    const slot_t most = std::max<step_t>(steps - 1, 1);
    for (level_spec& level : model.levels)
        if (level.slots != level_spec::unlimited && level.slots > most)
            level.slots = most;
    return model;
}

// Refuses costs so large that every schedule's (its adjoints' aside, which never change it) exceeds the largest
// double: every entry of the tables is then infinite and their splits meaningless (100 steps on one unlimited
// level writing and reading at 1e307 were planned as a lone `reverse 0`). Counts beyond 64 bits are left to
// planning, which names them.
void require_finite_cost(step_t steps, cost_model model)
{
    model.reverse_cost = 0;
    if (std::isfinite(multilevel_lower_bound(steps, model)))
        return;
    std::uint64_t slots = 0; // revolve's over all the slots: the fewest forward steps of any plan
    for (const level_spec& level : model.levels)
        slots = std::min(slots + static_cast<std::uint64_t>(level.slots), static_cast<std::uint64_t>(steps - 1));
    try {
        (void)revolve(steps, static_cast<slot_t>(std::max<std::uint64_t>(slots, 1))).cost();
    } catch (const overflow_error&) {
        return;
    }
    throw argument_error("every schedule of " + std::to_string(steps) +
                         " steps costs more than the largest double (1.8e308) under these step, write and read "
                         "costs; scale them down");
}

} // namespace

multilevel::multilevel(step_t steps, const cost_model& model, const options& opts)
{
    detail::require_positive_steps(steps);
    validate(model);
    require_finite_cost(steps, model);
    multilevel_plan base;
    base.steps = steps;
    base.model = clamped(model, steps);
    const std::size_t n = model.levels.size();
    if (opts.how == method::binomial && !binomial_optimal(model))
        throw argument_error("method::binomial needs one level with zero write cost, got " + std::to_string(n) +
                             " level(s)");
    std::unordered_map<std::uint32_t, plan_ptr> memo;
    std::vector<level_t> all(n);
    std::iota(all.begin(), all.end(), level_t{0});
    const std::uint64_t work_before = detail::table_work_meter();
    plan_ptr plan = plan_levels(base, opts, memo, (std::uint32_t{1} << n) - 1, all);
    if (!(base.model == model)) { // report the model as given: a copy sharing the tables
        plan = std::make_shared<multilevel_plan>(*plan);
        plan->model = model;
    }
    plan->work = detail::table_work_meter() - work_before;
    plan_ = plan;
}

std::uint64_t multilevel::work() const noexcept
{
    return plan_->work;
}

step_t multilevel::steps() const noexcept
{
    return plan_->steps;
}

const cost_model& multilevel::model() const noexcept
{
    return plan_->model;
}

multilevel::method multilevel::method_used() const noexcept
{
    return plan_->used;
}

multilevel::structure multilevel::structure_used() const noexcept
{
    return plan_->core().shape;
}

std::vector<level_t> multilevel::levels_used() const
{
    if (plan_->sub)
        return plan_->sub_levels;
    std::vector<level_t> all(plan_->model.levels.size());
    std::iota(all.begin(), all.end(), level_t{0});
    return all;
}

step_t multilevel::period() const noexcept
{
    return plan_->core().period;
}

step_t multilevel::horizon() const noexcept
{
    const multilevel_plan& p = plan_->core();
    if (p.shape == multilevel_shape::layered) { // the longest leaf, in steps
        const multilevel_table& inner = *p.parts.front();
        return std::min(p.steps, inner.horizon() * inner.unit_steps());
    }
    return p.table ? p.table->horizon() : 0;
}

level_t multilevel::outer_level() const noexcept
{
    const multilevel_plan& p = plan_->core();
    const bool outer = p.shape == multilevel_shape::spine || p.shape == multilevel_shape::nested ||
                       p.shape == multilevel_shape::layered;
    if (!outer)
        return -1;
    return plan_->sub ? plan_->sub_levels[static_cast<std::size_t>(p.slow)] : p.slow;
}

schedule_cost multilevel::cost() const
{
    return plan_cost(*plan_);
}

} // namespace remat