// Choosing a multi-level plan's method and structure (docs/multilevel.md): exact where its table fits, else the
// cheapest near-optimal structure, each structure behind one interface (multilevel_structures.hpp).
//
// Near-optimal structures, each priced in closed form from its tables; the cheapest that fits wins:
//  - grid: the exact recurrence over super-steps of g steps (multilevel_table.hpp), with g
//    the smallest whose tables fit the work limit.
//  - spine: with an unlimited slowest level the exact optimum is self-similar (a checkpoint there splits
//    a segment into two with the same free slots), so on long loops it settles into a period: x_0, x_k,
//    ..., x_{(N-2)k} are kept on the slowest level during the first sweep, the last segment of `tail`
//    steps is reversed by the table, then each k-step segment from its checkpoint, right to left.
//  - nested: with a finite slowest level of d slots the segments are the steps of revolve(N, d), and
//    the table's segments use the faster levels plus their own start's slot.
//  - layered: the exact recurrence over one outer level places its checkpoints, with segments of any
//    length between them reversed by the exact table of the other levels (leaves of up to K steps; see
//    multilevel_table.hpp). Tried with each finite level as the outer one (and the slowest
//    when unlimited): the slowest is the natural one, a faster one wins when its writes are dearer.
// For spine and nested every k <= K and every N whose last segment fits the table (1 <= tail <= K) is
// priced; a finite slowest level is first planned as if unlimited, which is kept when it fits.
#include "multilevel_structures.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace remat::detail {
namespace {

using method = multilevel::method;
using structure = multilevel::structure;

constexpr double infinity = std::numeric_limits<double>::infinity();

/// What choosing one plan shares across its structures: the model and options, the work spent since it began,
/// the exact tables (each built at most once: try_exact runs for automatic and again wherever a near-optimal
/// table would span the whole loop, with the same tables behind every call), each structure's share of the work
/// limit, and the cheapest plan offered so far.
struct chooser {
    chooser(const multilevel_plan& base_plan, const multilevel::options& options, std::uint64_t exact_work,
            plan_ptr stacked_plan)
        : base(base_plan), opts(options), exact_limit(exact_work), stacked(std::move(stacked_plan)),
          n(base.model.levels.size()), finite(!slow_level_unlimited(base.model, base.steps)),
          exact_limits(table_limits(base.model, base.steps)),
          // Bytes per entry: 13 per level and row, 9 per row (multilevel_table.hpp), so at most 22.
          max_entries(opts.how == method::exact ? opts.max_table_entries
                                                : std::min(opts.max_table_entries, opts.memory_limit / 22)),
          // Automatic risks at most a quarter of the limit on the relaxed table (a large finite disk is often not
          // full at the optimum, but when it is, that table's work is lost); the exact table gets what is left.
          relaxed_share(opts.how == method::exact ? 1 : 4)
    {
    }

    const multilevel_plan& base;
    const multilevel::options& opts;
    const std::uint64_t exact_limit;
    plan_ptr stacked; ///< the stacked plan, once made
    const std::uint64_t work_at_start = table_work_meter();
    const std::size_t n;
    const bool finite; ///< the slowest level is finite for this loop
    const std::vector<std::uint64_t> exact_limits;
    std::uint64_t max_entries;
    const std::uint64_t relaxed_share;
    bool relaxed_tried = false;
    plan_ptr relaxed_plan; ///< the optimum with the slowest level unlimited, kept only when it fits that level
    plan_ptr exact_plan;
    // The near-optimal structures' shares of the work limit (share_work).
    std::vector<level_t> outers; ///< the levels a layered plan's outer walk may take
    std::uint64_t outer_limit = 0;
    std::uint64_t grid_limit = 0;
    std::uint64_t layered_limit = 0;
    bool whole_loop_exact = false; ///< the spine offered the exact plan: its table spans the loop
    plan_ptr best;
    double best_cost = infinity;
    bool counts_beyond_64_bits = false; ///< a structure was refused for counts past 64 bits

    [[nodiscard]] std::uint64_t work_left() const
    {
        const std::uint64_t spent = table_work_meter() - work_at_start;
        return opts.near_optimal_work_limit > spent ? opts.near_optimal_work_limit - spent : 0;
    }
    [[nodiscard]] bool consider(structure s) const { return opts.only == structure::binomial || opts.only == s; }

    /// The exact plan, where its table fits `work_limit` (first the relaxed one, when it fits the slowest level).
    plan_ptr try_exact(std::uint64_t work_limit)
    {
        if (finite &&
            affordable(n, relaxed_limits(exact_limits), base.steps, work_limit / relaxed_share, max_entries)) {
            if (!relaxed_tried) {
                relaxed_tried = true;
                try {
                    if (plan_ptr p = plan_exact(base, relaxed_limits(exact_limits), max_entries); fits_slow_level(*p))
                        relaxed_plan = p;
                } catch (const table_work_exhausted&) { // NOLINT(bugprone-empty-catch): the exact table next
                }
            }
            if (relaxed_plan)
                return relaxed_plan;
        }
        const std::uint64_t spent = opts.how == method::exact ? 0 : table_work_meter() - work_at_start;
        if (!exact_plan &&
            !affordable(n, exact_limits, base.steps, work_limit > spent ? work_limit - spent : 0, max_entries))
            return nullptr;
        if (!exact_plan) {
            try {
                exact_plan = plan_exact(base, exact_limits, max_entries);
            } catch (const table_work_exhausted&) {
                if (opts.how == method::exact)
                    throw;
            }
        }
        return exact_plan;
    }

    /// Splits what is left of the work limit between the near-optimal structures: a quarter each for the spine (or
    /// nested) table and the grids, the rest between the layered plans, each of which builds up to four tables.
    /// One structure asked for alone gets the limit for each of its tables.
    void share_work()
    {
        // Which level may carry a layered plan's outer walk: the slowest, and a faster one with a limit whose
        // snapshots cost something to write or read back (where its writes are dearer than the slowest level's,
        // or where the slowest level is too dear to be used much, the optimum keeps few of them near the top).
        if (consider(structure::layered))
            for (level_t outer = static_cast<level_t>(n) - 1; outer >= 0; --outer) {
                const level_spec& level = base.model.levels[static_cast<std::size_t>(outer)];
                const bool unlimited = level.slots >= base.steps - 1; // level_spec::unlimited too
                if (outer + 1 == static_cast<level_t>(n) || (!unlimited && level.write_cost + level.read_cost > 0))
                    outers.push_back(outer);
            }
        const std::uint64_t budget = work_left(); // less what a relaxed exact table took
        const bool alone = opts.only != structure::binomial;
        outer_limit = alone ? budget : budget / 4;
        grid_limit = alone ? budget : budget / 4;
        layered_limit = alone ? budget : budget / 2 / std::max<std::uint64_t>(1, outers.size()) / 4;
    }

    /// Keeps the plan `make` returns where it is the cheapest so far: the others' tables are freed at once. A
    /// structure whose counts leave 64 bits (a few slots over a very long loop), or whose tables do not fit what is
    /// left of the work limit, is no candidate.
    template <class Make>
    void offer(Make&& make)
    {
        try {
            const plan_ptr p = make();
            if (!p)
                return;
            if (const double c = plan_cost(*p).predicted_cost; !best || c < best_cost) {
                best = p;
                best_cost = c;
            }
        } catch (const overflow_error&) { // no candidate
            counts_beyond_64_bits = true;
        } catch (const table_work_exhausted&) { // NOLINT(bugprone-empty-catch): no candidate
        }
    }
};

/// method::exact where the table does not fit: refused before any table is built.
[[noreturn]] void refuse_exact(const chooser& c)
{
    const step_t steps = c.base.steps;
    const std::uint64_t entries = multilevel_table::entries(c.n, c.exact_limits, steps);
    const std::uint64_t work = multilevel_table::work(c.n, c.exact_limits, steps);
    std::string what = "an exact multi-level plan for " + std::to_string(steps) + " steps needs a table of " +
                       std::to_string(entries) + " entries (limit " + std::to_string(c.max_entries) + ") and " +
                       std::to_string(work) + " iterations (limit " + std::to_string(c.opts.exact_max_work) + ")";
    if (c.finite && !c.relaxed_tried)
        what += ", or with the slowest level unlimited " +
                std::to_string(multilevel_table::entries(c.n, relaxed_limits(c.exact_limits), steps)) +
                " entries and " + std::to_string(multilevel_table::work(c.n, relaxed_limits(c.exact_limits), steps)) +
                " iterations";
    else if (c.finite)
        what += " (the optimum with the slowest level unlimited needs more slots there than it has)";
    throw capacity_error(what + "; use method::near_optimal (remat plan --method near-optimal), fewer steps or "
                                "fewer slots");
}

void offer_stacked(chooser& c)
{
    c.offer([&] { return c.stacked ? c.stacked : plan_stacked(c.base); });
}

void offer_grids(chooser& c)
{
    const multilevel::options& opts = c.opts;
    // The grid's loss is not monotone in g (alignment with the optimum's natural segment lengths): try the finest
    // g that fits and a few coarser ones, sharing the grids' limit.
    constexpr std::uint64_t sizes_tried = 6;
    const std::uint64_t limit = opts.grid > 0 ? c.grid_limit : c.grid_limit / sizes_tried;
    std::vector<step_t> sizes{opts.grid};
    if (opts.grid == 0) {
        const step_t steps = c.base.steps;
        const std::uint64_t per_length = multilevel_table::entries(c.n, c.exact_limits, 0);
        const double most = std::sqrt(static_cast<double>(limit) / 2.0 / static_cast<double>(per_length));
        const auto m = static_cast<std::uint64_t>(most); // at most about 4e9: the square root of a 64-bit count
        // (steps + m - 1) / max(2, m) in unsigned 64 bits: the signed sum overflowed from T = 2^63 - m
        const auto finest = std::max<step_t>(
            2, static_cast<step_t>((static_cast<std::uint64_t>(steps) + m - 1) / std::max<std::uint64_t>(2, m)));
        sizes.clear();
        for (const step_t factor : {2, 3, 4, 6, 10, 16})
            if (const step_t g = finest * factor / 2; sizes.empty() || g != sizes.back())
                sizes.push_back(g);
    }
    for (const step_t g : sizes) {
        c.offer([&] {
            plan_ptr p;
            if (c.finite)
                if ((p = plan_grid(c.base, relaxed_limits(c.exact_limits), g, limit, c.max_entries, opts.grid > 0)) &&
                    !fits_slow_level(*p))
                    p = nullptr;
            if (!p)
                p = plan_grid(c.base, c.exact_limits, g, limit, c.max_entries, opts.grid > 0);
            return p;
        });
    }
}

/// The spine (`spine`) or nested structure; where its table would span the whole loop, the exact plan instead.
void offer_periodic(chooser& c, bool spine)
{
    const step_t steps = c.base.steps;
    step_t horizon = c.opts.horizon > 0 ? std::min(c.opts.horizon, steps)
                                        : fitting_horizon(c.base.model, steps, spine, c.outer_limit, c.max_entries);
    if (horizon >= steps) {
        // A table over the whole loop: the exact plan is the best there is, if its own table fits.
        if (plan_ptr p = c.try_exact(std::min(std::max(c.outer_limit, c.exact_limit), c.work_left()))) {
            c.offer([&] { return p; });
            c.whole_loop_exact = spine;
            return;
        }
        horizon = steps - 1;
    }
    c.offer([&]() -> plan_ptr {
        plan_ptr p = plan_outer(c.base, horizon, c.max_entries, spine);
        return !spine || !c.finite || fits_slow_level(*p) ? p : nullptr;
    });
}

void offer_spine(chooser& c)
{
    offer_periodic(c, true);
}

void offer_nested(chooser& c)
{
    if (c.finite && !c.whole_loop_exact) // the exact plan the spine offered is the best there is
        offer_periodic(c, false);
}

void offer_layered(chooser& c)
{
    for (const level_t outer : c.outers) {
        multilevel::options share = c.opts;
        share.near_optimal_work_limit = c.layered_limit;
        c.offer([&] { return plan_layered(c.base, outer, share); });
    }
}

/// The near-optimal structures, in the order they are offered (the first of equal costs is kept).
struct near_optimal_structure {
    structure kind;
    void (*offer)(chooser&);
};
constexpr near_optimal_structure near_optimal_structures[] = {
    {structure::stacked, offer_stacked}, {structure::grid, offer_grids},      {structure::spine, offer_spine},
    {structure::nested, offer_nested},   {structure::layered, offer_layered},
};

/// When nothing fits the work limit: the stacked structure with up to stacked_max_tasks tasks beyond it, or the
/// error that says why there is no plan.
plan_ptr last_resort(const chooser& c)
{
    try {
        if (plan_ptr p = plan_stacked(c.base, stacked_max_tasks))
            return p;
    } catch (const overflow_error&) { // NOLINT(bugprone-empty-catch): the errors below
    }
    // Its forward steps are revolve's over all the slots, the fewest there are: when they leave 64 bits, every
    // plan's do.
    const step_t steps = c.base.steps;
    std::uint64_t slots = 0;
    for (const level_spec& level : c.base.model.levels)
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
    // A host of 4 beside an unlimited disk at T = 8e18: the structures within the limit count more than 2^64-1
    // forward steps, which the message blamed on the work limit alone.
    throw capacity_error("no multi-level plan for " + std::to_string(steps) + " steps fits the work limit of " +
                         std::to_string(c.opts.near_optimal_work_limit) + " iterations" +
                         (c.counts_beyond_64_bits ? " with counts within 64 bits (those that fit count more)" : "") +
                         "; raise options::near_optimal_work_limit" +
                         (c.counts_beyond_64_bits ? ", or plan fewer steps" : ""));
}

} // namespace

plan_ptr choose_structure(const multilevel_plan& base, const multilevel::options& opts, std::uint64_t exact_limit,
                          plan_ptr stacked)
{
    chooser c(base, opts, exact_limit, std::move(stacked));
    if (opts.how == method::exact) {
        if (plan_ptr p = c.try_exact(opts.exact_max_work))
            return p;
        refuse_exact(c);
    }
    if (opts.how == method::automatic) {
        // The stacked plan first: the exact table may take what is left of the limit.
        if (!c.stacked && (opts.only == structure::binomial || opts.only == structure::stacked)) {
            try {
                c.stacked = plan_stacked(base);
            } catch (const overflow_error&) { // NOLINT(bugprone-empty-catch): offered again below
            }
        }
        if (plan_ptr p = c.try_exact(exact_limit))
            return p;
    }
    c.max_entries /= 2; // the best plan so far and the one being built
    if (opts.horizon < 0 || opts.grid < 0)
        throw argument_error("the near-optimal horizon and grid must be >= 0 (0: automatic), got " +
                             std::to_string(opts.horizon) + " and " + std::to_string(opts.grid));
    c.share_work();
    for (const near_optimal_structure& s : near_optimal_structures)
        if (c.consider(s.kind))
            s.offer(c);
    if (c.best)
        return c.best;
    if (opts.only != structure::binomial) { // the structure asked for does not apply: take the best one
        multilevel::options any = opts;
        any.only = structure::binomial;
        return choose_structure(base, any, exact_limit, c.stacked);
    }
    return last_resort(c);
}

} // namespace remat::detail
