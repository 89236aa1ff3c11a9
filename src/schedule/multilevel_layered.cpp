// The layered structure: the exact recurrence over one outer level places its checkpoints, with segments of any
// length between them reversed by the exact table of the other levels (see multilevel_choose.cpp).
#include "multilevel_structures.hpp"

#include <algorithm>
#include <cmath>

namespace remat::detail {
namespace {

// A layered plan's inner table: every level but the outer one as the model has it, the outer one holding
// only the leaf's start.
std::vector<std::uint64_t> inner_limits(const cost_model& model, step_t horizon, level_t outer)
{
    std::vector<std::uint64_t> limits = table_limits(model, horizon);
    limits[static_cast<std::size_t>(outer)] = 0;
    return limits;
}

// `limits` with no level above `cap`'s (elementwise).
std::vector<std::uint64_t> capped(std::vector<std::uint64_t> limits, const std::vector<std::uint64_t>& cap)
{
    for (std::size_t i = 0; i < limits.size(); ++i)
        limits[i] = std::min(limits[i], cap[i]);
    return limits;
}

// The inner limits over `g` steps with slots taken from the finite level that has the most (of equals, the slower:
// the faster is worth more) until the table fits `work_limit`: leaves that leave slots unused are leaves of this
// store too (the same table as the store with those fewer slots builds), where without them the layered plan was
// dropped. Empty when it does not fit with no slot left.
std::vector<std::uint64_t> fewer_inner_slots(const cost_model& model, step_t g, level_t outer, std::uint64_t work_limit,
                                             std::uint64_t max_entries)
{
    std::vector<std::uint64_t> limits = inner_limits(model, g, outer);
    while (!affordable(model.levels.size(), limits, g, work_limit, max_entries)) {
        std::size_t most = limits.size();
        for (std::size_t i = 0; i < limits.size(); ++i)
            if (limits[i] != detail::unlimited_free && limits[i] > 0 &&
                (most == limits.size() || limits[i] >= limits[most]))
                most = i;
        if (most == limits.size())
            return {};
        --limits[most];
    }
    return limits;
}

// Its outer tables over `units` units: `slots` of the outer level (unlimited when they could hold a snapshot at
// every unit), no other level.
std::vector<std::uint64_t> outer_limits(std::size_t n, step_t units, level_t outer, slot_t slots)
{
    std::vector<std::uint64_t> limits(n, 0);
    limits[static_cast<std::size_t>(outer)] =
        slots >= units ? detail::unlimited_free : static_cast<std::uint64_t>(slots);
    return limits;
}

// A layered plan over units of g steps on level `outer`, with inner tables for leaves that end with a
// full unit (`interior`) and with the loop's last unit (`loop_inner`; the same table when g = 1 or it is
// a table over steps). Null when it has no finite cost.
plan_ptr layered_with(const multilevel_plan& base, level_t outer, slot_t outer_slots, step_t g,
                      const std::shared_ptr<const multilevel_table>& interior,
                      const std::shared_ptr<const multilevel_table>& loop_inner,
                      std::vector<std::shared_ptr<const multilevel_table>> parts, std::uint64_t max_entries)
{
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    const step_t units = (steps - 1) / g + 1;
    const step_t last = steps - (units - 1) * g;
    const auto limits = outer_limits(model.levels.size(), units, outer, outer_slots);
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
    plan_ptr plan = fresh_plan(base);
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

// The largest argument in [1, hi] for which `fits` holds (it holds for all smaller ones), or 0.
template <class Fits>
step_t largest(step_t hi, Fits&& fits)
{
    if (fits(hi))
        return hi;
    step_t lo = 0;
    while (hi - lo > 1) {
        const step_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

// Whether the outer tables over units of g steps with `slots` on the outer level fit: two (interior and the loop's)
// share the limit when g > 1.
bool outer_tables_fit(const cost_model& model, step_t steps, level_t outer, slot_t slots, step_t g, std::uint64_t limit,
                      std::uint64_t max_entries)
{
    const step_t units = (steps - 1) / g + 1;
    const std::uint64_t tables = g > 1 ? 2 : 1;
    const auto limits = outer_limits(model.levels.size(), units, outer, slots);
    return multilevel_table::work(1, limits, units) <= limit / tables &&
           multilevel_table::entries(model.levels.size(), limits, units) <= max_entries / tables;
}

// The smallest unit whose outer tables with `slots` on the outer level fit (opts.grid when set), or 0 when none does.
step_t smallest_unit(const multilevel_plan& base, level_t outer, slot_t slots, const multilevel::options& opts)
{
    if (opts.grid > 0)
        return opts.grid;
    const step_t steps = base.steps;
    const auto fits = [&](step_t g) {
        return outer_tables_fit(base.model, steps, outer, slots, g, opts.near_optimal_work_limit,
                                opts.max_table_entries);
    };
    if (!fits(steps - 1))
        return 0;
    step_t lo = 0;
    step_t g = steps - 1;
    while (g - lo > 1) {
        const step_t mid = lo + (g - lo) / 2;
        (fits(mid) ? g : lo) = mid;
    }
    return g;
}

// The layered structure on level `outer` with `outer_slots` there: outer tables over units of g steps (the smallest
// g that fits the work limit, or opts.grid; two tables when g > 1, the loop's last unit being shorter) and an inner
// table over K steps (the largest that fits, or opts.horizon). When leaves of K steps cannot span the loop (and
// opts.horizon leaves K free), also inner grid tables over units of max(g, 2) steps, whose leaves reach further,
// exact within each unit; the cheaper plan wins. Null when neither applies (a unit longer than a leaf, or no plan
// with these tables).
plan_ptr layered_on(const multilevel_plan& base, level_t outer, slot_t outer_slots, const multilevel::options& opts)
{
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    const std::size_t n = model.levels.size();
    const std::uint64_t limit = opts.near_optimal_work_limit;
    const std::uint64_t max_entries = opts.max_table_entries;
    // The inner levels' slots: all of them, unless capped below.
    std::vector<std::uint64_t> cap(n, detail::unlimited_free);
    const auto leaf_limits = [&](step_t k) { return capped(inner_limits(model, k, outer), cap); };
    step_t horizon = opts.horizon > 0 ? std::min(opts.horizon, steps) : largest(steps, [&](step_t k) {
        return affordable(n, leaf_limits(k), k, limit, max_entries);
    });
    const auto outer_fits = [&](step_t g) {
        return outer_tables_fit(model, steps, outer, outer_slots, g, limit, max_entries);
    };
    const step_t g = smallest_unit(base, outer, outer_slots, opts);
    if (g == 0 || g >= steps)
        return nullptr;
    // The smallest unit may be a little longer than the longest leaf (a slot more on the outer level, a row more
    // in its tables): then leaves of one unit, when their table fits twice the limit (with the outer tables,
    // three times it, as for the inner grid tables below). Without this the leaf tables vanished at such a
    // boundary and one disk slot more made the plan 0.4% dearer (device:4 + host:8:1:1 + disk:16:4:4).
    // When even that table does not fit, its leaves use fewer of the inner levels' slots (fewer_inner_slots): one host
    // slot more on device:4 + host:8:1:1 + disk:16:4:4 at T = 768,601 dropped the leaf tables (40.0 M iterations
    // against 39.96 M allowed) and the plan, nested instead of layered, cost 0.78% more than with host:7.
    bool stretched = false;
    if (opts.horizon == 0 && g > horizon) {
        if (const auto fewer = fewer_inner_slots(model, g, outer, 2 * limit, max_entries); !fewer.empty()) {
            cap = fewer;
            stretched = true;
            horizon = g;
        }
    }
    const auto within_steps = leaf_limits(steps);
    plan_ptr best;
    // Each variant on its own: one whose tables do not fit what is left of the work limit leaves the others.
    auto keep = [&](auto&& make) {
        try {
            plan_ptr p = make();
            if (p && (!best || combined_counts(*p).predicted_cost < combined_counts(*best).predicted_cost))
                best = std::move(p);
        } catch (const detail::table_work_exhausted&) {
        }
    };
    if (horizon >= 1 && g <= horizon) {
        keep([&] {
            const auto inner =
                std::make_shared<const multilevel_table>(model, leaf_limits(horizon), horizon, max_entries);
            return layered_with(base, outer, outer_slots, g, inner, inner, {inner}, max_entries);
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
                return layered_with(base, outer, outer_slots, unit, interior, loop_inner, {interior, fine, loop_inner},
                                    max_entries);
            });
            if (spanning == finest)
                break;
        }
    }
    return best;
}

} // namespace

plan_ptr plan_layered(const multilevel_plan& base, level_t outer, const multilevel::options& opts)
{
    const cost_model& model = base.model;
    const step_t steps = base.steps;
    if (model.levels.size() < 2 || steps < 3)
        return nullptr;
    const slot_t slots = model.levels[static_cast<std::size_t>(outer)].slots;
    const std::uint64_t limit = opts.near_optimal_work_limit;
    // Whether a leaf table over one unit of g steps fits twice the limit with every inner slot.
    const auto unit_leaves_fit = [&](step_t g) {
        return affordable(model.levels.size(), inner_limits(model, g, outer), g, 2 * limit, opts.max_table_entries);
    };
    // The outer level's slot counts to plan with, in turn (the work limit may leave room for the first only).
    std::vector<slot_t> counts{slots};
    if (const step_t g = smallest_unit(base, outer, slots, opts); opts.horizon == 0 && opts.grid == 0 && g > 0 &&
                                                                  g < steps && slots < (steps - 1) / g + 1 &&
                                                                  !unit_leaves_fit(g)) {
        // The unit outgrew the leaf table with every inner slot, and the outer tables count the outer level's slots
        // (fewer than the units: else it has no row factor to shed). The leaves may leave inner slots unused
        // (layered_on), or fewer outer slots (fewer rows, finer units) may keep them all: the most that do. Whichever
        // leaves fewer slots unused goes first, the outer level's on a tie. One disk slot more on device:4 +
        // host:8:1:1 + disk:16:4:4 at T = 768,601 coarsened the unit from 710 to 733 steps, whose leaves then left a
        // host slot unused: 4,865,719 against 4,821,580 with disk:15 (0.92%); now 4,821,580 with both. One device slot
        // more at T = 849,853 would need three disk slots fewer, and one device slot unused gives device:3's plan.
        // At most `slots` (< units, bounded by the limit) searches for a unit.
        for (slot_t fewer = slots - 1; fewer >= 1; --fewer) {
            const step_t unit = smallest_unit(base, outer, fewer, opts);
            if (unit > 0 && unit < steps && unit_leaves_fit(unit)) {
                const std::vector<std::uint64_t> all = inner_limits(model, g, outer);
                const std::vector<std::uint64_t> kept =
                    fewer_inner_slots(model, g, outer, 2 * limit, opts.max_table_entries);
                std::uint64_t unused = 0; // inner slots the leaves leave unused (all of them when none fits)
                for (std::size_t i = 0; i < all.size(); ++i)
                    if (all[i] != detail::unlimited_free)
                        unused += all[i] - (kept.empty() ? 0 : kept[i]);
                const bool outer_first = kept.empty() || static_cast<std::uint64_t>(slots - fewer) <= unused;
                counts.insert(outer_first ? counts.begin() : counts.end(), fewer);
                break;
            }
        }
    }
    plan_ptr best;
    for (const slot_t count : counts)
        if (plan_ptr p = layered_on(base, outer, count, opts);
            p && (!best || combined_counts(*p).predicted_cost < combined_counts(*best).predicted_cost))
            best = std::move(p);
    return best;
}

} // namespace remat::detail
