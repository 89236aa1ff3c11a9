// Multi-level schedules: choosing the method and structure, and their counts (docs/multilevel.md).
//
// Near-optimal structures, each priced in closed form from its tables; the cheapest that fits wins:
//  - grid: the exact recurrence over super-steps of g steps (remat/detail/multilevel_table.hpp), with g
//    the smallest whose tables fit the work limit.
//  - spine: with an unlimited slowest level the exact optimum is self-similar (a checkpoint there splits
//    a segment into two with the same free slots), so on long loops it settles into a period: x_0, x_k,
//    ..., x_{(N-2)k} are kept on the slowest level during the first sweep, the last segment of `tail`
//    steps is reversed by the table, then each k-step segment from its checkpoint, right to left.
//  - nested: with a finite slowest level of d slots the segments are the steps of revolve(N, d), and
//    the table's segments use the faster levels plus their own start's slot.
//  - layered: the exact recurrence over one outer level places its checkpoints, with segments of any
//    length between them reversed by the exact table of the other levels (leaves of up to K steps; see
//    remat/detail/multilevel_table.hpp). Tried with each finite level as the outer one (and the slowest
//    when unlimited): the slowest is the natural one, a faster one wins when its writes are dearer.
// For spine and nested every k <= K and every N whose last segment fits the table (1 <= tail <= K) is
// priced; a finite slowest level is first planned as if unlimited, which is kept when it fits.
#include "multilevel_plan.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>

namespace remat {

using detail::multilevel_counts;
using detail::multilevel_plan;
using detail::multilevel_shape;
using detail::multilevel_table;

namespace {

using plan_ptr = std::shared_ptr<multilevel_plan>;
constexpr double infinity = std::numeric_limits<double>::infinity();
// The stacked structure counts revolve's distinct tasks (a hash map entry each): at most this many per plan,
// each counted as this many table iterations of work (about the time it takes).
constexpr std::size_t stacked_max_tasks = 300'000;
constexpr std::size_t stacked_min_tasks = 50'000;
constexpr std::uint64_t stacked_task_work = 300;

bool slow_level_unlimited(const cost_model& model, step_t steps)
{
    const slot_t slots = model.levels.back().slots;
    return slots == level_spec::unlimited || slots >= steps - 1;
}

// Free-slot limits of a table over segments of up to `horizon` steps: a level that holds horizon-1
// snapshots is as good as unlimited there.
std::vector<std::uint64_t> table_limits(const cost_model& model, step_t horizon)
{
    std::vector<std::uint64_t> limits;
    for (const level_spec& level : model.levels)
        limits.push_back(level.slots >= horizon - 1 ? detail::unlimited_free                    // unlimited too
                                                    : static_cast<std::uint64_t>(level.slots)); // >= 1
    return limits;
}

std::vector<std::uint64_t> relaxed(std::vector<std::uint64_t> limits)
{
    limits.back() = detail::unlimited_free;
    return limits;
}

std::vector<std::uint64_t> periodic_limits(const cost_model& model, step_t horizon, bool spine)
{
    std::vector<std::uint64_t> limits = table_limits(model, horizon);
    // The slowest level: unlimited (spine), or only the segment start's own slot (nested: the outer
    // revolve owns the rest).
    limits.back() = spine ? detail::unlimited_free : 1;
    return limits;
}

bool affordable(std::size_t n, const std::vector<std::uint64_t>& limits, step_t horizon, std::uint64_t work_limit,
                std::uint64_t max_entries)
{
    return multilevel_table::work(n, limits, horizon) <= work_limit &&
           multilevel_table::entries(n, limits, horizon) <= max_entries;
}

// The largest horizon K <= T whose spine or nested table fits the limits (work grows with K).
step_t fitting_horizon(const cost_model& model, step_t steps, bool spine, std::uint64_t work_limit,
                       std::uint64_t max_entries)
{
    const std::size_t n = model.levels.size();
    auto fits = [&](step_t k) { return affordable(n, periodic_limits(model, k, spine), k, work_limit, max_entries); };
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
    if (plan.shape == multilevel_shape::stacked)
        return plan.outer;
    const std::size_t n = plan.model.levels.size();
    const auto slow = static_cast<std::size_t>(plan.slow);
    const bool outer_level = plan.shape == multilevel_shape::spine || plan.shape == multilevel_shape::nested;
    schedule_cost c;
    c.steps = plan.steps;
    c.reverse_steps = static_cast<std::uint64_t>(plan.steps);
    c.levels.resize(n);
    // Every kind of table run: how often, its counts, the outer slots held on the slowest level while it
    // runs, and how often the outer walk advances over each of its steps.
    struct run_kind {
        std::uint64_t times;
        const multilevel_counts* counts;
        slot_t outer_held;
        std::uint64_t outer_advances;
    };
    std::vector<run_kind> runs;
    counter forward;
    std::vector<counter> stores(n), restores(n);
    if (!outer_level) {
        runs.push_back({1, &plan.tail_run, 0, 0});
    } else if (plan.shape == multilevel_shape::spine) {
        const slot_t held = plan.segments - 1;
        const auto full = static_cast<std::uint64_t>(held);
        forward.add(full, static_cast<std::uint64_t>(plan.period));
        stores[slow].add(full, 1);
        restores[slow].add(full, 1);
        // Segment j runs while x_0..x_{jk} are held (its own start included in its counts): j = N-2 is
        // the fullest. The last segment runs while all N-1 are held.
        runs.push_back({full, &plan.stored_run, held - 1, 1});
        runs.push_back({1, &plan.tail_run, held, 0});
    } else {
        const schedule_cost& o = plan.outer;
        const auto full = static_cast<std::uint64_t>(plan.segments - 1);
        forward.add(o.forward_steps, static_cast<std::uint64_t>(plan.period));
        stores[slow].add(o.stores, 1);
        restores[slow].add(o.restores, 1);
        // Revolve reverses some stored and (when it has any) some unstored segment while all its slots
        // are held, never with more (checked in multilevel_schedule_test). Stored segments are advanced
        // most often; unstored ones at most that often, so their repetition is a bound.
        const slot_t held = o.peak_slots;
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
            const slot_t outer = outer_level && i == slow ? r.outer_held : 0;
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
slot_t slow_slots_needed(const multilevel_plan& plan)
{
    const std::size_t slow = plan.model.levels.size() - 1;
    slot_t needed = combine(plan).levels[slow].peak_slots;
    if (plan.shape == multilevel_shape::spine)
        needed = std::max(needed, (plan.segments - 1) + std::max(plan.stored_run.peak[slow], plan.tail_run.peak[slow]));
    return needed;
}

bool fits_slow_level(const multilevel_plan& plan)
{
    return slow_slots_needed(plan) <= plan.model.levels.back().slots; // >= 1
}

// The counts of any plan: a plan over some of the levels has its counts moved to this model's levels.
schedule_cost plan_cost(const multilevel_plan& plan)
{
    if (plan.sub) {
        schedule_cost inner = plan_cost(*plan.sub);
        schedule_cost c = inner;
        c.levels.assign(plan.model.levels.size(), {});
        for (std::size_t j = 0; j < inner.levels.size(); ++j)
            c.levels[static_cast<std::size_t>(plan.sub_levels[j])] = inner.levels[j];
        c.predicted_cost = predicted_cost(c, plan.model);
        return c;
    }
    if (plan.shape == multilevel_shape::binomial) {
        schedule_cost c = binomial_schedule(plan).cost();
        c.predicted_cost = predicted_cost(c, plan.model);
        return c;
    }
    return combine(plan);
}

plan_ptr fresh(const multilevel_plan& base)
{
    auto p = std::make_shared<multilevel_plan>();
    p->steps = base.steps;
    p->model = base.model;
    return p;
}

plan_ptr plan_exact(const multilevel_plan& base, const std::vector<std::uint64_t>& limits, std::uint64_t max_entries)
{
    plan_ptr plan = fresh(base);
    plan->used = multilevel::method::exact;
    plan->shape = multilevel_shape::exact;
    plan->table = std::make_shared<const multilevel_table>(plan->model, limits, plan->steps, max_entries);
    plan->top_row = plan->table->full_row();
    plan->tail = plan->steps;
    detail::multilevel_counts_cache cache;
    plan->tail_run = plan->table->placed_counts(plan->steps, plan->top_row, cache);
    return plan;
}

// The grid of g steps per super-step: a fine table (g steps) and two coarse tables (N = ceil(T/g)
// super-steps). Null when it does not fit the work limit (unless `forced`) or has a single super-step.
plan_ptr plan_grid(const multilevel_plan& base, const std::vector<std::uint64_t>& limits, step_t g,
                   std::uint64_t work_limit, std::uint64_t max_entries, bool forced)
{
    const step_t steps = base.steps;
    const std::size_t n = base.model.levels.size();
    const step_t segments = (steps + g - 1) / g;
    if (g < 2 || segments < 2 || g >= steps)
        return nullptr;
    if (!forced && (!affordable(n, limits, g, work_limit / 2, max_entries) ||
                    !affordable(n, limits, segments, work_limit / 2, max_entries / 2)))
        return nullptr;
    plan_ptr plan = fresh(base);
    plan->used = multilevel::method::near_optimal;
    plan->shape = multilevel_shape::grid;
    plan->period = g;
    plan->segments = segments;
    const step_t last = steps - (segments - 1) * g;
    const auto fine = std::make_shared<const multilevel_table>(plan->model, limits, g, max_entries);
    const auto interior = std::make_shared<const multilevel_table>(plan->model, limits, segments, max_entries,
                                                                   detail::multilevel_grid{fine.get(), g, g, nullptr});
    plan->table = std::make_shared<const multilevel_table>(
        plan->model, limits, segments, max_entries, detail::multilevel_grid{fine.get(), g, last, interior.get()});
    plan->parts = {fine, interior};
    plan->top_row = plan->table->full_row();
    plan->tail = segments;
    // Too few slots for any schedule on this grid (a segment of several super-steps with none free).
    if (!std::isfinite(plan->table->placed_cost(segments, plan->top_row)))
        return nullptr;
    detail::multilevel_counts_cache cache;
    plan->tail_run = plan->table->placed_counts(segments, plan->top_row, cache);
    return plan;
}

// `spine`: the slowest level as if unlimited (the caller checks that the plan fits a finite one).
plan_ptr plan_outer(const multilevel_plan& base, step_t horizon, std::uint64_t max_entries, bool spine)
{
    plan_ptr result = fresh(base);
    multilevel_plan& plan = *result;
    const cost_model& model = plan.model;
    const step_t steps = plan.steps;
    const auto slow = static_cast<level_t>(model.levels.size() - 1);
    plan.used = multilevel::method::near_optimal;
    plan.slow = slow;
    plan.table =
        std::make_shared<const multilevel_table>(model, periodic_limits(model, horizon, spine), horizon, max_entries);
    const multilevel_table& table = *plan.table;
    plan.run_row = spine ? table.full_row() : table.taken(table.full_row(), slow);
    plan.top_row = plan.run_row;

    const level_spec& outer = model.levels.back();
    const double u = model.step_cost;
    double best = infinity;
    for (step_t k = 1; k <= horizon; ++k) {
        // N-1 full segments and a last one of tail = T - (N-1)k steps, 1 <= tail <= K.
        const step_t first = (steps - horizon + k - 1) / k;
        const step_t last = (steps - 1) / k;
        const double held = table.value(k, plan.run_row, slow);
        const double placed = table.placed_cost(k, plan.top_row);
        for (step_t full = std::max<step_t>(first, 1); full <= last; ++full) {
            const step_t tail = steps - full * k;
            const double tail_cost = table.placed_cost(tail, plan.top_row);
            const auto nf = static_cast<double>(full);
            double cost = infinity;
            schedule_cost counts;
            if (spine) {
                cost =
                    u * nf * static_cast<double>(k) + (outer.write_cost + outer.read_cost) * nf + nf * held + tail_cost;
            } else {
                try {
                    counts = revolve(full + 1, std::min(outer.slots, full)).cost();
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
        throw overflow_error("no multi-level plan for " + std::to_string(steps) +
                             " steps has counts within 64 bits; give the slowest level more slots");
    plan.shape = spine ? multilevel_shape::spine : multilevel_shape::nested;
    if (!spine)
        plan.outer_slots = std::min(outer.slots, plan.segments - 1);
    detail::multilevel_counts_cache cache;
    plan.stored_run = table.counts(plan.period, plan.run_row, slow, cache);
    plan.placed_run = table.placed_counts(plan.period, plan.top_row, cache);
    plan.tail_run = table.placed_counts(plan.tail, plan.top_row, cache);
    return result;
}

// A layered plan's inner table: every level but the outer one as the model has it, the outer one holding
// only the leaf's start.
std::vector<std::uint64_t> inner_limits(const cost_model& model, step_t horizon, level_t outer)
{
    std::vector<std::uint64_t> limits = table_limits(model, horizon);
    limits[static_cast<std::size_t>(outer)] = 0;
    return limits;
}

// Its outer tables over `units` units: the outer level's slots (unlimited when they could hold a
// snapshot at every unit), no other level.
std::vector<std::uint64_t> outer_limits(const cost_model& model, step_t units, level_t outer)
{
    std::vector<std::uint64_t> limits(model.levels.size(), 0);
    const slot_t slots = model.levels[static_cast<std::size_t>(outer)].slots;
    limits[static_cast<std::size_t>(outer)] =
        slots >= units ? detail::unlimited_free : static_cast<std::uint64_t>(slots);
    return limits;
}

// A layered plan over units of g steps on level `outer`, with inner tables for leaves that end with a
// full unit (`interior`) and with the loop's last unit (`loop_inner`; the same table when g = 1 or it is
// a table over steps). Null when it has no finite cost.
plan_ptr layered_with(const multilevel_plan& base, level_t outer, step_t g,
                      const std::shared_ptr<const multilevel_table>& interior,
                      const std::shared_ptr<const multilevel_table>& loop_inner,
                      std::vector<std::shared_ptr<const multilevel_table>> parts, std::uint64_t max_entries)
{
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    const step_t units = (steps - 1) / g + 1;
    const step_t last = steps - (units - 1) * g;
    const auto limits = outer_limits(model, units, outer);
    std::shared_ptr<const multilevel_table> loop;
    if (g == 1) {
        loop = std::make_shared<const multilevel_table>(model, limits, units, max_entries,
                                                        detail::multilevel_grid{interior.get(), 1, 1, nullptr, outer});
    } else {
        const auto inside = std::make_shared<const multilevel_table>(
            model, limits, units, max_entries, detail::multilevel_grid{interior.get(), g, g, nullptr, outer});
        loop = std::make_shared<const multilevel_table>(
            model, limits, units, max_entries, detail::multilevel_grid{loop_inner.get(), g, last, inside.get(), outer});
        parts.push_back(inside);
    }
    // x_0 on the outer level, or (a loop that fits one leaf) placed by the inner table.
    if (!std::isfinite(loop->placed_cost(units, loop->full_row())))
        return nullptr;
    plan_ptr plan = fresh(base);
    plan->used = multilevel::method::near_optimal;
    plan->shape = multilevel_shape::layered;
    plan->slow = outer;
    plan->period = g;
    plan->parts = std::move(parts);
    plan->table = loop;
    plan->tail = units;
    plan->top_row = loop->full_row();
    detail::multilevel_counts_cache cache;
    plan->tail_run = loop->placed_counts(units, plan->top_row, cache);
    return plan;
}

// The layered structure on level `outer`: outer tables over units of g steps (the smallest g that fits the
// work limit, or opts.grid; two tables when g > 1, the loop's last unit being shorter) and an inner table
// over K steps (the largest that fits, or opts.horizon). When leaves of K steps cannot span the loop (and
// opts.horizon leaves K free), also inner grid tables over units of max(g, 2) steps, whose leaves reach
// further, exact within each unit; the cheaper plan wins. Null when neither applies (a unit longer than a
// leaf, or no plan with these tables).
plan_ptr plan_layered(const multilevel_plan& base, level_t outer, const multilevel::options& opts)
{
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    const std::size_t n = model.levels.size();
    const std::uint64_t limit = opts.near_optimal_work_limit;
    const std::uint64_t max_entries = opts.max_table_entries;
    if (n < 2 || steps < 3)
        return nullptr;
    // The largest argument in [1, hi] for which `fits` holds (it holds for all smaller ones), or 0.
    auto largest = [](step_t hi, auto&& fits) -> step_t {
        if (fits(hi))
            return hi;
        step_t lo = 0;
        while (hi - lo > 1) {
            const step_t mid = lo + (hi - lo) / 2;
            (fits(mid) ? lo : hi) = mid;
        }
        return lo;
    };
    const auto within_steps = inner_limits(model, steps, outer);
    step_t horizon = opts.horizon > 0 ? std::min(opts.horizon, steps) : largest(steps, [&](step_t k) {
        return affordable(n, inner_limits(model, k, outer), k, limit, max_entries);
    });
    // Units: two outer tables (interior and the loop's) share the limit when g > 1.
    auto outer_fits = [&](step_t g) {
        const step_t units = (steps - 1) / g + 1;
        const std::uint64_t tables = g > 1 ? 2 : 1;
        const auto limits = outer_limits(model, units, outer);
        return multilevel_table::work(1, limits, units) <= limit / tables &&
               multilevel_table::entries(n, limits, units) <= max_entries / tables;
    };
    step_t g = opts.grid;
    if (g == 0) { // the smallest that fits
        if (!outer_fits(steps - 1))
            return nullptr;
        step_t lo = 0;
        g = steps - 1;
        while (g - lo > 1) {
            const step_t mid = lo + (g - lo) / 2;
            (outer_fits(mid) ? g : lo) = mid;
        }
    }
    if (g >= steps)
        return nullptr;
    // The smallest unit may be a little longer than the longest leaf (a slot more on the outer level, a row more
    // in its tables): then leaves of one unit, when their table fits twice the limit (with the outer tables,
    // three times it, as for the inner grid tables below). Without this the leaf tables vanished at such a
    // boundary and one disk slot more made the plan 0.4% dearer (device:4 + host:8:1:1 + disk:16:4:4).
    const bool stretched =
        opts.horizon == 0 && g > horizon && affordable(n, inner_limits(model, g, outer), g, 2 * limit, max_entries);
    if (stretched)
        horizon = g;
    plan_ptr best;
    // Each variant on its own: one whose tables do not fit what is left of the work limit leaves the others.
    auto keep = [&](auto&& make) {
        try {
            plan_ptr p = make();
            if (p && (!best || combine(*p).predicted_cost < combine(*best).predicted_cost))
                best = std::move(p);
        } catch (const detail::multilevel_work_exhausted&) {
        }
    };
    if (horizon >= 1 && g <= horizon) {
        keep([&] {
            const auto inner = std::make_shared<const multilevel_table>(model, inner_limits(model, horizon, outer),
                                                                        horizon, max_entries);
            return layered_with(base, outer, g, inner, inner, {inner}, max_entries);
        });
    }
    if (opts.horizon == 0 && horizon < steps) {
        // The reach of an inner grid table in units depends only on the limit: with the finest unit the
        // outer tables allow, and with the unit that lets a leaf span the loop when that is coarser.
        const step_t reach =
            largest(steps, [&](step_t k) { return affordable(n, within_steps, k, limit / 2, max_entries / 2); });
        const step_t finest = std::max<step_t>(g, 2);
        const step_t spanning = reach >= 1 ? std::max(finest, (steps - 1) / reach + 1) : finest;
        for (const step_t unit : {finest, spanning}) {
            const step_t units = (steps - 1) / unit + 1;
            const step_t last = steps - (units - 1) * unit;
            if (reach < 1 || unit >= steps ||
                !affordable(n, within_steps, unit, stretched && unit == g ? 2 * limit : limit, max_entries) ||
                !outer_fits(unit))
                continue;
            keep([&] {
                const auto fine = std::make_shared<const multilevel_table>(model, within_steps, unit, max_entries);
                const step_t inner_units = std::min(reach, units);
                const auto interior =
                    std::make_shared<const multilevel_table>(model, within_steps, inner_units, max_entries,
                                                             detail::multilevel_grid{fine.get(), unit, unit, nullptr});
                const auto loop_inner = std::make_shared<const multilevel_table>(
                    model, within_steps, inner_units, max_entries,
                    detail::multilevel_grid{fine.get(), unit, last, interior.get()});
                return layered_with(base, outer, unit, interior, loop_inner, {interior, fine, loop_inner}, max_entries);
            });
            if (spanning == finest)
                break;
        }
    }
    return best;
}

// Revolve over the cheapest k slots of all levels, the dearest at the bottom of its stack (see
// multilevel_stacked.hpp), for the k that predicts least. Every k is tried where the levels hold few slots;
// beyond, every level boundary, 32 points between two boundaries and a refinement around the best. An
// unlimited level offers at most `unlimited_slots` (more rarely pays: their stores are dear, and the spine
// serves such levels). Null when no k can be counted within the limits.
plan_ptr plan_stacked(const multilevel_plan& base, std::size_t least_tasks = 0)
{
    constexpr std::uint64_t unlimited_slots = 1024;
    constexpr std::size_t max_tasks = 100'000;
    // All the k tried share one count of tasks (thousands of fast slots make many distinct tasks per k); once
    // it is spent, no further k is priced.
    // A quarter of what is left of the work limit, the tables the rest; at least 50,000 tasks when that much is
    // left (so that a small limit still gets a plan), never more than is left; `least` overrides the limit.
    const std::uint64_t left = detail::work_cap::left() / stacked_task_work;
    std::size_t tasks_left = static_cast<std::size_t>(std::max<std::uint64_t>(
        least_tasks,
        std::min<std::uint64_t>(stacked_max_tasks, std::max(left / 4, std::min(left, stacked_min_tasks)))));
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    const std::size_t n = model.levels.size();
    if (steps < 2)
        return nullptr;
    const auto most = static_cast<std::uint64_t>(steps - 1);
    // Cheapest first: the order in which k slots are taken.
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return model.levels[a].write_cost + model.levels[a].read_cost <
               model.levels[b].write_cost + model.levels[b].read_cost;
    });
    std::vector<std::uint64_t> bounds{0}; // cumulative slots along `order`
    for (const std::size_t i : order) {
        const std::uint64_t slots = model.levels[i].slots == level_spec::unlimited
                                        ? unlimited_slots
                                        : std::min(static_cast<std::uint64_t>(model.levels[i].slots), most);
        bounds.push_back(std::min(most, bounds.back() + slots));
    }
    auto use_of = [&](std::uint64_t k) {
        std::vector<std::uint64_t> use(n, 0);
        for (std::size_t j = 0; j < n; ++j)
            use[order[j]] = std::min(k, bounds[j + 1]) - std::min(k, bounds[j]);
        return use;
    };
    std::unordered_map<std::uint64_t, double> priced;
    plan_ptr best;
    // The k of one range (bounds[j], bounds[j+1]] share their dearest level, so their tasks' counts (see
    // stacked_memo); the memo is begun afresh for each range.
    detail::stacked_memo memo;
    std::uint64_t lo = 1, hi = 0;
    auto price = [&](std::uint64_t k) {
        if (k < lo || k > hi)
            return infinity;
        if (const auto it = priced.find(k); it != priced.end())
            return it->second;
        // Revolve's forward steps over k slots, in closed form, are the plan's; when they alone cost more than
        // the best plan so far, or leave 64 bits, its tasks are not counted.
        double least = infinity;
        try {
            least = model.step_cost * static_cast<double>(revolve(steps, static_cast<slot_t>(k)).cost().forward_steps) +
                    model.reverse_cost * static_cast<double>(steps);
        } catch (const overflow_error&) {
        }
        if (least == infinity || (best && least >= best->outer.predicted_cost)) {
            priced.emplace(k, least);
            return least;
        }
        if (tasks_left == 0)
            return infinity;
        const detail::stacked_layout layout = detail::stack_levels(model, use_of(k));
        std::size_t tasks = 0;
        const std::optional<schedule_cost> c =
            detail::stacked_cost(steps, model, layout, std::min(max_tasks, tasks_left), &tasks, &memo);
        tasks_left -= std::min(tasks_left, tasks);
        detail::multilevel_work_meter() += stacked_task_work * tasks;
        const double cost = c ? c->predicted_cost : infinity;
        priced.emplace(k, cost);
        if (c && (!best || cost < best->outer.predicted_cost)) {
            best = fresh(base);
            best->used = multilevel::method::near_optimal;
            best->shape = multilevel_shape::stacked;
            best->outer = *c;
            best->layout = layout;
            best->outer_slots = layout.slots();
        }
        return cost;
    };
    constexpr std::uint64_t samples = 32;
    for (std::size_t j = 0; j + 1 < bounds.size(); ++j) {
        lo = bounds[j] + 1;
        hi = bounds[j + 1];
        if (hi < lo)
            continue;
        memo.tasks.clear();
        // Most slots first: they need the fewest tasks, and their cost bounds the forward steps of the others.
        if (hi - lo < 2 * samples) {
            for (std::uint64_t k = hi; k >= lo; --k)
                price(k);
            continue;
        }
        // Coarse samples, then halve the spacing around the best of this range.
        std::uint64_t spacing = (hi - lo) / samples;
        std::uint64_t at = hi;
        double at_cost = price(hi);
        for (std::uint64_t k = lo; k < hi; k += spacing)
            if (const double c = price(k); c < at_cost) {
                at = k;
                at_cost = c;
            }
        while (spacing > 1) {
            spacing /= 2;
            for (const std::uint64_t k : {at - std::min(at, spacing), at + spacing})
                if (const double c = price(k); c < at_cost && k >= lo && k <= hi) {
                    at = k;
                    at_cost = c;
                }
        }
    }
    // Revolve on one level alone with all its slots (an unlimited level: 2^20), counted in closed form: a plan
    // for the whole store that needs no work, so no plan made within any work limit is dearer.
    for (std::size_t level = 0; level < n; ++level) {
        const std::uint64_t k =
            std::min({static_cast<std::uint64_t>(model.levels[level].slots), most, std::uint64_t{1} << 20});
        schedule_cost c;
        try {
            c = revolve(steps, static_cast<slot_t>(k)).cost();
        } catch (const overflow_error&) {
            continue;
        }
        const level_cost on_level =
            c.levels.empty() ? level_cost{c.stores, c.restores, c.peak_slots} : c.levels.front();
        c.levels.assign(n, {});
        c.levels[level] = on_level;
        c.predicted_cost = predicted_cost(c, model);
        if (best && c.predicted_cost >= best->outer.predicted_cost)
            continue;
        best = fresh(base);
        best->used = multilevel::method::near_optimal;
        best->shape = multilevel_shape::stacked;
        best->outer = c;
        best->layout = detail::stack_levels(model, [&] {
            std::vector<std::uint64_t> use(n, 0);
            use[level] = k;
            return use;
        }());
        best->outer_slots = best->layout.slots();
    }
    return best;
}

// Exact when the table fits (first with the slowest level relaxed to unlimited: when that optimum fits
// the real capacity it is the optimum); else the cheapest near-optimal structure that fits.
// `opts.near_optimal_work_limit` is this plan's own share of the work; automatic builds the exact table when
// it takes at most `exact_limit` iterations. `stacked`: the stacked plan, when already made.
plan_ptr choose(const multilevel_plan& base, const multilevel::options& opts, std::uint64_t exact_limit,
                plan_ptr stacked)
{
    const std::uint64_t work_at_start = detail::multilevel_work_meter();
    const auto work_left = [&] {
        const std::uint64_t spent = detail::multilevel_work_meter() - work_at_start;
        return opts.near_optimal_work_limit > spent ? opts.near_optimal_work_limit - spent : 0;
    };
    using method = multilevel::method;
    using structure = multilevel::structure;
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    const std::size_t n = model.levels.size();
    const bool finite = !slow_level_unlimited(model, steps);
    const auto exact_limits = table_limits(model, steps);
    // Bytes per entry: 13 per level and row, 9 per row (multilevel_table.hpp), so at most 22.
    constexpr std::uint64_t entry_bytes = 22;
    std::uint64_t max_entries = opts.how == method::exact
                                    ? opts.max_table_entries
                                    : std::min(opts.max_table_entries, opts.memory_limit / entry_bytes);
    // Each exact table is built at most once: try_exact runs for automatic and again wherever a
    // near-optimal table would span the whole loop, with the same tables behind every call. Every table is
    // priced (work and entries) before it is built.
    bool relaxed_tried = false;
    plan_ptr relaxed_plan; // the optimum with the slowest level unlimited, kept only when it fits that level
    plan_ptr exact_plan;
    // Automatic risks at most a quarter of the limit on the relaxed table (a large finite disk is often not
    // full at the optimum, but when it is, that table's work is lost); the exact table gets what is left.
    const std::uint64_t relaxed_share = opts.how == method::exact ? 1 : 4;
    auto try_exact = [&](std::uint64_t work_limit) -> plan_ptr {
        if (finite && affordable(n, relaxed(exact_limits), steps, work_limit / relaxed_share, max_entries)) {
            if (!relaxed_tried) {
                relaxed_tried = true;
                try {
                    if (plan_ptr p = plan_exact(base, relaxed(exact_limits), max_entries); fits_slow_level(*p))
                        relaxed_plan = p;
                } catch (const detail::multilevel_work_exhausted&) {
                }
            }
            if (relaxed_plan)
                return relaxed_plan;
        }
        const std::uint64_t spent = opts.how == method::exact ? 0 : detail::multilevel_work_meter() - work_at_start;
        if (!exact_plan &&
            !affordable(n, exact_limits, steps, work_limit > spent ? work_limit - spent : 0, max_entries))
            return nullptr;
        if (!exact_plan) {
            try {
                exact_plan = plan_exact(base, exact_limits, max_entries);
            } catch (const detail::multilevel_work_exhausted&) {
                if (opts.how == method::exact)
                    throw;
            }
        }
        return exact_plan;
    };
    if (opts.how == method::exact) {
        if (plan_ptr p = try_exact(opts.exact_max_work))
            return p;
        // Refused before any table is built.
        const std::uint64_t entries = multilevel_table::entries(n, exact_limits, steps);
        const std::uint64_t work = multilevel_table::work(n, exact_limits, steps);
        std::string what = "an exact multi-level plan for " + std::to_string(steps) + " steps needs a table of " +
                           std::to_string(entries) + " entries (limit " + std::to_string(max_entries) + ") and " +
                           std::to_string(work) + " iterations (limit " + std::to_string(opts.exact_max_work) + ")";
        if (finite && !relaxed_tried)
            what += ", or with the slowest level unlimited " +
                    std::to_string(multilevel_table::entries(n, relaxed(exact_limits), steps)) + " entries and " +
                    std::to_string(multilevel_table::work(n, relaxed(exact_limits), steps)) + " iterations";
        else if (finite)
            what += " (the optimum with the slowest level unlimited needs more slots there than it has)";
        throw capacity_error(what + "; use method::near_optimal (remat plan --method near-optimal), fewer steps or "
                                    "fewer slots");
    }
    if (opts.how == method::automatic) {
        // The stacked plan first: the exact table may take what is left of the limit.
        if (!stacked && (opts.only == structure::binomial || opts.only == structure::stacked)) {
            try {
                stacked = plan_stacked(base);
            } catch (const overflow_error&) {
            }
        }
        if (plan_ptr p = try_exact(exact_limit))
            return p;
    }
    max_entries /= 2; // the best plan so far and the one being built
    if (opts.horizon < 0 || opts.grid < 0)
        throw argument_error("the near-optimal horizon and grid must be >= 0 (0: automatic), got " +
                             std::to_string(opts.horizon) + " and " + std::to_string(opts.grid));
    auto consider = [&](structure s) { return opts.only == structure::binomial || opts.only == s; };
    // Which level may carry a layered plan's outer walk: the slowest, and a faster one with a limit whose
    // snapshots cost something to write or read back (where its writes are dearer than the slowest level's, or
    // where the slowest level is too dear to be used much, the optimum keeps few of them near the top).
    std::vector<level_t> outers;
    if (consider(structure::layered))
        for (level_t outer = static_cast<level_t>(n) - 1; outer >= 0; --outer) {
            const level_spec& level = model.levels[static_cast<std::size_t>(outer)];
            const bool unlimited = level.slots >= steps - 1; // level_spec::unlimited too
            if (outer + 1 == static_cast<level_t>(n) || (!unlimited && level.write_cost + level.read_cost > 0))
                outers.push_back(outer);
        }
    // The work limit is shared: a quarter each for the spine (or nested) table and the grids, the rest split
    // between the layered plans, each of which builds up to four tables.
    const std::uint64_t budget = work_left(); // less what a relaxed exact table took
    const bool alone = opts.only != structure::binomial;
    const std::uint64_t outer_limit = alone ? budget : budget / 4;
    const std::uint64_t grid_limit = alone ? budget : budget / 4;
    // (One structure asked for alone gets the limit for each of its tables.)
    const std::uint64_t layered_limit = alone ? budget : budget / 2 / std::max<std::uint64_t>(1, outers.size()) / 4;

    plan_ptr best;
    double best_cost = infinity;
    bool overflowed = false;
    // Keeps only the cheapest: the others' tables are freed at once. A structure whose counts leave 64 bits
    // (a few slots over a very long loop) is no candidate.
    auto offer = [&](auto&& make) {
        try {
            const plan_ptr p = make();
            if (!p)
                return;
            if (const double c = plan_cost(*p).predicted_cost; !best || c < best_cost) {
                best = p;
                best_cost = c;
            }
        } catch (const overflow_error&) {
            overflowed = true;
        } catch (const detail::multilevel_work_exhausted&) {
            // its tables do not fit what is left of the work limit
        }
    };
    if (consider(structure::stacked))
        offer([&] { return stacked ? stacked : plan_stacked(base); });
    if (consider(structure::grid)) {
        // The grid's loss is not monotone in g (alignment with the optimum's natural segment lengths):
        // try the finest g that fits and a few coarser ones, sharing the grids' limit.
        constexpr std::uint64_t sizes_tried = 6;
        const std::uint64_t limit = opts.grid > 0 ? grid_limit : grid_limit / sizes_tried;
        std::vector<step_t> sizes{opts.grid};
        if (opts.grid == 0) {
            const std::uint64_t per_length = multilevel_table::entries(n, exact_limits, 0);
            const double most = std::sqrt(static_cast<double>(limit) / 2.0 / static_cast<double>(per_length));
            const step_t finest = std::max<step_t>(2, (steps + static_cast<step_t>(most) - 1) /
                                                          std::max<step_t>(2, static_cast<step_t>(most)));
            sizes.clear();
            for (const step_t factor : {2, 3, 4, 6, 10, 16})
                if (const step_t g = finest * factor / 2; sizes.empty() || g != sizes.back())
                    sizes.push_back(g);
        }
        for (const step_t g : sizes) {
            offer([&] {
                plan_ptr p;
                if (finite)
                    if ((p = plan_grid(base, relaxed(exact_limits), g, limit, max_entries, opts.grid > 0)) &&
                        !fits_slow_level(*p))
                        p = nullptr;
                if (!p)
                    p = plan_grid(base, exact_limits, g, limit, max_entries, opts.grid > 0);
                return p;
            });
        }
    }
    for (const bool spine : {true, false}) {
        if (spine ? !consider(structure::spine) : (!finite || !consider(structure::nested)))
            continue;
        step_t horizon = opts.horizon > 0 ? std::min(opts.horizon, steps)
                                          : fitting_horizon(model, steps, spine, outer_limit, max_entries);
        if (horizon >= steps) {
            // A table over the whole loop: the exact plan is the best there is, if its own table fits.
            if (plan_ptr p = try_exact(std::min(std::max(outer_limit, exact_limit), work_left()))) {
                offer([&] { return p; });
                break;
            }
            horizon = steps - 1;
        }
        offer([&]() -> plan_ptr {
            plan_ptr p = plan_outer(base, horizon, max_entries, spine);
            return !spine || !finite || fits_slow_level(*p) ? p : nullptr;
        });
    }
    for (const level_t outer : outers) {
        multilevel::options share = opts;
        share.near_optimal_work_limit = layered_limit;
        offer([&] { return plan_layered(base, outer, share); });
    }
    if (!best) {
        if (opts.only != structure::binomial) { // the structure asked for does not apply: take the best one
            multilevel::options any = opts;
            any.only = structure::binomial;
            return choose(base, any, exact_limit, stacked);
        }
        // The last resort when nothing fits the limit: the stacked structure with up to 300,000 tasks beyond it.
        try {
            best = plan_stacked(base, stacked_max_tasks);
        } catch (const overflow_error&) {
        }
        if (!best) {
            // Its forward steps are revolve's over all the slots, the fewest there are: when they leave 64 bits,
            // every plan's do.
            std::uint64_t slots = 0;
            for (const level_spec& level : model.levels)
                slots = std::min(slots + std::min(static_cast<std::uint64_t>(level.slots), std::uint64_t{1} << 40),
                                 std::uint64_t{1} << 40);
            try {
                (void)revolve(steps, static_cast<slot_t>(std::min<std::uint64_t>(
                                         slots, static_cast<std::uint64_t>(std::max<step_t>(steps - 1, 1)))))
                    .cost();
            } catch (const overflow_error&) {
                throw overflow_error("no multi-level plan for " + std::to_string(steps) +
                                     " steps has counts within 64 bits; give the levels more slots");
            }
            throw capacity_error("no multi-level plan for " + std::to_string(steps) + " steps fits the work limit of " +
                                 std::to_string(opts.near_optimal_work_limit) +
                                 " iterations; raise options::near_optimal_work_limit");
        }
    }
    return best;
}

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
    plan_ptr outer = fresh(base);
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
        std::vector<level_t> kept;
        const multilevel_plan fewer = without_level(base, drop, kept);
        std::vector<level_t> kept_original;
        for (const level_t k : kept)
            kept_original.push_back(original[static_cast<std::size_t>(k)]);
        const plan_ptr inner =
            plan_levels(fewer, opts, memo, levels & ~(std::uint32_t{1} << original[drop]), kept_original);
        plan = run_on_levels(base, inner, kept);
        plan->used = inner->used;
        memo.emplace(levels, plan);
        return plan;
    }
    if ((opts.how == method::automatic || opts.how == method::binomial) && binomial_optimal(base.model)) {
        // Restores are T-1 in every schedule and stores are free: the fewest forward steps win.
        plan = fresh(base);
        plan->used = method::binomial;
        plan->shape = multilevel_shape::binomial;
        memo.emplace(levels, plan);
        return plan;
    }
    // One structure asked for alone gets the limit for each of its tables (no cap), as does method::exact.
    const bool capped = opts.how != method::exact && opts.only == multilevel::structure::binomial;
    // Up to four levels (at most 15 subsets); beyond, the hundreds of subsets would cost more than the plan.
    const bool guarded = capped && n <= 4;
    const std::uint64_t own = capped ? own_part(opts.near_optimal_work_limit, n) : opts.near_optimal_work_limit;
    const std::uint64_t exact_limit =
        opts.how == method::automatic ? std::min(opts.exact_work_limit, own) : opts.exact_work_limit;
    {
        multilevel::options mine = opts;
        mine.near_optimal_work_limit = own;
        const detail::work_cap cap(capped ? own : ~std::uint64_t{0}); // its own, whatever the caller's cap
        plan = choose(base, mine, exact_limit, nullptr);
    }
    const bool optimal = plan->used == method::exact || plan->used == method::binomial;
    if (!optimal && guarded && n >= 2) {
        double cost = plan_cost(*plan).predicted_cost;
        // The subsets that drop one level, the most promising (lowest bound) first: the sooner the cost in hand
        // falls, the more of the others its bound skips.
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
            std::vector<level_t> kept;
            const multilevel_plan fewer = without_level(base, c.drop, kept);
            std::vector<level_t> kept_original;
            for (const level_t k : kept)
                kept_original.push_back(original[static_cast<std::size_t>(k)]);
            plan_ptr inner;
            double inner_cost = infinity;
            try {
                inner = plan_levels(fewer, opts, memo, levels & ~(std::uint32_t{1} << original[c.drop]), kept_original);
                inner_cost = plan_cost(*inner).predicted_cost;
            } catch (const overflow_error&) {
                continue; // no plan over these levels can be counted
            } catch (const capacity_error&) {
                continue; // none fits this subset's part of the limit
            }
            if (inner_cost >= cost)
                continue;
            plan = run_on_levels(base, inner, kept);
            plan->used = method::near_optimal; // even when exact over its own levels
            cost = inner_cost;
        }
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

} // namespace

multilevel::multilevel(step_t steps, const cost_model& model, const options& opts)
{
    detail::require_positive_steps(steps);
    validate(model);
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
    const std::uint64_t work_before = detail::multilevel_work_meter();
    plan_ptr plan = plan_levels(base, opts, memo, (std::uint32_t{1} << n) - 1, all);
    if (!(base.model == model)) { // report the model as given: a copy sharing the tables
        plan = std::make_shared<multilevel_plan>(*plan);
        plan->model = model;
    }
    plan->work = detail::multilevel_work_meter() - work_before;
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
