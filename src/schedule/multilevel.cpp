// Multi-level schedules: choosing the method and the periodic shape, and their counts.
//
// Periodic method (docs/multilevel.md): with an unlimited slowest level, the exact optimum is
// self-similar — a checkpoint on that level splits a segment into two segments with the same free
// slots — so for long loops it settles into a period. The plan keeps x_0, x_k, ..., x_{(N-2)k} on the
// slowest level during the first sweep (the "spine"), reverses the last segment of `tail` steps with the
// table, then each k-step segment from its checkpoint, right to left. With a finite slowest level of d
// slots, the segments are the steps of a revolve(N, d) schedule instead ("nested"), and the table's
// segments use the faster levels only (plus the segment start's own slot). Over all k <= K and all N
// whose last segment fits the table (1 <= tail <= K), the plan with the least predicted cost wins.
#include "multilevel_plan.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace remat {

using detail::multilevel_counts;
using detail::multilevel_plan;
using detail::multilevel_shape;
using detail::multilevel_table;

namespace detail {

multilevel_counts placed_counts(const multilevel_table& table, step_t length, std::uint64_t row)
{
    if (length <= 1)
        return {};
    const auto all = (1u << static_cast<unsigned>(table.levels())) - 1;
    const multilevel_table::placement p = table.place_start(length, row, all);
    if (p.level < 0)
        return {}; // no level has room: the plan never places such a start
    multilevel_counts c = table.counts(length, table.taken(row, p.level), p.level);
    ++c.stores[static_cast<std::size_t>(p.level)];
    return c;
}

} // namespace detail

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

bool slow_level_unlimited(const cost_model& model, step_t steps)
{
    const std::uint64_t slots = model.levels.back().slots;
    return slots == level_spec::unlimited || slots >= static_cast<std::uint64_t>(steps - 1);
}

// Free-slot limits of a table over segments of up to `horizon` steps: a level that holds horizon-1
// snapshots is as good as unlimited there.
std::vector<std::uint64_t> table_limits(const cost_model& model, step_t horizon)
{
    std::vector<std::uint64_t> limits;
    for (const level_spec& level : model.levels)
        limits.push_back(level.slots == level_spec::unlimited || level.slots >= static_cast<std::uint64_t>(horizon - 1)
                             ? level_spec::unlimited
                             : level.slots);
    return limits;
}

std::vector<std::uint64_t> periodic_limits(const cost_model& model, step_t horizon, bool spine)
{
    std::vector<std::uint64_t> limits = table_limits(model, horizon);
    // The slowest level: unlimited (spine), or only the segment start's own slot (nested: the outer
    // revolve owns the rest).
    limits.back() = spine ? level_spec::unlimited : 1;
    return limits;
}

// The largest horizon K <= T whose periodic table fits the limits (work grows with K).
step_t fitting_horizon(const cost_model& model, step_t steps, std::uint64_t work_limit, std::uint64_t max_entries)
{
    const std::size_t n = model.levels.size();
    const bool spine = slow_level_unlimited(model, steps);
    auto fits = [&](step_t k) {
        const auto limits = periodic_limits(model, k, spine);
        return multilevel_table::work(n, limits, k) <= work_limit &&
               multilevel_table::entries(n, limits, k) <= max_entries;
    };
    step_t lo = std::min<step_t>(2, steps);
    step_t hi = steps;
    if (fits(hi))
        return hi;
    while (hi - lo > 1) {
        const step_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

void plan_exact(multilevel_plan& plan, const std::vector<std::uint64_t>& limits, std::uint64_t max_entries)
{
    plan.used = multilevel::method::exact;
    plan.shape = multilevel_shape::exact;
    plan.table = std::make_shared<const multilevel_table>(plan.model, limits, plan.steps, max_entries);
    plan.top_row = plan.table->full_row();
    plan.tail = plan.steps;
    plan.tail_run = detail::placed_counts(*plan.table, plan.steps, plan.top_row);
    if (plan.steps >= 2) {
        const auto all = (1u << static_cast<unsigned>(plan.table->levels())) - 1;
        plan.optimum = plan.table->place_start(plan.steps, plan.top_row, all).cost;
    }
}

// `unlimited`: plan the spine, as if the slowest level were unlimited (the caller checks that it fits).
void plan_periodic(multilevel_plan& plan, step_t horizon, std::uint64_t max_entries, bool unlimited)
{
    const cost_model& model = plan.model;
    const step_t steps = plan.steps;
    const auto slow = static_cast<level_t>(model.levels.size() - 1);
    plan.used = multilevel::method::periodic;
    plan.slow = slow;
    plan.table = std::make_shared<const multilevel_table>(model, periodic_limits(model, horizon, unlimited), horizon,
                                                          max_entries);
    const multilevel_table& table = *plan.table;
    plan.run_row = unlimited ? table.full_row() : table.taken(table.full_row(), slow);
    plan.top_row = plan.run_row;

    const auto all = (1u << static_cast<unsigned>(table.levels())) - 1;
    auto held_run = [&](step_t k) { return table.value(k, plan.run_row, slow); };
    auto placed_run = [&](step_t k) {
        if (k == 1)
            return 0.0;
        const multilevel_table::placement p = table.place_start(k, plan.top_row, all);
        return p.level < 0 ? infinity : p.cost;
    };
    const level_spec& outer = model.levels.back();
    const double u = model.step_cost;
    double best = infinity;
    for (step_t k = 1; k <= horizon; ++k) {
        // N-1 full segments and a last one of tail = T - (N-1)k steps, 1 <= tail <= K.
        const step_t first = (steps - horizon + k - 1) / k;
        const step_t last = (steps - 1) / k;
        const double held = held_run(k);
        const double placed = placed_run(k);
        for (step_t full = std::max<step_t>(first, 1); full <= last; ++full) {
            const step_t tail = steps - full * k;
            const double tail_cost = placed_run(tail);
            const auto nf = static_cast<double>(full);
            double cost = infinity;
            schedule_cost counts;
            if (unlimited) {
                cost =
                    u * nf * static_cast<double>(k) + (outer.write_cost + outer.read_cost) * nf + nf * held + tail_cost;
            } else {
                try {
                    counts = revolve(full + 1, static_cast<slot_t>(std::min<std::uint64_t>(
                                                   outer.slots, static_cast<std::uint64_t>(full))))
                                 .cost();
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
        throw overflow_error("no periodic plan for " + std::to_string(steps) +
                             " steps has counts within 64 bits; give the slowest level more slots");
    plan.optimum = best;
    plan.shape = unlimited ? multilevel_shape::spine : multilevel_shape::nested;
    if (!unlimited)
        plan.outer_slots =
            static_cast<slot_t>(std::min<std::uint64_t>(outer.slots, static_cast<std::uint64_t>(plan.segments - 1)));
    plan.stored_run = table.counts(plan.period, plan.run_row, slow);
    plan.placed_run = detail::placed_counts(table, plan.period, plan.top_row);
    plan.tail_run = detail::placed_counts(table, plan.tail, plan.top_row);
}

// n * c, n * c + ..., checked: counts of long loops may leave 64 bits.
struct counter {
    std::uint64_t value = 0;
    void add(std::uint64_t times, std::uint64_t each)
    {
        value =
            detail::checked_add(value, detail::checked_mul(times, each, "a multi-level count"), "a multi-level count");
    }
};

schedule_cost combine(const multilevel_plan& plan)
{
    const std::size_t n = plan.model.levels.size();
    const auto slow = static_cast<std::size_t>(plan.slow);
    schedule_cost c;
    c.steps = plan.steps;
    c.reverse_steps = static_cast<std::uint64_t>(plan.steps);
    c.levels.resize(n);
    // (times, counts of one run, outer slots held on the slowest level while it runs) for every kind of run.
    struct run_kind {
        std::uint64_t times;
        const multilevel_counts* counts;
        std::uint64_t outer_held;
        std::uint64_t outer_advances; // how often the outer level advances over each of its steps
    };
    std::vector<run_kind> runs;
    counter forward;
    std::vector<counter> stores(n), restores(n);
    if (plan.shape == multilevel_shape::exact) {
        runs.push_back({1, &plan.tail_run, 0, 0});
    } else if (plan.shape == multilevel_shape::spine) {
        const auto full = static_cast<std::uint64_t>(plan.segments - 1);
        forward.add(full, static_cast<std::uint64_t>(plan.period));
        stores[slow].add(full, 1);
        restores[slow].add(full, 1);
        // Segment j runs while x_0..x_{jk} are held (its own start included in its counts): j = N-2 is
        // the fullest. The last segment runs while all N-1 are held.
        runs.push_back({full, &plan.stored_run, full - 1, 1});
        runs.push_back({1, &plan.tail_run, full, 0});
    } else {
        const schedule_cost& o = plan.outer;
        const auto full = static_cast<std::uint64_t>(plan.segments - 1);
        forward.add(o.forward_steps, static_cast<std::uint64_t>(plan.period));
        stores[slow].add(o.stores, 1);
        restores[slow].add(o.restores, 1);
        // Revolve reverses some stored and some unstored segments while all its slots are held (checked
        // for every segment count up to 2500 and up to 40 slots in the tests), never with more.
        const std::uint64_t held = o.peak_slots;
        if (o.stores > 0)
            runs.push_back({o.stores, &plan.stored_run, held - 1, o.repetition});
        if (full > o.stores)
            runs.push_back({full - o.stores, &plan.placed_run, held, o.repetition});
        runs.push_back({1, &plan.tail_run, held, 0});
    }
    for (const run_kind& r : runs) {
        const multilevel_counts& k = *r.counts;
        forward.add(r.times, k.forward_steps);
        c.repetition = std::max(c.repetition, r.outer_advances + k.repetition);
        c.peak_slots = std::max(c.peak_slots, r.outer_held + k.peak_slots);
        for (std::size_t i = 0; i < n; ++i) {
            stores[i].add(r.times, k.stores[i]);
            restores[i].add(r.times, k.restores[i]);
            const std::uint64_t outer = plan.shape == multilevel_shape::exact || i != slow ? 0 : r.outer_held;
            c.levels[i].peak_slots = std::max(c.levels[i].peak_slots, outer + k.peak[i]);
        }
    }
    c.forward_steps = forward.value;
    counter all_stores, all_restores;
    for (std::size_t i = 0; i < n; ++i) {
        c.levels[i].stores = stores[i].value;
        c.levels[i].restores = restores[i].value;
        all_stores.add(1, stores[i].value);
        all_restores.add(1, restores[i].value);
    }
    c.stores = all_stores.value;
    c.restores = all_restores.value;
    c.predicted_cost = predicted_cost(c, plan.model);
    return c;
}

// Slots of the slowest level that a plan needs: its peak, and for the spine also the highest slot index
// (the outer checkpoints keep indices 0..N-2; a segment's own snapshots there come after them).
std::uint64_t slow_slots_needed(const multilevel_plan& plan)
{
    const std::size_t slow = plan.model.levels.size() - 1;
    std::uint64_t needed = combine(plan).levels[slow].peak_slots;
    if (plan.shape == multilevel_shape::spine)
        needed = std::max(needed, static_cast<std::uint64_t>(plan.segments - 1) +
                                      std::max(plan.stored_run.peak[slow], plan.tail_run.peak[slow]));
    return needed;
}

// Exact when the table fits (first with the slowest level relaxed to unlimited: when that optimum fits
// the real capacity it is the optimum), else periodic (first the spine, if it fits, else nested).
void choose(multilevel_plan& plan, const multilevel::options& opts)
{
    using method = multilevel::method;
    const cost_model& model = plan.model;
    const step_t steps = plan.steps;
    const std::size_t n = model.levels.size();
    const std::uint64_t capacity = model.levels.back().slots;
    const bool finite = !slow_level_unlimited(model, steps);
    const auto exact_limits = table_limits(model, steps);
    auto relaxed_limits = exact_limits;
    relaxed_limits.back() = level_spec::unlimited;
    auto fits = [&](const std::vector<std::uint64_t>& limits, bool any_work) {
        return (any_work || multilevel_table::work(n, limits, steps) <= opts.exact_work_limit) &&
               multilevel_table::entries(n, limits, steps) <= opts.max_table_entries;
    };
    auto try_exact = [&](bool forced) {
        if (finite && fits(relaxed_limits, forced)) {
            plan_exact(plan, relaxed_limits, opts.max_table_entries);
            if (slow_slots_needed(plan) <= capacity)
                return true;
        }
        if (!forced && !fits(exact_limits, false))
            return false;
        plan_exact(plan, exact_limits, opts.max_table_entries);
        return true;
    };
    if (opts.how == method::exact || (opts.how == method::automatic && try_exact(false))) {
        if (opts.how == method::exact)
            (void)try_exact(true);
        return;
    }
    if (opts.horizon < 0)
        throw argument_error("the periodic horizon must be >= 0 (0: automatic), got " + std::to_string(opts.horizon));
    const step_t horizon = opts.horizon > 0
                               ? std::min(opts.horizon, steps)
                               : fitting_horizon(model, steps, opts.periodic_work_limit, opts.max_table_entries);
    if (horizon >= steps) {
        (void)try_exact(true);
        return;
    }
    if (finite) {
        plan_periodic(plan, horizon, opts.max_table_entries, true);
        if (slow_slots_needed(plan) <= capacity)
            return;
    }
    plan_periodic(plan, horizon, opts.max_table_entries, !finite);
}

} // namespace

multilevel::multilevel(step_t steps, const cost_model& model, const options& opts)
{
    detail::require_positive_steps(steps);
    validate(model);
    auto plan = std::make_shared<multilevel_plan>();
    plan->steps = steps;
    plan->model = model;
    const std::size_t n = model.levels.size();
    const bool binomial_optimal = n == 1 && model.levels[0].write_cost == 0;
    if (opts.how == method::binomial && !binomial_optimal)
        throw argument_error("method::binomial needs one level with zero write cost, got " + std::to_string(n) +
                             " level(s)");
    if ((opts.how == method::automatic || opts.how == method::binomial) && binomial_optimal) {
        // Restores are T-1 in every schedule and stores are free: the fewest forward steps win.
        plan->used = method::binomial;
        plan->shape = multilevel_shape::binomial;
    } else {
        choose(*plan, opts);
    }
    plan_ = std::move(plan);
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

step_t multilevel::period() const noexcept
{
    return plan_->shape == multilevel_shape::spine || plan_->shape == multilevel_shape::nested ? plan_->period : 0;
}

step_t multilevel::horizon() const noexcept
{
    return plan_->table ? plan_->table->horizon() : 0;
}

schedule_cost multilevel::cost() const
{
    if (plan_->shape == multilevel_shape::binomial) {
        const auto slots = static_cast<slot_t>(
            std::min<std::uint64_t>(plan_->model.levels[0].slots, static_cast<std::uint64_t>(plan_->steps)));
        schedule_cost c = revolve(plan_->steps, std::max<slot_t>(slots, 1)).cost();
        c.predicted_cost = predicted_cost(c, plan_->model);
        return c;
    }
    return combine(*plan_);
}

} // namespace remat
